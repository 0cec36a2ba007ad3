// The forward pass, top to bottom like llama2.c's forward(): embed → per layer (norm → q,k,v →
// rope → cache → attention → out → residual → norm → gate/up → act → down → residual) → norm →
// logits. The architectures differ only by the switches in ArchSpec (arch.ts).

import { createLogitStats, type LogitStats } from '../backend/logit-stats.js';
import { GpuStep, gpuStepOn, type TokenStep } from './gpu-step.js';
import type { MatBackend, SplitAttention } from '../backend/types.js';
import type { KernelInstance } from '../wasm/instance.js';
import type { ArchSpec } from './arch.js';
import { createAttentionScratch, type AttentionMode, type AttentionScratch } from './attention.js';
import type { ModelHparams, RopeParams } from './hparams.js';
import type { Profile } from './profile.js';
import { applyQGate, createRecurrentState, deltaNet, imropeText, recurrentBegin, splitQGate, type RecurrentState } from './deltanet.js';
import { createKvCache, type KvCache } from './kv-cache.js';
import { afterRope, chunkWindow } from './layer-attention.js';
import { moeFfn } from './moe.js';
import { addInto, gatedAct, gelu, ropeCache, ropeYarnCorrDims, scaleInto, silu, type RopeYarn } from './ops.js';
import { createRunOps, profiled, type RunOps } from './run-ops.js';
import { ropeFactorsFor, type ModelWeights } from './weights.js';

// ----------------------------------------------------------------------------------------------
// Structs

export interface Model {
  hp: ModelHparams;
  spec: ArchSpec;
  w: ModelWeights;
  backend: MatBackend;
}

/** Activations for a batch of up to maxBatch tokens, plus the KV cache. */
export interface RunState {
  maxBatch: number;
  x: Float32Array; //      [maxBatch, nEmbd] residual stream
  xb: Float32Array; //     [maxBatch, nEmbd] normed input of attention / FFN
  xb2: Float32Array; //    [maxBatch, nEmbd] attention output after wo
  q: Float32Array; //      [maxBatch, nHead·headDimK]
  k: Float32Array; //      [maxBatch, nHeadKv·headDimK]
  v: Float32Array; //      [maxBatch, nHeadKv·headDimV]
  qkv: Float32Array; //    [maxBatch, q+k+v] fused projection (phi2, phi3)
  att: Float32Array; //    [maxBatch, nHead·headDimV] attention output before wo
  hb: Float32Array; //     [maxBatch, nUp] FFN up (or gate+up fused)
  hb2: Float32Array; //    [maxBatch, nFf] FFN gate, then the activated hidden state
  ffo: Float32Array; //    [maxBatch, nEmbd] FFN output
  last: Float32Array; //   [nEmbd] final normed hidden state of the last token
  logits: Float32Array; // [nVocab]
  /** [maxBatch, nVocab] a decode batch's logits, a row per sequence (forwardRows), before they go to each sequence's own state; else empty. */
  rowLogits: Float32Array;
  /** Sampling's stats of the logits, found by the backend's threads when `want` > 0 (MatBackend.matvecTop). */
  logitStats: LogitStats;
  rope: Float32Array; //   [maxBatch, nRot] cos/sin cache of each position of the batch
  ropeSwa: Float32Array; //[maxBatch, nRot] the same for the sliding-window layers' RoPE (hp.ropeSwa), or empty
  /** RoPE frequency divisors for this context size ([nRot/2], weights.ts ropeFactorsFor), or null. */
  ropeFactors: Float32Array | null;
  /** YaRN ramp and cos/sin magnitude (ROPE_PLAIN values unless the model uses them). */
  ropeYarn: RopeYarn;
  ropeYarnSwa: RopeYarn;
  scratch: AttentionScratch;
  cache: KvCache;
  /** Time per op when set (`pantheon run --profile`: forward() then runs profiled(ops)). */
  profile: Profile | null;
  /** The pass's norm, RoPE, cache store, attention and products, in wasm or TypeScript (run-ops.ts). */
  ops: RunOps;
  /**
   * Set when attention runs in WebAssembly: the kernels whose memory holds the arrays above,
   * attention's scratch there, and the RMSNorm weights copied there (byte address by array) for
   * the wasm norm (assembly/norm.ts), which also rotates and adds the residual.
   */
  wasm: { k: KernelInstance; scratch: number; ptr: number; bytes: number; norms: Map<Float32Array, number> } | null;
  /** Set when the backend splits attention and the KV cache across its threads (cache then holds no rows). */
  split: SplitAttention | null;
  /** The linear-attention layers' recurrent state and scratch (qwen35, deltanet.ts), else null. */
  recurrent: RecurrentState | null;
  /** The whole token on the GPU (model/gpu-step.ts: its own KV cache; cache here holds no rows), else null. */
  gpu: TokenStep | null;
}

/**
 * llama.cpp's micro-batch size (batch 512 in the reference runs): a prompt is processed in
 * chunks of this many tokens, and its attention path depends on the chunk's size (attention.ts).
 */
export const MAX_BATCH = 512;
/** Batches with at least this many tokens take ggml's tiled (f32) attention (GGML_FA_TILE_Q). */
const FA_TILE_Q = 64;

function ffnWidth(m: Model): number {
  let n = 0;
  for (const l of m.w.layers) n = Math.max(n, l.wUp?.spec.rows ?? 0, l.wGate?.spec.rows ?? 0, l.wDown?.spec.cols ?? 0);
  return n;
}

/** Where a RunState's arrays come from: plain arrays, or views on one region of kernel memory. */
interface Alloc {
  f32(n: number): Float32Array;
  u16(n: number): Uint16Array;
}

const plainAlloc: Alloc = { f32: (n) => new Float32Array(n), u16: (n) => new Uint16Array(n) };

/** Frees a RunState's region of kernel memory once the RunState is garbage. */
const released = new FinalizationRegistry<{ k: KernelInstance; ptr: number; bytes: number }>((r) => r.k.arena.free(r.ptr, r.bytes));
const releasedSplit = new FinalizationRegistry<SplitAttention>((a) => a.dispose());
const releasedGpu = new FinalizationRegistry<TokenStep>((g) => g.dispose());

/**
 * Activations and KV cache for `contextSize` positions. With `kernels` (by default the backend's),
 * the arrays the WebAssembly attention reads and writes live in that kernel memory (they are views
 * on it, so the TypeScript ops use them unchanged) and attention runs there. `decodeRows`: the
 * activations of a decode batch of maxBatch sequences (forwardRows), whose caches are in their own
 * states: no cache here, and logits per row. `wholeToken` (a session's state): when the model
 * runs the whole token on the GPU (gpu-step.ts gpuStepOn), the pass runs there, with its cache.
 */
export function createRunState(m: Model, contextSize: number, maxBatch = MAX_BATCH, kernels: KernelInstance | null = m.backend.kernels, decodeRows = false, wholeToken = false): RunState {
  const { nEmbd, nHead, nHeadKv, headDimK, headDimV, nLayer, nVocab, nRot } = m.hp;
  const onGpu = wholeToken && !decodeRows && gpuStepOn(m);
  const b = onGpu ? 1 : Math.max(1, Math.min(maxBatch, contextSize));
  const qDim = nHead * headDimK;
  const ff = ffnWidth(m);
  const d = { nHead, nHeadKv, headDimK, headDimV };
  const kvDimK = nHeadKv * headDimK;
  const kvDimV = nHeadKv * headDimV;
  // The SIMD attention takes head sizes in steps of four.
  const k = kernels && headDimK % 4 === 0 && headDimV % 4 === 0 && nHead % nHeadKv === 0 ? kernels : null;
  // with threads, the backend may hold the KV cache itself, split by KV head (then the cache here
  // is empty); soft-capped attention runs in TypeScript over the cache here
  const attends = m.hp.deltaNet?.recurrent.map((r) => !r); // a hybrid's linear-attention layers keep no KV
  const split = k && !decodeRows && !onGpu && kernels === m.backend.kernels && m.hp.attnSoftcap === 0 ? m.backend.splitAttention({ nLayer, nHead, nHeadKv, headDimK, headDimV, attends }, contextSize) : null;
  const swaRope = m.hp.layerRope.includes('swa');
  const cacheDims = split || decodeRows || onGpu ? [0, 0] : [kvDimK, kvDimV];
  const arrays = (a: Alloc) => ({
    x: a.f32(b * nEmbd),
    xb: a.f32(b * nEmbd),
    xb2: a.f32(b * nEmbd),
    q: a.f32(b * qDim),
    k: a.f32(b * kvDimK),
    v: a.f32(b * kvDimV),
    att: a.f32(b * nHead * headDimV),
    hb: a.f32(b * ff),
    hb2: a.f32(b * ff),
    ffo: a.f32(b * nEmbd),
    last: a.f32(nEmbd),
    rope: a.f32(b * nRot),
    ropeSwa: a.f32(swaRope ? b * nRot : 0),
    cache: createKvCache(nLayer, contextSize, cacheDims[0], cacheDims[1], a.u16, attends),
    recurrent: m.hp.deltaNet ? createRecurrentState(m.hp, b, ropeYarn(m.hp.nRot, m.hp.rope), a.f32) : null,
  });
  // the RMSNorm weights, for the wasm norm to read from kernel memory
  const norms = m.spec.norm === 'rms' ? [...new Set([...m.w.layers.flatMap((l) => [l.attnNorm, l.ffnNorm, l.qNorm, l.kNorm, l.attnPostNorm, l.ffnPostNorm]), m.w.outputNorm])].filter((x) => x !== null) : [];
  // and the attention sinks (gpt-oss), for the wasm attention to read the same way
  for (const l of m.w.layers) if (l.sinks) norms.push(l.sinks);
  let v: ReturnType<typeof arrays>;
  let wasm: RunState['wasm'] = null;
  if (k) {
    // size the region with a dry run, then carve 16-byte-aligned views out of it
    let bytes = 0;
    const bump = (n: number, size: number) => {
      const at = bytes;
      bytes += Math.ceil((n * size) / 16) * 16;
      return at;
    };
    arrays({ f32: (n) => (bump(n, 4), new Float32Array(0)), u16: (n) => (bump(n, 2), new Uint16Array(0)) });
    for (const w of norms) bump(w.length, 4);
    const scratchBytes = k.attnScratchBytes(nHead, nHeadKv, headDimK, headDimV, contextSize);
    const ptr = k.arena.alloc(bytes + scratchBytes);
    const buf = k.arena.memory.buffer;
    bytes = 0;
    v = arrays({ f32: (n) => new Float32Array(buf, ptr + bump(n, 4), n), u16: (n) => new Uint16Array(buf, ptr + bump(n, 2), n) });
    const at = new Map<Float32Array, number>();
    for (const w of norms) {
      const p = ptr + bump(w.length, 4);
      new Float32Array(buf, p, w.length).set(w);
      at.set(w, p);
    }
    wasm = { k, scratch: ptr + bytes, ptr, bytes: bytes + scratchBytes, norms: at };
  } else {
    v = arrays(plainAlloc);
  }
  const base: Omit<RunState, 'ops'> = {
    maxBatch: b,
    ...v,
    qkv: m.w.layers.some((l) => l.wqkv) ? new Float32Array(b * (qDim + kvDimK + kvDimV)) : new Float32Array(0),
    logits: new Float32Array(nVocab),
    rowLogits: new Float32Array(decodeRows ? b * nVocab : 0),
    logitStats: createLogitStats(),
    ropeFactors: ropeFactorsFor(m.w, m.hp, contextSize),
    ropeYarn: ropeYarn(m.hp.nRot, m.hp.rope),
    ropeYarnSwa: ropeYarn(m.hp.nRot, m.hp.ropeSwa),
    scratch: createAttentionScratch(d, contextSize),
    profile: null,
    wasm,
    split,
    gpu: null,
  };
  const s: RunState = Object.assign(base, { ops: createRunOps(m, base) });
  if (onGpu) {
    const { freqBase, freqScale } = m.hp.rope;
    s.gpu = new GpuStep(m, contextSize, (out, p) => ropeCache(out, p, nRot, freqBase, freqScale, s.ropeFactors, s.ropeYarn, 0));
    releasedGpu.register(s, s.gpu);
  }
  if (s.recurrent) s.recurrent.kernels = k;
  if (wasm) released.register(s, { k: wasm.k, ptr: wasm.ptr, bytes: wasm.bytes });
  if (split) releasedSplit.register(s, split);
  return s;
}

/** ggml_rope_ext's YaRN terms for the model (the corr dims are what ggml's rope op computes per call). */
function ropeYarn(nRot: number, r: RopeParams): RopeYarn {
  const [corrLow, corrHigh] = r.extFactor !== 0 ? ropeYarnCorrDims(nRot, r.nCtxOrig, r.freqBase, r.betaFast, r.betaSlow) : [0, 0];
  return { extFactor: r.extFactor, attnFactor: r.attnFactor, corrLow, corrHigh };
}

// ----------------------------------------------------------------------------------------------
// Forward

/**
 * Run `tokens` at positions pos, pos+1, … through the model, storing their keys and values in the
 * cache, and return the logits of the last token (s.logits, [nVocab]).
 */
export function forward(m: Model, s: RunState, tokens: ArrayLike<number>, pos: number): Float32Array {
  if (tokens.length === 0) throw new RangeError('forward needs at least one token');
  if (pos < 0 || pos + tokens.length > s.cache.size) throw new RangeError(`positions ${pos}..${pos + tokens.length - 1} do not fit a context of ${s.cache.size}`);
  const O = s.profile ? profiled(s.ops, s.profile) : s.ops;
  if (s.gpu) {
    // the whole token on the GPU: only the logits come back (no sampling stats found on the way)
    s.profile?.begin();
    s.gpu.run(Array.prototype.slice.call(tokens) as number[], pos, s.logits);
    s.logitStats.valid = false;
    O.mark('whole token on GPU');
    return s.logits;
  }
  // generation: keep the pool's threads polling between the pass's ~5 jobs per layer (a prompt's
  // jobs are long enough that sleeping between them costs nothing)
  const hot = tokens.length === 1;
  if (hot) m.backend.hold(true);
  try {
    for (let i = 0; i < tokens.length; i += s.maxBatch) {
      const n = Math.min(s.maxBatch, tokens.length - i);
      s.profile?.begin();
      forwardBatch(m, s, O, Array.prototype.slice.call(tokens, i, i + n) as number[], pos + i);
    }
  } finally {
    if (hot) m.backend.hold(false);
  }
  return s.logits;
}

/**
 * Why `m` cannot run a decode batch (forwardRows), or null when it can: a hybrid's (qwen35)
 * linear-attention layers advance one sequence's recurrent state over its own tokens
 * (deltanet.ts), so its sequences take their steps one after another instead.
 */
export function decodeRowsUnsupported(m: Model): string | null {
  if (gpuStepOn(m)) return 'the whole token runs on the GPU, one sequence at a time';
  return m.hp.deltaNet ? `${m.hp.arch}'s linear-attention layers keep a recurrent state per sequence that advances one sequence at a time` : null;
}

/**
 * One decode step of several sequences at once: tokens[t] is the next token of the sequence whose
 * state is rows[t] (its KV cache), at position pos[t]. Every weight matrix is one matmul over the
 * batch, in b (createRunState with decodeRows); norms and RoPE run per row there, and the cache
 * store and attention per row in rows[t], as its one-token step does. Each row's logits go to
 * rows[t].logits.
 */
export function forwardRows(m: Model, b: RunState, rows: readonly RunState[], tokens: readonly number[], pos: readonly number[]): void {
  const n = tokens.length;
  if (n === 0 || rows.length !== n || pos.length !== n) throw new RangeError(`forwardRows needs one state and position per token (${n} tokens, ${rows.length} states, ${pos.length} positions)`);
  if (n > b.maxBatch || b.rowLogits.length === 0) throw new RangeError(`forwardRows needs a state made for decode batches of at least ${n} rows`);
  const why = decodeRowsUnsupported(m);
  if (why) throw new RangeError(`forwardRows cannot run this model: ${why}`);
  for (let t = 0; t < n; t++) {
    if (pos[t] < 0 || pos[t] >= rows[t].cache.size) throw new RangeError(`position ${pos[t]} does not fit a context of ${rows[t].cache.size}`);
  }
  m.backend.hold(true);
  try {
    forwardBatch(m, b, b.ops, [...tokens], 0, { states: rows, pos });
  } finally {
    m.backend.hold(false);
  }
}

/** A decode batch's sequences (forwardRows): token t belongs to states[t], at position pos[t]. */
interface DecodeRows {
  states: readonly RunState[];
  pos: readonly number[];
}

/** tokens at pos, pos+1, … of the sequence in s, or (rows) one token of each of rows' sequences. */
function forwardBatch(m: Model, s: RunState, O: RunOps, tokens: number[], pos: number, rows: DecodeRows | null = null): void {
  const { hp, spec, w, backend: be } = m;
  const n = tokens.length;
  const dim = hp.nEmbd;
  const { nHead, nHeadKv, headDimK, headDimV, nRot } = hp;
  const qDim = nHead * headDimK;
  const kvDimK = nHeadKv * headDimK;
  const kvDimV = nHeadKv * headDimV;
  const mode: AttentionMode = n >= FA_TILE_Q ? 'f32' : 'f16';
  const qScale = hp.kqScale;
  const R = s.recurrent;
  if (R) recurrentBegin(R, pos, n);
  // position of token t
  const at = rows ? (t: number) => rows.pos[t] : (t: number) => pos + t;

  // embed: one row of token_embd per token (× sqrt(n_embd) for gemma, × embedding_scale for
  // granite: a float, as ggml_scale takes)
  for (let t = 0; t < n; t++) {
    be.getRow(s.x.subarray(t * dim, (t + 1) * dim), w.tokEmbd, tokens[t]);
    if (hp.embedScale > 0) scaleInto(s.x, hp.embedScale, dim, t * dim);
  }
  O.mark('embedding');

  // cos/sin of each position of the batch, shared by every layer (the sliding-window layers' own
  // RoPE in ropeSwa, when they have one)
  for (let t = 0; t < n; t++) ropeCache(s.rope, at(t), nRot, hp.rope.freqBase, hp.rope.freqScale, s.ropeFactors, s.ropeYarn, t * nRot);
  if (s.ropeSwa.length > 0) for (let t = 0; t < n; t++) ropeCache(s.ropeSwa, at(t), nRot, hp.ropeSwa.freqBase, hp.ropeSwa.freqScale, null, s.ropeYarnSwa, t * nRot);
  if (R) imropeText(R, s.rope, n, nRot);
  O.mark('rope');

  for (let l = 0; l < hp.nLayer; l++) {
    O.layer(l);
    const L = w.layers[l];
    const ropeKind = hp.layerRope[l];
    const rc = ropeKind === 'swa' ? s.ropeSwa : s.rope;
    const window = hp.layerWindow[l];

    // attention norm
    for (let t = 0; t < n; t++) O.norm(s.xb, s.x, L.attnNorm, L.attnNormB, t * dim, t * dim);

    if (L.deltaNet) {
      // gated linear attention (qwen35, deltanet.ts) instead of attention, then the same residual and FFN
      deltaNet(be, R!, hp.deltaNet!, L.deltaNet, l, s.xb, n, pos, hp.normEps);
      O.mark('linear attention');
      O.projectAdd(s.x, L.wo, R!.out, n, null, s.xb2);
      for (let t = 0; t < n; t++) O.norm(s.xb, s.x, L.ffnNorm!, null, t * dim, t * dim);
      if (L.moe) moeFfn(m, s, L.moe, n);
      else ffn(m, s, O, L, n, true);
      continue;
    }

    // q, k, v projections (fused: one matmul, then split per token)
    if (L.wqkv) {
      const qkvDim = qDim + kvDimK + kvDimV;
      O.project(s.qkv, L.wqkv, s.xb, n, L.bqkv);
      for (let t = 0; t < n; t++) {
        const b = t * qkvDim;
        s.q.set(s.qkv.subarray(b, b + qDim), t * qDim);
        s.k.set(s.qkv.subarray(b + qDim, b + qDim + kvDimK), t * kvDimK);
        s.v.set(s.qkv.subarray(b + qDim + kvDimK, b + qkvDim), t * kvDimV);
      }
      O.mark('split qkv');
    } else {
      O.projectShared([spec.deltaNet ? R!.qGate : s.q, s.k, s.v], [L.wq!, L.wk!, L.wv!], s.xb, n, [L.bq, L.bk, L.bv], 'q,k,v');
      if (spec.deltaNet) splitQGate(R!, s.q, n, nHead, headDimK); // qwen35: [q; gate] per head
    }

    const LA = hp.layerAttn;
    const useRope = ropeKind !== 'none' && (!LA || LA.rope[l]);
    // q/k norm per head (qwen3, gemma3) or over all heads (olmo2)
    const full = spec.qkNorm === 'full';
    const qh = full ? 1 : nHead, kh = full ? 1 : nHeadKv;
    const qn = full ? qDim : headDimK, kn = full ? kvDimK : headDimK;
    for (let t = 0; t < n; t++) {
      const p = at(t);
      // q/k norm, then RoPE at position p (none on NoPE layers), then Llama 4's attention
      // temperature (mistral3)
      if (L.qNorm) O.headNorm(s.q, t * qDim, qh, qn, L.qNorm);
      if (L.kNorm) O.headNorm(s.k, t * kvDimK, kh, kn, L.kNorm);
      if (useRope) {
        O.rope(s.q, t * qDim, nHead, rc, t * nRot);
        O.rope(s.k, t * kvDimK, nHeadKv, rc, t * nRot);
      }
      if (hp.attnTempScale > 0) scaleInto(s.q, attnTemperature(hp, p), qDim, t * qDim);
      // llama4: q temperature on NoPE layers, weightless q/k norm after RoPE elsewhere
      if (LA) afterRope(LA, l, p, s.q, t * qDim, s.k, t * kvDimK, nHead, nHeadKv, headDimK, hp.normEps);
      if (spec.scaleQ) scaleInto(s.q, qScale, qDim, t * qDim);
      O.mark('rope');
      // into the cache (split attention stores them itself; a decode batch's rows: their own caches, below)
      if (!rows) O.kvStore(l, p, t);
    }

    // attention of each token over the cache up to its own position (causal; sliding window;
    // llama4's chunked layers past the first chunk: token by token, each over its own chunk)
    const scale = spec.scaleQ ? 1 : qScale;
    const chunk = LA && LA.chunked[l] ? LA.chunk : 0;
    // (gpt-oss: this layer's window, the sinks; a decode batch: each row over its own cache)
    if (rows) attendRows(hp, s, rows, l, chunk, window, scale, L.sinks);
    else if (chunk > 0 && pos + n > chunk) for (let t = 0; t < n; t++) O.attend(l, pos, t, 1, mode, chunkWindow(chunk, pos + t), scale, L.sinks);
    else O.attend(l, pos, 0, n, mode, window, scale, L.sinks);
    if (spec.deltaNet) {
      applyQGate(R!, s.att, n * nHead * headDimV); // × σ(gate)
      O.mark('attention');
    }

    if (spec.parallel) {
      // output projection
      O.project(s.xb2, L.wo, s.att, n, L.bo);
      // phi2: the FFN reads the same normed input; x = (attn + ffn) + x
      ffn(m, s, O, L, n);
      for (let t = 0; t < n; t++) {
        const o = t * dim;
        for (let i = 0; i < dim; i++) s.x[o + i] += s.xb2[o + i] + s.ffo[o + i];
      }
      O.mark('residual');
    } else if (L.attnPostNorm || hp.residualScale > 0) {
      // output projection, its post-norm (gemma2/3, olmo2) or multiplier (granite), residual; the
      // same for the FFN
      O.project(s.xb2, L.wo, s.att, n, L.bo);
      scaledResidual(m, s, O, s.xb2, L.attnPostNorm, n);
      for (let t = 0; t < n; t++) O.norm(s.xb, s.x, L.ffnNorm, L.ffnNormB, t * dim, t * dim);
      ffn(m, s, O, L, n);
      scaledResidual(m, s, O, s.ffo, L.ffnPostNorm, n);
    } else {
      // output projection and residual, FFN norm, FFN and residual
      O.projectAdd(s.x, L.wo, s.att, n, L.bo, s.xb2);
      for (let t = 0; t < n; t++) O.norm(s.xb, s.x, L.ffnNorm, L.ffnNormB, t * dim, t * dim);
      if (L.moe) moeFfn(m, s, L.moe, n);
      else ffn(m, s, O, L, n, true);
    }
  }
  O.layer(-1);
  if (rows) return rowLogits(m, s, O, rows.states, n);

  // final norm and logits, last token only (llama.cpp outputs logits for the last token of a prompt)
  O.norm(s.last, s.x, w.outputNorm, w.outputNormB, (n - 1) * dim, 0);
  // with the sampler's max, normaliser and largest logits when it wants them and the backend finds
  // them (not when the logits are changed afterwards)
  const T = s.logitStats;
  T.valid = false;
  const after = w.outputB !== null || hp.finalSoftcap > 0 || hp.logitScale > 0;
  O.logits(s.logits, w.output, s.last, T.want > 0 && !after ? T : null);
  if (after) {
    logitsAfter(m, s.logits);
    O.mark('logit bias, scale, softcap');
  }
}

/** The output bias, logit scale (granite) and final soft-cap (gemma2) on a logits row, in that order. */
function logitsAfter(m: Model, logits: Float32Array): void {
  const { w, hp } = m;
  if (w.outputB) addInto(logits, w.outputB, hp.nVocab);
  if (hp.logitScale > 0) scaleInto(logits, Math.fround(1 / hp.logitScale), hp.nVocab);
  if (hp.finalSoftcap > 0) softcapInto(logits, hp.finalSoftcap);
}

/**
 * A decode batch's cache and attention: row t's q, k, v into its own state (as its token 0), stored
 * at its position in its cache and attended over it as a one-token step does (f16 mode; llama4's
 * chunked layers from the chunk's start), and the output back into row t of s.att.
 */
function attendRows(hp: ModelHparams, s: RunState, rows: DecodeRows, l: number, chunk: number, window: number, scale: number, sinks: Float32Array | null): void {
  const qDim = hp.nHead * hp.headDimK, kDim = hp.nHeadKv * hp.headDimK, vDim = hp.nHeadKv * hp.headDimV, oDim = hp.nHead * hp.headDimV;
  for (let t = 0; t < rows.states.length; t++) {
    const r = rows.states[t];
    const p = rows.pos[t];
    r.q.set(s.q.subarray(t * qDim, (t + 1) * qDim));
    r.k.set(s.k.subarray(t * kDim, (t + 1) * kDim));
    r.v.set(s.v.subarray(t * vDim, (t + 1) * vDim));
    r.ops.kvStore(l, p, 0);
    r.ops.attend(l, p, 0, 1, 'f16', chunk > 0 && p + 1 > chunk ? chunkWindow(chunk, p) : window, scale, sinks);
    s.att.set(r.att.subarray(0, oDim), t * oDim);
  }
}

/**
 * A decode batch's final norm and logits: every row's, in one matmul over the output matrix, each
 * then copied to its sequence's state (without the backend's sampling stats: the sampler makes its own passes).
 */
function rowLogits(m: Model, s: RunState, O: RunOps, states: readonly RunState[], n: number): void {
  const { w, hp } = m;
  const dim = hp.nEmbd;
  const V = hp.nVocab;
  for (let t = 0; t < n; t++) O.norm(s.xb, s.x, w.outputNorm, w.outputNormB, t * dim, t * dim);
  O.project(s.rowLogits, w.output, s.xb, n, null);
  for (let t = 0; t < n; t++) {
    const r = states[t];
    r.logits.set(s.rowLogits.subarray(t * V, (t + 1) * V));
    r.logitStats.valid = false;
    logitsAfter(m, r.logits);
  }
  O.mark('logits');
}

/** x[i] = cap·tanh(x[i]/cap), as ggml_scale(1/cap) → ggml_tanh → ggml_scale(cap) in float. */
function softcapInto(x: Float32Array, cap: number): void {
  const inv = Math.fround(1 / cap);
  for (let i = 0; i < x.length; i++) x[i] = Math.fround(Math.tanh(Math.fround(x[i] * inv))) * cap;
}

/**
 * Llama 4's attention temperature at position p (llm_graph_input_attn_temp): log(⌊p / nCtxOrig⌋ + 1)·scale + 1,
 * the division in float and the rest in double, stored as a float.
 */
function attnTemperature(hp: ModelHparams, p: number): number {
  return Math.fround(Math.log(Math.floor(Math.fround(p / hp.rope.nCtxOrig)) + 1) * hp.attnTempScale + 1);
}

/**
 * s.x[n, nEmbd] += post-norm(out) (gemma2/3, olmo2) or out · residual_scale (granite), for a
 * block output that was not added by the backend.
 */
function scaledResidual(m: Model, s: RunState, O: RunOps, out: Float32Array, post: Float32Array | null, n: number): void {
  const dim = m.hp.nEmbd;
  if (post) for (let t = 0; t < n; t++) O.norm(out, out, post, null, t * dim, t * dim);
  if (m.hp.residualScale > 0) scaleInto(out, m.hp.residualScale, n * dim);
  O.residual(s.x, out, n * dim);
}

/** s.ffo[n, nEmbd] = FFN(s.xb) (residual: s.x += it instead): gated (SwiGLU / GeGLU, gate separate or fused first) or plain GELU. */
function ffn(m: Model, s: RunState, O: RunOps, L: Model['w']['layers'][number], n: number, residual = false): void {
  const spec = m.spec;
  const wUp = L.wUp!;
  const nUp = wUp.spec.rows;
  const nFf = L.wDown!.spec.cols;
  const gated = spec.ffn !== 'gelu' && !spec.fusedGateUp;
  if (gated && spec.ffn === 'swiglu' && !L.bUp && !L.bGate) {
    // hb2 = silu(gate) · up with the activation on each thread's rows
    O.gated(s.hb2, L.wGate!, wUp, s.xb, n);
  } else {
    // up, and the gate into hb2 (one round trip)
    if (gated) O.projectShared([s.hb, s.hb2], [wUp, L.wGate!], s.xb, n, [L.bUp, L.bGate], 'up,gate');
    else O.project(s.hb, wUp, s.xb, n, L.bUp);
    if (spec.ffn === 'gelu') {
      for (let i = 0; i < n * nFf; i++) s.hb2[i] = gelu(s.hb[i]);
      O.mark('activation');
    } else if (spec.fusedGateUp) {
      // ffn_up = [gate; up] per token: ggml_swiglu activates the first half
      const act = spec.ffn === 'swiglu' ? silu : gelu;
      for (let t = 0; t < n; t++) gatedAct(s.hb2, s.hb, s.hb, act, nFf, t * nUp, t * nUp + nFf, t * nFf);
      O.mark('activation');
    } else if (spec.ffn === 'swiglu') {
      // hb2 = silu(gate) · up in place
      O.swiglu(s.hb2, s.hb2, s.hb, n * nFf);
    } else {
      // hb2 = gelu(gate) · up in place
      for (let t = 0; t < n; t++) gatedAct(s.hb2, s.hb2, s.hb, gelu, nFf, t * nFf, t * nFf, t * nFf);
      O.mark('activation');
    }
  }
  // the down projection into s.ffo, or (residual) added into s.x
  if (residual) O.projectAdd(s.x, L.wDown!, s.hb2, n, L.bDown, s.ffo);
  else O.project(s.ffo, L.wDown!, s.hb2, n, L.bDown);
}
