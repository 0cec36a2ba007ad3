// A remote model behind the engine host's EngineModel, against `pantheon serve` on the demo model:
// the reply streams with the same greedy text as the local engine gives, usage becomes the stats,
// Stop cancels, and each failure (unreachable, wrong key, unknown model) is one sentence.
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerationEvent, SamplingSettings } from '../../src/shared/contract.js';
import { loadSessionModel, type EngineModel } from '../../src/engine/host/engine.js';
import { LoadedModel } from '../../src/engine/session.js';
import { OpenAiServer } from '../../src/engine/server/server.js';
import { ROOT } from '../helpers.js';

const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');
const KEY = 'remote-test-key';
const SAMPLING: SamplingSettings = {
  temperature: 0, topK: 40, topP: 1, minP: 0.05, repeatPenalty: 1, presencePenalty: 0, frequencyPenalty: 0,
  penaltyLastN: 64, seed: 7, maxTokens: 16, stop: [],
};
const messages = [{ role: 'user' as const, content: 'Once upon a time' }];
const signal = () => new AbortController().signal;

let served: LoadedModel;
let server: OpenAiServer;

beforeAll(async () => {
  served = await LoadedModel.load(DEMO, { contextSize: 256 });
  server = await OpenAiServer.start(served, { host: '127.0.0.1', port: 0, apiKey: KEY });
});

afterAll(async () => {
  await server?.close();
  served?.dispose();
});

async function collect(m: EngineModel, ctl = new AbortController(), stopAfter = Infinity): Promise<GenerationEvent[]> {
  const out: GenerationEvent[] = [];
  for await (const e of m.chat(messages, SAMPLING, ctl.signal)) {
    out.push(e);
    if (out.filter((x) => x.kind === 'token').length >= stopAfter) ctl.abort();
  }
  return out;
}

const text = (ev: GenerationEvent[]) => ev.map((e) => (e.kind === 'token' ? e.text : '')).join('');
const load = (remote: { baseUrl: string; apiKey: string | null; model: string }) =>
  loadSessionModel({ path: '', contextSize: 256, threads: 1, signal: signal(), onProgress: () => {}, remote });

describe('remote model over the OpenAI API', () => {
  it("streams the server's reply: the local engine's greedy text, the request as the prompt, usage as stats", async () => {
    const id = 'stories260K';
    const remote = await load({ baseUrl: server.url, apiKey: KEY, model: id });
    const local = await loadSessionModel({ path: DEMO, contextSize: 256, threads: 1, signal: signal(), onProgress: () => {} });
    try {
      expect(remote.info).toMatchObject({ modelName: id, backend: expect.stringMatching(/^remote \(127\.0\.0\.1:\d+\)$/) });
      const got = await collect(remote);
      const want = await collect(local);
      expect(text(got)).toBe(text(want));
      expect(text(got).length).toBeGreaterThan(0);
      const prompt = got[0];
      expect(prompt.kind === 'prompt' && JSON.parse(prompt.text)).toMatchObject({ model: id, messages, stream: true, max_tokens: 16, temperature: 0 });
      const done = got.at(-1);
      const localDone = want.at(-1);
      if (done?.kind !== 'done' || localDone?.kind !== 'done') throw new Error('no done event');
      expect(done.stats.promptTokens).toBe(localDone.stats.promptTokens);
      expect(done.stats.generatedTokens).toBe(localDone.stats.generatedTokens);
      expect(done.stats.stopReason).toBe(localDone.stats.stopReason);
    } finally {
      remote.dispose();
      local.dispose();
    }
  });

  it('Stop mid-reply ends with a cancelled reply', async () => {
    const remote = await load({ baseUrl: server.url, apiKey: KEY, model: 'stories260K' });
    const ev = await collect(remote, new AbortController(), 2);
    const done = ev.at(-1);
    expect(done?.kind === 'done' && done.stats.stopReason).toBe('cancelled');
    expect(ev.filter((e) => e.kind === 'token').length).toBeLessThan(16);
  });

  it('failures are one sentence each', async () => {
    await expect(load({ baseUrl: server.url, apiKey: 'wrong', model: 'stories260K' })).rejects.toThrow(/^http:\/\/127\.0\.0\.1:\d+\/v1 refused the API key \(HTTP 401\); check the key of this server\./);
    await expect(load({ baseUrl: server.url, apiKey: KEY, model: 'gpt-9' })).rejects.toThrow(/does not serve "gpt-9" \(it lists "stories260K"\)/);
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    await expect(load({ baseUrl: `http://127.0.0.1:${closed}/v1`, apiKey: null, model: 'x' })).rejects.toThrow(/^Cannot reach http:\/\/127\.0\.0\.1:\d+\/v1 \(nothing is listening there\); check the URL and that the server is running\.$/);
  });
});
