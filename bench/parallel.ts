// Total decode throughput of several sequences at once (`pantheon serve --parallel N`), side by side
// in one process on one loaded model, rounds alternating so the machine's load hits every mode:
//   1 alone       one Session generating G tokens
//   N interleaved N Sessions, each its own one-token forward() per step (serve before decode-batch.ts)
//   N batched     N Sessions on one DecodeBatch (one forward pass over the N rows per step)
//   server 1 / N  the same through `pantheon serve --parallel N` over HTTP (the openai client, streaming)
// Greedy, end-of-generation tokens not a stop, every sequence after its own short prompt. Prints
// tokens/s of wall time and tokens per CPU-second of this process (robust to a busy machine when
// the backend has one thread).
//   node bin/run-ts.mjs bench/parallel.ts MODEL.gguf [--n 4] [--gen 64] [--rounds 3] [--threads 1] [--ctx 256]

import OpenAI from 'openai';
import { DecodeBatch } from '../src/engine/decode-batch.js';
import { DEFAULT_SAMPLING } from '../src/engine/sample/index.js';
import { OpenAiServer } from '../src/engine/server/server.js';
import { LoadedModel, Session } from '../src/engine/session.js';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
const opt = (name: string, d: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : d;
};
if (!file) {
  console.error('usage: bench/parallel.ts MODEL.gguf [--n 4] [--gen 64] [--rounds 3] [--threads 1] [--ctx 256]');
  process.exit(2);
}
const N = opt('n', 4), G = opt('gen', 64), ROUNDS = opt('rounds', 3), THREADS = opt('threads', 1), CTX = opt('ctx', 256);
const PROMPTS = ['Once upon a time', 'The little dog ran to', 'Tom and his sister', 'One day the sun', 'A bird sat on', 'She looked at the', 'In the big city', 'The old man said'];

const lm = await LoadedModel.load(file, { contextSize: CTX, threads: THREADS });
const sampling = { ...DEFAULT_SAMPLING, temperature: 0, maxTokens: G };
const tokensOf = (i: number) => lm.tokenizer.encode(PROMPTS[i % PROMPTS.length], { addSpecial: true });

async function drive(s: Session, i: number): Promise<number> {
  let n = 0;
  for await (const ev of s.generate(tokensOf(i), sampling, undefined, { stopAtEog: false })) if (ev.kind === 'token') n++;
  return n;
}

/** Generated tokens, wall ms and CPU ms of `run`. */
async function measure(run: () => Promise<number>): Promise<{ tokens: number; wall: number; cpu: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const tokens = await run();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { tokens, wall, cpu: (c.user + c.system) / 1000 };
}

const batch = DecodeBatch.create(lm.model, CTX, N);
if (!(batch instanceof DecodeBatch)) throw new Error(`this model cannot batch: ${batch.unsupported}`);
const plain = Array.from({ length: N }, () => new Session(lm));
const batched = Array.from({ length: N }, () => new Session(lm, null, batch));
const server = await OpenAiServer.start(lm, { port: 0, parallel: N });
const client = new OpenAI({ baseURL: server.url, apiKey: 'none', maxRetries: 0 });
const viaServer = async (k: number) => {
  const counts = await Promise.all(Array.from({ length: k }, async (_, i) => {
    const stream = await client.completions.create({ model: server.id, prompt: PROMPTS[i % PROMPTS.length], temperature: 0, max_tokens: G, stream: true, stream_options: { include_usage: true } });
    let n = 0;
    for await (const ch of stream) n = ch.usage?.completion_tokens ?? n;
    return n;
  }));
  return counts.reduce((a, b) => a + b, 0);
};
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

const modes: [string, () => Promise<number>][] = [
  ['1 alone', () => drive(plain[0], 0)],
  [`${N} interleaved`, async () => sum(await Promise.all(plain.map((s, i) => drive(s, i))))],
  [`${N} batched`, async () => sum(await Promise.all(batched.map((s, i) => drive(s, i))))],
  ['server, 1 client', () => viaServer(1)],
  [`server, ${N} clients`, () => viaServer(N)],
];
const results = new Map<string, { tokens: number; wall: number; cpu: number }[]>();
for (const [, run] of modes) await run(); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, run] of r % 2 ? [...modes].reverse() : modes) {
    if (!results.has(name)) results.set(name, []);
    results.get(name)!.push(await measure(run));
  }
}
await server.close();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`${file}: ${lm.backendName}, ${THREADS} thread(s), ${N} sequences × ${G} tokens, ${ROUNDS} rounds, load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log('mode                  tokens   tok/s (wall)   tok per CPU-s');
for (const [name] of modes) {
  const rs = results.get(name)!;
  console.log(`${name.padEnd(20)} ${String(rs[0].tokens).padStart(7)} ${median(rs.map((x) => (x.tokens * 1000) / x.wall)).toFixed(1).padStart(14)} ${median(rs.map((x) => (x.tokens * 1000) / x.cpu)).toFixed(1).padStart(15)}`);
}
lm.dispose();
