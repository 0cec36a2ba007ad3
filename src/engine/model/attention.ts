// Causal self-attention of one query position over the KV cache, per head, with grouped KV heads
// (GQA: query head h reads KV head h / (nHead / nHeadKv), as ggml broadcasts them).
//
// Two ways to compute it, matching the two paths of llama.cpp's CPU flash attention (ggml-cpu
// ops.cpp; llama.cpp enables flash attention on CPU when flash_attn is "auto"):
//  - 'f16': ggml_compute_forward_flash_attn_ext_f16_one_chunk, used for single tokens and batches
//    of fewer than GGML_FA_TILE_Q = 64 rows: q rounded to f16 for the K dot product, an online
//    softmax, and the V accumulator kept in f16 (rounded after every position). Every rounding
//    follows ggml's x86 AVX-512 build (the sapphirerapids variant llama.cpp loads here) bit for bit:
//    the K dot in ggml_vec_dot_f16's summation order (dotF16 below), the f32 operations where ggml
//    rounds to f32 (s·scale, Mold − M, s − M), V += v·vs fused (ggml_vec_mad_f16: _mm512_fmadd_ps,
//    and the compiler contracts its scalar tail too) then rounded to f16, V·ms an f32 multiply
//    then f16 (ggml_vec_scale_f16), S = S·ms + vs fused (contracted), and the final V·(1/S) in f32.
//    Fused a·b + c is done in double: a·b is exact there (a half times a float: 35 bits, two
//    floats: 48) and the sum is exact unless the terms are ~2^29 apart, where one more rounding
//    cannot move the float result. Not followed: expf (glibc's, 0.502 ulp) is fround(Math.exp).
//  - 'f32': ggml_compute_forward_flash_attn_ext_tiled, used for batches of 64 rows or more: plain
//    float arithmetic on the f16 cache values.

import { F16, f32ToF16Bits } from '../quant/half.js';
import type { KvCache } from './kv-cache.js';

export type AttentionMode = 'f16' | 'f32';

export interface AttentionDims {
  nHead: number;
  nHeadKv: number;
  headDimK: number;
  headDimV: number;
}

/** Scratch buffers: q16 [headDimK], acc [headDimV], scores [cache size], lanes [64]. */
export interface AttentionScratch {
  q16: Float32Array;
  acc: Float32Array;
  scores: Float32Array;
  lanes: Float32Array;
}

export function createAttentionScratch(d: AttentionDims, size: number): AttentionScratch {
  return { q16: new Float32Array(d.headDimK), acc: new Float32Array(d.headDimV), scores: new Float32Array(size), lanes: new Float32Array(64) };
}

/**
 * Σ q16[i]·k[kb + i] over n as ggml_vec_dot_f16 sums it on AVX-512 without AVX512-FP16 (vec.cpp;
 * simd-mappings.h GGML_F32Cx16, GGML_F16_STEP 64, four accumulators of 16 lanes): element 64c + e
 * of chunk c goes to lane e (accumulator e >> 4) with an fmadd, exact here as a product of two
 * halves has 22 bits; then GGML_F32Cx16_REDUCE adds accumulator 2 to 0 and 3 to 1, then 1 to 0, and
 * _mm512_reduce_add_ps halves that (lanes 8, then 4, then 2, then 1); the n mod 64 left over are
 * added one by one in double (ggml_float). Returns the float ggml stores.
 */
function dotF16(q16: Float32Array, k: Uint16Array, kb: number, n: number, lanes: Float32Array): number {
  const np = n & ~63;
  let sum = 0;
  if (np > 0) {
    lanes.fill(0);
    for (let c = 0; c < np; c += 64) for (let e = 0; e < 64; e++) lanes[e] += q16[c + e] * F16[k[kb + c + e]];
    for (let w = 32; w >= 1; w >>= 1) for (let e = 0; e < w; e++) lanes[e] += lanes[e + w];
    sum = lanes[0];
  }
  for (let i = np; i < n; i++) sum += q16[i] * F16[k[kb + i]];
  return Math.fround(sum);
}

/**
 * out[nHead × headDimV] = softmax(q·Kᵀ · scale) · V over cache positions [from, to] of `layer`.
 * q is [nHead × headDimK] at q[qOff..]. With `softcap` > 0 every score s becomes
 * softcap·tanh(s / softcap), as ggml's flash attention does it (the scale divided by the cap first).
 * sinks [nHead] (gpt-oss attn_sinks): a logit per head that
 * joins the softmax's denominator but has no value, applied as ggml's flash attention applies it
 * after the positions: at a new maximum the accumulator is scaled by e^(M − sink) in f32 and
 * S = S·e^(M − sink) + 1, else S += e^(sink − M).
 */
export function attention(
  out: Float32Array, outOff: number, q: Float32Array, qOff: number,
  cache: KvCache, layer: number, from: number, to: number,
  d: AttentionDims, scale: number, mode: AttentionMode, s: AttentionScratch,
  sinks: Float32Array | null = null, softcap = 0,
): void {
  const group = d.nHead / d.nHeadKv;
  const kc = cache.k[layer];
  const vc = cache.v[layer];
  const hdK = d.headDimK;
  const hdV = d.headDimV;
  // a float op parameter in ggml, as in the wasm kernel (divided by the cap in float when capped)
  const scale32 = softcap > 0 ? Math.fround(Math.fround(scale) / Math.fround(softcap)) : Math.fround(scale);
  const cap = Math.fround(softcap);
  const capped = (x: number) => (softcap > 0 ? Math.fround(cap * Math.fround(Math.tanh(x))) : x);
  for (let h = 0; h < d.nHead; h++) {
    const kvh = Math.floor(h / group);
    const qb = qOff + h * hdK;
    const ob = outOff + h * hdV;
    const kOff = kvh * hdK;
    const vOff = kvh * hdV;
    if (mode === 'f16') {
      const q16 = s.q16;
      const acc = s.acc;
      for (let i = 0; i < hdK; i++) q16[i] = F16[f32ToF16Bits(q[qb + i])];
      acc.fill(0);
      let M = -Infinity;
      let S = 0;
      for (let t = from; t <= to; t++) {
        const sc = capped(Math.fround(dotF16(q16, kc, t * cache.kvDimK + kOff, hdK, s.lanes) * scale32));
        let ms = 1;
        let vs = 1;
        if (sc > M) {
          const mOld = M;
          M = sc;
          ms = Math.fround(Math.exp(Math.fround(mOld - M)));
          // f32ToF16Bits rounds to f32 first: acc·ms (exact in double) → f32 → f16, as ggml does
          for (let i = 0; i < hdV; i++) acc[i] = F16[f32ToF16Bits(acc[i] * ms)];
        } else {
          vs = Math.fround(Math.exp(Math.fround(sc - M)));
        }
        const vb = t * cache.kvDimV + vOff;
        // fused acc + v·vs (one rounding to f32), then f16
        for (let i = 0; i < hdV; i++) acc[i] = F16[f32ToF16Bits(acc[i] + F16[vc[vb + i]] * vs)];
        S = Math.fround(S * ms + vs); // fused: S·ms exact in double
      }
      if (sinks) {
        const sk = Math.fround(sinks[h]);
        if (sk > M) {
          const ms = Math.fround(Math.exp(Math.fround(M - sk)));
          for (let i = 0; i < hdV; i++) acc[i] = Math.fround(acc[i] * ms);
          S = Math.fround(S * ms + 1);
        } else {
          S = Math.fround(S + Math.fround(Math.exp(Math.fround(sk - M))));
        }
      }
      const inv = S === 0 ? 0 : Math.fround(1 / S);
      for (let i = 0; i < hdV; i++) out[ob + i] = acc[i] * inv;
    } else {
      const sc = s.scores;
      let M = -Infinity;
      for (let t = from; t <= to; t++) {
        const kb = t * cache.kvDimK + kOff;
        let dot = 0;
        for (let i = 0; i < hdK; i++) dot += q[qb + i] * F16[kc[kb + i]];
        const v = capped(Math.fround(Math.fround(dot) * scale32));
        sc[t] = v;
        if (v > M) M = v;
      }
      // a sink joins the maximum and, after the positions, the sum (ggml's tiled path: the same softmax)
      const sk = sinks ? Math.fround(sinks[h]) : -Infinity;
      if (sk > M) M = sk;
      let S = 0;
      for (let t = from; t <= to; t++) {
        const e = Math.fround(Math.exp(sc[t] - M));
        sc[t] = e;
        S += e;
      }
      if (sinks) S += Math.fround(Math.exp(Math.fround(sk - M)));
      const inv = Math.fround(1 / S);
      for (let i = 0; i < hdV; i++) out[ob + i] = 0;
      for (let t = from; t <= to; t++) {
        const p = sc[t];
        const vb = t * cache.kvDimV + vOff;
        for (let i = 0; i < hdV; i++) out[ob + i] += p * F16[vc[vb + i]];
      }
      for (let i = 0; i < hdV; i++) out[ob + i] *= inv;
    }
  }
}
