// The remote-model client against a second, independent OpenAI-compatible server: llama.cpp
// through node-llama-cpp (bench/llama-openai-server.mjs, dev-only; skipped with a notice where
// bench/ is not installed). The reply streams, usage becomes the stats, and a wrong key or model
// is one sentence, as against `pantheon serve`.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerationEvent, SamplingSettings } from '../../src/shared/contract.js';
import { loadSessionModel } from '../../src/engine/host/engine.js';
import { ROOT } from '../helpers.js';
import { HAVE_BENCH, startLlamaServer } from './llama-server.js';

if (!HAVE_BENCH) console.warn('remote-llama.test: bench/ is not installed (npm run bench:install); the llama.cpp server checks are skipped');

const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');
const KEY = 'llama-key';
const SAMPLING: SamplingSettings = {
  temperature: 0, topK: 40, topP: 1, minP: 0.05, repeatPenalty: 1, presencePenalty: 0, frequencyPenalty: 0,
  penaltyLastN: 64, seed: 7, maxTokens: 8, stop: [],
};

describe.skipIf(!HAVE_BENCH)('remote model against llama.cpp behind node-llama-cpp', () => {
  let child: ChildProcess;
  let url = '';

  beforeAll(async () => {
    const server = startLlamaServer(DEMO, KEY);
    child = server.child;
    url = await server.url;
  }, 60_000);

  afterAll(() => {
    child?.kill();
  });

  const load = (apiKey: string, model = 'stories260K') =>
    loadSessionModel({ path: '', contextSize: 1024, threads: 1, signal: new AbortController().signal, onProgress: () => {}, remote: { baseUrl: url, apiKey, model } });

  it('streams a reply with usage and a length stop', async () => {
    const m = await load(KEY);
    const ev: GenerationEvent[] = [];
    for await (const e of m.chat([{ role: 'user', content: 'Once upon a time' }], SAMPLING, new AbortController().signal)) ev.push(e);
    const tokens = ev.filter((e) => e.kind === 'token');
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.map((t) => (t.kind === 'token' ? t.text : '')).join('')).toMatch(/\w/);
    const done = ev.at(-1);
    if (done?.kind !== 'done') throw new Error('no done event');
    expect(done.stats.stopReason).toBe('length');
    expect(done.stats.generatedTokens).toBeGreaterThanOrEqual(8);
    expect(done.stats.promptTokens).toBeGreaterThan(0);
  });

  it('a wrong key and an unknown model are one sentence each', async () => {
    await expect(load('nope')).rejects.toThrow(/refused the API key \(HTTP 401\).*It said: Incorrect API key provided\./);
    await expect(load(KEY, 'other')).rejects.toThrow(/does not serve "other" \(it lists "stories260K"\)/);
  });
});
