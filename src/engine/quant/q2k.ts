// Q2_K: 2-bit super-blocks of 256 = 16 groups of 16 (ggml-common.h block_q2_K), 84 bytes:
//   u8 scales[16] | u8 qs[64] | f16 d | f16 dmin
// scales[j]: low nibble = group scale, high nibble = group min. x = d·sc·q - dmin·m, q ∈ 0..3.
// Element order: for each half h (128 elements) and shift s = 0,2,4,6, elements
// 128h + 32(s/2) + l (l < 32) are (qs[32h + l] >> s) & 3; group = element / 16.

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, F16, f16At, f32At, fr, nearestInt, putF16 } from './half.js';
import { makeQkx2Quants } from './kscales.js';
import { Q8K_BYTES, Q8K_QS, q8kBsum, QK_K } from './q8k.js';

const BYTES = 84;
const QS = 16;
const D = 80;
const DMIN = 82;

function dequantizeQ2K(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  let y = 0;
  for (let o = off; y < n; o += BYTES) {
    const d = f16At(src, o + D);
    const min = f16At(src, o + DMIN);
    let is = 0;
    for (let h = 0; h < 2; h++) {
      const q = o + QS + 32 * h;
      for (let shift = 0; shift < 8; shift += 2) {
        for (let half = 0; half < 2; half++) {
          const sc = src[o + is++];
          const dl = fr(d * (sc & 0xf));
          const ml = fr(min * (sc >> 4));
          for (let l = 16 * half; l < 16 * half + 16; l++) dst[y++] = fr(fr(dl * ((src[q + l] >> shift) & 3)) - ml);
        }
      }
    }
  }
}

/** Bit-pack 2-bit levels L[256] into qs (shared with Q3_K's low bits). */
export function pack2bit(L: ArrayLike<number>, dst: Uint8Array, at: number): void {
  for (let j = 0; j < QK_K; j += 128) {
    for (let l = 0; l < 32; l++) {
      dst[at + j / 4 + l] = L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6);
    }
  }
}

/** ggml-quants.c quantize_row_q2_K_ref. */
function quantizeQ2K(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  const L = new Uint8Array(QK_K);
  const Laux = new Uint8Array(16);
  const weights = new Float32Array(16);
  const mins = new Float32Array(16);
  const scales = new Float32Array(16);
  for (let i = 0, o = off; i < n; i += QK_K, o += BYTES) {
    let maxScale = 0;
    let maxMin = 0;
    for (let j = 0; j < 16; j++) {
      for (let l = 0; l < 16; l++) weights[l] = Math.abs(x[i + 16 * j + l]);
      scales[j] = makeQkx2Quants(16, 3, x, i + 16 * j, weights, L, 16 * j, mins, j, Laux, -0.5, fr(0.1), 15, true);
      if (scales[j] > maxScale) maxScale = scales[j];
      if (mins[j] > maxMin) maxMin = mins[j];
    }
    if (maxScale > 0) {
      const iscale = fr(15 / maxScale);
      for (let j = 0; j < 16; j++) dst[o + j] = nearestInt(fr(iscale * scales[j])) & 0xff;
      putF16(dst, o + D, fr(maxScale / 15));
    } else {
      dst.fill(0, o, o + 16);
      putF16(dst, o + D, 0);
    }
    if (maxMin > 0) {
      const iscale = fr(15 / maxMin);
      for (let j = 0; j < 16; j++) dst[o + j] |= (nearestInt(fr(iscale * mins[j])) << 4) & 0xff;
      putF16(dst, o + DMIN, fr(maxMin / 15));
    } else {
      putF16(dst, o + DMIN, 0);
    }
    const dAll = F16[dst[o + D] | (dst[o + D + 1] << 8)];
    const mAll = F16[dst[o + DMIN] | (dst[o + DMIN + 1] << 8)];
    for (let j = 0; j < 16; j++) {
      const d = fr(dAll * (dst[o + j] & 0xf));
      if (!d) continue;
      const dm = fr(mAll * (dst[o + j] >> 4));
      for (let ii = 0; ii < 16; ii++) {
        const l = nearestInt(fr(fr(x[i + 16 * j + ii] + dm) / d));
        L[16 * j + ii] = Math.max(0, Math.min(3, l));
      }
    }
    pack2bit(L, dst, o + QS);
  }
}

/** ggml_vec_dot_q2_K_q8_K_generic. */
function vecDotQ2K(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK_K, p += BYTES, q += Q8K_BYTES) {
    let summs = 0;
    for (let j = 0; j < 16; j++) summs += q8kBsum(a, q, j) * (w[p + j] >> 4);
    const yd = f32At(a, q);
    const dall = fr(yd * f16At(w, p + D));
    const dmin = fr(yd * f16At(w, p + DMIN));
    let isum = 0;
    let is = 0;
    let q8 = q + Q8K_QS;
    for (let h = 0; h < 2; h++) {
      const q2 = p + QS + 32 * h;
      for (let shift = 0; shift < 8; shift += 2) {
        let d = w[p + is++] & 0xf;
        let isuml = 0;
        for (let l = 0; l < 16; l++) isuml += a8[q8 + l] * ((w[q2 + l] >> shift) & 3);
        isum += d * isuml;
        d = w[p + is++] & 0xf;
        isuml = 0;
        for (let l = 16; l < 32; l++) isuml += a8[q8 + l] * ((w[q2 + l] >> shift) & 3);
        isum += d * isuml;
        q8 += 32;
      }
    }
    sumf = fr(sumf + fr(fr(dall * fr(isum)) - fr(dmin * fr(summs))));
  }
  return sumf;
}

export const Q2_K_FORMAT: BlockFormat = {
  type: GgmlType.Q2_K, dequantize: dequantizeQ2K, quantize: quantizeQ2K, vecDotType: GgmlType.Q8_K, vecDot: vecDotQ2K,
};
