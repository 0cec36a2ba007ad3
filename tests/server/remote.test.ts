// A remote OpenAI-compatible server as a chat backend (src/main/services/remote.ts), tested against
// `pantheon serve` itself (OpenAiServer on the demo model): the model list, a streamed greedy reply
// equal to the server's own non-streamed one, Stop, and each failure as one sentence (a wrong key,
// an unknown model, nothing listening, a bad URL; 429 and 5xx from a stub that only sends statuses).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerationEvent, RequestMessage } from '../../src/shared/contract.js';
import { DEFAULT_SAMPLING } from '../../src/engine/sample/index.js';
import { LoadedModel } from '../../src/engine/session.js';
import { OpenAiServer } from '../../src/engine/server/server.js';
import { listRemoteModels, remoteChat, type RemoteServer } from '../../src/main/services/remote.js';
import { ROOT } from '../helpers.js';

let model: LoadedModel;
let server: OpenAiServer;
let remote: RemoteServer;

beforeAll(async () => {
  model = await LoadedModel.load(join(ROOT, 'resources/models/stories260K.gguf'), { contextSize: 256 });
  server = await OpenAiServer.start(model, { port: 0, apiKey: 'k' });
  remote = { baseUrl: `${server.url}/`, apiKey: 'k' };
});
afterAll(async () => {
  await server?.close();
  model?.dispose();
});

function chat(s: RemoteServer, modelId: string, messages: RequestMessage[], maxTokens: number, cancelAfter = Infinity): Promise<GenerationEvent[]> {
  return new Promise((resolve) => {
    const events: GenerationEvent[] = [];
    let tokens = 0;
    const h = remoteChat(s, modelId, messages, { ...DEFAULT_SAMPLING, temperature: 0, maxTokens }, (e) => {
      events.push(e);
      if (e.kind === 'token' && ++tokens === cancelAfter) h.cancel();
      if (e.kind === 'done' || e.kind === 'error') resolve(events);
    });
  });
}

const errorOf = (events: GenerationEvent[]) => {
  const e = events.at(-1);
  return e?.kind === 'error' ? e.error.message : `no error: ${JSON.stringify(e)}`;
};

describe('a remote server (against pantheon serve)', () => {
  it('lists its models and streams the same greedy reply it gives unstreamed, with its usage', async () => {
    expect(await listRemoteModels(remote)).toEqual(['stories260K']);
    const messages: RequestMessage[] = [{ role: 'user', content: 'Once upon a time' }];
    const res = await fetch(`${server.url}/chat/completions`, { method: 'POST', headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' }, body: JSON.stringify({ messages, temperature: 0, max_tokens: 20 }) });
    const want = (await res.json()) as { choices: { message: { content: string } }[]; usage: { prompt_tokens: number; completion_tokens: number } };
    const events = await chat(remote, 'stories260K', messages, 20);
    expect(events.filter((e) => e.kind === 'token').map((e) => (e as { text: string }).text).join('')).toBe(want.choices[0].message.content);
    const done = events.at(-1)!;
    expect(done.kind).toBe('done');
    if (done.kind !== 'done') return;
    expect(done.stats).toMatchObject({ stopReason: 'length', promptTokens: want.usage.prompt_tokens, generatedTokens: 20 });
    expect(done.stats.ttftMs).toBeGreaterThan(0);
  });

  it('stops when cancelled', async () => {
    const events = await chat(remote, 'stories260K', [{ role: 'user', content: 'Tell me a story' }], 200, 3);
    const done = events.at(-1)!;
    expect(done.kind === 'done' && done.stats.stopReason).toBe('cancelled');
    expect(events.filter((e) => e.kind === 'token').length).toBeLessThan(20);
  });

  it('says each failure in one sentence', async () => {
    const url = server.url;
    expect(errorOf(await chat({ baseUrl: url, apiKey: 'wrong' }, 'stories260K', [{ role: 'user', content: 'hi' }], 2))).toBe(`The server at ${url} refused the API key (401: Incorrect API key provided); check the key.`);
    await expect(listRemoteModels({ baseUrl: url })).rejects.toThrow(/^The server at .* refused the API key \(401: Missing API key/);
    expect(errorOf(await chat(remote, 'gpt-4o', [{ role: 'user', content: 'hi' }], 2))).toMatch(/^The server at .* has no such model or endpoint \(404: The model 'gpt-4o' does not exist; this server has 'stories260K'\); check the base URL/);
    // nothing listening: a port just closed
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(listRemoteModels({ baseUrl: `http://127.0.0.1:${port}/v1` })).rejects.toThrow(`Cannot reach the server at http://127.0.0.1:${port}/v1 (connection refused); check the address and that the server is running.`);
    await expect(listRemoteModels({ baseUrl: 'not a url' })).rejects.toThrow('"not a url" is not a URL; give one like http://localhost:8080/v1.');
  });

  it('429 and 5xx become sentences with the server\'s own message', async () => {
    let status = 429;
    const stub: Server = createServer((_req, res) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: status === 429 ? 'Rate limit reached for requests.' : 'CUDA out of memory.\nTraceback…', type: 'x' } }));
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(stub.address() as AddressInfo).port}/v1`;
    try {
      await expect(listRemoteModels({ baseUrl: base })).rejects.toThrow(`The server at ${base} is limiting requests (429: Rate limit reached for requests); wait a moment and try again.`);
      status = 503;
      expect(errorOf(await chat({ baseUrl: base }, 'm', [{ role: 'user', content: 'hi' }], 2))).toBe(`The server at ${base} failed (503: CUDA out of memory); try again, or check the server's log.`);
    } finally {
      await new Promise<void>((r) => stub.close(() => r()));
    }
  });
});
