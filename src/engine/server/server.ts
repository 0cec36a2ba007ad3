// An OpenAI-compatible HTTP server over one loaded model (`pantheon serve`), on node:http alone:
//   GET  /v1/models, /v1/models/ID     the loaded model (id = file name without .gguf)
//   POST /v1/chat/completions          messages through the model's chat template; SSE when stream
//   POST /v1/completions               a raw prompt continued (no template); SSE when stream
//   POST /v1/embeddings                each input's pooled, normalised last hidden state (embed.ts)
// Requests run on `parallel` Sessions (default 1; slots.ts), each keeping its KV cache for the
// shared prefix of the next request, their decode steps batched into one forward pass
// (decode-batch.ts); the others wait their turn. A client that goes away cancels
// its request, queued or generating (the session checks the signal before every token).
// CORS headers only when `cors` names the allowed origin (or '*').

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename } from 'node:path';
import { UsageError } from '../../shared/errors.js';
import { reasoningSetup, renderChat } from '../chat/index.js';
import { toolCallPrefix, toolFormat, type ToolFormat } from '../chat/tools.js';
import { apiToolCalls, ToolCallStream } from './tool-stream.js';
import { lazyToolCallGrammar, toolCallGrammar } from './tool-grammar.js';
import { grammarAfterReasoning } from '../grammar/after-reasoning.js';
import type { LoadedModel, DoneReason, GenerateOptions, GenerationStats } from '../session.js';
import { Slots } from './slots.js';
import type { SamplingParams } from '../sample/index.js';
import { LogprobsShaper } from './logprobs.js';
import { embed } from '../embed.js';
import { ApiError, parseChatRequest, parseCompletionRequest, parseEmbeddingRequest, type EmbeddingRequest, type GenerationRequest } from './request.js';

export interface ServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** When set, every request must send `Authorization: Bearer KEY`. */
  apiKey?: string;
  /** Requests generating at once, each with its own KV cache (default 1). */
  parallel?: number;
  /** Send CORS headers allowing this origin ('*' for any); none when unset. */
  cors?: string;
  /** Called once per finished request (the request log). */
  onRequest?: (entry: RequestLogEntry) => void;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  promptTokens: number;
  completionTokens: number;
  tokensPerS: number;
  /** How the generation ended ('cancelled' when the client went away); null when none ran. */
  reason: DoneReason | null;
}

/** Largest request body read (a long conversation fits many times over). */
const MAX_BODY = 32 * 2 ** 20;

/** The model's API id: its file name without .gguf. */
export function modelId(path: string): string {
  return basename(path).replace(/\.gguf$/i, '');
}

function finishReason(r: DoneReason): 'stop' | 'length' {
  return r === 'length' || r === 'context' ? 'length' : 'stop';
}

function usage(s: GenerationStats): Record<string, unknown> {
  const u: Record<string, unknown> = { prompt_tokens: s.promptTokens, completion_tokens: s.generatedTokens, total_tokens: s.promptTokens + s.generatedTokens };
  if (s.reasoningTokens > 0) u.completion_tokens_details = { reasoning_tokens: s.reasoningTokens };
  return u;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY) throw new ApiError(413, `the request body is larger than ${MAX_BODY} bytes`, null, 'body_too_large');
    chunks.push(c);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ApiError(400, `the request body is not valid JSON (${(err as Error).message})`, null, 'invalid_json');
  }
}


/** What one generation request becomes: the prompt's tokens and how to generate after them. */
interface Job {
  tokens: number[];
  sampling: SamplingParams;
  opts: GenerateOptions;
  /** Tools offered (chat): the reply's call format, and the call opening appended to the prompt. */
  tools?: { format: ToolFormat; prefix: string };
}

export class OpenAiServer {
  readonly id: string;
  private readonly slots: Slots;
  private readonly created = Math.floor(Date.now() / 1000);
  /** Generations in progress or waiting, cancelled on close. */
  private readonly running = new Set<AbortController>();

  private constructor(
    readonly model: LoadedModel,
    private readonly http: Server,
    private readonly opts: ServerOptions,
  ) {
    this.id = modelId(model.path);
    const n = opts.parallel ?? 1;
    if (!Number.isInteger(n) || n < 1 || n > 64) throw new UsageError(`parallel must be a whole number from 1 to 64 (not ${n})`);
    this.slots = new Slots(model, n);
  }

  /** Listens, and resolves once the port is bound. */
  static async start(model: LoadedModel, opts: ServerOptions = {}): Promise<OpenAiServer> {
    const http = createServer();
    const server = new OpenAiServer(model, http, opts);
    http.on('request', (req: IncomingMessage, res: ServerResponse) => void server.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(opts.port ?? 8080, opts.host ?? '127.0.0.1', () => {
        http.off('error', reject);
        resolve();
      });
    });
    return server;
  }

  /** Why --parallel's sequences take their decode steps one after another instead of as one batch, or null. */
  get interleaved(): string | null {
    return this.slots.interleaved;
  }

  /** The base URL clients use: http://HOST:PORT/v1. */
  get url(): string {
    const a = this.http.address() as AddressInfo;
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `http://${host}:${a.port}/v1`;
  }

  /** Stop listening, cancel what runs, drop open connections. The model stays loaded (the caller's). */
  async close(): Promise<void> {
    for (const ac of this.running) ac.abort();
    const closed = new Promise<void>((resolve) => this.http.close(() => resolve()));
    this.http.closeAllConnections();
    await closed;
  }

  private log(req: IncomingMessage, status: number, stats: GenerationStats | null = null, reason: DoneReason | null = null): void {
    this.opts.onRequest?.({
      method: req.method ?? '',
      path: (req.url ?? '').split('?')[0],
      status,
      promptTokens: stats?.promptTokens ?? 0,
      completionTokens: stats?.generatedTokens ?? 0,
      tokensPerS: stats?.tokensPerS ?? 0,
      reason,
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.route(req, res);
    } catch (err) {
      // (the engine's UsageError is the caller's mistake, e.g. a conversation the template refuses)
      const e = err instanceof ApiError ? err : err instanceof UsageError ? new ApiError(400, err.message, null, 'invalid_request') : new ApiError(500, `internal error: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) sendJson(res, e.status, e.body());
      else if (!res.writableEnded) res.end(`data: ${JSON.stringify(e.body())}\n\n`);
      this.log(req, e.status);
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    if (this.opts.cors !== undefined) {
      res.setHeader('Access-Control-Allow-Origin', this.opts.cors);
      if (this.opts.cors !== '*') res.setHeader('Vary', 'Origin');
      // a browser's preflight carries no key: answer it before the check
      if (method === 'OPTIONS') {
        res.writeHead(204, { 'Access-Control-Allow-Methods': 'GET, POST, OPTIONS', 'Access-Control-Allow-Headers': 'Authorization, Content-Type', 'Access-Control-Max-Age': '600' });
        res.end();
        return this.log(req, 204);
      }
    }
    if (this.opts.apiKey !== undefined) {
      const auth = req.headers.authorization ?? '';
      const m = /^Bearer\s+(.+)$/i.exec(auth);
      if (!m || m[1].trim() !== this.opts.apiKey) {
        throw new ApiError(401, m ? 'Incorrect API key provided.' : 'Missing API key: send it as "Authorization: Bearer KEY".', null, 'invalid_api_key');
      }
    }
    const need = (want: string) => {
      if (method !== want) throw new ApiError(405, `${method} is not allowed on ${path}; use ${want}`, null, 'method_not_allowed');
    };
    if (path === '/v1/models') {
      need('GET');
      sendJson(res, 200, { object: 'list', data: [this.modelObject()] });
      return this.log(req, 200);
    }
    if (path.startsWith('/v1/models/')) {
      need('GET');
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      if (id !== this.id) throw this.unknownModel(id);
      sendJson(res, 200, this.modelObject());
      return this.log(req, 200);
    }
    if (path === '/v1/chat/completions') {
      need('POST');
      const r = parseChatRequest(await readBody(req));
      this.checkModel(r);
      const m = this.model;
      // tools: into the template, and the reply read for calls in the template's format; a call
      // required (or one function named) is started in the prompt, the model writes the rest
      const offered = r.toolChoice !== 'none' && r.tools.length > 0;
      const format = offered ? toolFormat(m.templateInfo) : null;
      if (offered && !format) throw new ApiError(400, "this model's chat template takes no tools (it has no tool-call format Pantheon reads: Hermes <tool_call>, Llama 3 JSON, Mistral [TOOL_CALLS] or Harmony)", 'tools', 'tools_unsupported');
      const rendered = renderChat(m.templateInfo, r.messages, { tools: offered ? r.tools : undefined });
      const forced = format && r.toolChoice !== 'auto' ? toolCallPrefix(format, typeof r.toolChoice === 'object' ? r.toolChoice.name : undefined) : '';
      // a forced call is generated under its schema's grammar (tool-grammar.ts); else response_format's,
      // after the reasoning of a model that thinks
      const reasoning = reasoningSetup(m.templateInfo, rendered.text);
      const grammar = (format && toolCallGrammar(format, r.tools, r.toolChoice)) || (r.grammar && grammarAfterReasoning(r.grammar, reasoning, rendered.text));
      const grammarAfter = format && r.toolChoice === 'auto' && !grammar ? lazyToolCallGrammar(format, r.tools) : undefined;
      const tools = format ? { format, prefix: forced } : undefined;
      const tokens = m.tokenizer.encode(rendered.text + forced, { addSpecial: !rendered.startsWithBos, parseSpecial: true });
      const opts: GenerateOptions = { stopStrings: rendered.stopStrings, promptText: rendered.text, reasoning, topLogprobs: r.topLogprobs, logitBias: r.logitBias, grammar, grammarAfter };
      return this.generate(req, res, 'chat', r, { tokens, sampling: r.sampling, opts, tools });
    }
    if (path === '/v1/completions') {
      need('POST');
      const r = parseCompletionRequest(await readBody(req));
      this.checkModel(r);
      const tokens = this.model.tokenizer.encode(r.prompt, { addSpecial: true, parseSpecial: true });
      return this.generate(req, res, 'completion', r, { tokens, sampling: r.sampling, opts: { topLogprobs: r.topLogprobs, logitBias: r.logitBias, grammar: r.grammar } });
    }
    if (path === '/v1/embeddings') {
      need('POST');
      const r = parseEmbeddingRequest(await readBody(req));
      if (r.model !== undefined && r.model !== this.id) throw this.unknownModel(r.model);
      return this.embeddings(req, res, r);
    }
    throw new ApiError(404, `Invalid URL (${method} ${req.url ?? '/'})`, null, 'unknown_url');
  }

  private modelObject(): Record<string, unknown> {
    return { id: this.id, object: 'model', created: this.created, owned_by: 'pantheon' };
  }

  private unknownModel(id: string): ApiError {
    return new ApiError(404, `The model '${id}' does not exist; this server has '${this.id}'.`, 'model', 'model_not_found');
  }

  private checkModel(r: GenerationRequest): void {
    if (r.model !== undefined && r.model !== this.id) throw this.unknownModel(r.model);
    const nVocab = this.model.hparams.nVocab;
    for (const t of r.logitBias?.keys() ?? []) {
      if (t >= nVocab) throw new ApiError(400, `'logit_bias' names token ${t}, but the vocabulary has ids 0 to ${nVocab - 1}`, 'logit_bias', 'invalid_value');
    }
  }

  /** Each input's embedding (embed.ts), as float arrays or base64 of little-endian float32. */
  private embeddings(req: IncomingMessage, res: ServerResponse, r: EmbeddingRequest): void {
    const m = this.model;
    const nVocab = m.hparams.nVocab;
    const tokens = r.inputs.map((x, i) => {
      const t = typeof x === 'string' ? m.tokenizer.encode(x, { addSpecial: true, parseSpecial: false }) : x;
      const param = r.inputs.length > 1 ? `input[${i}]` : 'input';
      const badId = t.find((id) => id >= nVocab);
      if (badId !== undefined) throw new ApiError(400, `'${param}' has token ${badId}, but the vocabulary has ids 0 to ${nVocab - 1}`, 'input', 'invalid_value');
      if (t.length > m.contextSize) throw new ApiError(400, `'${param}' has ${t.length} tokens but the context holds ${m.contextSize}; shorten it, or start the server with a larger --ctx.`, 'input', 'context_length_exceeded');
      return t;
    });
    let used = 0;
    const data = tokens.map((t, index) => {
      used += t.length;
      const v = embed(m, t);
      const embedding = r.encoding === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : Array.from(v);
      return { object: 'embedding', index, embedding };
    });
    sendJson(res, 200, { object: 'list', data, model: this.id, usage: { prompt_tokens: used, total_tokens: used } });
    this.log(req, 200, { promptTokens: used, generatedTokens: 0, ttftMs: 0, tokensPerS: 0, promptTokensPerS: 0, reasoningTokens: 0, reasoningMs: 0 });
  }

  private async generate(req: IncomingMessage, res: ServerResponse, kind: 'chat' | 'completion', r: GenerationRequest, job: Job): Promise<void> {
    const size = this.model.contextSize;
    if (job.tokens.length > size) {
      throw new ApiError(400, `The prompt has ${job.tokens.length} tokens but the context holds ${size}; shorten it, or start the server with a larger --ctx.`, kind === 'chat' ? 'messages' : 'prompt', 'context_length_exceeded');
    }
    const ac = new AbortController();
    this.running.add(ac);
    res.on('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    const session = await this.slots.acquire(job.tokens, ac.signal);
    if (!session) {
      this.running.delete(ac);
      return this.log(req, 499, null, 'cancelled');
    }
    try {
      const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID().replace(/-/g, '')}`;
      const created = Math.floor(Date.now() / 1000);
      const head = { id, object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion', created, model: this.id };
      const events = session.generate(job.tokens, job.sampling, ac.signal, job.opts);
      let content = '';
      let reasoning = '';
      // log-probabilities: all of them (non-stream), or those not yet sent (stream)
      const lp = r.topLogprobs === undefined ? null : new LogprobsShaper(this.model.tokenizer, kind);
      const calls = job.tools ? new ToolCallStream(job.tools.format, job.tools.prefix) : null;
      let done: { reason: DoneReason; stats: GenerationStats } | null = null;
      const send = (obj: Record<string, unknown>) => {
        if (!res.writableEnded && !res.destroyed) res.write(`data: ${JSON.stringify(r.includeUsage ? { ...obj, usage: null } : obj)}\n\n`);
      };
      if (r.stream) {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
        res.flushHeaders();
        if (kind === 'chat') send({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
      }
      for await (const ev of events) {
        if (ev.kind === 'token') {
          const text = calls ? calls.push(ev.text, ev.raw) : ev.text;
          content += text;
          reasoning += ev.reasoning;
          if (lp && ev.logprobs) lp.push(ev.logprobs);
          if (!r.stream || (!text && !ev.reasoning)) continue;
          if (kind === 'chat') {
            const delta: Record<string, string> = {};
            if (ev.reasoning) delta.reasoning_content = ev.reasoning;
            if (text) delta.content = text;
            send({ ...head, choices: [{ index: 0, delta, logprobs: lp?.take() ?? null, finish_reason: null }] });
          } else if (ev.text) {
            send({ ...head, choices: [{ index: 0, text: ev.text, logprobs: lp?.take() ?? null, finish_reason: null }] });
          }
        } else if (ev.kind === 'done') done = { reason: ev.reason, stats: ev.stats };
      }
      if (!done || done.reason === 'cancelled') {
        if (!res.writableEnded) res.end();
        return this.log(req, 499, done?.stats ?? null, 'cancelled');
      }
      // the calls made, and the content held back while it might have been one
      const made = calls?.finish() ?? { content: '', calls: [] };
      const finish = made.calls.length ? 'tool_calls' : finishReason(done.reason);
      if (r.stream && (made.content || made.calls.length)) {
        const delta: Record<string, unknown> = {};
        if (made.content) delta.content = made.content;
        if (made.calls.length) delta.tool_calls = apiToolCalls(made.calls, true);
        send({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] });
      }
      content += made.content;
      if (r.stream) {
        // (the log-probabilities of tokens whose text never showed, e.g. the end of turn, go last)
        const rest = lp?.pending ? lp.take() : null;
        if (kind === 'chat') send({ ...head, choices: [{ index: 0, delta: {}, logprobs: rest, finish_reason: finish }] });
        else send({ ...head, choices: [{ index: 0, text: '', logprobs: rest, finish_reason: finish }] });
        if (r.includeUsage && !res.writableEnded) res.write(`data: ${JSON.stringify({ ...head, choices: [], usage: usage(done.stats) })}\n\n`);
        res.end('data: [DONE]\n\n');
      } else if (kind === 'chat') {
        const message: Record<string, unknown> = { role: 'assistant', content: made.calls.length && !content ? null : content, refusal: null };
        if (made.calls.length) message.tool_calls = apiToolCalls(made.calls, false);
        if (reasoning) message.reasoning_content = reasoning;
        sendJson(res, 200, { ...head, object: 'chat.completion', choices: [{ index: 0, message, logprobs: lp?.take() ?? null, finish_reason: finish }], usage: usage(done.stats) });
      } else {
        sendJson(res, 200, { ...head, choices: [{ index: 0, text: content, logprobs: lp?.take() ?? null, finish_reason: finish }], usage: usage(done.stats) });
      }
      this.log(req, 200, done.stats, done.reason);
    } finally {
      this.running.delete(ac);
      this.slots.release(session);
    }
  }
}
