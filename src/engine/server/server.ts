// An OpenAI-compatible HTTP server over one loaded model (`pantheon serve`), on node:http alone:
//   GET  /v1/models, /v1/models/ID     the loaded model (id = file name without .gguf)
//   POST /v1/chat/completions          messages through the model's chat template; SSE when stream
//   POST /v1/completions               a raw prompt continued (no template); SSE when stream
// Requests run one at a time over the model's one Session (its KV cache keeps the shared prefix of
// consecutive requests); the others wait their turn. A client that goes away cancels its request,
// queued or generating (the session checks the signal before every token).

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename } from 'node:path';
import { UsageError } from '../../shared/errors.js';
import { reasoningSetup, renderChat } from '../chat/index.js';
import type { LoadedModel, DoneReason, GenerateOptions, GenerationStats } from '../session.js';
import { Session } from '../session.js';
import type { SamplingParams } from '../sample/index.js';
import { ApiError, parseChatRequest, parseCompletionRequest, type GenerationRequest } from './request.js';

export interface ServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** When set, every request must send `Authorization: Bearer KEY`. */
  apiKey?: string;
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

/** One request at a time: `turn()` resolves when the previous ones are done; call the release. */
class Queue {
  private tail: Promise<void> = Promise.resolve();
  turn(): Promise<() => void> {
    const prev = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    return prev.then(() => release);
  }
}

/** What one generation request becomes: the prompt's tokens and how to generate after them. */
interface Job {
  tokens: number[];
  sampling: SamplingParams;
  opts: GenerateOptions;
}

export class OpenAiServer {
  readonly id: string;
  private readonly session: Session;
  private readonly queue = new Queue();
  private readonly created = Math.floor(Date.now() / 1000);
  /** Generations in progress or waiting, cancelled on close. */
  private readonly running = new Set<AbortController>();

  private constructor(
    readonly model: LoadedModel,
    private readonly http: Server,
    private readonly opts: ServerOptions,
  ) {
    this.id = modelId(model.path);
    this.session = new Session(model);
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
      const rendered = renderChat(m.templateInfo, r.messages);
      const tokens = m.tokenizer.encode(rendered.text, { addSpecial: !rendered.startsWithBos, parseSpecial: true });
      const opts: GenerateOptions = { stopStrings: rendered.stopStrings, promptText: rendered.text, reasoning: reasoningSetup(m.templateInfo, rendered.text), grammar: r.grammar };
      return this.generate(req, res, 'chat', r, { tokens, sampling: r.sampling, opts });
    }
    if (path === '/v1/completions') {
      need('POST');
      const r = parseCompletionRequest(await readBody(req));
      this.checkModel(r);
      const tokens = this.model.tokenizer.encode(r.prompt, { addSpecial: true, parseSpecial: true });
      return this.generate(req, res, 'completion', r, { tokens, sampling: r.sampling, opts: { grammar: r.grammar } });
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
    const release = await this.queue.turn();
    try {
      if (ac.signal.aborted) return this.log(req, 499, null, 'cancelled');
      const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID().replace(/-/g, '')}`;
      const created = Math.floor(Date.now() / 1000);
      const head = { id, object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion', created, model: this.id };
      const events = this.session.generate(job.tokens, job.sampling, ac.signal, job.opts);
      let content = '';
      let reasoning = '';
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
          content += ev.text;
          reasoning += ev.reasoning;
          if (!r.stream || (!ev.text && !ev.reasoning)) continue;
          if (kind === 'chat') {
            const delta: Record<string, string> = {};
            if (ev.reasoning) delta.reasoning_content = ev.reasoning;
            if (ev.text) delta.content = ev.text;
            send({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] });
          } else if (ev.text) {
            send({ ...head, choices: [{ index: 0, text: ev.text, logprobs: null, finish_reason: null }] });
          }
        } else if (ev.kind === 'done') done = { reason: ev.reason, stats: ev.stats };
      }
      if (!done || done.reason === 'cancelled') {
        if (!res.writableEnded) res.end();
        return this.log(req, 499, done?.stats ?? null, 'cancelled');
      }
      const finish = finishReason(done.reason);
      if (r.stream) {
        if (kind === 'chat') send({ ...head, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finish }] });
        else send({ ...head, choices: [{ index: 0, text: '', logprobs: null, finish_reason: finish }] });
        if (r.includeUsage && !res.writableEnded) res.write(`data: ${JSON.stringify({ ...head, choices: [], usage: usage(done.stats) })}\n\n`);
        res.end('data: [DONE]\n\n');
      } else if (kind === 'chat') {
        const message: Record<string, unknown> = { role: 'assistant', content, refusal: null };
        if (reasoning) message.reasoning_content = reasoning;
        sendJson(res, 200, { ...head, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage: usage(done.stats) });
      } else {
        sendJson(res, 200, { ...head, choices: [{ index: 0, text: content, logprobs: null, finish_reason: finish }], usage: usage(done.stats) });
      }
      this.log(req, 200, done.stats, done.reason);
    } finally {
      this.running.delete(ac);
      release();
    }
  }
}
