// Q4_K and Q5_K: super-blocks of 256 = 8 groups of 32, each with a 6-bit scale and a 6-bit min
// (ggml-common.h block_q4_K / block_q5_K):
//   Q4_K 144 B: f16 d | f16 dmin | u8 scales[12] | u8 qs[128]
//   Q5_K 176 B: f16 d | f16 dmin | u8 scales[12] | u8 qh[32] | u8 qs[128]
// x = d·sc·q - dmin·m. qs: for chunk c (64 elements), byte 32c + l holds element 64c + l in its low
// nibble and 64c + 32 + l in its high nibble. Q5_K: bit 2c of qh[l] is the fifth bit of element
// 64c + l, bit 2c+1 that of 64c + 32 + l.
// scales (get_scale_min_k4): group j < 4: sc = s[j] & 63, m = s[j+4] & 63; j ≥ 4:
// sc = (s[j+4] & 15) | (s[j-4] >> 6) << 4, m = (s[j+4] >> 4) | (s[j] >> 6) << 4.

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, F16, f16At, f32At, fr, nearestInt, putF16 } from './half.js';
import { addLanes, laneTotal, makeQkx2Quants } from './kscales.js';
import { Q8K_BYTES, Q8K_QS, q8kBsum, QK_K } from './q8k.js';

const D = 0;
const DMIN = 2;
const SCALES = 4;
const Q4K_BYTES = 144;
const Q4K_QS = 16;
const Q5K_BYTES = 176;
const Q5K_QH = 16;
const Q5K_QS = 48;

/** get_scale_min_k4: writes group j's 6-bit scale and min to sm[0], sm[1]. */
function scaleMin(b: Uint8Array, s: number, j: number, sm: Uint8Array): void {
  if (j < 4) {
    sm[0] = b[s + j] & 63;
    sm[1] = b[s + j + 4] & 63;
  } else {
    sm[0] = (b[s + j + 4] & 0xf) | ((b[s + j - 4] >> 6) << 4);
    sm[1] = (b[s + j + 4] >> 4) | ((b[s + j] >> 6) << 4);
  }
}

const sm = new Uint8Array(2);

function dequantizeKx(src: Uint8Array, off: number, dst: Float32Array, n: number, five: boolean): void {
  const bytes = five ? Q5K_BYTES : Q4K_BYTES;
  const qsAt = five ? Q5K_QS : Q4K_QS;
  let y = 0;
  for (let o = off; y < n; o += bytes) {
    const d = f16At(src, o + D);
    const min = f16At(src, o + DMIN);
    for (let c = 0; c < 4; c++) {
      const q = o + qsAt + 32 * c;
      for (let half = 0; half < 2; half++) {
        scaleMin(src, o + SCALES, 2 * c + half, sm);
        const dl = fr(d * sm[0]);
        const ml = fr(min * sm[1]);
        const shift = 4 * half;
        const hbit = 1 << (2 * c + half);
        for (let l = 0; l < 32; l++) {
          let v = (src[q + l] >> shift) & 0xf;
          if (five && src[o + Q5K_QH + l] & hbit) v += 16;
          dst[y++] = fr(fr(dl * v) - ml);
        }
      }
    }
  }
}

function dequantizeQ4K(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  dequantizeKx(src, off, dst, n, false);
}

function dequantizeQ5K(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  dequantizeKx(src, off, dst, n, true);
}

/**
 * quantize_row_q4_K_ref / quantize_row_q5_K_ref: per group, weights av_x + |x| (av_x the group's
 * rms), make_qkx2_quants; then 6-bit scales and mins relative to the largest, and requantise.
 */
function quantizeKx(x: Float32Array, dst: Uint8Array, off: number, n: number, five: boolean): void {
  const nmax = five ? 31 : 15;
  const rmin = five ? -0.5 : -1;
  const nstep = five ? 15 : 20;
  const bytes = five ? Q5K_BYTES : Q4K_BYTES;
  const L = new Uint8Array(QK_K);
  const Laux = new Uint8Array(32);
  const weights = new Float32Array(32);
  const mins = new Float32Array(8);
  const scales = new Float32Array(8);
  for (let i = 0, o = off; i < n; i += QK_K, o += bytes) {
    let maxScale = 0;
    let maxMin = 0;
    for (let j = 0; j < 8; j++) {
      let sumX2 = 0;
      for (let l = 0; l < 32; l++) {
        const v = x[i + 32 * j + l];
        sumX2 = fr(sumX2 + fr(v * v));
      }
      const avX = fr(Math.sqrt(fr(sumX2 / 32)));
      for (let l = 0; l < 32; l++) weights[l] = fr(avX + Math.abs(x[i + 32 * j + l]));
      scales[j] = makeQkx2Quants(32, nmax, x, i + 32 * j, weights, L, 32 * j, mins, j, Laux, rmin, fr(0.1), nstep, false);
      if (scales[j] > maxScale) maxScale = scales[j];
      if (mins[j] > maxMin) maxMin = mins[j];
    }
    const invScale = maxScale > 0 ? fr(63 / maxScale) : 0;
    const invMin = maxMin > 0 ? fr(63 / maxMin) : 0;
    const s = o + SCALES;
    for (let j = 0; j < 8; j++) {
      const ls = Math.min(63, nearestInt(fr(invScale * scales[j])) & 0xff);
      const lm = Math.min(63, nearestInt(fr(invMin * mins[j])) & 0xff);
      if (j < 4) {
        dst[s + j] = ls;
        dst[s + j + 4] = lm;
      } else {
        dst[s + j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
        dst[s + j - 4] |= (ls >> 4) << 6;
        dst[s + j] |= (lm >> 4) << 6;
      }
    }
    putF16(dst, o + D, fr(maxScale / 63));
    putF16(dst, o + DMIN, fr(maxMin / 63));
    const dAll = F16[dst[o + D] | (dst[o + D + 1] << 8)];
    const mAll = F16[dst[o + DMIN] | (dst[o + DMIN + 1] << 8)];
    for (let j = 0; j < 8; j++) {
      scaleMin(dst, s, j, sm);
      const d = fr(dAll * sm[0]);
      if (!d) continue;
      const dm = fr(mAll * sm[1]);
      for (let ii = 0; ii < 32; ii++) {
        const l = nearestInt(fr(fr(x[i + 32 * j + ii] + dm) / d));
        L[32 * j + ii] = Math.max(0, Math.min(nmax, l));
      }
    }
    if (!five) {
      for (let c = 0; c < 4; c++) {
        for (let l = 0; l < 32; l++) dst[o + Q4K_QS + 32 * c + l] = L[64 * c + l] | (L[64 * c + l + 32] << 4);
      }
      continue;
    }
    dst.fill(0, o + Q5K_QH, o + Q5K_QH + 32);
    let m1 = 1;
    let m2 = 2;
    for (let c = 0; c < 4; c++) {
      for (let j = 0; j < 32; j++) {
        let l1 = L[64 * c + j];
        if (l1 > 15) { l1 -= 16; dst[o + Q5K_QH + j] |= m1; }
        let l2 = L[64 * c + j + 32];
        if (l2 > 15) { l2 -= 16; dst[o + Q5K_QH + j] |= m2; }
        dst[o + Q5K_QS + 32 * c + j] = l1 | (l2 << 4);
      }
      m1 <<= 2;
      m2 <<= 2;
    }
  }
}

function quantizeQ4K(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  quantizeKx(x, dst, off, n, false);
}

function quantizeQ5K(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  quantizeKx(x, dst, off, n, true);
}

const sums = new Float32Array(8);
const sc8 = new Uint8Array(8);
const mn8 = new Uint8Array(8);

/**
 * ggml_vec_dot_q4_K_q8_K_generic / _q5_K_: integer products in 8 lanes per block (element j goes
 * to lane j % 8), the lanes' float sums kept across blocks and added at the end; the mins come off
 * through bsums. Integer sums are exact, so only the lane split and the float steps must match.
 */
function vecDotKx(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number, five: boolean): number {
  const bytes = five ? Q5K_BYTES : Q4K_BYTES;
  const qsAt = five ? Q5K_QS : Q4K_QS;
  const a8 = asI8(a);
  sums.fill(0);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK_K, p += bytes, q += Q8K_BYTES) {
    for (let j = 0; j < 8; j++) {
      scaleMin(w, p + SCALES, j, sm);
      sc8[j] = sm[0];
      mn8[j] = sm[1];
    }
    let sumi = 0;
    for (let j = 0; j < 16; j++) sumi += q8kBsum(a, q, j) * mn8[j >> 1];
    let l0 = 0, l1 = 0, l2 = 0, l3 = 0, l4 = 0, l5 = 0, l6 = 0, l7 = 0;
    for (let c = 0; c < 4; c++) {
      const qb = p + qsAt + 32 * c;
      for (let half = 0; half < 2; half++) {
        const sc = sc8[2 * c + half];
        const shift = 4 * half;
        const q8 = q + Q8K_QS + 64 * c + 32 * half;
        if (five) {
          const hb = 1 << (2 * c + half);
          const qh = p + Q5K_QH;
          for (let l = 0; l < 32; l += 8) {
            l0 += sc * a8[q8 + l] * (((w[qb + l] >> shift) & 15) + (w[qh + l] & hb ? 16 : 0));
            l1 += sc * a8[q8 + l + 1] * (((w[qb + l + 1] >> shift) & 15) + (w[qh + l + 1] & hb ? 16 : 0));
            l2 += sc * a8[q8 + l + 2] * (((w[qb + l + 2] >> shift) & 15) + (w[qh + l + 2] & hb ? 16 : 0));
            l3 += sc * a8[q8 + l + 3] * (((w[qb + l + 3] >> shift) & 15) + (w[qh + l + 3] & hb ? 16 : 0));
            l4 += sc * a8[q8 + l + 4] * (((w[qb + l + 4] >> shift) & 15) + (w[qh + l + 4] & hb ? 16 : 0));
            l5 += sc * a8[q8 + l + 5] * (((w[qb + l + 5] >> shift) & 15) + (w[qh + l + 5] & hb ? 16 : 0));
            l6 += sc * a8[q8 + l + 6] * (((w[qb + l + 6] >> shift) & 15) + (w[qh + l + 6] & hb ? 16 : 0));
            l7 += sc * a8[q8 + l + 7] * (((w[qb + l + 7] >> shift) & 15) + (w[qh + l + 7] & hb ? 16 : 0));
          }
        } else {
          for (let l = 0; l < 32; l += 8) {
            l0 += sc * a8[q8 + l] * ((w[qb + l] >> shift) & 15);
            l1 += sc * a8[q8 + l + 1] * ((w[qb + l + 1] >> shift) & 15);
            l2 += sc * a8[q8 + l + 2] * ((w[qb + l + 2] >> shift) & 15);
            l3 += sc * a8[q8 + l + 3] * ((w[qb + l + 3] >> shift) & 15);
            l4 += sc * a8[q8 + l + 4] * ((w[qb + l + 4] >> shift) & 15);
            l5 += sc * a8[q8 + l + 5] * ((w[qb + l + 5] >> shift) & 15);
            l6 += sc * a8[q8 + l + 6] * ((w[qb + l + 6] >> shift) & 15);
            l7 += sc * a8[q8 + l + 7] * ((w[qb + l + 7] >> shift) & 15);
          }
        }
      }
    }
    const yd = f32At(a, q);
    const d = fr(f16At(w, p + D) * yd);
    addLanes(sums, d, l0, l1, l2, l3, l4, l5, l6, l7);
    const dmin = fr(f16At(w, p + DMIN) * yd);
    sumf = fr(sumf - fr(dmin * fr(sumi)));
  }
  return laneTotal(sums, sumf);
}

function vecDotQ4K(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  return vecDotKx(n, w, wOff, a, aOff, false);
}

function vecDotQ5K(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  return vecDotKx(n, w, wOff, a, aOff, true);
}

export const Q4_K_FORMAT: BlockFormat = {
  type: GgmlType.Q4_K, dequantize: dequantizeQ4K, quantize: quantizeQ4K, vecDotType: GgmlType.Q8_K, vecDot: vecDotQ4K,
};

export const Q5_K_FORMAT: BlockFormat = {
  type: GgmlType.Q5_K, dequantize: dequantizeQ5K, quantize: quantizeQ5K, vecDotType: GgmlType.Q8_K, vecDot: vecDotQ5K,
};
