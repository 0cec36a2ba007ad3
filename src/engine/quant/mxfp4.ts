// MXFP4 (OCP microscaling FP4, used by gpt-oss): ggml-common.h block_mxfp4, 17 bytes per 32:
//   u8 e (E8M0 shared exponent) | u8 qs[16] (E2M1 codes, nibble order as Q4_0)
// x = kvalues_mxfp4[q] · 2^(e-128); the table holds doubled E2M1 values, hence the half scale.

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, e8m0HalfToF32, f16At, fr } from './half.js';
import { dequantizeNibbles, nibbleDot } from './iq4.js';

/** ggml-common.h kvalues_mxfp4: E2M1 values ×2. */
export const KVALUES_MXFP4 = new Int8Array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12]);

const BYTES = 17;

function dequantizeMxfp4(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += 32, o += BYTES) {
    dequantizeNibbles(KVALUES_MXFP4, e8m0HalfToF32(src[o]), src, o + 1, dst, i);
  }
}

function bestIndexMxfp4(x: number, e: number): number {
  let best = 0;
  let bestErr = Math.abs(fr(fr(KVALUES_MXFP4[0] * e) - x));
  for (let i = 1; i < 16; i++) {
    const err = Math.abs(fr(fr(KVALUES_MXFP4[i] * e) - x));
    if (err < bestErr) {
      best = i;
      bestErr = err;
    }
  }
  return best;
}

/** ggml-quants.c quantize_row_mxfp4_ref: e = floor(log2 amax) - 2 + 127, nearest code per element. */
function quantizeMxfp4(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += 32, o += BYTES) {
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[i + j]));
    const e = amax > 0 ? (Math.floor(fr(Math.log2(amax))) - 2 + 127) & 0xff : 0;
    const d = e8m0HalfToF32(e);
    dst[o] = e;
    for (let j = 0; j < 16; j++) dst[o + 1 + j] = bestIndexMxfp4(x[i + j], d) | (bestIndexMxfp4(x[i + 16 + j], d) << 4);
  }
}

/** ggml_vec_dot_mxfp4_q8_0_generic. */
function vecDotMxfp4(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += 32, p += BYTES, q += 34) {
    const d = fr(f16At(a, q) * e8m0HalfToF32(w[p]));
    sumf = fr(sumf + fr(d * nibbleDot(KVALUES_MXFP4, w, p + 1, a8, q + 2)));
  }
  return sumf;
}

export const MXFP4_FORMAT: BlockFormat = {
  type: GgmlType.MXFP4, dequantize: dequantizeMxfp4, quantize: quantizeMxfp4, vecDotType: GgmlType.Q8_0, vecDot: vecDotMxfp4,
};
