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
import { embed } from '../../src/engine/embed.js';
import { ROOT } from '../helpers.js';
import { TOOL_CALL_ARGUMENTS, TOOL_CALL_NAME, writeToolCallerModel } from '../chat/tool-model.js';
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
/** A message as both the engine and the openai client take it. */
type Msg = { role: 'user' | 'system'; content: string };

describe('pantheon serve: the openai client', () => {
  it('lists the loaded model, id = the file name without .gguf', async () => {
    const list = await client.models.list();
    expect(list.data.map((m) => m.id)).toEqual(['stories260K']);
    expect(list.data[0].object).toBe('model');
    expect((await client.models.retrieve('stories260K')).id).toBe('stories260K');
  });

  it('chat: greedy non-streaming equals the engine, with usage and finish_reason length', async () => {
    const messages: Msg[] = [{ role: 'user', content: PROMPT }];
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
    const messages: Msg[] = [{ role: 'system', content: 'Tell a story.' }, { role: 'user', content: [{ type: 'text', text: PROMPT }] as never }];
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

  it('logprobs: the engine\'s per-token log-probabilities, the same streamed and not, in both shapes', async () => {
    // the truth: a Session's own top-3 at each greedy step (itself checked against llama.cpp: tests/model/logprobs.test.ts)
    const tokens = reference.tokenizer.encode(PROMPT, { addSpecial: true, parseSpecial: true });
    const want: { id: number; logprob: number; top: { id: number; logprob: number }[] }[] = [];
    for await (const ev of new Session(reference).generate(tokens, greedy(10), undefined, { topLogprobs: 3 })) if (ev.kind === 'token') want.push(ev.logprobs!);
    const piece = (id: number) => new TextDecoder().decode(reference.tokenizer.bytes(id));
    const r = await client.completions.create({ model: 'stories260K', prompt: PROMPT, temperature: 0, max_tokens: 10, logprobs: 3 });
    const lp = r.choices[0].logprobs!;
    expect(lp.tokens).toEqual(want.map((w) => piece(w.id)));
    expect(lp.token_logprobs).toEqual(want.map((w) => w.logprob));
    expect(lp.top_logprobs).toEqual(want.map((w) => Object.fromEntries(w.top.map((t) => [piece(t.id), t.logprob]))));
    expect(lp.text_offset![0]).toBe(0);
    expect(lp.tokens!.join('')).toBe(r.choices[0].text);

    const messages: Msg[] = [{ role: 'user', content: PROMPT }];
    const c = await client.chat.completions.create({ model: 'stories260K', messages, temperature: 0, max_tokens: 12, logprobs: true, top_logprobs: 4 });
    const content = c.choices[0].logprobs!.content!;
    expect(content).toHaveLength(c.usage!.completion_tokens);
    for (const t of content) {
      expect(t.top_logprobs).toHaveLength(4);
      // greedy: the chosen token is the most likely one; probabilities sorted, each ≤ 0
      expect(t.top_logprobs[0]).toEqual({ token: t.token, logprob: t.logprob, bytes: t.bytes });
      expect(t.top_logprobs.every((x, i) => x.logprob <= 0 && (i === 0 || x.logprob <= t.top_logprobs[i - 1].logprob))).toBe(true);
      expect(new TextDecoder().decode(Uint8Array.from(t.bytes!))).toBe(t.token);
    }
    expect(content.map((t) => t.token).join('')).toBe(c.choices[0].message.content);
    const stream = await client.chat.completions.create({ model: 'stories260K', messages, temperature: 0, max_tokens: 12, logprobs: true, top_logprobs: 4, stream: true });
    const streamed: OpenAI.Chat.Completions.ChatCompletionTokenLogprob[] = [];
    for await (const ch of stream) streamed.push(...(ch.choices[0]?.logprobs?.content ?? []));
    expect(streamed).toEqual(content);
    // logprobs alone: no alternatives
    const bare = await client.chat.completions.create({ model: 'stories260K', messages, temperature: 0, max_tokens: 3, logprobs: true });
    expect(bare.choices[0].logprobs!.content!.map((t) => t.top_logprobs)).toEqual([[], [], []]);
    expect((await apiError(client.chat.completions.create({ model: 'stories260K', messages, top_logprobs: 21, logprobs: true }))).param).toBe('top_logprobs');
    expect((await apiError(client.chat.completions.create({ model: 'stories260K', messages, top_logprobs: 2 }))).param).toBe('top_logprobs');
  });

  it('logit_bias bans (-100) or forces (+100) a token; penalties equal the engine\'s', async () => {
    const tokens = reference.tokenizer.encode(PROMPT, { addSpecial: true, parseSpecial: true });
    const first: { id: number; top: { id: number; logprob: number }[] }[] = [];
    for await (const ev of new Session(reference).generate(tokens, greedy(1), undefined, { topLogprobs: 2 })) if (ev.kind === 'token') first.push(ev.logprobs!);
    const [best, second] = first[0].top.map((t) => t.id);
    const ask = (bias: Record<string, number>, n = 4) => client.completions.create({ model: 'stories260K', prompt: PROMPT, temperature: 0, max_tokens: n, logprobs: 0, logit_bias: bias });
    const banned = (await ask({ [best]: -100 })).choices[0].logprobs!;
    const piece = (id: number) => new TextDecoder().decode(reference.tokenizer.bytes(id));
    expect(banned.tokens![0]).toBe(piece(second));
    expect(banned.tokens).not.toContain(piece(best));
    // the reported log-probabilities are the model's own, before the bias
    expect(banned.token_logprobs![0]).toBe(first[0].top[1].logprob);
    const forced = (await ask({ [second]: 100 })).choices[0].logprobs!;
    expect(forced.tokens).toEqual([piece(second), piece(second), piece(second), piece(second)]);
    expect((await apiError(ask({ 999999: 5 }))).param).toBe('logit_bias');
    expect((await apiError(ask({ [best]: 101 }))).param).toBe(`logit_bias.${best}`);
    // frequency and presence penalties: the engine's greedy text with the same penalties
    const pen = { ...greedy(30), frequencyPenalty: 1.2, presencePenalty: 0.4 };
    const want = await engineCompletion(PROMPT, pen);
    expect(want.text).not.toBe((await engineCompletion(PROMPT, greedy(30))).text);
    const r = await client.completions.create({ model: 'stories260K', prompt: PROMPT, temperature: 0, max_tokens: 30, frequency_penalty: 1.2, presence_penalty: 0.4 });
    expect(r.choices[0].text).toBe(want.text);
  });

  it('embeddings: the engine\'s pooled vectors, as base64 (the client\'s default) or floats, with usage', async () => {
    const texts = ['Once upon a time', 'The cat sat on the mat.'];
    const want = texts.map((t) => Array.from(embed(reference, reference.tokenizer.encode(t, { addSpecial: true }))));
    const r = await client.embeddings.create({ model: 'stories260K', input: texts });
    expect(r.object).toBe('list');
    expect(r.data.map((d) => d.index)).toEqual([0, 1]);
    // (base64 carries the float32 bits exactly)
    expect(r.data.map((d) => d.embedding)).toEqual(want.map((v) => v.map((x) => Math.fround(x))));
    expect(r.usage.prompt_tokens).toBe(texts.reduce((n, t) => n + reference.tokenizer.encode(t, { addSpecial: true }).length, 0));
    const f = await client.embeddings.create({ model: 'stories260K', input: texts[0], encoding_format: 'float' });
    expect(f.data[0].embedding).toEqual(want[0]);
    const ids = await client.embeddings.create({ model: 'stories260K', input: reference.tokenizer.encode(texts[1], { addSpecial: true }), encoding_format: 'float' });
    expect(ids.data[0].embedding).toEqual(want[1]);
    expect((await apiError(client.embeddings.create({ model: 'stories260K', input: '' }))).param).toBe('input');
    expect((await apiError(client.embeddings.create({ model: 'stories260K', input: 'x'.repeat(2000) }))).code).toBe('context_length_exceeded');
    expect((await apiError(client.embeddings.create({ model: 'other', input: 'x' }))).status).toBe(404);
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
    const messages: Msg[] = [{ role: 'user', content: PROMPT }];
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
    expect(await call('POST', '/chat/completions', { messages: hi, tools: [{ type: 'function', function: { name: 'f' } }] })).toMatchObject({ status: 400, error: { param: 'tools', code: 'tools_unsupported' } });
    expect(await call('POST', '/chat/completions', { messages: hi, tools: [{ type: 'function' }] })).toMatchObject({ status: 400, error: { param: 'tools[0].function' } });
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
      const messages: Msg[] = [{ role: 'user', content: 'hello' }];
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

describe('pantheon serve: CORS and --parallel', () => {
  it('sends no CORS headers unless enabled; with cors, answers the preflight without a key', async () => {
    const plain = await fetch(`${server.url}/models`, { headers: { Authorization: `Bearer ${KEY}`, Origin: 'http://example.test' } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    const s = await OpenAiServer.start(model, { port: 0, apiKey: KEY, cors: 'http://example.test' });
    try {
      const pre = await fetch(`${s.url}/chat/completions`, { method: 'OPTIONS', headers: { Origin: 'http://example.test', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' } });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('http://example.test');
      expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
      const r = await fetch(`${s.url}/models`, { headers: { Authorization: `Bearer ${KEY}` } });
      expect(r.headers.get('access-control-allow-origin')).toBe('http://example.test');
      // the key is still required for the request itself
      expect((await fetch(`${s.url}/models`)).status).toBe(401);
    } finally {
      await s.close();
    }
  });

  /** Two streams at once: whether the second's first text arrives before the first one's end. */
  async function overlap(parallel: number): Promise<{ overlapped: boolean; texts: string[] }> {
    const s = await OpenAiServer.start(model, { port: 0, parallel });
    try {
      const c = new OpenAI({ baseURL: s.url, apiKey: 'none', maxRetries: 0 });
      const events: string[] = [];
      const run = async (name: string, prompt: string, n: number) => {
        const stream = await c.completions.create({ model: 'stories260K', prompt, temperature: 0, max_tokens: n, stream: true });
        let text = '';
        for await (const ch of stream) {
          if (ch.choices[0]?.text) {
            if (!text) events.push(`${name} first`);
            text += ch.choices[0].text;
          }
        }
        events.push(`${name} end`);
        return text;
      };
      const a = run('a', PROMPT, 150);
      await new Promise((r) => setTimeout(r, 5));
      const texts = await Promise.all([a, run('b', 'Tom had a dog', 10), run('c', PROMPT, 10), run('d', 'The sun', 10)]);
      return { overlapped: events.indexOf('b first') < events.indexOf('a end'), texts };
    } finally {
      await s.close();
    }
  }

  it('--parallel 2 generates two requests at once, each text the engine\'s; --parallel 1 queues them', async () => {
    const want = [(await engineCompletion(PROMPT, greedy(150))).text, ...(await Promise.all(['Tom had a dog', PROMPT, 'The sun'].map(async (p) => (await engineCompletion(p, greedy(10))).text)))];
    const two = await overlap(2);
    expect(two.texts).toEqual(want);
    expect(two.overlapped).toBe(true);
    const one = await overlap(1);
    expect(one.texts).toEqual(want);
    expect(one.overlapped).toBe(false);
  });
});

describe('pantheon serve: tools', () => {
  const WEATHER = { type: 'function' as const, function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
  const ask = [{ role: 'user' as const, content: 'Weather in Paris?' }];
  let dir: string;
  let caller: LoadedModel;
  let s: OpenAiServer;
  let c: OpenAI;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pantheon-tools-'));
    caller = await LoadedModel.load(writeToolCallerModel(dir), { contextSize: 1024 });
    s = await OpenAiServer.start(caller, { port: 0 });
    c = new OpenAI({ baseURL: s.url, apiKey: 'none', maxRetries: 0 });
  });
  afterAll(async () => {
    await s?.close();
    caller?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('auto: the model\'s <tool_call> comes back as tool_calls, finish_reason tool_calls, streamed and not', async () => {
    const r = await c.chat.completions.create({ model: 'scripted-tool-caller', messages: ask, tools: [WEATHER], temperature: 0 });
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    expect(r.choices[0].message.content).toBeNull();
    const call = r.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(r.choices[0].message.tool_calls).toHaveLength(1);
    expect(call.type).toBe('function');
    expect(call.id).toMatch(/^call_/);
    expect(call.function.name).toBe(TOOL_CALL_NAME);
    expect(JSON.parse(call.function.arguments)).toEqual(TOOL_CALL_ARGUMENTS);

    const stream = await c.chat.completions.create({ model: 'scripted-tool-caller', messages: ask, tools: [WEATHER], temperature: 0, stream: true });
    let content = '';
    let finish: string | null = null;
    const deltas: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    for await (const ch of stream) {
      content += ch.choices[0]?.delta.content ?? '';
      deltas.push(...(ch.choices[0]?.delta.tool_calls ?? []));
      finish = ch.choices[0]?.finish_reason ?? finish;
    }
    expect(content).toBe('');
    expect(finish).toBe('tool_calls');
    expect(deltas).toHaveLength(1);
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: TOOL_CALL_NAME } });
    expect(JSON.parse(deltas[0].function!.arguments!)).toEqual(TOOL_CALL_ARGUMENTS);
  });

  it('required continues a call the server opens; none leaves the tools out and returns text', async () => {
    const r = await c.chat.completions.create({ model: 'scripted-tool-caller', messages: ask, tools: [WEATHER], tool_choice: 'required', temperature: 0 });
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    const call = r.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect([call.function.name, JSON.parse(call.function.arguments)]).toEqual([TOOL_CALL_NAME, TOOL_CALL_ARGUMENTS]);
    // (the forced prefix is in the prompt: one token more, one generated token less; both replies
    // end as the call's grammar closes, without the end-of-turn token)
    const auto = await c.chat.completions.create({ model: 'scripted-tool-caller', messages: ask, tools: [WEATHER], temperature: 0 });
    expect(r.usage!.prompt_tokens).toBe(auto.usage!.prompt_tokens + 1);
    expect(r.usage!.completion_tokens).toBe(auto.usage!.completion_tokens - 1);
    const none = await c.chat.completions.create({ model: 'scripted-tool-caller', messages: ask, tools: [WEATHER], tool_choice: 'none', temperature: 0 });
    expect(none.choices[0].finish_reason).toBe('stop');
    expect(none.choices[0].message.tool_calls).toBeUndefined();
    expect(none.choices[0].message.content).toBe('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>');
    expect(none.usage!.prompt_tokens).toBeLessThan(auto.usage!.prompt_tokens); // no tools in the prompt
  });

  it('a tool\'s result goes back through the template, as the template renders it', async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      ...ask,
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_7', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_7', content: '{"temp": 21}' },
    ];
    const r = await c.chat.completions.create({ model: 'scripted-tool-caller', messages, tools: [WEATHER], temperature: 0 });
    const rendered = renderChat(caller.templateInfo, [
      ...ask,
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_7', name: 'get_weather', arguments: '{"city": "Paris"}' }] },
      { role: 'tool', content: '{"temp": 21}', toolCallId: 'call_7', name: 'get_weather' },
    ], { tools: [WEATHER] });
    expect(rendered.text).toContain('<tool_response>\n{"temp": 21}\n</tool_response>');
    expect(r.usage!.prompt_tokens).toBe(caller.tokenizer.encode(rendered.text, { addSpecial: !rendered.startsWithBos, parseSpecial: true }).length);
    expect(r.choices[0].finish_reason).toBe('tool_calls');
  });

  it('errors: a model whose template takes no tools, an unknown named function, a tool message without its call id', async () => {
    const e = await apiError(client.chat.completions.create({ model: 'stories260K', messages: ask, tools: [WEATHER] }));
    expect([e.status, e.code, e.param]).toEqual([400, 'tools_unsupported', 'tools']);
    const named = await apiError(c.chat.completions.create({ model: 'scripted-tool-caller', messages: ask, tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'nope' } } }));
    expect(named.param).toBe('tool_choice');
    const noId = await apiError(c.chat.completions.create({ model: 'scripted-tool-caller', messages: [...ask, { role: 'tool', content: 'x' } as never] }));
    expect(noId.param).toBe('messages[1].tool_call_id');
  });
});
