// Q3_K: 3-bit super-blocks of 256 = 16 groups of 16 (ggml-common.h block_q3_K), 110 bytes:
//   u8 hmask[32] | u8 qs[64] | u8 scales[12] | f16 d
// x = d·(sc-32)·(q - 4·!hbit), q = 2 low bits (packed as Q2_K), sc a 6-bit group scale.
// hmask bit b of byte l is the high bit of element 32b + l.
// scales: group j's low nibble is scales[j] & 15 (j < 8) or scales[j-8] >> 4; its top 2 bits are
// (scales[8 + j%4] >> 2·(j/4)) & 3.

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, F16, f16At, f32At, fr, nearestInt, putF16, toI8 } from './half.js';
import { addScaledLanes16, laneTotal, makeQ3Quants, signedMax } from './kscales.js';
import { pack2bit } from './q2k.js';
import { quantizeRowByKernel } from './quant-kernel.js';
import { Q8K_BYTES, Q8K_QS, QK_K } from './q8k.js';

const BYTES = 110;
const HMASK = 0;
const QS = 32;
const SCALES = 96;
const D = 108;

/** Group j's signed scale (sc - 32) from the 12 packed bytes at `s`. */
function scaleAt(b: Uint8Array, s: number, j: number): number {
  const low = j < 8 ? b[s + j] & 0xf : b[s + j - 8] >> 4;
  const high = (b[s + 8 + (j % 4)] >> (2 * (j >> 2))) & 3;
  return (low | (high << 4)) - 32;
}

function dequantizeQ3K(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  let y = 0;
  for (let o = off; y < n; o += BYTES) {
    const dAll = f16At(src, o + D);
    let m = 1;
    let is = 0;
    for (let h = 0; h < 2; h++) {
      const q = o + QS + 32 * h;
      for (let shift = 0; shift < 8; shift += 2) {
        for (let half = 0; half < 2; half++) {
          const dl = fr(dAll * scaleAt(src, o + SCALES, is++));
          for (let l = 16 * half; l < 16 * half + 16; l++) {
            const v = ((src[q + l] >> shift) & 3) - (src[o + HMASK + l] & m ? 0 : 4);
            dst[y++] = fr(dl * v);
          }
        }
        m <<= 1;
      }
    }
  }
}

/** ggml-quants.c quantize_row_q3_K_ref: by the WebAssembly kernel when there is one (quant-kernel.ts). */
function quantizeQ3K(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  if (!quantizeRowByKernel('rowQ3_K', x, dst, off, n, BYTES, QK_K)) quantizeQ3KRef(x, dst, off, n);
}

/** quantize_row_q3_K_ref, the scalar reference of the kernel (assembly/quantize-q3k.ts). */
export function quantizeQ3KRef(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  const L = new Int8Array(QK_K);
  const scales = new Float32Array(16);
  for (let i = 0, o = off; i < n; i += QK_K, o += BYTES) {
    for (let j = 0; j < 16; j++) scales[j] = makeQ3Quants(16, 4, x, i + 16 * j, L, 16 * j, true);
    const maxScale = signedMax(scales, 0, 16);
    dst.fill(0, o + SCALES, o + SCALES + 12);
    if (maxScale) {
      const iscale = fr(-32 / maxScale);
      for (let j = 0; j < 16; j++) {
        let l = toI8(nearestInt(fr(iscale * scales[j])));
        l = Math.max(-32, Math.min(31, l)) + 32;
        if (j < 8) dst[o + SCALES + j] = l & 0xf;
        else dst[o + SCALES + j - 8] |= (l & 0xf) << 4;
        l >>= 4;
        dst[o + SCALES + 8 + (j % 4)] |= l << (2 * (j >> 2));
      }
      putF16(dst, o + D, fr(1 / iscale));
    } else {
      putF16(dst, o + D, 0);
    }
    const dAll = F16[dst[o + D] | (dst[o + D + 1] << 8)];
    for (let j = 0; j < 16; j++) {
      const d = fr(dAll * scaleAt(dst, o + SCALES, j));
      if (!d) continue;
      for (let ii = 0; ii < 16; ii++) {
        const l = nearestInt(fr(x[i + 16 * j + ii] / d));
        L[16 * j + ii] = Math.max(-4, Math.min(3, l)) + 4;
      }
    }
    dst.fill(0, o + HMASK, o + HMASK + 32);
    let m = 0;
    let hm = 1;
    for (let j = 0; j < QK_K; j++) {
      if (L[j] > 3) {
        dst[o + HMASK + m] |= hm;
        L[j] -= 4;
      }
      if (++m === 32) {
        m = 0;
        hm <<= 1;
      }
    }
    pack2bit(L, dst, o + QS);
  }
}

const aux8 = new Int8Array(QK_K);
const sc16 = new Int8Array(16);
const sums = new Float32Array(8);

/** ggml_vec_dot_q3_K_q8_K_generic: 8 integer lanes (element j in lane j % 8), float lane sums across blocks. */
function vecDotQ3K(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  sums.fill(0);
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK_K, p += BYTES, q += Q8K_BYTES) {
    let k = 0;
    let m = 1;
    for (let h = 0; h < 2; h++) {
      const q3 = p + QS + 32 * h;
      for (let shift = 0; shift < 8; shift += 2) {
        for (let l = 0; l < 32; l++) aux8[k++] = ((w[q3 + l] >> shift) & 3) - (w[p + HMASK + l] & m ? 0 : 4);
        m <<= 1;
      }
    }
    for (let j = 0; j < 16; j++) sc16[j] = scaleAt(w, p + SCALES, j);
    addScaledLanes16(sums, fr(f16At(w, p + D) * f32At(a, q)), aux8, sc16, 0, a8, q + Q8K_QS);
  }
  return laneTotal(sums);
}

export const Q3_K_FORMAT: BlockFormat = {
  type: GgmlType.Q3_K, dequantize: dequantizeQ3K, quantize: quantizeQ3K, vecDotType: GgmlType.Q8_K, vecDot: vecDotQ3K,
};
