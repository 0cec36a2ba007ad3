// The engine's facade for the app and the CLI: load a model (LoadedModel), then hold one
// conversation's KV cache (Session) and stream a reply as events. A new prompt that extends what
// the cache holds only evaluates the new tokens.

import { availableParallelism, totalmem } from 'node:os';
import type { GenerationEvent as ReplyEvent } from '../shared/contract.js';
import { CancelledError, ContextFullError, ModelError, UsageError } from '../shared/errors.js';
import { MAX_CONTEXT } from '../shared/validate.js';
import { OffloadBackend } from './backend/offload.js';
import { planOffload, type GpuLayers, type OffloadPlan } from './backend/offload-plan.js';
import { PoolBackend } from './backend/pool.js';
import { planPool, type PoolPlan } from './backend/pool-plan.js';
import type { WebGpuOptions } from './backend/webgpu/backend.js';
import { ScalarBackend } from './backend/scalar.js';
import { WasmBackend } from './backend/wasm.js';
import { WebGpuBackend } from './backend/webgpu/backend.js';
import { offerGpuStep } from './model/gpu-step.js';
import type { MatBackend } from './backend/types.js';
import { ReasoningSplitter, fitMessages, reasoningSetup, renderChat, templateInfoFromGguf, type ChatMessage, type ContextPolicy, type ReasoningSetup, type RenderedChat, type TemplateInfo } from './chat/index.js';
import { readGgufHeader } from './gguf/file.js';
import { summarize, type ModelSummary } from './gguf/keys.js';
import type { GgufHeader } from './gguf/types.js';
import type { DecodeBatch } from './decode-batch.js';
import { recurrentRestore, type RecurrentSnapshot, type RecurrentState } from './model/deltanet.js';
import { createRunState, forward, MAX_BATCH, type Model, type RunState } from './model/forward.js';
import type { ModelHparams } from './model/hparams.js';
import type { Profile } from './model/profile.js';
import { estimateMemory, loadModelFile, modelInfo, type MemoryEstimate } from './model/load.js';
import { grammarAfterReasoning } from './grammar/after-reasoning.js';
import { LazyGrammarWatch, type LazyGrammar } from './grammar/lazy.js';
import { ConstrainedSampler, grammarMatcher } from './grammar/sampling.js';
import { Sampler, sharedWasmPasses, StopStringMatcher, type SamplingParams } from './sample/index.js';
import { stepLogprobs, type StepLogprobs } from './sample/logprobs.js';
import { tokenizerFromGguf, type Tokenizer } from './tokenizer/index.js';

// ----------------------------------------------------------------------------------------------
// Loading

export type BackendKind = 'scalar' | 'wasm' | 'pool' | 'webgpu';

export interface LoadOptions {
  /** Positions the KV cache holds. Default: the training context, at most DEFAULT_CONTEXT. */
  contextSize?: number;
  /** Computing threads (default 1); 0 chooses them: autoThreads. */
  threads?: number;
  /** Which compute backend, or one already made (tests, a custom backend). Default: see defaultBackend. */
  backend?: BackendKind | MatBackend;
  /**
   * With backend 'webgpu': blocks [0, N) on the GPU and the rest on the CPU pool (backend/offload.ts,
   * offload-plan.ts); 'all', a number above the model's blocks, or by default 'auto': as many as
   * the GPU holds.
   */
  gpuLayers?: GpuLayers;
  /** Test hook: options for the WebGPU backend (WebGpuBackend.create). */
  gpuOptions?: WebGpuOptions;
  onProgress?: (loadedBytes: number, totalBytes: number) => void;
  signal?: AbortSignal;
}

/** Default context when the caller gives none (llama.cpp's common default n_ctx is 4096). */
export const DEFAULT_CONTEXT = 4096;

/** Below this many bytes of weights a token is too short for a second thread to pay its way. */
export const SMALL_MODEL_BYTES = 16 * 2 ** 20;

/**
 * Threads for a model with `weightBytes` of weights on `cores` cores: every core, except one for a
 * tiny model, where the pool's fixed cost per token outweighs sharing a millisecond of matrix
 * work (the numbers: docs/performance.md, "Numbers behind choices in the code").
 */
export function autoThreads(weightBytes: number, cores: number): number {
  return weightBytes < SMALL_MODEL_BYTES ? 1 : Math.max(1, cores);
}

/**
 * The pool's band (PoolOptions.band: a share of the weights held twice, so its threads split the
 * rows at run time) when there is room for it, else 0 (backend/pool-plan.ts planPool).
 */
export function poolBand(memory: MemoryEstimate, total: number, threads: number): number {
  return planPool(memory, threads, total).band;
}

/** What a NO_GPU error says before its advice (the CLI's here; the app's in host/backend-choice.ts). */
export const NO_GPU = 'no WebGPU adapter was found here (no GPU through Vulkan, Metal or Direct3D 12, and no Mesa llvmpipe through OpenGL ES)';

/** The CPU backends (WebGPU is made by openGpu, before the plan, and joined to the pool by load). */
async function createBackend(kind: Exclude<BackendKind, 'webgpu'>, threads: number, plan?: PoolPlan): Promise<MatBackend> {
  switch (kind) {
    case 'scalar':
      return new ScalarBackend();
    case 'wasm':
      return new WasmBackend();
    case 'pool':
      return new PoolBackend({ threads, band: plan?.band, shards: plan?.shards });
  }
}

/** The output matrix is token_embd (weights.ts loadWeights: no output.weight, or an architecture that always ties). */
const tiedOutput = (h: GgufHeader, alwaysTied: boolean | undefined): boolean => alwaysTied === true || !h.tensors.some((t) => t.name === 'output.weight');

/**
 * The WebGPU backend (only when asked for: a GPU, else Mesa's llvmpipe, the CPU through OpenGL ES,
 * for tests, which the name then says) and where the model's blocks go (offload-plan.ts).
 */
function openGpu(header: GgufHeader, hp: ModelHparams, tied: boolean, want: GpuLayers, memory: MemoryEstimate, opts?: WebGpuOptions): { gpu: WebGpuBackend; offload: OffloadPlan } {
  const gpu = WebGpuBackend.create({ fallback: 'allow', ...opts });
  if (!gpu) throw new ModelError('NO_GPU', `${NO_GPU}; use --backend pool`);
  try {
    // (a test's memoryBytes makes the software adapter probe as a GPU would)
    const budget = { chunkBytes: gpu.chunkBytes, software: gpu.software && !opts?.memoryBytes, probe: (g: number[][], reserve: number) => gpu.probe(g, reserve) };
    return { gpu, offload: planOffload(header, hp.nLayer, tied, want, budget, memory.weights, memory.kvCache) };
  } catch (err) {
    gpu.dispose();
    throw err;
  }
}

/**
 * The backend asked for, or by default the fastest that starts here: the WebAssembly pool for
 * several threads, single-thread WebAssembly otherwise, and the scalar reference when the
 * WebAssembly kernels cannot be loaded (e.g. not built). An explicit choice that fails throws.
 * WebGPU only when asked for (docs/webgpu.md).
 */
async function defaultBackend(kind: Exclude<BackendKind, 'webgpu'> | undefined, threads: number, plan?: PoolPlan): Promise<{ backend: MatBackend; notice?: string }> {
  if (kind) return { backend: await createBackend(kind, threads, plan) };
  try {
    // (one thread whose model needs more than one memory: the pool, with its shards on this thread)
    return { backend: await createBackend(threads > 1 || (plan && plan.shards > 1) ? 'pool' : 'wasm', threads, plan) };
  } catch (err) {
    // said, not silent: the scalar reference is many times slower than the kernels
    return { backend: new ScalarBackend(), notice: `running on the slow scalar reference: ${(err as Error).message}` };
  }
}

function checkContextSize(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONTEXT) throw new UsageError(`context size ${n} is not usable; give a whole number from 1 to ${MAX_CONTEXT}`);
  return n;
}

export class LoadedModel {
  private disposed = false;
  /** Milliseconds load() took, from opening the file to a model ready to run (`pantheon run --json` load_ms). */
  loadMs = 0;
  /** Why the default backend could not start and the scalar reference runs instead (said to the user). */
  backendNotice?: string;

  private constructor(
    readonly path: string,
    readonly header: GgufHeader,
    readonly summary: ModelSummary,
    readonly hparams: ModelHparams,
    readonly tokenizer: Tokenizer,
    readonly templateInfo: TemplateInfo,
    readonly contextSize: number,
    readonly memory: MemoryEstimate,
    /** Where the weights went (pool-plan.ts): shards, band, and the bytes it all takes (need). */
    readonly plan: PoolPlan,
    /** The forward pass's view of the weights (engine internal). */
    readonly model: Model,
  ) {}

  /** `messages` rendered with the model's chat template, and its tokens. */
  encodeChat(messages: ChatMessage[]): { rendered: RenderedChat; tokens: number[] } {
    const rendered = renderChat(this.templateInfo, messages);
    const tokens = this.tokenizer.encode(rendered.text, { addSpecial: !rendered.startsWithBos, parseSpecial: true });
    return { rendered, tokens };
  }

  /** Memory a model would take at a context size, from its header alone (nothing is loaded). */
  static estimate(h: GgufHeader, contextSize?: number): MemoryEstimate {
    const { hp } = modelInfo(h);
    return estimateMemory(h, hp, checkContextSize(contextSize ?? Math.min(hp.nCtxTrain || DEFAULT_CONTEXT, DEFAULT_CONTEXT)));
  }

  static async load(path: string, opts: LoadOptions = {}): Promise<LoadedModel> {
    const stop = () => {
      if (opts.signal?.aborted) throw new CancelledError('Loading was cancelled.');
    };
    stop();
    const t0 = performance.now();
    const header = await readGgufHeader(path);
    const { spec, hp } = modelInfo(header); // unsupported architecture / bad keys fail here, before any weight is read
    const contextSize = checkContextSize(opts.contextSize ?? Math.min(hp.nCtxTrain || DEFAULT_CONTEXT, DEFAULT_CONTEXT));
    const memory = estimateMemory(header, hp, contextSize);
    const threads = opts.threads === 0 ? autoThreads(memory.weights, availableParallelism()) : (opts.threads ?? 1);
    if (opts.gpuLayers !== undefined && opts.backend !== 'webgpu') throw new UsageError('GPU layers are for the WebGPU backend; give --backend webgpu with --gpu-layers');
    const tokenizer = tokenizerFromGguf(header);
    const templateInfo = templateInfoFromGguf(header);
    // the GPU's part first (auto asks the GPU what it holds), so the pool plans only the CPU's
    const onGpu = opts.backend === 'webgpu' ? openGpu(header, hp, tiedOutput(header, spec.alwaysTied), opts.gpuLayers ?? 'auto', memory, opts.gpuOptions) : null;
    let plan: PoolPlan;
    try {
      // where the weights go, and whether the machine holds them (NOT_ENOUGH_MEMORY), before reading any
      // (llvmpipe's "GPU memory" is the host's: its part is taken from the host's total)
      const cpuMemory = onGpu ? { ...memory, weights: onGpu.offload.cpuWeights } : memory;
      const total = onGpu?.gpu.software ? Math.max(0, totalmem() - onGpu.offload.gpuBytes) : totalmem();
      plan = planPool({ ...cpuMemory, kvHeads: hp.nHeadKv }, threads, total);
    } catch (err) {
      onGpu?.gpu.dispose();
      throw err;
    }
    if (opts.backend === 'wasm' && plan.shards > 1) {
      throw new ModelError('WASM_TOO_SMALL', `the model's ${(memory.weights / 2 ** 30).toFixed(1)} GiB of weights do not fit one WebAssembly memory (4 GiB); use the pool backend, which spreads them over several`);
    }
    let chosen: { backend: MatBackend; notice?: string };
    if (typeof opts.backend === 'object') chosen = { backend: opts.backend };
    else if (onGpu) {
      let cpu: MatBackend;
      try {
        cpu = await createBackend('pool', threads, plan);
      } catch (err) {
        onGpu.gpu.dispose();
        throw err;
      }
      chosen = { backend: new OffloadBackend(onGpu.gpu, cpu, onGpu.offload.split) };
    } else chosen = await defaultBackend(opts.backend === 'webgpu' ? undefined : opts.backend, threads, plan);
    const backend = chosen.backend;
    try {
      const model = await loadModelFile(path, header, backend, { onProgress: opts.onProgress, shouldStop: stop });
      offerGpuStep(model, contextSize); // (WebGPU: the whole token there when the model allows)
      const lm = new LoadedModel(path, header, summarize(header), hp, tokenizer, templateInfo, contextSize, memory, plan, model);
      lm.loadMs = performance.now() - t0;
      lm.backendNotice = chosen.notice;
      return lm;
    } catch (err) {
      backend.dispose();
      throw err;
    }
  }

  get backendName(): string {
    return this.model.backend.name;
  }

  /** With the WebGPU backend: its adapter, the blocks on the GPU of the model's, and the bytes there (the app's engine line). */
  get gpu(): { adapter: string; layers: number; of: number; bytes: number } | null {
    const b = this.model.backend;
    return b instanceof OffloadBackend ? { adapter: b.gpu.adapter, layers: b.split.gpuLayers, of: b.split.nLayer, bytes: b.gpuBytes() } : null;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.model.backend.dispose();
  }
}

// ----------------------------------------------------------------------------------------------
// Generation

export type DoneReason = 'eos' | 'length' | 'stop' | 'cancelled' | 'context';

export interface GenerationStats {
  promptTokens: number;
  generatedTokens: number;
  ttftMs: number;
  tokensPerS: number;
  promptTokensPerS: number;
  /** Tokens of the reasoning (its markers included) and the time from the first token to its end; 0 without. */
  reasoningTokens: number;
  reasoningMs: number;
}

export type GenerationEvent =
  | { kind: 'prompt'; text: string; tokens: number[] } // the exact prompt (transparency)
  /**
   * `text`: the token's answer text; `reasoning`: its reasoning text (reasoning models; '' else);
   * `raw`: its text before that split, markers included (tool-call parsing reads Harmony's headers).
   */
  | { kind: 'token'; id: number; text: string; reasoning: string; raw: string; top: { id: number; p: number; text: string }[]; logprobs?: StepLogprobs }
  | { kind: 'done'; reason: DoneReason; stats: GenerationStats };

/** Session.chat's options beyond sampling (see chat). */
export interface ChatExtra {
  grammar?: string;
  policy?: ContextPolicy;
  /** Token events carry log-probabilities (the 10 most likely). */
  probabilities?: boolean;
  /** The reply starts with this text, given; generation continues after it. */
  replyPrefix?: string;
  /** Charge this reply's time per op and per layer to it; the 'done' event carries its view. */
  profile?: Profile;
}

export interface GenerateOptions {
  /** Stop at an end-of-generation token (default true). `pantheon run --temp 0` turns it off. */
  stopAtEog?: boolean;
  /** Stop strings on top of sampling.stop (the chat template's end-of-turn markers). */
  stopStrings?: string[];
  /** Text for the 'prompt' event (default: the prompt tokens decoded with special tokens shown). */
  promptText?: string;
  /** How the output splits into reasoning and answer (default: no reasoning, all text is answer). */
  reasoning?: ReasoningSetup;
  /** Each token event gets `logprobs`: its log-probability and this many best (0..20; none when unset). */
  topLogprobs?: number;
  /** Added to the logits before sampling (OpenAI logit_bias: token id → bias; -Infinity bans). */
  logitBias?: ReadonlyMap<number, number>;
  /** GBNF the output must match (grammar/): tokens it rejects are masked; it ends when the grammar is complete. */
  grammar?: string;
  /**
   * A lazy grammar: free text until one of its triggers shows in the output, then its grammar
   * (grammar/lazy.ts; a tool call the model starts on its own). Ignored when `grammar` is set.
   */
  grammarAfter?: LazyGrammar;
}

/** Adds the bias to the logits; returns the logits it changed, to put back. */
function applyBias(logits: Float32Array, bias: ReadonlyMap<number, number>): [number, number][] {
  const saved: [number, number][] = [];
  for (const [t, b] of bias) {
    if (!Number.isInteger(t) || t < 0 || t >= logits.length) continue;
    saved.push([t, logits[t]]);
    logits[t] += b;
  }
  return saved;
}

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Recurrent-state snapshots a session keeps (hybrid models): the latest turns' prompts. */
const MAX_SNAPSHOTS = 4;

export class Session {
  /** Tokens whose keys and values are in the cache, at positions 0..n-1. */
  private cached: number[] = [];
  private state: RunState;
  private busy = false;
  /**
   * Hybrid models (qwen35): the recurrent state cannot be cut back to a shorter prefix as the KV
   * cache can, so the session keeps copies of it before the last token of each recent prompt (that
   * token is evaluated again for a regenerate). Each is a prefix of `cached`, oldest first.
   */
  private snapshots: RecurrentSnapshot[] = [];

  /**
   * `profile`: charge time per op of every generation to it (`pantheon run --profile`). `batch`:
   * take decode steps together with the other sessions on it (the server's --parallel slots).
   */
  constructor(readonly model: LoadedModel, profile: Profile | null = null, private readonly batch: DecodeBatch | null = null) {
    this.state = createRunState(model.model, model.contextSize, MAX_BATCH, undefined, false, true);
    this.state.profile = profile;
    // (a pool reports its workers' waits to the last session made on it: this one's profile, or none)
    model.model.backend.waitMeter = profile;
  }

  /** Positions of the context in use. */
  get used(): number {
    return this.cached.length;
  }

  get contextSize(): number {
    return this.model.contextSize;
  }

  /** How many leading tokens of `tokens` the cache already holds. */
  sharedPrefix(tokens: readonly number[]): number {
    let k = 0;
    while (k < this.cached.length && k < tokens.length && this.cached[k] === tokens[k]) k++;
    return k;
  }

  /** Forget the conversation (the cache is simply overwritten from position 0). */
  reset(): void {
    this.cached = [];
    this.snapshots = [];
  }

  /**
   * The recurrent state back to at most `keep` positions: the newest snapshot there (dropping
   * those past it, which belong to another continuation), or none (start over). Returns its position.
   */
  private rewind(r: RecurrentState, keep: number): number {
    while (this.snapshots.length > 0 && this.snapshots[this.snapshots.length - 1].pos > keep) this.snapshots.pop();
    const snap = this.snapshots[this.snapshots.length - 1];
    if (!snap) return 0;
    recurrentRestore(r, snap);
    return snap.pos;
  }

  /** One token's text alone (the top candidates', the log-probabilities'), decoded once per id. */
  private readonly pieces = new Map<number, string>();
  private pieceText(id: number): string {
    let x = this.pieces.get(id);
    if (x === undefined) this.pieces.set(id, (x = this.model.tokenizer.decode([id])));
    return x;
  }

  private keepSnapshot(snap: RecurrentSnapshot): void {
    this.snapshots = this.snapshots.filter((x) => x.pos < snap.pos);
    this.snapshots.push(snap);
    if (this.snapshots.length > MAX_SNAPSHOTS) this.snapshots.shift();
  }

  /**
   * Render `messages` with the model's chat template, then generate the assistant's reply, as the
   * contract's events (shared/contract.ts GenerationEvent): what the engine host streams to the
   * app and `pantheon chat` prints. Ends with 'done' (or throws). `policy`: what to leave out when
   * the conversation outgrows the context (chat/context-policy.ts; default 'stop'); `grammar`:
   * GBNF the reply must match.
   */
  async *chat(messages: ChatMessage[], sampling: SamplingParams, signal?: AbortSignal, extra: ChatExtra = {}): AsyncGenerator<ReplyEvent> {
    const m = this.model;
    // Room for the reply: its max tokens, at most a quarter of the context (256 when unlimited).
    const reserve = Math.min(sampling.maxTokens > 0 ? sampling.maxTokens : 256, Math.floor(m.contextSize / 4));
    // (rendered once when it fits: the policy's first count is of the whole conversation)
    const full = m.encodeChat(messages);
    const count = (x: ChatMessage[]) => (x.length === messages.length ? full : m.encodeChat(x)).tokens.length;
    const fitted = fitMessages(messages, count, m.contextSize - reserve, extra.policy ?? 'stop');
    const { rendered, tokens: chatTokens } = fitted.dropped ? m.encodeChat(fitted.messages) : full;
    // a given start of the reply (a branch): after the rendered prompt, tokenised with it
    const prefix = extra.replyPrefix ?? '';
    const tokens = prefix ? m.tokenizer.encode(rendered.text + prefix, { addSpecial: !rendered.startsWithBos, parseSpecial: true }) : chatTokens;
    const reasoning = reasoningSetup(m.templateInfo, rendered.text);
    // a thinking model thinks freely first; the grammar is for its answer
    const grammar = extra.grammar === undefined ? undefined : grammarAfterReasoning(extra.grammar, reasoning, rendered.text + prefix);
    const topLogprobs = extra.probabilities ? 10 : undefined;
    // a reply's own profile (the app's Profile panel) in place of the session's, for this reply
    const before = this.state.profile;
    const backend = this.model.model.backend;
    const beforeMeter = backend.waitMeter;
    if (extra.profile) {
      this.state.profile = extra.profile;
      backend.waitMeter = extra.profile;
    }
    try {
      for await (const e of this.generate(tokens, sampling, signal, { stopStrings: rendered.stopStrings, promptText: rendered.text + prefix, reasoning, grammar, topLogprobs })) {
        switch (e.kind) {
          case 'prompt':
            yield {
              kind: 'prompt', text: e.text, tokens: e.tokens, templateName: rendered.templateName,
              ...(rendered.notice ? { notice: rendered.notice } : {}), ...(fitted.dropped ? { dropped: fitted.dropped } : {}),
            };
            break;
          case 'token':
            yield {
              kind: 'token', id: e.id, text: e.text, reasoning: e.reasoning, top: e.top,
              ...(e.logprobs ? { logprobs: { logprob: e.logprobs.logprob, top: e.logprobs.top.map((t) => ({ id: t.id, logprob: t.logprob, text: this.pieceText(t.id) })) } } : {}),
            };
            break;
          case 'done': {
            // the reasoning's numbers only for a reply that had reasoning (they are stored with it)
            const { reasoningTokens, reasoningMs, ...stats } = e.stats;
            const withReasoning = reasoningTokens > 0 ? { reasoningTokens, reasoningMs } : {};
            yield {
              kind: 'done', stats: { ...stats, ...withReasoning, stopReason: e.reason }, contextUsed: this.used, contextSize: m.contextSize,
              ...(extra.profile ? { profile: extra.profile.view() } : {}),
            };
            break;
          }
        }
      }
    } finally {
      this.state.profile = before;
      backend.waitMeter = beforeMeter;
    }
  }

  /**
   * Generate after `promptTokens` (the whole conversation so far, not only the new part: the cached
   * prefix it shares with the previous call is reused). Yields 'prompt', then one 'token' per
   * sampled token, then 'done'. Cancelling `signal` stops before the next token.
   */
  async *generate(promptTokens: number[], sampling: SamplingParams, signal?: AbortSignal, opts: GenerateOptions = {}): AsyncGenerator<GenerationEvent> {
    if (this.busy) throw new UsageError('this session is already generating; cancel it or wait for it to finish');
    if (promptTokens.length === 0) throw new UsageError('the prompt is empty; give at least one token');
    const size = this.contextSize;
    if (promptTokens.length > size) throw new ContextFullError(promptTokens.length, size);
    const nVocab = this.model.hparams.nVocab;
    for (const t of promptTokens) {
      if (!Number.isInteger(t) || t < 0 || t >= nVocab) throw new UsageError(`prompt token ${t} is not in the vocabulary (0..${nVocab - 1})`);
    }
    this.busy = true;
    try {
      yield* this.run(promptTokens, sampling, signal, opts);
    } finally {
      this.busy = false;
      this.batch?.leave(this.state);
    }
  }

  private async *run(promptTokens: number[], sampling: SamplingParams, signal: AbortSignal | undefined, opts: GenerateOptions): AsyncGenerator<GenerationEvent> {
    const { model: lm, state } = this;
    const tok = lm.tokenizer;
    // The sampler's whole-vocabulary passes on the WebAssembly kernels when the model runs on them
    // (not on the scalar reference backend, which keeps everything in TypeScript).
    const sampler = new Sampler(sampling, lm.model.backend.kernels ? sharedWasmPasses() : undefined);
    let constrained = opts.grammar !== undefined ? new ConstrainedSampler(sampler, grammarMatcher(opts.grammar, tok)) : null;
    // the lazy grammar's watch on the output, until one of its triggers shows
    const lazy = constrained || !opts.grammarAfter ? null : new LazyGrammarWatch(opts.grammarAfter, (g) => grammarMatcher(g, tok));
    const stopAtEog = opts.stopAtEog ?? true;
    const stops = new StopStringMatcher([...(opts.stopStrings ?? []), ...sampling.stop]);
    const decoder = tok.createStreamDecoder({ skipSpecial: true });
    const split = new ReasoningSplitter(opts.reasoning?.format ?? 'none', opts.reasoning?.startsInside);
    const size = this.contextSize;

    yield { kind: 'prompt', text: opts.promptText ?? tok.decode(promptTokens), tokens: [...promptTokens] };

    const t0 = performance.now();
    const stats: GenerationStats = { promptTokens: promptTokens.length, generatedTokens: 0, ttftMs: 0, tokensPerS: 0, promptTokensPerS: 0, reasoningTokens: 0, reasoningMs: 0 };
    const done = (reason: DoneReason): GenerationEvent => ({ kind: 'done', reason, stats });
    const cancelled = () => signal?.aborted === true;

    // Prompt: reuse the cached prefix; evaluate the rest in llama.cpp-sized batches, yielding
    // between them so a cancel can get through. At least the last prompt token is evaluated, for
    // its logits.
    let keep = 0;
    while (keep < this.cached.length && keep < promptTokens.length && this.cached[keep] === promptTokens[keep]) keep++;
    if (keep === promptTokens.length) keep--;
    const R = state.recurrent;
    if (R && (keep < this.cached.length || R.pos !== this.cached.length)) keep = this.rewind(R, keep);
    this.cached.length = keep;
    if (R) {
      // copy the state as the prompt passes its last token (a regenerate starts there)
      R.snapshotAt = promptTokens.length - 1;
      R.snapshot = null;
    }
    const P = state.profile;
    if (P) P.phase = 'prompt';
    // the backend finds them while computing the logits (not when a bias changes the logits after)
    const bias = opts.logitBias && opts.logitBias.size > 0 ? opts.logitBias : null;
    state.logitStats.want = bias ? 0 : sampler.statsWanted;
    const topLogprobs = opts.topLogprobs;
    let logits: Float32Array = state.logits;
    for (let i = keep; i < promptTokens.length; i += MAX_BATCH) {
      if (cancelled()) return yield done('cancelled');
      const chunk = promptTokens.slice(i, i + MAX_BATCH);
      logits = forward(lm.model, state, chunk, i);
      this.cached.push(...chunk);
      if (i + MAX_BATCH < promptTokens.length) await nextTick();
    }
    if (R) {
      if (R.snapshot) this.keepSnapshot(R.snapshot);
      R.snapshotAt = -1;
      R.snapshot = null;
    }
    const promptMs = performance.now() - t0;
    const evaluated = promptTokens.length - keep;
    if (P) P.tokens.prompt += evaluated;
    stats.promptTokensPerS = promptMs > 0 ? (evaluated * 1000) / promptMs : 0;
    const tGen = performance.now();

    const history = [...promptTokens];
    const limit = sampling.maxTokens < 0 ? Infinity : sampling.maxTokens;
    let decodeMs = 0;
    let decoded = 0;
    if (limit === 0) return yield done('length');
    for (;;) {
      if (cancelled()) return yield done('cancelled');
      if (P) P.begin();
      // (the bias goes onto the logits for the sampler, and comes off again for the log-probabilities)
      const saved = bias ? applyBias(logits, bias) : null;
      const found = bias ? null : state.logitStats;
      const { id, top } = constrained ? constrained.sample(logits, history, found) : sampler.sample(logits, history, found);
      if (saved) for (const [t, l] of saved) logits[t] = l;
      const logprobs = topLogprobs === undefined ? undefined : stepLogprobs(logits, id, topLogprobs);
      if (P) P.mark('sampling');
      history.push(id);
      stats.generatedTokens++;
      if (stats.generatedTokens === 1) stats.ttftMs = performance.now() - t0;

      const eog = tok.isEog(id);
      let reason: DoneReason | null = null;
      let text: string;
      // what the model wrote this step, before the stop matcher holds back a possible stop string's
      // start (the lazy grammar's watch must see every character the grammar will be fed)
      let written: string;
      if (eog && (stopAtEog || constrained)) {
        reason = 'eos';
        text = stops.push((written = decoder.flush())).text;
      } else {
        const s = stops.push((written = decoder.push(id)));
        text = s.text;
        if (s.stopped) reason = 'stop';
        else if (constrained?.matcher.complete) reason = 'eos'; // nothing may follow: as if EOS were drawn
        else if (stats.generatedTokens >= limit) reason = 'length';
        else if (this.cached.length >= size) reason = 'context';
      }
      if (reason !== null && reason !== 'stop') text += stops.push(decoder.flush()).text + stops.flush();
      if (lazy && !constrained && reason === null) {
        const matcher = lazy.push(written);
        if (matcher) constrained = new ConstrainedSampler(sampler, matcher);
      }
      // Reasoning and answer: a token counts as reasoning from the one that opens the thinking to
      // the one that closes it (so the markers count, the answer's tokens do not).
      const wasThinking = !split.answering;
      const piece = split.push(text);
      if (reason !== null) {
        const rest = split.flush();
        piece.reasoning += rest.reasoning;
        piece.answer += rest.answer;
      }
      if (wasThinking && split.sawReasoning) {
        stats.reasoningTokens++;
        stats.reasoningMs = performance.now() - tGen;
      }
      const ev: GenerationEvent = { kind: 'token', id, text: piece.answer, reasoning: piece.reasoning, raw: text, top: top.map((c) => ({ id: c.id, p: c.p, text: this.pieceText(c.id) })), logprobs };
      if (P) P.mark('detokenise');
      yield ev;
      if (reason !== null) {
        stats.tokensPerS = decodeMs > 0 ? (decoded * 1000) / decodeMs : 0;
        return yield done(reason);
      }

      // Feed the token back and yield to the event loop (cancellation, streaming) before the next.
      const t1 = performance.now();
      if (P) P.phase = 'gen';
      logits = this.batch ? await this.batch.step(state, id, this.cached.length) : forward(lm.model, state, [id], this.cached.length);
      if (P) P.tokens.gen++;
      this.cached.push(id);
      decodeMs += performance.now() - t1;
      decoded++;
      stats.tokensPerS = (decoded * 1000) / decodeMs;
      await nextTick();
    }
  }
}
