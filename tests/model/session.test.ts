// Session behaviour on stories260K: prefix reuse, cancellation, a full context, and the CLI's
// `run --json` against llama.cpp's golden tokens.

import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../../src/engine/sample/index.js';
import { LoadedModel, Session, type GenerationEvent } from '../../src/engine/session.js';
import { ContextFullError } from '../../src/shared/errors.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { readGolden } from './golden.js';

const PATH = sharedModel('stories260K.gguf');
const golden = readGolden('stories260K');
const PROMPT = [1, 403, 407, 261, 378];
const greedy = (n: number): SamplingParams => ({ ...DEFAULT_SAMPLING, temperature: 0, maxTokens: n });

async function collect(gen: AsyncGenerator<GenerationEvent>): Promise<{ ids: number[]; text: string; done: Extract<GenerationEvent, { kind: 'done' }> }> {
  const ids: number[] = [];
  let text = '';
  let done: Extract<GenerationEvent, { kind: 'done' }> | undefined;
  for await (const ev of gen) {
    if (ev.kind === 'token') {
      ids.push(ev.id);
      text += ev.text;
    } else if (ev.kind === 'done') done = ev;
  }
  return { ids, text, done: done! };
}

describe.skipIf(!HAVE_SHARED || !existsSync(PATH) || !golden)('Session', () => {
  let lm: LoadedModel;
  beforeAll(async () => {
    lm = await LoadedModel.load(PATH, { contextSize: 128, backend: 'scalar' });
  });
  afterAll(() => lm?.dispose());

  it('streams the exact prompt, tokens with their text and top candidates, then done', async () => {
    const events: GenerationEvent[] = [];
    for await (const ev of new Session(lm).generate(PROMPT, greedy(8))) events.push(ev);
    expect(events[0]).toEqual({ kind: 'prompt', text: lm.tokenizer.decode(PROMPT), tokens: PROMPT });
    const tokens = events.filter((e) => e.kind === 'token');
    expect(tokens.map((e) => e.id)).toEqual(golden!.cases[0].tokens.slice(0, 8));
    expect(tokens.map((e) => e.text).join('')).toBe(', there was a little girl');
    expect(tokens[0].top[0]).toMatchObject({ id: golden!.cases[0].tokens[0] });
    const done = events.at(-1)!;
    expect(done).toMatchObject({ kind: 'done', reason: 'length', stats: { promptTokens: 5, generatedTokens: 8 } });
  });

  it('splits reasoning from the answer: a thinking opened by the prompt and never closed is all reasoning', async () => {
    const events: GenerationEvent[] = [];
    for await (const ev of new Session(lm).generate(PROMPT, greedy(8), undefined, { reasoning: { format: 'think', startsInside: true } })) events.push(ev);
    const tokens = events.filter((e) => e.kind === 'token');
    expect(tokens.map((e) => e.id)).toEqual(golden!.cases[0].tokens.slice(0, 8));
    expect(tokens.map((e) => e.reasoning).join('')).toBe(', there was a little girl');
    expect(tokens.map((e) => e.text).join('')).toBe('');
    const done = events.at(-1)! as Extract<GenerationEvent, { kind: 'done' }>;
    expect(done.stats.reasoningTokens).toBe(8);
    expect(done.stats.reasoningMs).toBeGreaterThan(0);
    // The same model with a thinking format that it never opens: all answer, nothing counted.
    const plain = await collect(new Session(lm).generate(PROMPT, greedy(8), undefined, { reasoning: { format: 'think', startsInside: false } }));
    expect(plain.text).toBe(', there was a little girl');
    expect(plain.done.stats.reasoningTokens).toBe(0);
  });

  it('reuses the cached prefix: continuing a conversation gives the same tokens as starting afresh', async () => {
    const s = new Session(lm);
    const first = await collect(s.generate(PROMPT, greedy(10)));
    expect(s.used).toBe(5 + 9); // the last sampled token is not evaluated yet
    const next = await collect(s.generate([...PROMPT, ...first.ids], greedy(10)));
    expect(next.done.stats.promptTokens).toBe(15);
    const fresh = await collect(new Session(lm).generate(PROMPT, greedy(20)));
    expect([...first.ids, ...next.ids]).toEqual(fresh.ids);
    expect(fresh.ids).toEqual(golden!.cases[0].tokens.slice(0, 20));
  });

  it('stops between tokens when cancelled', async () => {
    const ac = new AbortController();
    const ids: number[] = [];
    let reason = '';
    for await (const ev of new Session(lm).generate(PROMPT, greedy(50), ac.signal)) {
      if (ev.kind === 'token' && ids.push(ev.id) === 3) ac.abort();
      if (ev.kind === 'done') reason = ev.reason;
    }
    expect(ids.length).toBe(3);
    expect(reason).toBe('cancelled');
  });

  it('ends with reason "context" when the context fills, and refuses a prompt that does not fit', async () => {
    const small = await LoadedModel.load(PATH, { contextSize: 12, backend: 'scalar' });
    try {
      const r = await collect(new Session(small).generate(PROMPT, greedy(100), undefined, { stopAtEog: false }));
      expect(r.done.reason).toBe('context');
      expect(r.ids.length).toBe(12 - 5 + 1); // positions 5..11 evaluated, one more sampled
      await expect(collect(new Session(small).generate(new Array(13).fill(1), greedy(1)))).rejects.toBeInstanceOf(ContextFullError);
    } finally {
      small.dispose();
    }
  });

  it('`pantheon run --temp 0 --json` prints llama.cpp\'s tokens', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['run', PATH, '-p', 'Once upon a time', '-n', '16', '--temp', '0', '--json', '--ctx', '64'], { out: (t) => out.push(t), err: (t) => err.push(t), isTty: false });
    expect(err).toEqual([]);
    expect(code).toBe(0);
    const r = JSON.parse(out.join(''));
    expect(r.prompt_tokens).toEqual(golden!.cases[0].promptTokens);
    expect(r.tokens).toEqual(golden!.cases[0].tokens.slice(0, 16));
    expect(golden!.cases[0].text.startsWith(r.text)).toBe(true);
    expect(r.text).toBe(', there was a little girl named Lily. She loved to play');
    expect(r.ttft_ms).toBeGreaterThan(0);
  });
});

describe('automatic threads', () => {
  it('one thread below 16 MiB of weights, every core above', async () => {
    const { autoThreads, SMALL_MODEL_BYTES } = await import('../../src/engine/session.js');
    expect(SMALL_MODEL_BYTES).toBe(16 * 1024 * 1024);
    expect(autoThreads(1_100_000, 8)).toBe(1);
    expect(autoThreads(SMALL_MODEL_BYTES - 1, 8)).toBe(1);
    expect(autoThreads(SMALL_MODEL_BYTES, 8)).toBe(8);
    expect(autoThreads(400 * 2 ** 20, 2)).toBe(2);
    expect(autoThreads(400 * 2 ** 20, 0)).toBe(1);
  });

  it("the pool holds an eighth of the weights twice only where there is room: 80% of the machine's memory, no extra memory per thread", async () => {
    const { poolBand } = await import('../../src/engine/session.js');
    const GiB = 2 ** 30;
    // 10 GiB of weights + 1 GiB of cache: 10·1.125 + 1 = 12.25 GiB, within 0.8 · 24 = 19.2 but not 0.8 · 14 = 11.2
    expect(poolBand({ weights: 10 * GiB, kvCache: GiB }, 24 * GiB, 8)).toBe(0.125);
    expect(poolBand({ weights: 10 * GiB, kvCache: GiB }, 14 * GiB, 8)).toBe(0);
    expect(poolBand({ weights: 10 * GiB, kvCache: GiB }, 24 * GiB, 1)).toBe(0);
    // …and without giving a thread more WebAssembly memories (pool-plan.ts), each with 3 GiB beside
    // its share of the cache and the reserve: 7 GiB on 2 threads is 7·1.01·(1/2 + 1/8) = 4.4 GiB
    // per thread with bands, 3.5 without, two memories either way; 5 GiB is 2.5 without (one), 3.2 with
    expect(poolBand({ weights: 7 * GiB, kvCache: GiB }, 24 * GiB, 2)).toBe(0.125);
    expect(poolBand({ weights: 5 * GiB, kvCache: GiB }, 24 * GiB, 2)).toBe(0);
    expect(poolBand({ weights: 7 * GiB, kvCache: GiB }, 24 * GiB, 3)).toBe(0.125);
  });

  it.skipIf(!HAVE_SHARED || !existsSync(PATH))('threads: 0 loads stories260K (1.1 MB of weights) on one thread', async () => {
    const lm = await LoadedModel.load(PATH, { contextSize: 64, threads: 0 });
    try {
      expect(lm.model.backend.threads).toBe(1);
      expect(lm.backendName).not.toMatch(/pool/);
    } finally {
      lm.dispose();
    }
  });
});
