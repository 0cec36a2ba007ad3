// ggml's quantisers given an importance matrix (ggml-quants.c quantize_row_q4_0_impl …
// quantize_row_q6_K_impl, quantize_row_iq4_nl_impl with quant_weights): one row at a time, qw[j]
// the importance of column j. Each group's weights are qw·√(σ² + x²) (σ² the row's or
// super-block's mean square, as ggml takes it), the scale searches are the weighted ones
// (make_qx_quants, make_qkx3_quants, make_qp_quants), and the block layouts are those of the
// reference quantisers beside each format. Same float32 rounding as ggml, so the bytes match.

import { GgmlType } from '../gguf/ggml-types.js';
import { F16, fr, nearestInt, putF16 } from './half.js';
import { quantizeIq1MRow, quantizeIq1SRow } from './iq1-quant.js';
import { quantizeIq2SRow, quantizeIq2XsRow, quantizeIq2XxsRow } from './iq2-quant.js';
import { quantizeIq3SRow, quantizeIq3XxsRow } from './iq3-quant.js';
import { bestIndexInt8, KVALUES_IQ4NL } from './iq4.js';
import { GROUP_MAX_EPS, makeQxQuants, signedMax } from './kscales.js';
import { makeQkx3Quants, makeQpQuants } from './kscales-weighted.js';
import { pack2bit } from './q2k.js';
import { quantizeQ6KWeighted } from './q6k.js';
import { QK_K } from './q8k.js';

/** Quantise one row x[0..n) into blocks at byte `off` of dst, column importances qw[0..n). */
export type WeightedQuantizeFn = (x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array) => void;

// Scratch shared by every row (quantisers run one at a time per thread).
const L = new Uint8Array(QK_K);
const Laux = new Uint8Array(32);
const weight = new Float32Array(32);
const sw = new Float32Array(16);
const scales = new Float32Array(16);
const mins = new Float32Array(16);
const Ls = new Uint8Array(16);
const Lm = new Uint8Array(16);

const f16Bits = (b: Uint8Array, o: number) => F16[b[o] | (b[o + 1] << 8)];

/** Σ x² over x[xo..xo+n), summed in float32 in order. */
function sumSquares(x: Float32Array, xo: number, n: number): number {
  let s = 0;
  for (let j = xo; j < xo + n; j++) s = fr(s + fr(x[j] * x[j]));
  return s;
}

/** weight[0..n) = qw[qo + j]·√(σ² + x[xo + j]²); returns their float32 sum. */
function groupWeights(x: Float32Array, xo: number, qw: Float32Array, qo: number, sigma2: number, n: number): number {
  let sum = 0;
  for (let j = 0; j < n; j++) {
    const v = x[xo + j];
    weight[j] = fr(qw[qo + j] * fr(Math.sqrt(fr(sigma2 + fr(v * v)))));
    sum = fr(sum + weight[j]);
  }
  return sum;
}

function putQh(b: Uint8Array, o: number, qh: number): void {
  b[o] = qh & 0xff;
  b[o + 1] = (qh >>> 8) & 0xff;
  b[o + 2] = (qh >>> 16) & 0xff;
  b[o + 3] = qh >>> 24;
}

/** qs[j] = L[j] | L[j+16] << 4 (low nibbles), and Q5's fifth bits as a u32 at qhAt (or -1). */
function packLegacy(dst: Uint8Array, qsAt: number, qhAt: number): void {
  let qh = 0;
  for (let j = 0; j < 16; j++) {
    dst[qsAt + j] = (L[j] & 0xf) | ((L[j + 16] & 0xf) << 4);
    qh |= ((L[j] & 0x10) >> 4) << j;
    qh |= ((L[j + 16] & 0x10) >> 4) << (j + 16);
  }
  if (qhAt >= 0) putQh(dst, qhAt, qh >>> 0);
}

// ---------------------------------------------------------------------------------------------
// Q4_0, Q4_1, Q5_0, Q5_1: σ² is the whole row's mean square.

function legacy(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array, type: number): void {
  const sigma2 = fr(sumSquares(x, 0, n) / n);
  const asym = type === GgmlType.Q4_1 || type === GgmlType.Q5_1;
  const five = type === GgmlType.Q5_0 || type === GgmlType.Q5_1;
  const bytes = type === GgmlType.Q4_0 ? 18 : type === GgmlType.Q4_1 ? 20 : type === GgmlType.Q5_0 ? 22 : 24;
  for (let ib = 0, o = off; ib < n / 32; ib++, o += bytes) {
    const xo = 32 * ib;
    groupWeights(x, xo, qw, xo, sigma2, 32);
    if (asym) {
      const d = makeQkx3Quants(32, five ? 31 : 15, x, xo, weight, L, 0, mins, 0, Laux, fr(-0.9), fr(0.05), 36, false);
      putF16(dst, o, d);
      putF16(dst, o + 2, -mins[0]);
      packLegacy(dst, o + (five ? 8 : 4), five ? o + 4 : -1);
    } else {
      const d = makeQxQuants(32, five ? 16 : 8, x, xo, L, 0, 1, weight, 0);
      putF16(dst, o, d);
      packLegacy(dst, o + (five ? 6 : 2), five ? o + 2 : -1);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Q2_K (84 B: scales[16] | qs[64] | d | dmin), σ² = mean square of the super-block

function quantizeQ2KWeighted(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += 84) {
    const sigma2 = fr(sumSquares(x, i, QK_K) / QK_K);
    for (let j = 0; j < 16; j++) {
      sw[j] = groupWeights(x, i + 16 * j, qw, i + 16 * j, sigma2, 16);
      scales[j] = makeQkx3Quants(16, 3, x, i + 16 * j, weight, L, 16 * j, mins, j, Laux, fr(-0.9), fr(0.05), 36, false);
    }
    const dm = makeQpQuants(16, 15, scales, Ls, sw);
    const mm = makeQpQuants(16, 15, mins, Lm, sw);
    putF16(dst, o + 80, dm);
    putF16(dst, o + 82, mm);
    const d16 = f16Bits(dst, o + 80);
    const m16 = f16Bits(dst, o + 82);
    for (let j = 0; j < 16; j++) dst[o + j] = (Ls[j] | (Lm[j] << 4)) & 0xff;
    for (let j = 0; j < 16; j++) {
      const d = fr(d16 * (dst[o + j] & 0xf));
      if (!d) continue;
      const m = fr(m16 * (dst[o + j] >> 4));
      for (let ii = 0; ii < 16; ii++) {
        const l = nearestInt(fr(fr(x[i + 16 * j + ii] + m) / d));
        L[16 * j + ii] = Math.max(0, Math.min(3, l));
      }
    }
    pack2bit(L, dst, o + 16);
  }
}

// ---------------------------------------------------------------------------------------------
// Q3_K (110 B: hmask[32] | qs[64] | scales[12] | d), σ² = 2·mean square of the super-block

function quantizeQ3KWeighted(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += 110) {
    const sigma2 = fr(fr(2 * sumSquares(x, i, QK_K)) / QK_K);
    for (let j = 0; j < 16; j++) {
      sw[j] = groupWeights(x, i + 16 * j, qw, i + 16 * j, sigma2, 16);
      scales[j] = makeQxQuants(16, 4, x, i + 16 * j, L, 16 * j, 1, weight, 0);
    }
    const s = o + 96;
    dst.fill(0, s, s + 12);
    const dBlock = makeQxQuants(16, 32, scales, 0, Ls, 0, 1, sw, 0);
    for (let j = 0; j < 16; j++) {
      let l = Ls[j];
      if (j < 8) dst[s + j] = l & 0xf;
      else dst[s + j - 8] |= (l & 0xf) << 4;
      l >>= 4;
      dst[s + 8 + (j % 4)] |= l << (2 * (j >> 2));
    }
    putF16(dst, o + 108, dBlock);
    const d16 = f16Bits(dst, o + 108);
    for (let j = 0; j < 16; j++) {
      const low = j < 8 ? dst[s + j] & 0xf : dst[s + j - 8] >> 4;
      const sc = (low | (((dst[s + 8 + (j % 4)] >> (2 * (j >> 2))) & 3) << 4)) - 32;
      const d = fr(d16 * sc);
      if (!d) continue;
      for (let ii = 0; ii < 16; ii++) {
        const l = nearestInt(fr(x[i + 16 * j + ii] / d));
        L[16 * j + ii] = Math.max(-4, Math.min(3, l)) + 4;
      }
    }
    dst.fill(0, o, o + 32);
    for (let j = 0; j < QK_K; j++) {
      if (L[j] > 3) {
        dst[o + (j & 31)] |= 1 << (j >> 5);
        L[j] -= 4;
      }
    }
    pack2bit(L, dst, o + 32);
  }
}

// ---------------------------------------------------------------------------------------------
// Q4_K (144 B) and Q5_K (176 B): f16 d | f16 dmin | scales[12] | (Q5: qh[32]) | qs[128]

function scaleMin(b: Uint8Array, s: number, j: number): number {
  return j < 4 ? (b[s + j] & 63) | ((b[s + j + 4] & 63) << 8) : ((b[s + j + 4] & 0xf) | ((b[s + j - 4] >> 6) << 4)) | (((b[s + j + 4] >> 4) | ((b[s + j] >> 6) << 4)) << 8);
}

function quantizeKxWeighted(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array, five: boolean): void {
  const nmax = five ? 31 : 15;
  const bytes = five ? 176 : 144;
  for (let i = 0, o = off; i < n; i += QK_K, o += bytes) {
    const sigma2 = fr(fr(2 * sumSquares(x, i, QK_K)) / QK_K);
    for (let j = 0; j < 8; j++) {
      sw[j] = groupWeights(x, i + 32 * j, qw, i + 32 * j, sigma2, 32);
      scales[j] = makeQkx3Quants(32, nmax, x, i + 32 * j, weight, L, 32 * j, mins, j, Laux, fr(-0.9), fr(0.05), 36, false);
    }
    const dBlock = makeQpQuants(8, 63, scales, Ls, sw);
    const mBlock = makeQpQuants(8, 63, mins, Lm, sw);
    const s = o + 4;
    for (let j = 0; j < 8; j++) {
      const ls = Math.min(63, Ls[j]);
      const lm = Math.min(63, Lm[j]);
      if (j < 4) {
        dst[s + j] = ls;
        dst[s + j + 4] = lm;
      } else {
        dst[s + j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
        dst[s + j - 4] |= (ls >> 4) << 6;
        dst[s + j] |= (lm >> 4) << 6;
      }
    }
    putF16(dst, o, dBlock);
    putF16(dst, o + 2, mBlock);
    const d16 = f16Bits(dst, o);
    const m16 = f16Bits(dst, o + 2);
    for (let j = 0; j < 8; j++) {
      const sm = scaleMin(dst, s, j);
      const d = fr(d16 * (sm & 0xff));
      if (!d) continue;
      const dm = fr(m16 * (sm >> 8));
      for (let ii = 0; ii < 32; ii++) {
        const l = nearestInt(fr(fr(x[i + 32 * j + ii] + dm) / d));
        L[32 * j + ii] = Math.max(0, Math.min(nmax, l));
      }
    }
    if (!five) {
      for (let c = 0; c < 4; c++) {
        for (let l = 0; l < 32; l++) dst[o + 16 + 32 * c + l] = L[64 * c + l] | (L[64 * c + l + 32] << 4);
      }
      continue;
    }
    dst.fill(0, o + 16, o + 48);
    let m1 = 1;
    let m2 = 2;
    for (let c = 0; c < 4; c++) {
      for (let j = 0; j < 32; j++) {
        let l1 = L[64 * c + j];
        if (l1 > 15) { l1 -= 16; dst[o + 16 + j] |= m1; }
        let l2 = L[64 * c + j + 32];
        if (l2 > 15) { l2 -= 16; dst[o + 16 + j] |= m2; }
        dst[o + 48 + 32 * c + j] = l1 | (l2 << 4);
      }
      m1 <<= 2;
      m2 <<= 2;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// IQ4_NL (18 B per 32) and IQ4_XS (136 B per 256): quantize_row_iq4_nl_impl with weights, ntry 7

const trial = new Uint8Array(32);

/** One block of 32's scale (the weighted search of quantize_row_iq4_nl_impl); 0 for an all-zero block. */
function iq4BlockScale(x: Float32Array, xo: number, sigma2: number, qw: Float32Array, qo: number): number {
  groupWeights(x, xo, qw, qo, sigma2, 32);
  const max = signedMax(x, xo, 32);
  if (Math.abs(max) < GROUP_MAX_EPS) return 0;
  const ntry = 7;
  const v0 = KVALUES_IQ4NL[0];
  let d = fr(-max / v0);
  let id = fr(1 / d);
  let sumqx = 0;
  let sumq2 = 0;
  for (let j = 0; j < 32; j++) {
    const v = x[xo + j];
    const q = KVALUES_IQ4NL[bestIndexInt8(KVALUES_IQ4NL, fr(id * v))];
    const w = weight[j];
    sumqx = fr(sumqx + fr(fr(w * q) * v));
    sumq2 = fr(sumq2 + fr(fr(w * q) * q));
  }
  d = sumq2 > 0 ? fr(sumqx / sumq2) : 0;
  let best = fr(d * sumqx);
  let havePrev = false;
  for (let itry = -ntry; itry <= ntry; itry++) {
    id = fr((itry + v0) / max);
    let same = havePrev;
    for (let j = 0; j < 32; j++) {
      const l = bestIndexInt8(KVALUES_IQ4NL, fr(id * x[xo + j]));
      if (l !== trial[j]) same = false;
      trial[j] = l;
    }
    havePrev = true;
    if (same) continue;
    sumqx = 0;
    sumq2 = 0;
    for (let j = 0; j < 32; j++) {
      const v = x[xo + j];
      const q = KVALUES_IQ4NL[trial[j]];
      const w = weight[j];
      sumqx = fr(sumqx + fr(fr(w * q) * v));
      sumq2 = fr(sumq2 + fr(fr(w * q) * q));
    }
    if (sumq2 > 0 && fr(sumqx * sumqx) > fr(best * sumq2)) {
      d = fr(sumqx / sumq2);
      best = fr(d * sumqx);
    }
  }
  return d;
}

function packNibbles(dst: Uint8Array, at: number, n: number): void {
  for (let i = 0; i < n / 32; i++) {
    for (let j = 0; j < 16; j++) dst[at + 16 * i + j] = L[32 * i + j] | (L[32 * i + 16 + j] << 4);
  }
}

function quantizeIq4NlWeighted(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array): void {
  for (let i = 0, o = off; i < n; i += 32, o += 18) {
    const sigma2 = fr(sumSquares(x, i, 32) * fr(2 / 32));
    const scale = iq4BlockScale(x, i, sigma2, qw, i);
    putF16(dst, o, scale);
    const id = scale ? fr(1 / scale) : 0;
    for (let j = 0; j < 32; j++) L[j] = bestIndexInt8(KVALUES_IQ4NL, fr(id * x[i + j]));
    packNibbles(dst, o + 2, 32);
  }
}

function quantizeIq4XsWeighted(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += 136) {
    const sigma2 = fr(sumSquares(x, i, QK_K) * fr(2 / QK_K));
    for (let ib = 0; ib < 8; ib++) scales[ib] = iq4BlockScale(x, i + 32 * ib, sigma2, qw, i + 32 * ib);
    const d = fr(-signedMax(scales, 0, 8) / 32);
    putF16(dst, o, d);
    const id = d ? fr(1 / d) : 0;
    let scalesH = 0;
    dst.fill(0, o + 4, o + 8);
    for (let ib = 0; ib < 8; ib++) {
      let l = Math.max(-32, Math.min(31, nearestInt(fr(id * scales[ib]))));
      const dl = fr(d * l);
      const idl = dl ? fr(1 / dl) : 0;
      for (let j = 0; j < 32; j++) L[32 * ib + j] = bestIndexInt8(KVALUES_IQ4NL, fr(idl * x[i + 32 * ib + j]));
      l += 32;
      if (ib % 2 === 0) dst[o + 4 + (ib >> 1)] = l & 0xf;
      else dst[o + 4 + (ib >> 1)] |= (l & 0xf) << 4;
      scalesH |= (l >> 4) << (2 * ib);
    }
    dst[o + 2] = scalesH & 0xff;
    dst[o + 3] = scalesH >> 8;
    packNibbles(dst, o + 8, QK_K);
  }
}

/** The quantisers that read an importance matrix, by ggml type (the others ignore it, as in ggml). */
export const WEIGHTED_QUANTIZERS: Partial<Record<number, WeightedQuantizeFn>> = {
  [GgmlType.Q4_0]: (x, d, o, n, qw) => legacy(x, d, o, n, qw, GgmlType.Q4_0),
  [GgmlType.Q4_1]: (x, d, o, n, qw) => legacy(x, d, o, n, qw, GgmlType.Q4_1),
  [GgmlType.Q5_0]: (x, d, o, n, qw) => legacy(x, d, o, n, qw, GgmlType.Q5_0),
  [GgmlType.Q5_1]: (x, d, o, n, qw) => legacy(x, d, o, n, qw, GgmlType.Q5_1),
  [GgmlType.Q2_K]: quantizeQ2KWeighted,
  [GgmlType.Q3_K]: quantizeQ3KWeighted,
  [GgmlType.Q4_K]: (x, d, o, n, qw) => quantizeKxWeighted(x, d, o, n, qw, false),
  [GgmlType.Q5_K]: (x, d, o, n, qw) => quantizeKxWeighted(x, d, o, n, qw, true),
  [GgmlType.Q6_K]: quantizeQ6KWeighted,
  [GgmlType.IQ4_NL]: quantizeIq4NlWeighted,
  [GgmlType.IQ4_XS]: quantizeIq4XsWeighted,
  [GgmlType.IQ3_S]: quantizeIq3SRow,
  [GgmlType.IQ3_XXS]: quantizeIq3XxsRow,
  [GgmlType.IQ2_S]: quantizeIq2SRow,
  [GgmlType.IQ2_XS]: quantizeIq2XsRow,
  [GgmlType.IQ2_XXS]: quantizeIq2XxsRow,
  [GgmlType.IQ1_M]: quantizeIq1MRow,
  [GgmlType.IQ1_S]: quantizeIq1SRow,
};
