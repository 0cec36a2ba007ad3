// The forward pass, top to bottom like llama2.c's forward(): embed → per layer (norm → q,k,v →
// rope → cache → attention → out → residual → norm → gate/up → act → down → residual) → norm →
// logits. The architectures differ only by the switches in ArchSpec (arch.ts).

import type { LogitStats, MatBackend, SplitAttention, WeightHandle } from '../backend/types.js';
import { FUSED_TOP_MAX } from '../sample/expsum.js';
import type { KernelInstance } from '../wasm/instance.js';
import { ggmlTypeName } from '../gguf/ggml-types.js';
import type { ArchSpec } from './arch.js';
import { attention, createAttentionScratch, type AttentionMode, type AttentionScratch } from './attention.js';
import type { ModelHparams, RopeParams } from './hparams.js';
import type { Profile } from './profile.js';
import { applyQGate, createRecurrentState, deltaNet, imropeText, recurrentBegin, splitQGate, type RecurrentState } from './deltanet.js';
import { createKvCache, kvStore, kvStoreKernels, type KvCache } from './kv-cache.js';
import { afterRope, chunkWindow } from './layer-attention.js';
import { moeFfn } from './moe.js';
import { addInto, gatedAct, gelu, layernorm, rmsnorm, rope, ropeCache, ropeYarnCorrDims, scaleInto, silu, type RopeYarn } from './ops.js';
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
  /** Time per op when set (`pantheon run --profile`); null costs one check per op. */
  profile: Profile | null;
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

/**
 * Activations and KV cache for `contextSize` positions. With `kernels` (by default the backend's),
 * the arrays the WebAssembly attention reads and writes live in that kernel memory (they are views
 * on it, so the TypeScript ops use them unchanged) and attention runs there.
 */
export function createRunState(m: Model, contextSize: number, maxBatch = MAX_BATCH, kernels: KernelInstance | null = m.backend.kernels ?? null): RunState {
  const { nEmbd, nHead, nHeadKv, headDimK, headDimV, nLayer, nVocab, nRot } = m.hp;
  const b = Math.max(1, Math.min(maxBatch, contextSize));
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
  const split = k && kernels === m.backend.kernels && m.hp.attnSoftcap === 0 ? (m.backend.splitAttention?.({ nLayer, nHead, nHeadKv, headDimK, headDimV, attends }, contextSize) ?? null) : null;
  const swaRope = m.hp.layerRope.includes('swa');
  const cacheDims = split ? [0, 0] : [kvDimK, kvDimV];
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
  const s: RunState = {
    maxBatch: b,
    ...v,
    qkv: m.w.layers.some((l) => l.wqkv) ? new Float32Array(b * (qDim + kvDimK + kvDimV)) : new Float32Array(0),
    logits: new Float32Array(nVocab),
    logitStats: { want: 0, valid: false, max: 0, sum: 0, count: 0, ids: new Int32Array(FUSED_TOP_MAX) },
    ropeFactors: ropeFactorsFor(m.w, m.hp, contextSize),
    ropeYarn: ropeYarn(m.hp.nRot, m.hp.rope),
    ropeYarnSwa: ropeYarn(m.hp.nRot, m.hp.ropeSwa),
    scratch: createAttentionScratch(d, contextSize),
    profile: null,
    wasm,
    split,
  };
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
// Helpers

const matLabels = new Map<number, string>();

/** Profile label of a matrix product: "matvec Q4_K" for one token, "matmul Q4_K" for a batch. */
function matLabel(type: number, n: number): string {
  const key = type * 2 + (n === 1 ? 0 : 1);
  let s = matLabels.get(key);
  if (!s) matLabels.set(key, (s = `${n === 1 ? 'matvec' : 'matmul'} ${ggmlTypeName(type)}`));
  return s;
}

/** out[n, rows] = x[n, cols] · Wᵀ (+ bias per row): matvec for one token, matmul for a batch. */
function project(be: MatBackend, out: Float32Array, w: WeightHandle, x: Float32Array, n: number, bias: Float32Array | null, P: Profile | null): void {
  const { rows, cols } = w.spec;
  if (n === 1) be.matvec(out.subarray(0, rows), w, x.subarray(0, cols));
  else be.matmul(out.subarray(0, n * rows), w, x.subarray(0, n * cols), n);
  if (P) P.mark(matLabel(w.spec.type, n));
  if (bias) {
    for (let t = 0; t < n; t++) addInto(out, bias, rows, t * rows);
    if (P) P.mark('bias');
  }
}

/**
 * x[n, rows] += in[n, cols] · Wᵀ (+ bias) (a projection into the residual stream): added straight
 * into x by the backend for one token without a bias (matvecAdd), else into tmp and then added.
 */
function projectAdd(be: MatBackend, s: RunState, x: Float32Array, w: WeightHandle, input: Float32Array, n: number, bias: Float32Array | null, tmp: Float32Array): void {
  const P = s.profile;
  if (n === 1 && !bias && be.matvecAdd) {
    be.matvecAdd(x.subarray(0, w.spec.rows), w, input.subarray(0, w.spec.cols));
    if (P) P.mark(matLabel(w.spec.type, 1));
    return;
  }
  project(be, tmp, w, input, n, bias, P);
  residual(s, x, tmp, n * w.spec.rows);
  if (P) P.mark('residual');
}

/**
 * out[off…] = norm(x[off…]) · w (+ b) over nEmbd values: in wasm when the RunState has kernels
 * (out and x then live in their memory; the same bits as ops.ts rmsnorm), else in TypeScript.
 */
function norm(m: Model, s: RunState, out: Float32Array, x: Float32Array, w: Float32Array | null, b: Float32Array | null, off: number): void {
  if (!w) {
    // no pre-norm (olmo2): the block reads the residual stream itself
    out.set(x.subarray(off, off + m.hp.nEmbd), off);
  } else if (m.spec.norm === 'rms') {
    const W = s.wasm;
    const wp = W?.norms.get(w);
    if (W && wp !== undefined) W.k.rmsnorm(out.byteOffset + off * 4, x.byteOffset + off * 4, wp, m.hp.normEps, m.hp.nEmbd);
    else rmsnorm(out, x, w, m.hp.normEps, m.hp.nEmbd, off, off);
    if (b) addInto(out, b, m.hp.nEmbd, off);
  } else {
    layernorm(out, x, w, b, m.hp.normEps, m.hp.nEmbd, off, off);
  }
}

/** x[n] += v[n] (the residual): in wasm when the RunState has kernels (both arrays then live in their memory). */
function residual(s: RunState, x: Float32Array, v: Float32Array, n: number): void {
  if (s.wasm) s.wasm.k.addInto(x.byteOffset, v.byteOffset, n);
  else addInto(x, v, n);
}

/**
 * outs[i] = x · W_iᵀ (+ bias_i) for weights on the same input: one call (one pool round trip, the
 * biases added there) when the backend has matmulShared, else one project each.
 */
function projectShared(be: MatBackend, outs: Float32Array[], ws: WeightHandle[], x: Float32Array, n: number, biases: (Float32Array | null)[], P: Profile | null, label: string): void {
  if (!be.matmulShared) {
    for (let i = 0; i < ws.length; i++) project(be, outs[i], ws[i], x, n, biases[i], P);
    return;
  }
  be.matmulShared(outs, ws, x, n, biases);
  if (P) P.mark(sharedLabel(ws, n, label));
}

/** Profile label of a shared-input product: "matvec q,k,v Q4_K/Q4_K/Q6_K". */
function sharedLabel(ws: WeightHandle[], n: number, what: string): string {
  return `${n === 1 ? 'matvec' : 'matmul'} ${what} ${ws.map((w) => ggmlTypeName(w.spec.type)).join('/')}`;
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
  // generation: keep the pool's threads polling between the pass's ~5 jobs per layer (a prompt's
  // jobs are long enough that sleeping between them costs nothing)
  const hot = tokens.length === 1;
  if (hot) m.backend.hold?.(true);
  try {
    for (let i = 0; i < tokens.length; i += s.maxBatch) {
      const n = Math.min(s.maxBatch, tokens.length - i);
      forwardBatch(m, s, Array.prototype.slice.call(tokens, i, i + n) as number[], pos + i);
    }
  } finally {
    if (hot) m.backend.hold?.(false);
  }
  return s.logits;
}

function forwardBatch(m: Model, s: RunState, tokens: number[], pos: number): void {
  const { hp, spec, w, backend: be } = m;
  const n = tokens.length;
  const dim = hp.nEmbd;
  const { nHead, nHeadKv, headDimK, headDimV, nRot } = hp;
  const qDim = nHead * headDimK;
  const kvDimK = nHeadKv * headDimK;
  const kvDimV = nHeadKv * headDimV;
  const mode: AttentionMode = n >= FA_TILE_Q ? 'f32' : 'f16';
  const qScale = hp.kqScale;
  const P = s.profile;
  const W = s.wasm;
  if (P) P.begin();
  const R = s.recurrent;
  if (R) recurrentBegin(R, pos, n);

  // embed: one row of token_embd per token (× sqrt(n_embd) for gemma, × embedding_scale for
  // granite: a float, as ggml_scale takes)
  for (let t = 0; t < n; t++) {
    be.getRow(s.x.subarray(t * dim, (t + 1) * dim), w.tokEmbd, tokens[t]);
    if (hp.embedScale > 0) scaleInto(s.x, hp.embedScale, dim, t * dim);
  }
  if (P) P.mark('embedding');

  // cos/sin of each position of the batch, shared by every layer (the sliding-window layers' own
  // RoPE in ropeSwa, when they have one)
  for (let t = 0; t < n; t++) ropeCache(s.rope, pos + t, nRot, hp.rope.freqBase, hp.rope.freqScale, s.ropeFactors, s.ropeYarn, t * nRot);
  if (s.ropeSwa.length > 0) for (let t = 0; t < n; t++) ropeCache(s.ropeSwa, pos + t, nRot, hp.ropeSwa.freqBase, hp.ropeSwa.freqScale, null, s.ropeYarnSwa, t * nRot);
  if (R) imropeText(R, s.rope, n, nRot);
  if (P) P.mark('rope');

  for (let l = 0; l < hp.nLayer; l++) {
    const L = w.layers[l];
    const ropeKind = hp.layerRope[l];
    const rc16 = ropeKind === 'swa' ? s.ropeSwa : s.rope;
    const window = hp.layerWindow[l];

    // attention norm
    for (let t = 0; t < n; t++) norm(m, s, s.xb, s.x, L.attnNorm, L.attnNormB, t * dim);
    if (P) P.mark('norm');

    if (L.deltaNet) {
      // gated linear attention (qwen35, deltanet.ts) instead of attention, then the same residual and FFN
      deltaNet(be, R!, hp.deltaNet!, L.deltaNet, l, s.xb, n, pos, hp.normEps);
      if (P) P.mark('linear attention');
      projectAdd(be, s, s.x, L.wo, R!.out, n, null, s.xb2);
      for (let t = 0; t < n; t++) norm(m, s, s.xb, s.x, L.ffnNorm!, null, t * dim);
      if (P) P.mark('norm');
      if (L.moe) moeFfn(m, s, L.moe, n);
      else ffn(m, s, L, n, true);
      continue;
    }

    // q, k, v projections (fused: one matmul, then split per token)
    if (L.wqkv) {
      const qkvDim = qDim + kvDimK + kvDimV;
      project(be, s.qkv, L.wqkv, s.xb, n, L.bqkv, P);
      for (let t = 0; t < n; t++) {
        const b = t * qkvDim;
        s.q.set(s.qkv.subarray(b, b + qDim), t * qDim);
        s.k.set(s.qkv.subarray(b + qDim, b + qDim + kvDimK), t * kvDimK);
        s.v.set(s.qkv.subarray(b + qDim + kvDimK, b + qkvDim), t * kvDimV);
      }
      if (P) P.mark('split qkv');
    } else {
      projectShared(be, [spec.deltaNet ? R!.qGate : s.q, s.k, s.v], [L.wq!, L.wk!, L.wv!], s.xb, n, [L.bq, L.bk, L.bv], P, 'q,k,v');
      if (spec.deltaNet) splitQGate(R!, s.q, n, nHead, headDimK); // qwen35: [q; gate] per head
    }

    const LA = hp.layerAttn;
    const useRope = !LA || LA.rope[l];
    for (let t = 0; t < n; t++) {
      const p = pos + t;
      // q/k norm per head (qwen3, gemma3) or over all heads (olmo2), then RoPE at position p
      // (none on NoPE layers), then Llama 4's attention temperature (mistral3)
      const full = spec.qkNorm === 'full';
      const qh = full ? 1 : nHead, kh = full ? 1 : nHeadKv;
      const qn = full ? qDim : headDimK, kn = full ? kvDimK : headDimK;
      if (W) {
        const qp = s.q.byteOffset + t * qDim * 4, kp = s.k.byteOffset + t * kvDimK * 4;
        if (L.qNorm) {
          const wp = W.norms.get(L.qNorm)!;
          for (let h = 0; h < qh; h++) W.k.rmsnorm(qp + h * qn * 4, qp + h * qn * 4, wp, hp.normEps, qn);
        }
        if (L.kNorm) {
          const wp = W.norms.get(L.kNorm)!;
          for (let h = 0; h < kh; h++) W.k.rmsnorm(kp + h * kn * 4, kp + h * kn * 4, wp, hp.normEps, kn);
        }
        if (ropeKind !== 'none' && useRope) {
          const rp = rc16.byteOffset + t * nRot * 4;
          W.k.ropeHeads(qp, nHead, headDimK, rp, nRot, spec.rope === 'neox');
          W.k.ropeHeads(kp, nHeadKv, headDimK, rp, nRot, spec.rope === 'neox');
        }
      } else {
        if (L.qNorm) for (let h = 0; h < qh; h++) rmsnorm(s.q, s.q, L.qNorm, hp.normEps, qn, t * qDim + h * qn, t * qDim + h * qn);
        if (L.kNorm) for (let h = 0; h < kh; h++) rmsnorm(s.k, s.k, L.kNorm, hp.normEps, kn, t * kvDimK + h * kn, t * kvDimK + h * kn);
        if (ropeKind !== 'none' && useRope) {
          const rc = rc16.subarray(t * nRot, (t + 1) * nRot);
          for (let h = 0; h < nHead; h++) rope(s.q, t * qDim + h * headDimK, rc, nRot, spec.rope);
          for (let h = 0; h < nHeadKv; h++) rope(s.k, t * kvDimK + h * headDimK, rc, nRot, spec.rope);
        }
      }
      if (hp.attnTempScale > 0) scaleInto(s.q, attnTemperature(hp, p), qDim, t * qDim);
      // llama4: q temperature on NoPE layers, weightless q/k norm after RoPE elsewhere
      if (LA) afterRope(LA, l, p, s.q, t * qDim, s.k, t * kvDimK, nHead, nHeadKv, headDimK, hp.normEps);
      if (spec.scaleQ) scaleInto(s.q, qScale, qDim, t * qDim);
      if (P) P.mark('rope');
      if (s.split) continue; // the split attention stores them
      // into the cache
      if (W) {
        kvStoreKernels(s.cache, W.k, l, p, s.k.byteOffset + t * kvDimK * 4, s.v.byteOffset + t * kvDimV * 4);
      } else {
        kvStore(s.cache, l, p, s.k, t * kvDimK, s.v, t * kvDimV);
      }
      if (P) P.mark('kv store');
    }

    // attention of each token over the cache up to its own position (causal; sliding window;
    // llama4's chunked layers past the first chunk: token by token, each over its own chunk)
    const scale = spec.scaleQ ? 1 : qScale;
    const chunk = LA && LA.chunked[l] ? LA.chunk : 0;
    // (gpt-oss: this layer's window, the sinks)
    if (chunk > 0 && pos + n > chunk) for (let t = 0; t < n; t++) attend(m, s, l, pos, t, 1, mode, chunkWindow(chunk, pos + t), scale, L.sinks);
    else attend(m, s, l, pos, 0, n, mode, window, scale, L.sinks);
    if (spec.deltaNet) applyQGate(R!, s.att, n * nHead * headDimV); // × σ(gate)
    if (P) P.mark('attention');

    if (spec.parallel) {
      // output projection
      project(be, s.xb2, L.wo, s.att, n, L.bo, P);
      // phi2: the FFN reads the same normed input; x = (attn + ffn) + x
      ffn(m, s, L, n);
      for (let t = 0; t < n; t++) {
        const o = t * dim;
        for (let i = 0; i < dim; i++) s.x[o + i] += s.xb2[o + i] + s.ffo[o + i];
      }
      if (P) P.mark('residual');
    } else if (L.attnPostNorm || hp.residualScale > 0) {
      // output projection, its post-norm (gemma2/3, olmo2) or multiplier (granite), residual; the
      // same for the FFN
      project(be, s.xb2, L.wo, s.att, n, L.bo, P);
      scaledResidual(m, s, s.xb2, L.attnPostNorm, n);
      for (let t = 0; t < n; t++) norm(m, s, s.xb, s.x, L.ffnNorm, L.ffnNormB, t * dim);
      if (P) P.mark('norm');
      ffn(m, s, L, n);
      scaledResidual(m, s, s.ffo, L.ffnPostNorm, n);
    } else {
      // output projection and residual, FFN norm, FFN and residual
      projectAdd(be, s, s.x, L.wo, s.att, n, L.bo, s.xb2);
      for (let t = 0; t < n; t++) norm(m, s, s.xb, s.x, L.ffnNorm, L.ffnNormB, t * dim);
      if (P) P.mark('norm');
      if (L.moe) moeFfn(m, s, L.moe, n);
      else ffn(m, s, L, n, true);
    }
  }

  // final norm and logits, last token only (llama.cpp outputs logits for the last token of a prompt)
  const lastOff = (n - 1) * dim;
  if (spec.norm === 'rms') {
    const op = W?.norms.get(w.outputNorm);
    if (W && op !== undefined) W.k.rmsnorm(s.last.byteOffset, s.x.byteOffset + lastOff * 4, op, hp.normEps, dim);
    else rmsnorm(s.last, s.x, w.outputNorm, hp.normEps, dim, lastOff, 0);
    if (w.outputNormB) addInto(s.last, w.outputNormB, dim);
  } else {
    layernorm(s.last, s.x, w.outputNorm, w.outputNormB, hp.normEps, dim, lastOff, 0);
  }
  if (P) P.mark('norm');
  // with the sampler's max, normaliser and largest logits when it wants them and the backend finds
  // them (not when the logits are changed afterwards)
  const T = s.logitStats;
  T.valid = false;
  const after = w.outputB !== null || hp.finalSoftcap > 0 || hp.logitScale > 0;
  if (T.want > 0 && be.matvecTop && !after) be.matvecTop(s.logits, w.output, s.last, T);
  else be.matvec(s.logits, w.output, s.last);
  if (w.outputB) addInto(s.logits, w.outputB, hp.nVocab);
  if (hp.logitScale > 0) scaleInto(s.logits, Math.fround(1 / hp.logitScale), hp.nVocab);
  if (hp.finalSoftcap > 0) softcapInto(s.logits, hp.finalSoftcap);
  if (P) P.mark(`${matLabel(w.output.spec.type, 1)} (output)`);
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
function scaledResidual(m: Model, s: RunState, out: Float32Array, post: Float32Array | null, n: number): void {
  const dim = m.hp.nEmbd;
  if (post) for (let t = 0; t < n; t++) norm(m, s, out, out, post, null, t * dim);
  if (m.hp.residualScale > 0) scaleInto(out, m.hp.residualScale, n * dim);
  residual(s, s.x, out, n * dim);
  if (s.profile) s.profile.mark('residual');
}

/**
 * Attention of tokens t0 … t0 + n − 1 of the batch (positions pos + t0 …) over the cache, the
 * keys of a position p from max(0, p − window + 1) (window 0: from 0), into s.att. Soft-capped
 * scores (gemma2) run in TypeScript, over the cache in kernel memory or here.
 */
function attend(m: Model, s: RunState, l: number, pos: number, t0: number, n: number, mode: AttentionMode, window: number, scale: number, sinks: Float32Array | null): void {
  const { nHead, nHeadKv, headDimK, headDimV } = m.hp;
  const qDim = nHead * headDimK;
  const kvDimK = nHeadKv * headDimK;
  const kvDimV = nHeadKv * headDimV;
  const oDim = nHead * headDimV;
  const W = s.wasm;
  const sinksAt = W && sinks ? W.norms.get(sinks)! : 0; // attention sinks [nHead] (gpt-oss) in kernel memory
  const softcap = m.hp.attnSoftcap;
  if (softcap > 0) {
    for (let t = t0; t < t0 + n; t++) {
      const p = pos + t;
      const from = window > 0 ? Math.max(0, p - window + 1) : 0;
      attention(s.att, t * oDim, s.q, t * qDim, s.cache, l, from, p, { nHead, nHeadKv, headDimK, headDimV }, scale, mode, s.scratch, sinks, softcap);
    }
  } else if (s.split) {
    // every thread its KV heads: store this batch's keys and values, then attend
    s.split.run(l, s.att.subarray(t0 * oDim), s.q.subarray(t0 * qDim), s.k.subarray(t0 * kvDimK), s.v.subarray(t0 * kvDimV), pos + t0, n, mode, window, scale, sinks);
  } else if (W && mode === 'f32') {
    // a prompt batch in one call: the cache rows are widened once per 8 tokens
    W.k.attentionBatchF32(s.att.byteOffset + t0 * oDim * 4, s.q.byteOffset + t0 * qDim * 4, s.cache.k[l].byteOffset, s.cache.v[l].byteOffset, kvDimK, kvDimV, pos + t0, n, window, nHead, nHeadKv, headDimK, headDimV, scale, W.scratch, sinksAt);
  } else {
    for (let t = t0; t < t0 + n; t++) {
      const p = pos + t;
      const from = window > 0 ? Math.max(0, p - window + 1) : 0;
      if (W) {
        W.k.attention(mode, s.att.byteOffset + t * oDim * 4, s.q.byteOffset + t * qDim * 4, s.cache.k[l].byteOffset, s.cache.v[l].byteOffset, kvDimK, kvDimV, from, p, nHead, nHeadKv, headDimK, headDimV, scale, W.scratch, s.cache.nonFinite[l] === 0, sinksAt);
      } else {
        attention(s.att, t * oDim, s.q, t * qDim, s.cache, l, from, p, { nHead, nHeadKv, headDimK, headDimV }, scale, mode, s.scratch, sinks);
      }
    }
  }
}

/** s.ffo[n, nEmbd] = FFN(s.xb) (residual: s.x += it instead): gated (SwiGLU / GeGLU, gate separate or fused first) or plain GELU. */
function ffn(m: Model, s: RunState, L: Model['w']['layers'][number], n: number, residual = false): void {
  const be = m.backend;
  const spec = m.spec;
  const wUp = L.wUp!;
  const nUp = wUp.spec.rows;
  const P = s.profile;
  const nFf = L.wDown!.spec.cols;
  const gated = spec.ffn !== 'gelu' && !spec.fusedGateUp;
  if (gated && spec.ffn === 'swiglu' && be.matmulGated && !L.bUp && !L.bGate) {
    // hb2 = silu(gate) · up with the activation on each thread's rows
    be.matmulGated(s.hb2.subarray(0, n * nFf), L.wGate!, wUp, s.xb.subarray(0, n * wUp.spec.cols), n);
    if (P) P.mark(sharedLabel([wUp, L.wGate!], n, 'up,gate+act'));
    down(m, s, L, n, residual);
    return;
  }
  // up, and the gate into hb2 (one round trip)
  if (gated) projectShared(be, [s.hb, s.hb2], [wUp, L.wGate!], s.xb, n, [L.bUp, L.bGate], P, 'up,gate');
  else project(be, s.hb, wUp, s.xb, n, L.bUp, P);
  if (spec.ffn === 'gelu') {
    for (let i = 0; i < n * nFf; i++) s.hb2[i] = gelu(s.hb[i]);
  } else {
    const act = spec.ffn === 'swiglu' ? silu : gelu;
    if (spec.fusedGateUp) {
      // ffn_up = [gate; up] per token: ggml_swiglu activates the first half
      for (let t = 0; t < n; t++) gatedAct(s.hb2, s.hb, s.hb, act, nFf, t * nUp, t * nUp + nFf, t * nFf);
    } else if (s.wasm && spec.ffn === 'swiglu') {
      // hb2 = silu(gate) · up in place, in kernel memory (the same arithmetic as gatedAct)
      s.wasm.k.swiglu(s.hb2.byteOffset, s.hb2.byteOffset, s.hb.byteOffset, n * nFf);
    } else {
      // hb2 = act(gate) · up in place
      for (let t = 0; t < n; t++) gatedAct(s.hb2, s.hb2, s.hb, act, nFf, t * nFf, t * nFf, t * nFf);
    }
  }
  if (P) P.mark('activation');
  down(m, s, L, n, residual);
}

/** The FFN's down projection into s.ffo, or (residual) added into s.x. */
function down(m: Model, s: RunState, L: Model['w']['layers'][number], n: number, residual: boolean): void {
  if (residual) projectAdd(m.backend, s, s.x, L.wDown!, s.hb2, n, L.bDown, s.ffo);
  else project(m.backend, s.ffo, L.wDown!, s.hb2, n, L.bDown, s.profile);
}
