// What the host needs from the engine, and the adapter from the engine's facade (session.ts:
// LoadedModel + Session) to it. Session.chat already speaks the app's contract (shared/contract.ts
// GenerationEvent), so the host streams its events as they come.

import { basename } from 'node:path';
import type { ChatMessage, ContextPolicy } from '../chat/index.js';
import { LoadedModel, Session } from '../session.js';
import type { ComputeBackend, GenerationEvent, GpuLayersSetting, SamplingSettings, ServerLogEntry, StructuredOutput } from '../../shared/contract.js';
import { OpenAiServer } from '../server/server.js';
import { structuredGrammar } from '../grammar/structured.js';
import { Profile } from '../model/profile.js';
import type { LoadedInfo } from './protocol.js';
import { loadRemoteModel, type RemoteTarget } from './remote-model.js';
import { loadFailed, pickBackend, watchGpu } from './backend-choice.js';

export interface LoaderOptions {
  path: string;
  contextSize: number;
  threads: number;
  /** Where to compute (the app's setting, backend-choice.ts); default 'auto'. */
  backend?: ComputeBackend;
  /** On the GPU: its blocks (the app's Settings.gpuLayers); default 'auto'. */
  gpuLayers?: GpuLayersSetting;
  signal: AbortSignal;
  onProgress: (loadedBytes: number, totalBytes: number) => void;
  /** A model on another server instead of a file (remote-model.ts). */
  remote?: RemoteTarget;
}

/** How a chat request is run: the context policy (default 'stop') and structured output (none). */
export interface ChatOptions {
  policy?: ContextPolicy;
  structured?: StructuredOutput;
  probabilities?: boolean;
  replyPrefix?: string;
  /** Profile the reply (the 'done' event then carries it). */
  profile?: boolean;
}

/** One loaded model with its conversation cache, as the host uses it. */
export interface EngineModel {
  readonly info: Omit<LoadedInfo, 'loadMs'>;
  /** Tokens held in the conversation cache. */
  readonly used: number;
  /** Tokens the conversation takes once rendered with the model's chat template. */
  countTokens(messages: ChatMessage[]): number;
  /** Stream a reply to the conversation; ends with 'done' (or throws). */
  chat(messages: ChatMessage[], sampling: SamplingSettings, signal: AbortSignal, opts?: ChatOptions): AsyncIterable<GenerationEvent>;
  /** Serve the model over the OpenAI API on 127.0.0.1:port (its own session); resolves once it listens. */
  serve(opts: { port: number; apiKey?: string; onRequest: (e: ServerLogEntry) => void }): Promise<{ url: string; close(): Promise<void> }>;
  dispose(): void;
}

export type EngineLoader = (opts: LoaderOptions) => Promise<EngineModel>;

// ---------------------------------------------------------------------------------------------
// The adapter over session.ts

export const loadSessionModel: EngineLoader = async (opts) => {
  if (opts.remote) return loadRemoteModel(opts.remote, opts.contextSize, opts.signal);
  const pick = pickBackend(opts.backend, process.env.PANTHEON_BACKEND);
  const model = await LoadedModel.load(opts.path, {
    contextSize: opts.contextSize,
    threads: opts.threads > 0 ? opts.threads : 0, // 0: every core, one for a tiny model (autoThreads)
    backend: pick.kind,
    ...(pick.kind === 'webgpu' ? { gpuLayers: opts.gpuLayers ?? 'auto' } : {}),
    onProgress: opts.onProgress,
    signal: opts.signal,
  }).catch((err: unknown) => loadFailed(err, opts.backend));
  const session = new Session(model);
  const notes = [...(model.backendNotice ? ['the WebAssembly kernels did not start'] : []), ...(pick.note ? [pick.note] : [])];
  return {
    info: {
      modelName: model.summary.name ?? basename(opts.path),
      architecture: model.summary.architecture ?? 'unknown',
      contextSize: model.contextSize,
      threads: model.model.backend.threads,
      backend: notes.length ? `${model.backendName} (${notes.join('; ')})` : model.backendName,
      memoryBytes: model.plan.need + (model.gpu?.bytes ?? 0), // weights (with the pool's bands) + KV cache, and the GPU's weights
      ...(model.gpu ? { gpu: { adapter: model.gpu.adapter, layers: model.gpu.layers, of: model.gpu.of } } : {}),
    },
    get used() {
      return session.used;
    },
    countTokens: (messages) => model.encodeChat(messages).tokens.length,
    chat: (messages, sampling, signal, { policy, structured, probabilities, replyPrefix, profile } = {}) =>
      watchGpu(session.chat(messages, sampling, signal, { policy, grammar: structuredGrammar(structured), probabilities, replyPrefix, ...(profile ? { profile: new Profile() } : {}) })),
    async serve({ port, apiKey, onRequest }) {
      const server = await OpenAiServer.start(model, {
        host: '127.0.0.1',
        port,
        apiKey,
        onRequest: (e) => onRequest({ time: Date.now(), method: e.method, path: e.path, status: e.status, promptTokens: e.promptTokens, completionTokens: e.completionTokens, tokensPerS: e.tokensPerS }),
      });
      return { url: server.url, close: () => server.close() };
    },
    dispose: () => model.dispose(),
  };
};
