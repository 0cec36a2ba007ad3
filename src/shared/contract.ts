// The one typed contract between the renderer and the rest of Pantheon. The preload (Electron), the
// main-process handlers and the dev harness (WebSocket) are all typed from it, so a typo in a
// channel name or payload fails to compile. Errors travel as SerializedError and are rebuilt as the
// same class (errors.ts).

import type { SerializedError } from './errors.js';

// ---------------------------------------------------------------------------------------------
// Values

/** A model file the library knows of. `id` is stable for a path; the renderer never picks paths. */
export interface ModelEntry {
  id: string;
  path: string;
  fileName: string;
  /** Header summary, or null with `error` when the header cannot be read. */
  architecture: string | null;
  name: string | null;
  parameters: number | null;
  /** Parameters per token of a mixture-of-experts file; absent or null otherwise. */
  activeParameters?: number | null;
  /**
   * Memory to run it, as bytes = weights + fixed + perPosition · context size (weights, KV cache,
   * recurrent state: engine/model/load.ts memoryModel); absent or null when it cannot run.
   */
  memory?: { weights: number; fixed: number; perPosition: number } | null;
  quantization: string | null;
  fileSize: number;
  error: string | null;
  source: 'demo' | 'recent' | 'folder' | 'remote';
  /** ms since epoch; recent entries only. */
  openedAt?: number;
}

export interface Library {
  demo: ModelEntry | null;
  recent: ModelEntry[];
  folder: string | null;
  folderModels: ModelEntry[];
  /** True while the folder is being scanned. */
  scanning: boolean;
}

export type MetaScalar = string | number | boolean;
/** A metadata value as shown: bigints as decimal strings; arrays summarised (see MetaArrayInfo). */
export type MetaValue = MetaScalar | MetaScalar[] | MetaArrayInfo;

/** Arrays longer than a few items are sent as a summary; items are fetched by `model:metaArray`. */
export interface MetaArrayInfo {
  array: true;
  itemType: string;
  length: number;
  /** The first items (up to 16), already converted. */
  head: MetaValue[];
}

export interface MetaEntry {
  key: string;
  /** GGUF value type name: 'UINT32', 'STRING', 'ARRAY' … */
  type: string;
  value: MetaValue;
}

export interface TensorRow {
  name: string;
  type: string;
  typeId: number;
  /** As stored: innermost first. */
  dims: number[];
  elements: number;
  bytes: number;
  /** Relative to the data section. */
  offset: number;
  /** `blk.N` layer index, or null for non-layer tensors. */
  layer: number | null;
}

export interface OpenedModel {
  entry: ModelEntry;
  version: number;
  alignment: number;
  dataOffset: number;
  tensorCount: number;
  parameters: number;
  quantization: string;
  contextLength: number | null;
  warnings: string[];
  metadata: MetaEntry[];
  tensors: TensorRow[];
  /** Whether the engine can run this architecture (chat is offered only then). */
  runnable: boolean;
  /** Why not, when runnable is false. */
  notRunnableReason: string | null;
  /** A model on a remote server: no file here, so no metadata and no tensors to show. */
  remote?: { baseUrl: string; model: string };
}

/** A remote OpenAI-compatible server the user added, with the models it lists. */
export interface RemoteServer {
  id: string;
  baseUrl: string;
  hasKey: boolean;
  /** Where its key is kept: the OS's secret store, this session's memory only, or no key. */
  keyStorage: 'secure' | 'session' | 'none';
  models: string[];
  /** Why its model list could not be had, one line. */
  error: string | null;
}

/** Equal-width bins: one more edge than counts; the last bin includes its right edge. */
export interface HistogramView {
  edges: number[];
  counts: number[];
}

/** One tensor's statistics (engine/inspect/tensor-stats.ts), null where a value does not exist. */
export interface TensorStatsView {
  name: string;
  type: string;
  dims: number[];
  elements: number;
  /** Over the finite elements; null when there are none. */
  min: number | null;
  max: number | null;
  mean: number | null;
  /** Population standard deviation. */
  std: number | null;
  zeros: number;
  nonfinite: number;
  histogram: HistogramView;
  /** Mean |value| per cell of a grid laid on the matrix (rows × cols, row-major). */
  heatmap?: { rows: number; cols: number; matrixRows: number; matrixCols: number; values: number[] };
  /** Block formats: the spread of the blocks' scales. */
  scales?: { count: number; min: number; max: number; histogram: HistogramView };
}

/** The opened model compared with another file (engine/inspect/model-diff.ts). */
export interface ModelCompareView {
  other: { fileName: string; path: string };
  metadata: { added: string[]; removed: string[]; changed: string[] };
  tensors: {
    added: string[];
    removed: string[];
    /** Common tensors whose bytes differ: relRms = ‖a − b‖₂ / ‖a‖₂; null when the element counts differ. */
    changed: { name: string; a: { type: string; dims: number[] }; b: { type: string; dims: number[] }; relRms: number | null; maxAbs: number | null }[];
    unchanged: number;
  };
}

export interface MetaArraySlice {
  key: string;
  total: number;
  /** Items with their index; when a query was given, only matches (up to `limit`). */
  items: { index: number; value: MetaValue }[];
  /** Number of matches for the query (equal to total without a query). */
  matches: number;
}

/** Sampling parameters, llama.cpp's chain (common/common.h struct common_params_sampling). */
export interface SamplingSettings {
  /** <= 0: greedy (argmax). llama.cpp default 0.8. */
  temperature: number;
  /** Keep the k most likely tokens; <= 0 disables. Default 40. */
  topK: number;
  /** Keep the smallest set whose probability reaches p; 1 disables. Default 0.95. */
  topP: number;
  /** Drop tokens whose probability is below minP × the top probability; 0 disables. Default 0.05. */
  minP: number;
  /** Divide positive / multiply negative logits of recent tokens; 1 disables. Default 1. */
  repeatPenalty: number;
  /** Subtracted once from every recent token's logit; 0 disables. */
  presencePenalty: number;
  /** Subtracted per occurrence in the window; 0 disables. */
  frequencyPenalty: number;
  /** How many recent tokens the penalties look at; 0 disables, -1 means the whole history. Default 64. */
  penaltyLastN: number;
  /** RNG seed (uint32); -1 picks a random one each reply (llama.cpp LLAMA_DEFAULT_SEED). */
  seed: number;
  /** Most tokens to generate; -1 = until end of turn or a full context (llama.cpp n_predict). */
  maxTokens: number;
  /** Extra stop strings, on top of the chat template's end-of-turn markers. */
  stop: string[];
}

/** llama.cpp's defaults: temp 0.80, top_k 40, top_p 0.95, min_p 0.05, repeat penalty off, last_n 64. */
export const DEFAULT_SAMPLING: Readonly<SamplingSettings> = Object.freeze({
  temperature: 0.8,
  topK: 40,
  topP: 0.95,
  minP: 0.05,
  repeatPenalty: 1.0,
  presencePenalty: 0.0,
  frequencyPenalty: 0.0,
  penaltyLastN: 64,
  seed: -1,
  maxTokens: -1,
  stop: [] as string[],
});

export const COMPUTE_BACKENDS = ['auto', 'cpu', 'gpu'] as const;
export type ComputeBackend = (typeof COMPUTE_BACKENDS)[number];

/**
 * With Compute on GPU: the model's first N blocks on the GPU and the rest on the CPU (N above the
 * model's blocks: all), or 'auto': as many as the GPU's memory holds (engine/backend/offload-plan.ts).
 */
export type GpuLayersSetting = 'auto' | number;
/** The largest number of GPU layers the setting takes (no model has more blocks). */
export const MAX_GPU_LAYERS = 4096;

/** Where a model runs on the GPU: the adapter, and how many of its blocks are there. */
export interface GpuOffload {
  adapter: string;
  layers: number;
  /** The model's blocks. */
  of: number;
}

export interface Settings {
  sampling: SamplingSettings;
  systemPrompt: string;
  contextSize: number;
  /** 0 = as many as the machine has cores. */
  threads: number;
  /** Where the engine computes: 'auto' (the CPU pool; never Mesa's llvmpipe), 'cpu', 'gpu' (WebGPU). */
  computeBackend?: ComputeBackend;
  /** With computeBackend 'gpu': the blocks on the GPU (default 'auto'). */
  gpuLayers?: GpuLayersSetting;
  theme: 'system' | 'light' | 'dark';
  modelsFolder: string | null;
  contextPolicy: ContextPolicy;
  /** Shade each generated token by its probability, with the alternatives at each step. */
  showProbabilities: boolean;
  /** Profile each reply (time per op and per layer) and show the last one beside the chat. */
  showProfile: boolean;
}

export type ChatRole = 'system' | 'user' | 'assistant';

export interface ReplyStats {
  promptTokens: number;
  generatedTokens: number;
  ttftMs: number;
  tokensPerS: number;
  promptTokensPerS: number;
  stopReason: StopReason;
  /** Reasoning models: tokens of the reply's reasoning and the time it took (absent in older chats). */
  reasoningTokens?: number;
  reasoningMs?: number;
}

export type StopReason = 'eos' | 'length' | 'stop' | 'cancelled' | 'context' | 'error';

/** The exact prompt a reply was generated from, as the 'prompt' generation event gave it. */
export interface ReplyPrompt {
  /** The prompt text after the chat template. */
  text: string;
  /** How many tokens it encodes to. */
  tokens: number;
  templateName: string;
}

/** A reply's reasoning (Qwen3, DeepSeek-R1, gpt-oss think before they answer), kept apart from its answer. */
export interface ReplyReasoning {
  text: string;
  /** Tokens the reasoning took, its markers included. */
  tokens: number;
  /** From the first generated token to the end of the reasoning. */
  ms: number;
}

export interface StoredMessage {
  id: string;
  role: ChatRole;
  content: string;
  createdAt: number;
  /** Assistant replies: how the reply ended and its speed. */
  stats?: ReplyStats;
  /** Assistant replies: the model file that produced it. */
  modelName?: string;
  /** Assistant replies: the exact prompt it was generated from ("Show prompt"). */
  prompt?: ReplyPrompt;
  /** Assistant replies of a reasoning model: the reasoning before the answer (`content` is the answer). */
  reasoning?: ReplyReasoning;
  /**
   * Assistant replies generated with "Probabilities" on: each answer token's text, its probability
   * after the sampler (p; 0 when the sampler had cut it), its raw log-probability (lp), and the most
   * likely tokens at that step. Their texts joined are the reply's content.
   */
  tokens?: StoredToken[];
  /**
   * Assistant replies: the earlier versions this one replaced (Regenerate, a branch at another
   * token), oldest first, kept to read (without their prompts).
   */
  versions?: ReplyVersion[];
}

/** An earlier version of a reply. */
export interface ReplyVersion {
  content: string;
  createdAt: number;
  stats?: ReplyStats;
  modelName?: string;
  reasoning?: ReplyReasoning;
}

export interface StoredToken {
  t: string;
  p: number;
  lp: number;
  alts: { t: string; p: number; lp: number }[];
}

/** The `format` field of a chat exported as JSON ('chats:import' takes such a file back). */
export const CHAT_EXPORT_FORMAT = 'pantheon-chat';

export interface ChatSummary {
  id: string;
  title: string;
  updatedAt: number;
  messageCount: number;
}

export interface Chat {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  systemPrompt: string;
  messages: StoredMessage[];
}

export type EngineState =
  | { status: 'idle' }
  | { status: 'loading'; modelId: string; loadedBytes: number; totalBytes: number }
  | { status: 'ready'; modelId: string; modelName: string; contextSize: number; threads: number; backend: string; memoryBytes: number; loadMs: number; gpu?: GpuOffload }
  | { status: 'busy'; modelId: string; modelName: string; contextSize: number }
  | { status: 'crashed'; modelId: string | null; reason: EngineExitReason; message: string }
  | { status: 'error'; modelId: string | null; error: SerializedError };

/** Why the engine process went away (Electron's child-process-gone reasons, closed). */
export type EngineExitReason = 'clean-exit' | 'abnormal-exit' | 'killed' | 'crashed' | 'oom' | 'launch-failed' | 'integrity-failure';

// ---------------------------------------------------------------------------------------------
// Generation stream (Electron: a MessagePort brokered by main; harness: the WebSocket)

/** A message sent to the model. A reply's `reasoning` goes to the chat template, which leaves it out of earlier turns. */
export interface RequestMessage {
  role: ChatRole;
  content: string;
  reasoning?: string;
}

/**
 * When the conversation does not fit the context: 'stop' says so; 'truncate-middle' keeps the
 * system prompt and the first exchange and leaves out the oldest turns after it; 'rolling' leaves
 * out the oldest turns (engine/chat/context-policy.ts).
 */
export type ContextPolicy = 'stop' | 'truncate-middle' | 'rolling';
export const CONTEXT_POLICIES: readonly ContextPolicy[] = ['stop', 'truncate-middle', 'rolling'];

/**
 * Structured output: the reply is constrained to a grammar (the engine's grammar/). 'json': any
 * JSON object; 'json-schema': a JSON schema (its text); 'gbnf': a grammar in llama.cpp's GBNF.
 */
export type StructuredOutput = { kind: 'off' } | { kind: 'json' } | { kind: 'json-schema'; schema: string } | { kind: 'gbnf'; grammar: string };

export interface GenerateRequest {
  /** The conversation to continue, system prompt first if any; the last message is the user's. */
  messages: RequestMessage[];
  sampling: SamplingSettings;
  /** Default 'stop'. */
  contextPolicy?: ContextPolicy;
  /** Constrain the reply (absent: free text). */
  structured?: StructuredOutput;
  /** Each token event carries its raw log-probability and the 10 most likely tokens ("Probabilities"). */
  probabilities?: boolean;
  /** Text the reply starts with, given (a branch at another token): generation continues after it. */
  replyPrefix?: string;
  /** The 'done' event carries the reply's profile (time per op and per layer). */
  profile?: boolean;
}

/** Time per op kind and per layer of one reply, prompt and generation apart (engine/model/profile.ts). */
export interface ProfileView {
  ops: { op: string; promptMs: number; genMs: number; genCalls: number }[];
  layers: { layer: number; promptMs: number; genMs: number }[];
  tokens: { prompt: number; gen: number };
}

/** One generated token's raw log-probability (ln softmax of the logits) and the most likely tokens. */
export interface TokenLogprobs {
  logprob: number;
  top: { id: number; logprob: number; text: string }[];
}

export type GenerationEvent =
  /**
   * The exact prompt text and tokens sent to the model (Pantheon shows it). `notice`: one line for
   * the user when the file's chat template passed a limit and a built-in one was used instead.
   */
  | { kind: 'prompt'; text: string; tokens: number[]; templateName: string; notice?: string; dropped?: number }
  /** One token: `text` is its part of the answer, `reasoning` its part of the reasoning ('' for most tokens). */
  | { kind: 'token'; id: number; text: string; reasoning: string; top: { id: number; p: number; text: string }[]; logprobs?: TokenLogprobs }
  | { kind: 'done'; stats: ReplyStats; contextUsed: number; contextSize: number; profile?: ProfileView }
  | { kind: 'error'; error: SerializedError };

// ---------------------------------------------------------------------------------------------
// Requests and events

/** One request the local server answered (the panel's live log). */
export interface ServerLogEntry {
  /** ms since the epoch. */
  time: number;
  method: string;
  path: string;
  status: number;
  promptTokens: number;
  completionTokens: number;
  tokensPerS: number;
}

/** The app's local OpenAI-compatible server, run by the engine host over the loaded model. */
export interface ServerState {
  running: boolean;
  /** http://127.0.0.1:PORT/v1 while running. */
  url: string | null;
  port: number;
  /** Whether requests must send the API key (the key itself never leaves main). */
  apiKey: boolean;
  /** The model it serves (the loaded one), while running. */
  modelName: string | null;
  /** Why it is not running, in one sentence (a port in use, no model loaded). */
  error: string | null;
  /** The latest requests, oldest first (at most SERVER_LOG_SIZE). */
  log: ServerLogEntry[];
}

export const SERVER_LOG_SIZE = 100;

export type MenuCommand = 'open-model' | 'close-model' | 'new-chat' | 'show-chat' | 'show-metadata' | 'show-tensors';

export interface Requests {
  'app:info': { request: void; response: { version: string; platform: string; harness: boolean } };
  'library:get': { request: void; response: Library };
  /** Opens a native folder picker; the chosen folder is scanned. */
  'library:chooseFolder': { request: void; response: Library };
  'library:forgetRecent': { request: { id: string }; response: Library };
  /** Opens a native file dialog filtered to .gguf; null when cancelled. */
  'model:openDialog': { request: void; response: OpenedModel | null };
  /** Opens a library entry (demo, recent or folder model). */
  'model:open': { request: { id: string }; response: OpenedModel };
  /** Opens a dropped file. Only the preload calls this (path from webUtils.getPathForFile). */
  'model:openDropped': { request: { path: string }; response: OpenedModel };
  'model:close': { request: void; response: void };
  /** A slice of a long metadata array, optionally filtered by a query (text match, or an index). */
  'model:metaArray': { request: { key: string; offset: number; limit: number; query?: string }; response: MetaArraySlice };
  /** Statistics of one tensor of the opened model, computed off the main thread ('model:inspectProgress'). */
  'model:tensorStats': { request: { name: string }; response: TensorStatsView };
  /** Compare the opened model with a library entry, or with a file from the open dialog (null: cancelled). */
  'model:compare': { request: { id?: string }; response: ModelCompareView | null };
  /** Stop the running statistics or comparison; its request fails with "cancelled". */
  'model:cancelInspect': { request: void; response: void };
  /** Load the opened model into the engine process for chat. */
  'engine:load': { request: { id: string; contextSize?: number; threads?: number }; response: EngineState };
  'engine:cancelLoad': { request: void; response: EngineState };
  'engine:unload': { request: void; response: EngineState };
  'engine:state': { request: void; response: EngineState };
  /** The WebGPU adapter a GPU load would use, by name (Settings → Engine), or null when there is none. */
  'engine:gpuAdapter': { request: void; response: { adapter: string | null } };
  /** Count tokens of a text with the loaded model (context gauge). */
  'engine:countTokens': { request: { messages: RequestMessage[] }; response: { tokens: number; contextSize: number } };
  'remote:list': { request: void; response: RemoteServer[] };
  /** Add a server (it must answer GET /models); the key goes to the OS's secret store. */
  'remote:add': { request: { baseUrl: string; apiKey?: string }; response: RemoteServer[] };
  'remote:remove': { request: { id: string }; response: RemoteServer[] };
  'remote:refresh': { request: { id: string }; response: RemoteServer[] };
  /** Open one of a server's models; 'engine:load' with the returned entry's id runs it. */
  'remote:open': { request: { id: string; model: string }; response: OpenedModel };
  'chats:list': { request: void; response: ChatSummary[] };
  'chats:get': { request: { id: string }; response: Chat };
  'chats:create': { request: { title?: string; systemPrompt?: string }; response: Chat };
  /** Replace a chat's content (written atomically). */
  /**
   * `keepPrompts`: replies sent without their prompt because it is stored already (a long chat's
   * prompts are megabytes); the store keeps the stored prompt of each.
   */
  'chats:save': { request: { chat: Chat; keepPrompts?: string[] }; response: ChatSummary };
  'chats:rename': { request: { id: string; title: string }; response: ChatSummary };
  'chats:delete': { request: { id: string }; response: void };
  /** A chat exported as JSON (the export's text), saved as a new chat. */
  'chats:import': { request: { text: string }; response: ChatSummary };
  /** Serve the loaded model over the OpenAI API on 127.0.0.1:port (0: any free port). */
  'server:start': { request: { port: number; apiKey?: string }; response: ServerState };
  'server:stop': { request: void; response: ServerState };
  'server:state': { request: void; response: ServerState };
  'settings:get': { request: void; response: Settings };
  'settings:set': { request: { settings: Partial<Settings> }; response: Settings };
}

export interface Events {
  'engine:state': EngineState;
  'library:changed': Library;
  'menu:command': { command: MenuCommand };
  /** A model opened from outside the page (menu, command line, OS file association). */
  'model:opened': OpenedModel;
  /** Progress of 'model:tensorStats' (elements) or 'model:compare' (tensors). */
  'model:inspectProgress': { job: 'stats' | 'compare'; done: number; total: number };
  'server:state': ServerState;
}

export type RequestChannel = keyof Requests;
export type EventChannel = keyof Events;
export type RequestOf<C extends RequestChannel> = Requests[C]['request'];
export type ResponseOf<C extends RequestChannel> = Requests[C]['response'];

export const REQUEST_CHANNELS = [
  'app:info', 'library:get', 'library:chooseFolder', 'library:forgetRecent', 'model:openDialog', 'model:open',
  'model:openDropped', 'model:close', 'model:metaArray', 'model:tensorStats', 'model:compare', 'model:cancelInspect', 'engine:load', 'engine:cancelLoad', 'engine:unload',
  'engine:state', 'engine:gpuAdapter', 'engine:countTokens', 'remote:list', 'remote:add', 'remote:remove', 'remote:refresh', 'remote:open', 'chats:list', 'chats:get', 'chats:create', 'chats:save', 'chats:rename',
  'chats:delete', 'chats:import', 'settings:get', 'settings:set', 'server:start', 'server:stop', 'server:state',
] as const satisfies readonly RequestChannel[];

export const EVENT_CHANNELS = ['engine:state', 'library:changed', 'menu:command', 'model:opened', 'model:inspectProgress', 'server:state'] as const satisfies readonly EventChannel[];

/** A running generation; `cancel` stops it within one token. */
export interface GenerationHandle {
  cancel(): void;
}

type Namespace<C> = C extends `${infer NS}:${string}` ? NS : never;
type Method<C> = C extends `${string}:${infer M}` ? M : never;
type Fn<C extends RequestChannel> = RequestOf<C> extends void
  ? () => Promise<ResponseOf<C>>
  : (request: RequestOf<C>) => Promise<ResponseOf<C>>;

/** `{ library: { get(), chooseFolder(), … }, model: { open(req), … }, … }`, one function per channel. */
export type RequestApi = {
  [NS in Namespace<RequestChannel>]: {
    [C in RequestChannel as Namespace<C> extends NS ? Method<C> : never]: Fn<C>;
  };
};

/**
 * The API the page sees as `window.pantheon`: named functions only, no raw IPC. Built from the
 * contract by the preload (Electron) and by the harness client (WebSocket) alike, with
 * `buildRequestApi` (each channel 'ns:method' becomes `api.ns.method(request)`).
 */
export interface PantheonApi extends RequestApi {
  on<E extends EventChannel>(event: E, listener: (payload: Events[E]) => void): () => void;
  generate(request: GenerateRequest, onEvent: (event: GenerationEvent) => void): GenerationHandle;
  /** Open a dropped File (the preload resolves its path with webUtils.getPathForFile). */
  openDroppedFile(file: File): Promise<OpenedModel>;
}

/** Build the named request functions from one transport function. */
export function buildRequestApi(call: (channel: RequestChannel, request: unknown) => Promise<unknown>): RequestApi {
  const api: Record<string, Record<string, (req?: unknown) => Promise<unknown>>> = {};
  for (const channel of REQUEST_CHANNELS) {
    const [ns, method] = channel.split(':');
    (api[ns] ??= {})[method] = (req?: unknown) => call(channel, req);
  }
  return api as unknown as RequestApi;
}
