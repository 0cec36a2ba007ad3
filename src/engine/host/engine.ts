// What the host needs from the engine, and the adapter from the engine's facade (session.ts:
// LoadedModel + Session) to it. Session.chat already speaks the app's contract (shared/contract.ts
// GenerationEvent), so the host streams its events as they come.

import { basename } from 'node:path';
import type { ChatMessage } from '../chat/index.js';
import { LoadedModel, Session, type BackendKind } from '../session.js';
import type { GenerationEvent, SamplingSettings } from '../../shared/contract.js';
import type { LoadedInfo } from './protocol.js';

export interface LoaderOptions {
  path: string;
  contextSize: number;
  threads: number;
  signal: AbortSignal;
  onProgress: (loadedBytes: number, totalBytes: number) => void;
}

/** One loaded model with its conversation cache, as the host uses it. */
export interface EngineModel {
  readonly info: Omit<LoadedInfo, 'loadMs'>;
  /** Tokens held in the conversation cache. */
  readonly used: number;
  /** Tokens the conversation takes once rendered with the model's chat template. */
  countTokens(messages: ChatMessage[]): number;
  /** Stream a reply to the conversation; ends with 'done' (or throws). */
  chat(messages: ChatMessage[], sampling: SamplingSettings, signal: AbortSignal): AsyncIterable<GenerationEvent>;
  dispose(): void;
}

export type EngineLoader = (opts: LoaderOptions) => Promise<EngineModel>;

// ---------------------------------------------------------------------------------------------
// The adapter over session.ts

/** Which compute backend the host asks for: PANTHEON_BACKEND, else the engine's default. */
function backendChoice(): BackendKind | undefined {
  const b = process.env.PANTHEON_BACKEND;
  return b === 'scalar' || b === 'wasm' || b === 'pool' ? b : undefined;
}

export const loadSessionModel: EngineLoader = async (opts) => {
  const model = await LoadedModel.load(opts.path, {
    contextSize: opts.contextSize,
    threads: opts.threads > 0 ? opts.threads : 0, // 0: every core, one for a tiny model (autoThreads)
    backend: backendChoice(),
    onProgress: opts.onProgress,
    signal: opts.signal,
  });
  const session = new Session(model);
  return {
    info: {
      modelName: model.summary.name ?? basename(opts.path),
      architecture: model.summary.architecture ?? 'unknown',
      contextSize: model.contextSize,
      threads: model.model.backend.threads,
      backend: model.backendName,
      memoryBytes: model.plan.need, // weights (with the pool's bands) + KV cache
    },
    get used() {
      return session.used;
    },
    countTokens: (messages) => model.encodeChat(messages).tokens.length,
    chat: (messages, sampling, signal) => session.chat(messages, sampling, signal),
    dispose: () => model.dispose(),
  };
};
