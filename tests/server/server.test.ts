// `pantheon serve`: the OpenAI-compatible server driven by the official `openai` client, on the
// demo model. Greedy outputs are checked against the engine's own greedy run (a Session driven
// directly), errors against the shapes the client surfaces, and the CLI as a user runs it.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { APIError, APIUserAbortError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoadedModel, Session, type GenerateOptions } from '../../src/engine/session.js';
import { reasoningSetup, renderChat, type ChatMessage } from '../../src/engine/chat/index.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../../src/engine/sample/index.js';
import { OpenAiServer, type RequestLogEntry } from '../../src/engine/server/server.js';
import { ROOT } from '../helpers.js';
import { THINKER_ANSWER, THINKER_REASONING, THINKER_REASONING_TOKENS, writeThinkerModel } from '../chat/thinker-model.js';

const MODEL = join(ROOT, 'resources/models/stories260K.gguf');
const KEY = 'test-key';
const CTX = 256;

let model: LoadedModel;
let reference: LoadedModel;
let server: OpenAiServer;
let client: OpenAI;
const log: RequestLogEntry[] = [];

beforeAll(async () => {
  model = await LoadedModel.load(MODEL, { contextSize: CTX });
  reference = await LoadedModel.load(MODEL, { contextSize: CTX });
  server = await OpenAiServer.start(model, { host: '127.0.0.1', port: 0, apiKey: KEY, onRequest: (e) => log.push(e) });
  client = new OpenAI({ baseURL: server.url, apiKey: KEY, maxRetries: 0 });
});

afterAll(async () => {
  await server?.close();
  model?.dispose();
  reference?.dispose();
});

const greedy = (maxTokens: number, stop: string[] = []): SamplingParams => ({ ...DEFAULT_SAMPLING, temperature: 0, maxTokens, stop });

/** The engine's own greedy text after `tokens`, on a fresh session of the reference model. */
async function engineText(tokens: number[], sampling: SamplingParams, opts: GenerateOptions = {}): Promise<{ text: string; reason: string; n: number }> {
  const s = new Session(reference);
  let text = '';
  let reason = '';
  let n = 0;
  for await (const ev of s.generate(tokens, sampling, undefined, opts)) {
    if (ev.kind === 'token') text += ev.text;
    else if (ev.kind === 'done') {
      reason = ev.reason;
      n = ev.stats.generatedTokens;
    }
  }
  return { text, reason, n };
}

async function engineCompletion(prompt: string, sampling: SamplingParams) {
  return engineText(reference.tokenizer.encode(prompt, { addSpecial: true, parseSpecial: true }), sampling);
}

async function engineChat(messages: ChatMessage[], sampling: SamplingParams) {
  const r = renderChat(reference.templateInfo, messages);
  const tokens = reference.tokenizer.encode(r.text, { addSpecial: !r.startsWithBos, parseSpecial: true });
  return engineText(tokens, sampling, { stopStrings: r.stopStrings, reasoning: reasoningSetup(reference.templateInfo, r.text) });
}

async function apiError(p: Promise<unknown>): Promise<APIError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof APIError) return err;
    throw err;
  }
  throw new Error('the request succeeded');
}

const PROMPT = 'Once upon a time, there was a little girl';

describe('pantheon serve: the openai client', () => {
  it('lists the loaded model, id = the file name without .gguf', async () => {
    const list = await client.models.list();
    expect(list.data.map((m) => m.id)).toEqual(['stories260K']);
    expect(list.data[0].object).toBe('model');
    expect((await client.models.retrieve('stories260K')).id).toBe('stories260K');
  });

  it('chat: greedy non-streaming equals the engine, with usage and finish_reason length', async () => {
    const messages: ChatMessage[] = [{ role: 'user', content: PROMPT }];
    const want = await engineChat(messages, greedy(24));
    const r = await client.chat.completions.create({ model: 'stories260K', messages, temperature: 0, max_tokens: 24 });
    expect(r.object).toBe('chat.completion');
    expect(r.model).toBe('stories260K');
    expect(r.choices).toHaveLength(1);
    expect(r.choices[0].message.role).toBe('assistant');
    expect(r.choices[0].message.content).toBe(want.text);
    expect(want.text.length).toBeGreaterThan(10);
    expect(r.choices[0].finish_reason).toBe(want.reason === 'length' ? 'length' : 'stop');
    expect(r.usage?.completion_tokens).toBe(want.n);
    expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);
    expect(r.usage!.prompt_tokens).toBeGreaterThan(5);
  });

  it('chat: streaming gives the same text in chunks, then usage (include_usage) and [DONE]', async () => {
    const messages: ChatMessage[] = [{ role: 'system', content: 'Tell a story.' }, { role: 'user', content: [{ type: 'text', text: PROMPT }] as never }];
    const want = await engineChat([{ role: 'system', content: 'Tell a story.' }, { role: 'user', content: PROMPT }], greedy(20));
    const stream = await client.chat.completions.create({ messages: messages as never, model: 'stories260K', temperature: 0, max_completion_tokens: 20, stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id)).toBe(true);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(want.text);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage?.completion_tokens).toBe(want.n);
    expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe('length');
  });

  it('completions: greedy equals the engine, streamed and not', async () => {
    const want = await engineCompletion(PROMPT, greedy(30));
    const r = await client.completions.create({ model: 'stories260K', prompt: PROMPT, temperature: 0, max_tokens: 30 });
    expect(r.object).toBe('text_completion');
    expect(r.choices[0].text).toBe(want.text);
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.usage?.completion_tokens).toBe(30);
    const stream = await client.completions.create({ model: 'stories260K', prompt: PROMPT, temperature: 0, max_tokens: 30, stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const c of stream) {
      text += c.choices[0]?.text ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(want.text);
    expect(finish).toBe('length');
  });

  it('stop sequences end the text before the stop, which is not returned', async () => {
    // a word from the middle of the greedy continuation is the stop
    const stopIn = (full: string): { stop: string; cut: string } => {
      const words = full.split(' ').filter((w) => w.length > 2);
      const stop = ` ${words[Math.floor(words.length / 2)]}`;
      return { stop, cut: full.slice(0, full.indexOf(stop)) };
    };
    const a = stopIn((await engineCompletion(PROMPT, greedy(30))).text);
    const r = await client.completions.create({ model: 'stories260K', prompt: PROMPT, temperature: 0, max_tokens: 30, stop: a.stop });
    expect(r.choices[0].text).toBe(a.cut);
    expect(r.choices[0].finish_reason).toBe('stop');
    const messages: ChatMessage[] = [{ role: 'user', content: PROMPT }];
    const b = stopIn((await engineChat(messages, greedy(30))).text);
    const c = await client.chat.completions.create({ model: 'stories260K', messages, temperature: 0, max_tokens: 30, stop: ['zzzz', b.stop] });
    expect(c.choices[0].message.content).toBe(b.cut);
    expect(c.choices[0].finish_reason).toBe('stop');
  });

  it('seeded sampling repeats; Pantheon extras (top_k, min_p, repeat_penalty) and penalties are taken', async () => {
    const ask = () => client.completions.create({ prompt: PROMPT, model: 'stories260K', max_tokens: 16, temperature: 1, seed: 42, top_p: 0.9, presence_penalty: 0.5, frequency_penalty: 0.5, top_k: 20, min_p: 0.01, repeat_penalty: 1.1 } as never);
    const a = (await ask()) as OpenAI.Completion;
    const b = (await ask()) as OpenAI.Completion;
    expect(a.choices[0].text).toBe(b.choices[0].text);
    expect(a.choices[0].text.length).toBeGreaterThan(0);
  });

  it('errors: 401 for a wrong or missing key, 404 for an unknown model, 400 naming a field, 400 for a prompt too long', async () => {
    const wrong = new OpenAI({ baseURL: server.url, apiKey: 'nope', maxRetries: 0 });
    const e401 = await apiError(wrong.models.list());
    expect(e401.status).toBe(401);
    expect(e401.code).toBe('invalid_api_key');
    const raw = await fetch(`${server.url}/models`);
    expect(raw.status).toBe(401);
    expect((await raw.json()).error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key', param: null });

    const e404 = await apiError(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
    expect(e404.status).toBe(404);
    expect(e404.code).toBe('model_not_found');
    expect(e404.message).toMatch(/gpt-4o/);

    const eType = await apiError(client.chat.completions.create({ model: 'stories260K', messages: [{ role: 'user', content: 'hi' }], temperature: 'hot' as never }));
    expect(eType.status).toBe(400);
    expect(eType.param).toBe('temperature');
    expect(eType.message).toMatch(/temperature/);
    const eMsg = await apiError(client.chat.completions.create({ model: 'stories260K', messages: 'hi' as never }));
    expect(eMsg.param).toBe('messages');

    const long = 'the cat sat on the mat '.repeat(80);
    const eCtx = await apiError(client.completions.create({ model: 'stories260K', prompt: long, max_tokens: 4 }));
    expect(eCtx.status).toBe(400);
    expect(eCtx.code).toBe('context_length_exceeded');
    const n = reference.tokenizer.encode(long, { addSpecial: true, parseSpecial: true }).length;
    expect(eCtx.message).toContain(`${n} tokens`);
    expect(eCtx.message).toContain(`holds ${CTX}`);

    const bad = await fetch(`${server.url}/chat/completions`, { method: 'POST', headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' }, body: '{"messages": [' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('raw HTTP: unknown URL 404, wrong method 405, an unsupported role or n 400 naming the field', async () => {
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${server.url}${path}`, { method, headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, error: ((await r.json()) as { error: Record<string, unknown> }).error };
    };
    expect(await call('GET', '/nothing')).toMatchObject({ status: 404, error: { code: 'unknown_url' } });
    expect(await call('GET', '/chat/completions')).toMatchObject({ status: 405 });
    expect(await call('GET', '/models/other')).toMatchObject({ status: 404, error: { code: 'model_not_found', param: 'model' } });
    expect(await call('POST', '/chat/completions', { messages: [{ role: 'wizard', content: 'hi' }] })).toMatchObject({ status: 400, error: { param: 'messages[0].role' } });
    expect(await call('POST', '/chat/completions', { messages: [{ role: 'user', content: 7 }] })).toMatchObject({ status: 400, error: { param: 'messages[0].content' } });
    expect(await call('POST', '/completions', { prompt: 'x', n: 2 })).toMatchObject({ status: 400, error: { param: 'n' } });
    expect(await call('POST', '/completions', { prompt: 'x', stop: [1] })).toMatchObject({ status: 400, error: { param: 'stop', type: 'invalid_request_error' } });
    expect(await call('POST', '/completions', [1, 2])).toMatchObject({ status: 400, error: { code: 'invalid_json' } });
    // what is not implemented yet is refused by name, never silently ignored
    const hi = [{ role: 'user', content: 'hi' }];
    for (const [param, extra] of [['logprobs', { logprobs: true }], ['tools', { tools: [{ type: 'function', function: { name: 'f' } }] }]] as const) {
      expect(await call('POST', '/chat/completions', { messages: hi, ...extra })).toMatchObject({ status: 400, error: { param, code: 'unsupported_parameter' } });
    }
    expect((await client.chat.completions.create({ messages: hi as never, model: 'stories260K', max_tokens: 2, logprobs: false, response_format: { type: 'text' } })).choices).toHaveLength(1);
  });

  it('a stream aborted by the client stops its generation', async () => {
    const ac = new AbortController();
    const stream = await client.completions.create({ model: 'stories260K', prompt: PROMPT, temperature: 0, max_tokens: 200, stream: true }, { signal: ac.signal });
    let got = 0;
    // (the client's stream ends quietly, or with APIUserAbortError, once aborted)
    try {
      for await (const c of stream) {
        if (c.choices[0]?.text) got++;
        if (got === 3) ac.abort();
      }
    } catch (err) {
      if (!(err instanceof APIUserAbortError)) throw err;
    }
    expect(got).toBe(3);
    // the server logs the request as cancelled, a few tokens in, far from 200
    for (let i = 0; i < 100 && !log.some((e) => e.reason === 'cancelled'); i++) await new Promise((r) => setTimeout(r, 20));
    const entry = log.find((e) => e.reason === 'cancelled');
    expect(entry).toBeDefined();
    // (a few tokens may be on the wire when the client leaves; the server stops at its next one)
    expect(entry!.completionTokens).toBeLessThanOrEqual(got + 8);
    // and the next request is served at once
    const r = await client.completions.create({ model: 'stories260K', prompt: PROMPT, temperature: 0, max_tokens: 3 });
    expect(r.choices[0].finish_reason).toBe('length');
  });

  it('a request whose client leaves while it waits its turn never runs', async () => {
    const before = log.length;
    // the first runs until the context is full (hundreds of ms even on a fast machine); the second
    // waits behind it, and leaves once the server has seen it arrive
    const first = client.completions.create({ model: 'stories260K', prompt: PROMPT, temperature: 0, max_tokens: CTX });
    await new Promise((r) => setTimeout(r, 15)); // (the first is in before the second)
    const ac = new AbortController();
    const second = client.completions.create({ model: 'stories260K', prompt: 'Tom had a dog', temperature: 0, max_tokens: 120 }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 10);
    await expect(second).rejects.toBeInstanceOf(APIUserAbortError);
    expect((await first).choices[0].finish_reason).toBe('length');
    for (let i = 0; i < 50 && log.length < before + 2; i++) await new Promise((r) => setTimeout(r, 20));
    const entries = log.slice(before);
    expect(entries).toContainEqual(expect.objectContaining({ status: 499, reason: 'cancelled', completionTokens: 0 }));
    expect(entries).toContainEqual(expect.objectContaining({ status: 200, reason: 'context' }));
  });

  it('requests sent at once queue and all complete, each with its own greedy text', async () => {
    const want = (await engineCompletion(PROMPT, greedy(12))).text;
    const rs = await Promise.all([0, 1, 2].map(() => client.completions.create({ model: 'stories260K', prompt: PROMPT, temperature: 0, max_tokens: 12 })));
    expect(rs.map((r) => r.choices[0].text)).toEqual([want, want, want]);
  });
});

describe('pantheon serve: the CLI', () => {
  it('prints "listening on", answers, and exits 0 on SIGINT', async () => {
    const child = spawn(process.execPath, ['bin/pantheon.mjs', 'serve', 'resources/models/stories260K.gguf', '--port', '0', '--ctx', '128'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+\/v1)/.exec(out);
        if (m) resolve(m[1]);
      });
      void exited.then(() => reject(new Error(`exited early: ${err}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const c = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
    const r = await c.chat.completions.create({ model: 'stories260K', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5 });
    expect(r.usage?.completion_tokens).toBeGreaterThan(0);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(err).toMatch(/POST \/v1\/chat\/completions 200/);
  });
});

describe('pantheon serve: a thinking model', () => {
  it('puts the reasoning in reasoning_content and the answer in content, streamed and not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pantheon-serve-'));
    const thinker = await LoadedModel.load(writeThinkerModel(dir), { contextSize: 128 });
    const s = await OpenAiServer.start(thinker, { port: 0 });
    try {
      const c = new OpenAI({ baseURL: s.url, apiKey: 'none', maxRetries: 0 });
      const messages: ChatMessage[] = [{ role: 'user', content: 'hello' }];
      const r = await c.chat.completions.create({ model: 'scripted-thinker', messages, temperature: 0, max_tokens: 60 });
      const msg = r.choices[0].message as typeof r.choices[0]['message'] & { reasoning_content?: string };
      expect(msg.content).toBe(THINKER_ANSWER);
      expect(msg.reasoning_content?.trim()).toBe(THINKER_REASONING);
      expect(r.choices[0].finish_reason).toBe('stop');
      expect((r.usage as { completion_tokens_details?: { reasoning_tokens?: number } }).completion_tokens_details?.reasoning_tokens).toBe(THINKER_REASONING_TOKENS);
      const stream = await c.chat.completions.create({ model: 'scripted-thinker', messages, temperature: 0, max_tokens: 60, stream: true });
      let content = '';
      let reasoning = '';
      for await (const ch of stream) {
        const d = ch.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
        content += d?.content ?? '';
        reasoning += d?.reasoning_content ?? '';
      }
      expect(content).toBe(THINKER_ANSWER);
      expect(reasoning.trim()).toBe(THINKER_REASONING);
    } finally {
      await s.close();
      thinker.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
