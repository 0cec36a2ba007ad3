// Causal self-attention of one query position over the KV cache, per head, with grouped KV heads
// (GQA: query head h reads KV head h / (nHead / nHeadKv), as ggml broadcasts them).
//
// Two ways to compute it, matching the two paths of llama.cpp's CPU flash attention (ggml-cpu
// ops.cpp; llama.cpp enables flash attention on CPU when flash_attn is "auto"):
//  - 'f16': ggml_compute_forward_flash_attn_ext_f16_one_chunk, used for single tokens and batches
//    of fewer than GGML_FA_TILE_Q = 64 rows: q rounded to f16 for the K dot product, an online
//    softmax, and the V accumulator kept in f16 (rounded after every position).
//  - 'f32': ggml_compute_forward_flash_attn_ext_tiled, used for batches of 64 rows or more: plain
//    float arithmetic on the f16 cache values.

import { F16_TO_F32, f32ToF16Bits } from './fp16.js';
import type { KvCache } from './kv-cache.js';

export type AttentionMode = 'f16' | 'f32';

export interface AttentionDims {
  nHead: number;
  nHeadKv: number;
  headDimK: number;
  headDimV: number;
}

/** Scratch buffers: q16 [headDimK], acc [headDimV], scores [cache size]. */
export interface AttentionScratch {
  q16: Float32Array;
  acc: Float32Array;
  scores: Float32Array;
}

export function createAttentionScratch(d: AttentionDims, size: number): AttentionScratch {
  return { q16: new Float32Array(d.headDimK), acc: new Float32Array(d.headDimV), scores: new Float32Array(size) };
}

/**
 * out[nHead × headDimV] = softmax(q·Kᵀ · scale) · V over cache positions [from, to] of `layer`.
 * q is [nHead × headDimK] at q[qOff..].
 */
export function attention(
  out: Float32Array, outOff: number, q: Float32Array, qOff: number,
  cache: KvCache, layer: number, from: number, to: number,
  d: AttentionDims, scale: number, mode: AttentionMode, s: AttentionScratch,
): void {
  const group = d.nHead / d.nHeadKv;
  const kc = cache.k[layer];
  const vc = cache.v[layer];
  const hdK = d.headDimK;
  const hdV = d.headDimV;
  for (let h = 0; h < d.nHead; h++) {
    const kvh = Math.floor(h / group);
    const qb = qOff + h * hdK;
    const ob = outOff + h * hdV;
    const kOff = kvh * hdK;
    const vOff = kvh * hdV;
    if (mode === 'f16') {
      const q16 = s.q16;
      const acc = s.acc;
      for (let i = 0; i < hdK; i++) q16[i] = F16_TO_F32[f32ToF16Bits(q[qb + i])];
      acc.fill(0);
      let M = -Infinity;
      let S = 0;
      for (let t = from; t <= to; t++) {
        const kb = t * cache.kvDimK + kOff;
        let dot = 0;
        for (let i = 0; i < hdK; i++) dot += q16[i] * F16_TO_F32[kc[kb + i]];
        const sc = Math.fround(Math.fround(dot) * scale);
        let ms = 1;
        let vs = 1;
        if (sc > M) {
          const mOld = M;
          M = sc;
          ms = Math.fround(Math.exp(mOld - M));
          for (let i = 0; i < hdV; i++) acc[i] = F16_TO_F32[f32ToF16Bits(acc[i] * ms)];
        } else {
          vs = Math.fround(Math.exp(sc - M));
        }
        const vb = t * cache.kvDimV + vOff;
        for (let i = 0; i < hdV; i++) acc[i] = F16_TO_F32[f32ToF16Bits(acc[i] + Math.fround(F16_TO_F32[vc[vb + i]] * vs))];
        S = Math.fround(S * ms + vs);
      }
      const inv = S === 0 ? 0 : Math.fround(1 / S);
      for (let i = 0; i < hdV; i++) out[ob + i] = acc[i] * inv;
    } else {
      const sc = s.scores;
      let M = -Infinity;
      for (let t = from; t <= to; t++) {
        const kb = t * cache.kvDimK + kOff;
        let dot = 0;
        for (let i = 0; i < hdK; i++) dot += q[qb + i] * F16_TO_F32[kc[kb + i]];
        const v = Math.fround(Math.fround(dot) * scale);
        sc[t] = v;
        if (v > M) M = v;
      }
      let S = 0;
      for (let t = from; t <= to; t++) {
        const e = Math.fround(Math.exp(sc[t] - M));
        sc[t] = e;
        S += e;
      }
      const inv = Math.fround(1 / S);
      for (let i = 0; i < hdV; i++) out[ob + i] = 0;
      for (let t = from; t <= to; t++) {
        const p = sc[t];
        const vb = t * cache.kvDimV + vOff;
        for (let i = 0; i < hdV; i++) out[ob + i] += p * F16_TO_F32[vc[vb + i]];
      }
      for (let i = 0; i < hdV; i++) out[ob + i] *= inv;
    }
  }
}
