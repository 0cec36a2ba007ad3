// What the host needs from the engine, and the adapter from the engine's facade (session.ts:
// LoadedModel + Session) to it. The host speaks the app's contract (shared/contract.ts); the engine
// speaks its own events; this file is the only place that knows both.

import type { ChatMessage } from '../chat/types.js';
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
// The adapter over session.ts. Until that file lands, its planned API is declared here so the host
// compiles; the module is loaded at run time.

interface PlannedEngineEvent {
  kind: 'prompt' | 'token' | 'done';
  text?: string;
  tokens?: number[];
  id?: number;
  top?: { id: number; p: number; text: string }[];
  reason?: 'eos' | 'length' | 'stop' | 'cancelled' | 'context';
  stats?: { promptTokens: number; generatedTokens: number; ttftMs: number; tokensPerS: number; promptTokensPerS: number };
}
interface PlannedLoadedModel {
  summary: { name: string | null; architecture: string | null };
  contextSize: number;
  memory: { weights: number; kvCache: number };
  dispose(): void;
}
interface PlannedSession {
  chat(messages: ChatMessage[], sampling: SamplingSettings, signal?: AbortSignal): AsyncGenerator<PlannedEngineEvent>;
  readonly used: number;
}
interface PlannedSessionModule {
  LoadedModel: { load(path: string, opts: Record<string, unknown>): Promise<PlannedLoadedModel> };
  Session: new (model: PlannedLoadedModel) => PlannedSession;
}

const SESSION_MODULE = '../session.js';

export const loadSessionModel: EngineLoader = async (opts) => {
  const mod = (await import(/* @vite-ignore */ SESSION_MODULE)) as PlannedSessionModule;
  const model = await mod.LoadedModel.load(opts.path, {
    contextSize: opts.contextSize,
    threads: opts.threads > 0 ? opts.threads : undefined,
    onProgress: opts.onProgress,
    signal: opts.signal,
  });
  const session = new mod.Session(model);
  const info = {
    modelName: model.summary.name ?? opts.path.split(/[\\/]/).pop() ?? 'model',
    architecture: model.summary.architecture ?? 'unknown',
    contextSize: model.contextSize,
    threads: opts.threads,
    backend: 'scalar',
    memoryBytes: model.memory.weights + model.memory.kvCache,
  };
  return {
    info,
    get used() { return session.used; },
    countTokens: () => 0,
    async *chat(messages, sampling, signal) {
      for await (const e of session.chat(messages, sampling, signal)) {
        if (e.kind === 'prompt') yield { kind: 'prompt', text: e.text ?? '', tokens: e.tokens ?? [], templateName: '' };
        else if (e.kind === 'token') yield { kind: 'token', id: e.id ?? 0, text: e.text ?? '', top: e.top ?? [] };
        else yield { kind: 'done', stats: { ...e.stats!, stopReason: e.reason! }, contextUsed: session.used, contextSize: model.contextSize };
      }
    },
    dispose: () => model.dispose(),
  };
};
