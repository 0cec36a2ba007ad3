// Q8_K: the activation format every K-quant (and IQ4_XS, TQ1_0, TQ2_0) is dotted against.
// ggml-common.h block_q8_K, 292 bytes per 256 elements:
//   f32 d | i8 qs[256] | i16 bsums[16]   (bsums[j] = Σ qs[16j .. 16j+15], used for the mins)
// x = d·q. ggml-quants.c quantize_row_q8_K_ref: d = max/-127 with max the signed value of largest
// magnitude, q = min(127, nearest_int(x/d)).
//
// This reference is also what llama.cpp runs for activations on x86: ggml-cpu/arch/x86/quants.c
// quantize_row_q8_K only calls quantize_row_q8_K_ref (no SIMD version in llama.cpp 80fb11a), and
// the AMX kernels do the same (amx/mmq.cpp from_float<block_q8_K>). nearest_int rounds ties to even.

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, f32At, fr, i16At, nearestInt, putF32 } from './half.js';

export const QK_K = 256;
export const Q8K_BYTES = 292;
/** Byte offsets inside a Q8_K block. */
export const Q8K_QS = 4;
export const Q8K_BSUMS = 260;

export function quantizeQ8K(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += Q8K_BYTES) {
    let max = 0;
    let amax = 0;
    for (let j = 0; j < QK_K; j++) {
      const ax = Math.abs(x[i + j]);
      if (ax > amax) { amax = ax; max = x[i + j]; }
    }
    if (!amax) {
      // ggml leaves bsums untouched here; zero is the only value that cannot leak into a dot product.
      dst.fill(0, o, o + Q8K_BYTES);
      continue;
    }
    const iscale = fr(-127 / max);
    for (let g = 0; g < 16; g++) {
      let sum = 0;
      for (let l = 0; l < 16; l++) {
        const j = 16 * g + l;
        const v = Math.min(127, nearestInt(fr(iscale * x[i + j])));
        dst[o + Q8K_QS + j] = v & 0xff;
        sum += v;
      }
      dst[o + Q8K_BSUMS + 2 * g] = sum & 0xff;
      dst[o + Q8K_BSUMS + 2 * g + 1] = (sum >> 8) & 0xff;
    }
    putF32(dst, o, fr(1 / iscale));
  }
}

export function dequantizeQ8K(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  const s8 = asI8(src);
  for (let i = 0, o = off; i < n; i += QK_K, o += Q8K_BYTES) {
    const d = f32At(src, o);
    for (let j = 0; j < QK_K; j++) dst[i + j] = fr(d * s8[o + Q8K_QS + j]);
  }
}

/** bsums[g] of the Q8_K block at byte o. */
export function q8kBsum(a: Uint8Array, o: number, g: number): number {
  return i16At(a, o + Q8K_BSUMS + 2 * g);
}

/** Q8_K as a weight: ggml has no such dot; index.ts routes it through the f32 fallback. */
export const Q8_K_DEQUANT = { type: GgmlType.Q8_K, dequantize: dequantizeQ8K, quantize: quantizeQ8K } as const satisfies Partial<BlockFormat>;
