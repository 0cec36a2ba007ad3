// A model served by another engine (vLLM, llama.cpp's server, Ollama, `pantheon serve`) through the
// OpenAI API, behind the same EngineModel the host runs local models with: the app's chat, Stop and
// stats work unchanged. The "prompt" it shows is the exact request body sent; what a remote cannot
// show (tensors, token ids, probabilities) is absent.

import type { GenerationEvent, SamplingSettings } from '../../shared/contract.js';
import { ModelError } from '../../shared/errors.js';
import type { ChatMessage } from '../chat/index.js';
import type { EngineModel } from './engine.js';

export interface RemoteTarget {
  /** The API's base URL, ending in /v1 (as clients take it). */
  baseUrl: string;
  apiKey: string | null;
  model: string;
}

/** One sentence for an HTTP failure of the remote, from its status and its OpenAI error, if any. */
export function remoteHttpError(status: number, body: string, baseUrl: string): ModelError {
  let detail = '';
  try {
    const m = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === 'string' && m) detail = ` It said: ${m.split('\n')[0].slice(0, 300)}`;
  } catch {
    // not JSON: the status alone
  }
  const what =
    status === 401 || status === 403 ? `${baseUrl} refused the API key (HTTP ${status}); check the key of this server.`
      : status === 404 ? `${baseUrl} has no such endpoint or model (HTTP 404); check the base URL (it usually ends in /v1) and the model.`
        : status === 429 ? `${baseUrl} is rate limiting (HTTP 429); wait a moment and try again.`
          : status >= 500 ? `${baseUrl} failed (HTTP ${status}); the server has a problem, try again or check its log.`
            : `${baseUrl} answered HTTP ${status}.`;
  return new ModelError('REMOTE_FAILED', `${what}${detail}`);
}

/** One sentence for a request that never got an answer. */
export function remoteNetworkError(err: unknown, baseUrl: string): ModelError {
  const cause = (err as { cause?: { code?: string } })?.cause?.code ?? (err as { code?: string })?.code;
  const why = cause === 'ECONNREFUSED' ? 'nothing is listening there'
    : cause === 'ENOTFOUND' || cause === 'EAI_AGAIN' ? 'the host name does not resolve'
      : (err as Error)?.name === 'TimeoutError' ? 'it did not answer in time'
        : cause ?? ((err as Error)?.message || 'unknown error');
  return new ModelError('REMOTE_UNREACHABLE', `Cannot reach ${baseUrl} (${why}); check the URL and that the server is running.`);
}

function headers(t: RemoteTarget): Record<string, string> {
  return { 'content-type': 'application/json', ...(t.apiKey ? { authorization: `Bearer ${t.apiKey}` } : {}) };
}

async function call(t: RemoteTarget, path: string, init: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`${t.baseUrl.replace(/\/+$/, '')}${path}`, { ...init, headers: headers(t) });
  } catch (err) {
    if ((err as Error)?.name === 'AbortError') throw err;
    throw remoteNetworkError(err, t.baseUrl);
  }
  if (!res.ok) throw remoteHttpError(res.status, await res.text().catch(() => ''), t.baseUrl);
  return res;
}

/** The model ids a server lists at GET /models. */
export async function listRemoteModels(t: Omit<RemoteTarget, 'model'>, signal?: AbortSignal): Promise<string[]> {
  const res = await call({ ...t, model: '' }, '/models', { method: 'GET', signal: signal ?? AbortSignal.timeout(10_000) });
  const body = (await res.json().catch(() => null)) as { data?: { id?: unknown }[] } | null;
  if (!body || !Array.isArray(body.data)) throw new ModelError('REMOTE_FAILED', `${t.baseUrl}/models did not answer an OpenAI model list; is this an OpenAI-compatible server?`);
  return body.data.map((m) => m.id).filter((id): id is string => typeof id === 'string');
}

/** The request body for a chat: the conversation and the sampling fields the OpenAI API has. */
export function remoteChatBody(model: string, messages: ChatMessage[], s: SamplingSettings): Record<string, unknown> {
  return {
    model,
    messages: messages.map((m) => ({ role: m.role, content: m.content })),
    stream: true,
    stream_options: { include_usage: true },
    temperature: s.temperature,
    top_p: s.topP,
    ...(s.maxTokens > 0 ? { max_tokens: s.maxTokens } : {}),
    ...(s.seed >= 0 ? { seed: s.seed } : {}),
    ...(s.stop.length ? { stop: s.stop.slice(0, 4) } : {}),
    ...(s.presencePenalty ? { presence_penalty: s.presencePenalty } : {}),
    ...(s.frequencyPenalty ? { frequency_penalty: s.frequencyPenalty } : {}),
  };
}

/** The server-sent events of a streamed response, one parsed `data:` object at a time. */
async function* sseData(res: Response): AsyncGenerator<unknown> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') return;
      try {
        yield JSON.parse(data);
      } catch {
        // a malformed event is skipped, as OpenAI's client does
      }
    }
  }
}

interface ChunkShape {
  choices?: { delta?: { content?: string | null; reasoning_content?: string | null; reasoning?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

export async function loadRemoteModel(t: RemoteTarget, contextSize: number, signal: AbortSignal): Promise<EngineModel> {
  const models = await listRemoteModels(t, AbortSignal.any([signal, AbortSignal.timeout(10_000)]));
  if (!models.includes(t.model)) {
    throw new ModelError('REMOTE_FAILED', `${t.baseUrl} does not serve "${t.model}" (it lists ${models.slice(0, 5).map((m) => `"${m}"`).join(', ') || 'no models'}); refresh the server's list.`);
  }
  let used = 0;
  const host = new URL(t.baseUrl).host;
  return {
    info: { modelName: t.model, architecture: 'remote', contextSize, threads: 0, backend: `remote (${host})`, memoryBytes: 0 },
    get used() {
      return used;
    },
    // The remote's tokenizer is not here: about four characters a token.
    countTokens: (messages) => Math.ceil(messages.reduce((n, m) => n + m.content.length + 8, 0) / 4),
    async *chat(messages, sampling, abort): AsyncGenerator<GenerationEvent> {
      const body = remoteChatBody(t.model, messages, sampling);
      yield { kind: 'prompt', text: JSON.stringify({ ...body, url: `${t.baseUrl}/chat/completions` }, null, 2), tokens: [], templateName: `remote: ${host}` };
      const t0 = performance.now();
      let first = 0;
      let generated = 0;
      let usage: ChunkShape['usage'] = null;
      let finish: string | null = null;
      let cancelled = false;
      try {
        const res = await call(t, '/chat/completions', { method: 'POST', body: JSON.stringify(body), signal: abort });
        for await (const raw of sseData(res)) {
          const c = raw as ChunkShape;
          if (c.error?.message) throw new ModelError('REMOTE_FAILED', `${t.baseUrl} stopped the reply: ${c.error.message.split('\n')[0]}`);
          if (c.usage) usage = c.usage;
          const choice = c.choices?.[0];
          if (!choice) continue;
          const text = choice.delta?.content ?? '';
          const reasoning = choice.delta?.reasoning_content ?? choice.delta?.reasoning ?? '';
          if (text || reasoning) {
            if (!first) first = performance.now();
            generated++;
            yield { kind: 'token', id: -1, text, reasoning, top: [] };
          }
          if (choice.finish_reason) finish = choice.finish_reason;
        }
      } catch (err) {
        if ((err as Error)?.name !== 'AbortError' && !abort.aborted) throw err;
        cancelled = true;
      }
      const end = performance.now();
      const promptTokens = usage?.prompt_tokens ?? 0;
      const completion = usage?.completion_tokens ?? generated;
      used = promptTokens + completion;
      const genMs = first ? end - first : 0;
      yield {
        kind: 'done',
        stats: {
          promptTokens,
          generatedTokens: completion,
          ttftMs: first ? first - t0 : end - t0,
          tokensPerS: genMs > 0 && completion > 1 ? ((completion - 1) * 1000) / genMs : 0,
          promptTokensPerS: first && promptTokens ? (promptTokens * 1000) / (first - t0) : 0,
          stopReason: cancelled ? 'cancelled' : finish === 'length' ? 'length' : 'eos',
        },
        contextUsed: used,
        contextSize,
      };
    },
    serve: async () => {
      throw new ModelError('REMOTE_SERVE', `${t.model} already runs on ${t.baseUrl}; point clients at that server instead.`);
    },
    dispose: () => {},
  };
}
