// Q6_K: 6-bit super-blocks of 256 = 16 groups of 16 with signed 8-bit scales
// (ggml-common.h block_q6_K), 210 bytes:
//   u8 ql[128] | u8 qh[64] | i8 scales[16] | f16 d
// x = d·sc·(q - 32), q = 4 low bits from ql, 2 high bits from qh.
// For half h (128 elements) and l < 32, with ql' = ql + 64h, qh' = qh + 32h:
//   element 128h + l      : ql'[l] & 15      | ((qh'[l] >> 0) & 3) << 4
//   element 128h + 32 + l : ql'[l+32] & 15   | ((qh'[l] >> 2) & 3) << 4
//   element 128h + 64 + l : ql'[l] >> 4      | ((qh'[l] >> 4) & 3) << 4
//   element 128h + 96 + l : ql'[l+32] >> 4   | ((qh'[l] >> 6) & 3) << 4

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, F16, f16At, f32At, fr, nearestInt, putF16 } from './half.js';
import { addScaledLanes16, GROUP_MAX_EPS, laneTotal, makeQxQuants, signedMax } from './kscales.js';
import { Q8K_BYTES, Q8K_QS, QK_K } from './q8k.js';

const BYTES = 210;
const QL = 0;
const QH = 128;
const SCALES = 192;
const D = 208;

/** Unpack the 256 six-bit values (minus 32) of the block at byte o into out. */
function unpack(b: Uint8Array, o: number, out: Int8Array): void {
  for (let h = 0; h < 2; h++) {
    const ql = o + QL + 64 * h;
    const qh = o + QH + 32 * h;
    const y = 128 * h;
    for (let l = 0; l < 32; l++) {
      const hb = b[qh + l];
      out[y + l] = ((b[ql + l] & 0xf) | ((hb & 3) << 4)) - 32;
      out[y + l + 32] = ((b[ql + l + 32] & 0xf) | (((hb >> 2) & 3) << 4)) - 32;
      out[y + l + 64] = ((b[ql + l] >> 4) | (((hb >> 4) & 3) << 4)) - 32;
      out[y + l + 96] = ((b[ql + l + 32] >> 4) | (((hb >> 6) & 3) << 4)) - 32;
    }
  }
}

const vals = new Int8Array(QK_K);

function dequantizeQ6K(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  const s8 = asI8(src);
  for (let i = 0, o = off; i < n; i += QK_K, o += BYTES) {
    const d = f16At(src, o + D);
    unpack(src, o, vals);
    for (let j = 0; j < QK_K; j++) dst[i + j] = fr(fr(d * s8[o + SCALES + (j >> 4)]) * vals[j]);
  }
}

/**
 * ggml-quants.c quantize_row_q6_K_ref: make_qx_quants per group, scales relative to the largest
 * (-128). With an importance matrix qw (quantize_row_q6_K_impl) the groups are fitted with qw as
 * the weights; the rest is the same.
 */
function quantizeQ6K(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null = null): void {
  const L = new Uint8Array(QK_K);
  const scales = new Float32Array(16);
  const d8 = asI8(dst);
  for (let i = 0, o = off; i < n; i += QK_K, o += BYTES) {
    for (let ib = 0; ib < 16; ib++) scales[ib] = makeQxQuants(16, 32, x, i + 16 * ib, L, 16 * ib, 1, qw, i + 16 * ib);
    const maxScale = signedMax(scales, 0, 16);
    if (Math.abs(maxScale) < GROUP_MAX_EPS) {
      dst.fill(0, o, o + BYTES);
      continue;
    }
    const iscale = fr(-128 / maxScale);
    putF16(dst, o + D, fr(1 / iscale));
    for (let ib = 0; ib < 16; ib++) dst[o + SCALES + ib] = Math.min(127, nearestInt(fr(iscale * scales[ib]))) & 0xff;
    const dAll = F16[dst[o + D] | (dst[o + D + 1] << 8)];
    for (let j = 0; j < 16; j++) {
      const d = fr(dAll * d8[o + SCALES + j]);
      if (!d) continue;
      for (let ii = 0; ii < 16; ii++) {
        const l = nearestInt(fr(x[i + 16 * j + ii] / d));
        L[16 * j + ii] = Math.max(-32, Math.min(31, l)) + 32;
      }
    }
    for (let h = 0; h < 2; h++) {
      const ql = o + QL + 64 * h;
      const qh = o + QH + 32 * h;
      const j = 128 * h;
      for (let l = 0; l < 32; l++) {
        dst[ql + l] = (L[j + l] & 0xf) | ((L[j + l + 64] & 0xf) << 4);
        dst[ql + l + 32] = (L[j + l + 32] & 0xf) | ((L[j + l + 96] & 0xf) << 4);
        dst[qh + l] = (L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6);
      }
    }
  }
}

/** quantize_row_q6_K_impl: one row x[0..n) with column importances qw[0..n). */
export function quantizeQ6KWeighted(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array): void {
  quantizeQ6K(x, dst, off, n, qw);
}

const sums = new Float32Array(8);

/** ggml_vec_dot_q6_K_q8_K_generic: 8 integer lanes (element j in lane j % 8), float lane sums across blocks. */
function vecDotQ6K(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  const w8 = asI8(w);
  sums.fill(0);
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK_K, p += BYTES, q += Q8K_BYTES) {
    unpack(w, p, vals);
    addScaledLanes16(sums, fr(f16At(w, p + D) * f32At(a, q)), vals, w8, p + SCALES, a8, q + Q8K_QS);
  }
  return laneTotal(sums);
}

export const Q6_K_FORMAT: BlockFormat = {
  type: GgmlType.Q6_K, dequantize: dequantizeQ6K, quantize: (x, dst, off, n) => quantizeQ6K(x, dst, off, n), vecDotType: GgmlType.Q8_K, vecDot: vecDotQ6K,
};
