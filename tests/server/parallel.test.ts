// `pantheon serve --parallel 3`: three clients at once, their decode steps run as one batch
// (decode-batch.ts). Each greedy reply must be the text of the same request run alone on a fresh
// Session, and, for the prompts llama.cpp's goldens record, the text of llama.cpp's own greedy
// tokens (tests/golden/llama.cpp, bench/record-goldens.mjs). The backend is wrapped to see the
// products: a decode batch multiplies the output matrix by 3 rows at once (a prompt's last token,
// or a step alone, by one).

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { ObservingBackend } from '../../src/engine/backend/observing.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { DEFAULT_SAMPLING } from '../../src/engine/sample/index.js';
import { OpenAiServer } from '../../src/engine/server/server.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED, ROOT, sharedModel } from '../helpers.js';
import { readGolden } from '../model/golden.js';

const CTX = 256;
const OTHER = ['Tom had a dog', 'The sun was hot and', 'One day a bird'];

interface Case {
  name: string;
  file: string;
  /**
   * Runs its sequences one after another (a hybrid with recurrent state): no batch. (Its greedy
   * tokens part from llama.cpp's at a near-tie, fidelity.test.ts: only the alone run is its truth.)
   */
  interleaved?: boolean;
}

const CASES: Case[] = [
  { name: 'stories260K', file: join(ROOT, 'resources/models/stories260K.gguf') },
  // llama (GQA); qwen2 (q/k/v biases, NEOX RoPE); gemma2 (sliding window 8, soft-caps)
  ...['tiny-llama-s5', 'tiny-qwen2-s5', 'tiny-gemma2-s1'].map((name) => ({ name, file: sharedModel(`tiny-random/${name}.gguf`) })),
  { name: 'tiny-qwen35-s1', file: sharedModel('tiny-random/tiny-qwen35-s1.gguf'), interleaved: true },
].filter((c) => existsSync(c.file) && (c.name === 'stories260K' || HAVE_SHARED));

const opened: { close(): unknown }[] = [];
afterAll(async () => {
  for (const x of opened.reverse()) await x.close();
});

/** Generated tokens' text as a reply streams it (no leading-space strip of a whole decode). */
function streamText(lm: LoadedModel, tokens: number[]): string {
  const d = lm.tokenizer.createStreamDecoder({ skipSpecial: true });
  return tokens.map((t) => d.push(t)).join('') + d.flush();
}

/** The request's greedy text on a fresh Session of its own (no batch). */
async function alone(lm: LoadedModel, prompt: string, n: number): Promise<string> {
  let text = '';
  const s = new Session(lm);
  for await (const ev of s.generate(lm.tokenizer.encode(prompt, { addSpecial: true, parseSpecial: true }), { ...DEFAULT_SAMPLING, temperature: 0, maxTokens: n })) if (ev.kind === 'token') text += ev.text;
  return text;
}

describe('pantheon serve --parallel 3: three clients at once, batched', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s: each reply equals the request run alone (and llama.cpp\'s greedy text)', async (_, c) => {
    // the output matrix's products, by rows
    const outputRows = new Map<number, number>();
    let outputName = '';
    const backend = new ObservingBackend(new WasmBackend(), (spec, _x, n) => {
      if (spec.name === outputName) outputRows.set(n, (outputRows.get(n) ?? 0) + 1);
    });
    const lm = await LoadedModel.load(c.file, { contextSize: CTX, backend });
    opened.push({ close: () => lm.dispose() });
    outputName = lm.model.w.output.spec.name;
    const golden = c.interleaved ? null : readGolden(c.name);
    const prompts = [...(golden?.cases ?? []).map((g) => ({ prompt: g.prompt, n: g.n, llamaCpp: streamText(lm, g.tokens) })), ...OTHER.map((prompt) => ({ prompt, n: 32, llamaCpp: null }))].slice(0, 3);
    const want = [];
    for (const p of prompts) want.push(await alone(lm, p.prompt, p.n));
    outputRows.clear();

    const server = await OpenAiServer.start(lm, { port: 0, parallel: 3 });
    opened.push(server);
    expect(server.interleaved === null).toBe(!c.interleaved);
    const client = new OpenAI({ baseURL: server.url, apiKey: 'none', maxRetries: 0 });
    const texts = await Promise.all(prompts.map(async (p) => {
      const stream = await client.completions.create({ model: server.id, prompt: p.prompt, temperature: 0, max_tokens: p.n, stream: true });
      let text = '';
      for await (const ch of stream) text += ch.choices[0]?.text ?? '';
      return text;
    }));
    await server.close();

    expect(texts).toEqual(want);
    // llama.cpp's greedy tokens, decoded (the goldens that record them; their text field is llama.cpp's own detokeniser)
    for (let i = 0; i < prompts.length; i++) if (prompts[i].llamaCpp !== null) expect(texts[i], prompts[i].prompt).toBe(prompts[i].llamaCpp);
    const batched = [...outputRows].filter(([n]) => n > 1);
    if (c.interleaved) expect(batched).toEqual([]);
    else expect(outputRows.get(3) ?? 0, `output products by rows: ${JSON.stringify([...outputRows])}`).toBeGreaterThan(0);
    console.log(`${c.name}: output products by rows ${JSON.stringify([...outputRows].sort((a, b) => a[0] - b[0]))}`);
  });
});

describe('pantheon serve --parallel 3: per-request options stay per request', () => {
  it('log-probabilities, a stop string, penalties and a JSON grammar at once equal each request sent alone', async () => {
    let batchedSteps = 0;
    let outputName = '';
    const backend = new ObservingBackend(new WasmBackend(), (spec, _x, n) => {
      if (spec.name === outputName && n > 1) batchedSteps++;
    });
    const lm = await LoadedModel.load(join(ROOT, 'resources/models/stories260K.gguf'), { contextSize: CTX, backend });
    opened.push({ close: () => lm.dispose() });
    outputName = lm.model.w.output.spec.name;
    const server = await OpenAiServer.start(lm, { port: 0, parallel: 3 });
    opened.push(server);
    const client = new OpenAI({ baseURL: server.url, apiKey: 'none', maxRetries: 0 });
    const id = server.id;
    const requests = [
      () => client.completions.create({ model: id, prompt: 'Once upon a time', temperature: 0, max_tokens: 30, logprobs: 3 }),
      () => client.completions.create({ model: id, prompt: 'Tom had a dog', temperature: 0, max_tokens: 40, stop: ['.'], frequency_penalty: 0.8 }),
      () => client.chat.completions.create({ model: id, messages: [{ role: 'user', content: 'Hi' }], temperature: 0, max_tokens: 24, response_format: { type: 'json_object' } }),
    ];
    // the truth: each request on its own, nothing else generating (a batch of one is the one-token forward())
    const strip = (r: { choices: unknown[] }) => r.choices;
    const want = [];
    for (const q of requests) want.push(strip(await q()));
    expect(batchedSteps).toBe(0);
    const got = (await Promise.all(requests.map((q) => q()))).map(strip);
    expect(got).toEqual(want);
    expect(batchedSteps).toBeGreaterThan(0);
  });
});
