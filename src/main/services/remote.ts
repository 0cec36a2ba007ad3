// A remote OpenAI-compatible server (vLLM, llama.cpp's server, Ollama, SGLang, `pantheon serve`)
// as a chat backend: list its /v1/models, and stream a chat reply from /v1/chat/completions as the
// app's generation events, so the same chat UI drives a model too big for this machine. Plain
// fetch and SSE (works in Electron main and under the harness). Every failure becomes one sentence
// that says what happened and what to do (remoteError).

import type { GenerationEvent, GenerationHandle, RequestMessage, SamplingSettings, StopReason } from '../../shared/contract.js';
import { EngineError, serializeError } from '../../shared/errors.js';

export interface RemoteServer {
  /** The API's base URL, e.g. http://gpu-box:8000/v1 (a trailing slash is ignored). */
  baseUrl: string;
  apiKey?: string;
}

/** How long a request may take to answer (headers; a stream may then run as long as it likes). */
const CONNECT_TIMEOUT_MS = 15_000;

function base(s: RemoteServer): string {
  return s.baseUrl.replace(/\/+$/, '');
}

function headers(s: RemoteServer): Record<string, string> {
  return { 'Content-Type': 'application/json', Accept: 'application/json', ...(s.apiKey ? { Authorization: `Bearer ${s.apiKey}` } : {}) };
}

/** The server's own error message from an OpenAI error body, first line, shortened; '' when none. */
function serverMessage(body: string): string {
  let m = '';
  try {
    const j = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const e = j.error;
    m = typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : typeof j.message === 'string' ? j.message : typeof j.detail === 'string' ? j.detail : '';
  } catch {
    m = body.trim().startsWith('<') ? '' : body;
  }
  m = m.split('\n')[0].trim().replace(/[.\s]+$/, '');
  return m.length > 160 ? `${m.slice(0, 157)}…` : m;
}

/** One sentence for an HTTP error status from the remote at `url`. */
export function remoteStatusError(url: string, status: number, body: string): EngineError {
  const said = serverMessage(body);
  const why = said ? `: ${said}` : '';
  let text: string;
  if (status === 401 || status === 403) text = `The server at ${url} refused the API key (${status}${why}); check the key.`;
  else if (status === 404) text = `The server at ${url} has no such model or endpoint (404${why}); check the base URL (it usually ends in /v1) and the model.`;
  else if (status === 429) text = `The server at ${url} is limiting requests (429${why}); wait a moment and try again.`;
  else if (status >= 500) text = `The server at ${url} failed (${status}${why}); try again, or check the server's log.`;
  else text = `The server at ${url} rejected the request (${status}${why}).`;
  return new EngineError('REMOTE_HTTP', text);
}

/** One sentence for a request that got no answer (refused, unknown host, timeout). */
export function remoteNetworkError(url: string, err: unknown): EngineError {
  const cause = (err as { cause?: { code?: string } })?.cause;
  const code = cause?.code ?? (err as { code?: string })?.code;
  const name = (err as { name?: string })?.name;
  const why = name === 'TimeoutError' ? `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`
    : code === 'ECONNREFUSED' ? 'connection refused'
    : code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'unknown host'
    : code === 'ECONNRESET' ? 'the connection was reset'
    : code ?? (err instanceof Error ? err.message : String(err));
  return new EngineError('REMOTE_UNREACHABLE', `Cannot reach the server at ${url} (${why}); check the address and that the server is running.`);
}

async function request(s: RemoteServer, path: string, init: { method: string; body?: string; signal?: AbortSignal }): Promise<Response> {
  let url: string;
  try {
    url = new URL(`${base(s)}${path}`).toString();
  } catch {
    throw new EngineError('REMOTE_BAD_URL', `"${s.baseUrl}" is not a URL; give one like http://localhost:8080/v1.`);
  }
  const timeout = AbortSignal.timeout(CONNECT_TIMEOUT_MS);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  let res: Response;
  try {
    res = await fetch(url, { method: init.method, headers: headers(s), body: init.body, signal });
  } catch (err) {
    if (init.signal?.aborted) throw err;
    throw remoteNetworkError(base(s), err);
  }
  if (!res.ok) throw remoteStatusError(base(s), res.status, await res.text().catch(() => ''));
  return res;
}

/** The ids of the models the server lists (GET /models). */
export async function listRemoteModels(s: RemoteServer, signal?: AbortSignal): Promise<string[]> {
  const res = await request(s, '/models', { method: 'GET', signal });
  const body = (await res.json().catch(() => null)) as { data?: { id?: unknown }[] } | null;
  if (!body || !Array.isArray(body.data)) throw new EngineError('REMOTE_BAD_REPLY', `The server at ${base(s)} answered /models with something other than a model list; is it an OpenAI-compatible API?`);
  return body.data.map((m) => m.id).filter((id): id is string => typeof id === 'string');
}

/** The chat request: the conversation and the sampling settings the API has (OpenAI's standard fields only). */
export function remoteChatBody(model: string, messages: RequestMessage[], p: SamplingSettings): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    messages: messages.map((m) => ({ role: m.role, content: m.content })),
    stream: true,
    stream_options: { include_usage: true },
    temperature: p.temperature,
    top_p: p.topP,
  };
  if (p.maxTokens >= 0) body.max_tokens = p.maxTokens;
  if (p.seed >= 0) body.seed = p.seed;
  if (p.stop.length > 0) body.stop = p.stop.slice(0, 4);
  if (p.presencePenalty !== 0) body.presence_penalty = p.presencePenalty;
  if (p.frequencyPenalty !== 0) body.frequency_penalty = p.frequencyPenalty;
  return body;
}

function stopReason(finish: string | null): StopReason {
  return finish === 'length' ? 'length' : finish === 'stop' || finish === 'tool_calls' ? 'eos' : 'stop';
}

interface Chunk {
  choices?: { delta?: { content?: string | null; reasoning_content?: string | null; reasoning?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

/**
 * Stream a reply from the remote: 'token' events (id -1: the remote's token ids are not known), then
 * 'done' with the usage the server reports (else the count of chunks) and the times measured here;
 * or 'error' with one sentence. cancel() stops it: 'done' with stopReason 'cancelled'.
 */
export function remoteChat(s: RemoteServer, model: string, messages: RequestMessage[], sampling: SamplingSettings, onEvent: (e: GenerationEvent) => void): GenerationHandle {
  const ac = new AbortController();
  const t0 = performance.now();
  let first = 0;
  let chunks = 0;
  let usage: Chunk['usage'] = null;
  let finish: string | null = null;
  const done = (reason: StopReason) => {
    const now = performance.now();
    const generated = usage?.completion_tokens ?? chunks;
    const decodeMs = first > 0 ? now - first : 0;
    onEvent({
      kind: 'done',
      stats: { promptTokens: usage?.prompt_tokens ?? 0, generatedTokens: generated, ttftMs: first > 0 ? first - t0 : 0, tokensPerS: decodeMs > 0 && generated > 1 ? ((generated - 1) * 1000) / decodeMs : 0, promptTokensPerS: 0, stopReason: reason },
      contextUsed: (usage?.prompt_tokens ?? 0) + generated,
      contextSize: 0,
    });
  };
  void (async () => {
    try {
      const res = await request(s, '/chat/completions', { method: 'POST', body: JSON.stringify(remoteChatBody(model, messages, sampling)), signal: ac.signal });
      if (!res.body) throw new EngineError('REMOTE_BAD_REPLY', `The server at ${base(s)} sent no reply body.`);
      const decoder = new TextDecoder();
      let buf = '';
      for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(part, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line.startsWith('data:')) continue;
          const data = line.slice(5).trim();
          if (data === '[DONE]') continue;
          let c: Chunk;
          try {
            c = JSON.parse(data) as Chunk;
          } catch {
            continue;
          }
          if (c.error) throw new EngineError('REMOTE_HTTP', `The server at ${base(s)} stopped the reply: ${serverMessage(JSON.stringify(c))}.`);
          if (c.usage) usage = c.usage;
          const ch = c.choices?.[0];
          if (!ch) continue;
          if (ch.finish_reason) finish = ch.finish_reason;
          const text = ch.delta?.content ?? '';
          const reasoning = ch.delta?.reasoning_content ?? ch.delta?.reasoning ?? '';
          if (!text && !reasoning) continue;
          chunks++;
          if (first === 0) first = performance.now();
          onEvent({ kind: 'token', id: -1, text, reasoning, top: [] });
        }
      }
      done(stopReason(finish));
    } catch (err) {
      if (ac.signal.aborted) return done('cancelled');
      onEvent({ kind: 'error', error: serializeError(err) });
    }
  })();
  return { cancel: () => ac.abort() };
}
