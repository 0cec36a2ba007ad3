// The forward pass, top to bottom like llama2.c's forward(): embed → per layer (norm → q,k,v →
// rope → cache → attention → out → residual → norm → gate/up → act → down → residual) → norm →
// logits. The architectures differ only by the switches in ArchSpec (arch.ts).

import type { MatBackend, WeightHandle } from '../backend/types.js';
import type { ArchSpec } from './arch.js';
import { attention, createAttentionScratch, type AttentionMode, type AttentionScratch } from './attention.js';
import type { ModelHparams } from './hparams.js';
import { createKvCache, kvStore, type KvCache } from './kv-cache.js';
import { addInto, gatedAct, gelu, layernorm, rmsnorm, rope, ropeCache, scaleInto, silu } from './ops.js';
import type { ModelWeights } from './weights.js';

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
  rope: Float32Array; //   [nRot] cos/sin cache of one position
  scratch: AttentionScratch;
  cache: KvCache;
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
  for (const l of m.w.layers) n = Math.max(n, l.wUp.spec.rows, l.wGate?.spec.rows ?? 0, l.wDown.spec.cols);
  return n;
}

export function createRunState(m: Model, contextSize: number, maxBatch = MAX_BATCH): RunState {
  const { nEmbd, nHead, nHeadKv, headDimK, headDimV, nLayer, nVocab, nRot } = m.hp;
  const b = Math.max(1, Math.min(maxBatch, contextSize));
  const qDim = nHead * headDimK;
  const ff = ffnWidth(m);
  const d = { nHead, nHeadKv, headDimK, headDimV };
  return {
    maxBatch: b,
    x: new Float32Array(b * nEmbd),
    xb: new Float32Array(b * nEmbd),
    xb2: new Float32Array(b * nEmbd),
    q: new Float32Array(b * qDim),
    k: new Float32Array(b * nHeadKv * headDimK),
    v: new Float32Array(b * nHeadKv * headDimV),
    qkv: m.w.layers.some((l) => l.wqkv) ? new Float32Array(b * (qDim + nHeadKv * (headDimK + headDimV))) : new Float32Array(0),
    att: new Float32Array(b * nHead * headDimV),
    hb: new Float32Array(b * ff),
    hb2: new Float32Array(b * ff),
    ffo: new Float32Array(b * nEmbd),
    last: new Float32Array(nEmbd),
    logits: new Float32Array(nVocab),
    rope: new Float32Array(nRot),
    scratch: createAttentionScratch(d, contextSize),
    cache: createKvCache(nLayer, contextSize, nHeadKv * headDimK, nHeadKv * headDimV),
  };
}

// ----------------------------------------------------------------------------------------------
// Helpers

/** out[n, rows] = x[n, cols] · Wᵀ (+ bias per row): matvec for one token, matmul for a batch. */
function project(be: MatBackend, out: Float32Array, w: WeightHandle, x: Float32Array, n: number, bias: Float32Array | null): void {
  const { rows, cols } = w.spec;
  if (n === 1) be.matvec(out.subarray(0, rows), w, x.subarray(0, cols));
  else be.matmul(out.subarray(0, n * rows), w, x.subarray(0, n * cols), n);
  if (bias) for (let t = 0; t < n; t++) addInto(out, bias, rows, t * rows);
}

function norm(m: Model, out: Float32Array, x: Float32Array, w: Float32Array, b: Float32Array | null, off: number): void {
  if (m.spec.norm === 'rms') {
    rmsnorm(out, x, w, m.hp.normEps, m.hp.nEmbd, off, off);
    if (b) addInto(out, b, m.hp.nEmbd, off);
  } else {
    layernorm(out, x, w, b, m.hp.normEps, m.hp.nEmbd, off, off);
  }
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
  for (let i = 0; i < tokens.length; i += s.maxBatch) {
    const n = Math.min(s.maxBatch, tokens.length - i);
    forwardBatch(m, s, Array.prototype.slice.call(tokens, i, i + n) as number[], pos + i);
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
  const attDims = { nHead, nHeadKv, headDimK, headDimV };
  const mode: AttentionMode = n >= FA_TILE_Q ? 'f32' : 'f16';
  const qScale = hp.kqScale;

  // embed: one row of token_embd per token (× sqrt(n_embd) for gemma, a float as ggml_scale takes)
  for (let t = 0; t < n; t++) {
    be.getRow(s.x.subarray(t * dim, (t + 1) * dim), w.tokEmbd, tokens[t]);
    if (spec.embedScale) scaleInto(s.x, Math.fround(Math.sqrt(dim)), dim, t * dim);
  }

  for (let l = 0; l < hp.nLayer; l++) {
    const L = w.layers[l];

    // attention norm
    for (let t = 0; t < n; t++) norm(m, s.xb, s.x, L.attnNorm, L.attnNormB, t * dim);

    // q, k, v projections (fused: one matmul, then split per token)
    if (L.wqkv) {
      const qkvDim = qDim + kvDimK + kvDimV;
      project(be, s.qkv, L.wqkv, s.xb, n, L.bqkv);
      for (let t = 0; t < n; t++) {
        const b = t * qkvDim;
        s.q.set(s.qkv.subarray(b, b + qDim), t * qDim);
        s.k.set(s.qkv.subarray(b + qDim, b + qDim + kvDimK), t * kvDimK);
        s.v.set(s.qkv.subarray(b + qDim + kvDimK, b + qkvDim), t * kvDimV);
      }
    } else {
      project(be, s.q, L.wq!, s.xb, n, L.bq);
      project(be, s.k, L.wk!, s.xb, n, L.bk);
      project(be, s.v, L.wv!, s.xb, n, L.bv);
    }

    for (let t = 0; t < n; t++) {
      const p = pos + t;
      // per-head q/k norm (qwen3), then RoPE at position p
      if (L.qNorm) for (let h = 0; h < nHead; h++) rmsnorm(s.q, s.q, L.qNorm, hp.normEps, headDimK, t * qDim + h * headDimK, t * qDim + h * headDimK);
      if (L.kNorm) for (let h = 0; h < nHeadKv; h++) rmsnorm(s.k, s.k, L.kNorm, hp.normEps, headDimK, t * kvDimK + h * headDimK, t * kvDimK + h * headDimK);
      ropeCache(s.rope, p, nRot, hp.ropeFreqBase, hp.ropeFreqScale, w.ropeFreqs);
      for (let h = 0; h < nHead; h++) rope(s.q, t * qDim + h * headDimK, s.rope, nRot, spec.rope);
      for (let h = 0; h < nHeadKv; h++) rope(s.k, t * kvDimK + h * headDimK, s.rope, nRot, spec.rope);
      if (spec.scaleQ) scaleInto(s.q, qScale, qDim, t * qDim);
      // into the cache
      kvStore(s.cache, l, p, s.k, t * kvDimK, s.v, t * kvDimV);
    }

    // attention of each token over the cache up to its own position (causal; sliding window)
    for (let t = 0; t < n; t++) {
      const p = pos + t;
      const from = hp.slidingWindow > 0 ? Math.max(0, p - hp.slidingWindow + 1) : 0;
      attention(s.att, t * nHead * headDimV, s.q, t * qDim, s.cache, l, from, p, attDims, spec.scaleQ ? 1 : qScale, mode, s.scratch);
    }

    // output projection
    project(be, s.xb2, L.wo, s.att, n, L.bo);

    if (spec.parallel) {
      // phi2: the FFN reads the same normed input; x = (attn + ffn) + x
      ffn(m, s, L, n);
      for (let t = 0; t < n; t++) {
        const o = t * dim;
        for (let i = 0; i < dim; i++) s.x[o + i] += s.xb2[o + i] + s.ffo[o + i];
      }
    } else {
      // residual, FFN norm, FFN, residual
      addInto(s.x, s.xb2, n * dim);
      for (let t = 0; t < n; t++) norm(m, s.xb, s.x, L.ffnNorm!, L.ffnNormB, t * dim);
      ffn(m, s, L, n);
      addInto(s.x, s.ffo, n * dim);
    }
  }

  // final norm and logits, last token only (llama.cpp outputs logits for the last token of a prompt)
  const lastOff = (n - 1) * dim;
  if (spec.norm === 'rms') {
    rmsnorm(s.last, s.x, w.outputNorm, hp.normEps, dim, lastOff, 0);
    if (w.outputNormB) addInto(s.last, w.outputNormB, dim);
  } else {
    layernorm(s.last, s.x, w.outputNorm, w.outputNormB, hp.normEps, dim, lastOff, 0);
  }
  be.matvec(s.logits, w.output, s.last);
  if (w.outputB) addInto(s.logits, w.outputB, hp.nVocab);
}

/** s.ffo[n, nEmbd] = FFN(s.xb): gated (SwiGLU / GeGLU, gate separate or fused first) or plain GELU. */
function ffn(m: Model, s: RunState, L: Model['w']['layers'][number], n: number): void {
  const be = m.backend;
  const spec = m.spec;
  const nUp = L.wUp.spec.rows;
  project(be, s.hb, L.wUp, s.xb, n, L.bUp);
  const nFf = L.wDown.spec.cols;
  if (spec.ffn === 'gelu') {
    for (let i = 0; i < n * nFf; i++) s.hb2[i] = gelu(s.hb[i]);
  } else {
    const act = spec.ffn === 'swiglu' ? silu : gelu;
    if (spec.fusedGateUp) {
      // ffn_up = [gate; up] per token: ggml_swiglu activates the first half
      for (let t = 0; t < n; t++) gatedAct(s.hb2, s.hb, s.hb, act, nFf, t * nUp, t * nUp + nFf, t * nFf);
    } else {
      // gate into hb2, then hb2 = act(hb2) · up in place
      project(be, s.hb2, L.wGate!, s.xb, n, L.bGate);
      for (let t = 0; t < n; t++) gatedAct(s.hb2, s.hb2, s.hb, act, nFf, t * nFf, t * nFf, t * nFf);
    }
  }
  project(be, s.ffo, L.wDown, s.hb2, n, L.bDown);
}
