// IQ4_NL and IQ4_XS: 4-bit indices into a fixed non-linear table (ggml-common.h kvalues_iq4nl,
// block_iq4_nl, block_iq4_xs).
//   IQ4_NL  18 B per 32:  f16 d | u8 qs[16]                       x = d·T[q]
//   IQ4_XS 136 B per 256: f16 d | u16 scales_h | u8 scales_l[4] | u8 qs[128]
//          8 groups of 32, group scale ls = (scales_l nibble) | (2 bits of scales_h) << 4,
//          x = d·(ls - 32)·T[q]
// Nibble order per 32 elements as Q4_0: qs[j] low = element j, high = element j + 16.
// Quantiser: ggml-quants.c quantize_row_iq4_nl_impl as quantize_iq4_nl / quantize_iq4_xs call it
// without an importance matrix (weights x², 7 trial scales either side).

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, f16At, f32At, fr, nearestInt, putF16 } from './half.js';
import { GROUP_MAX_EPS, signedMax } from './kscales.js';
import { Q8K_BYTES, Q8K_QS, QK_K } from './q8k.js';

/** ggml-common.h kvalues_iq4nl. */
export const KVALUES_IQ4NL = new Int8Array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]);

const NL_BYTES = 18;
const XS_BYTES = 136;

/**
 * Index of the table entry nearest to x (ties to the larger entry), as ggml-quants.c
 * best_index_int8 finds it: x picks entry i once 2x reaches val[i-1] + val[i].
 */
export function bestIndexInt8(val: Int8Array, x: number): number {
  const x2 = fr(x + x);
  let idx = 0;
  for (let step = val.length >> 1; step > 0; step >>= 1) {
    const j = idx + step;
    if (x2 >= val[j - 1] + val[j]) idx = j;
  }
  return idx;
}

/**
 * 32 values from 16 bytes of 4-bit table indices at src[qs..] (Q4_0 nibble order): dst[y + j] =
 * d·table[q_j]. Shared by IQ4_NL, IQ4_XS and MXFP4.
 */
export function dequantizeNibbles(table: Int8Array, d: number, src: Uint8Array, qs: number, dst: Float32Array, y: number): void {
  for (let j = 0; j < 16; j++) {
    const q = src[qs + j];
    dst[y + j] = fr(d * table[q & 0xf]);
    dst[y + j + 16] = fr(d * table[q >> 4]);
  }
}

/** Σ a8[ao + j]·table[q_j] over one such 32-value block (the integer part of ggml's *_q8_0 / *_q8_K dots). */
export function nibbleDot(table: Int8Array, w: Uint8Array, qs: number, a8: Int8Array, ao: number): number {
  let sumi1 = 0;
  let sumi2 = 0;
  for (let j = 0; j < 16; j++) {
    const b = w[qs + j];
    sumi1 += a8[ao + j] * table[b & 0xf];
    sumi2 += a8[ao + 16 + j] * table[b >> 4];
  }
  return sumi1 + sumi2;
}

// ---------------------------------------------------------------------------------------------
// IQ4_NL

function dequantizeIq4Nl(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += 32, o += NL_BYTES) {
    dequantizeNibbles(KVALUES_IQ4NL, f16At(src, o), src, o + 2, dst, i);
  }
}

/**
 * Best scale for one block of `bs` values (quantize_row_iq4_nl_impl's per-block search): start
 * from d = max/127 (the sign making the extreme value land on -127), least-squares refit, then
 * 2·ntry+1 trial inverse scales (itry - 127)/max, each refit; keep the best. Writes the levels to
 * L[lo..] and returns the scale (0 for an all-zero block).
 */
const trial = new Uint8Array(32);

function blockScale(x: Float32Array, xo: number, bs: number, L: Uint8Array, lo: number, ntry: number): number {
  const max = signedMax(x, xo, bs);
  if (Math.abs(max) < GROUP_MAX_EPS) {
    L.fill(0, lo, lo + bs);
    return 0;
  }
  const v0 = KVALUES_IQ4NL[0];
  let d = ntry > 0 ? fr(-max / v0) : fr(max / v0);
  let id = fr(1 / d);
  let sumqx = 0;
  let sumq2 = 0;
  for (let j = 0; j < bs; j++) {
    const v = x[xo + j];
    const l = bestIndexInt8(KVALUES_IQ4NL, fr(id * v));
    L[lo + j] = l;
    const q = KVALUES_IQ4NL[l];
    const w = fr(v * v);
    sumqx = fr(sumqx + fr(fr(w * q) * v));
    sumq2 = fr(sumq2 + fr(fr(w * q) * q));
  }
  d = sumq2 > 0 ? fr(sumqx / sumq2) : 0;
  let best = fr(d * sumqx);
  // A trial with the previous trial's levels gives the same sums and so the same (non-)update.
  let havePrev = false;
  for (let itry = -ntry; itry <= ntry; itry++) {
    id = fr((itry + v0) / max);
    let same = havePrev;
    for (let j = 0; j < bs; j++) {
      const l = bestIndexInt8(KVALUES_IQ4NL, fr(id * x[xo + j]));
      if (l !== trial[j]) same = false;
      trial[j] = l;
    }
    havePrev = true;
    if (same) continue;
    sumqx = 0;
    sumq2 = 0;
    for (let j = 0; j < bs; j++) {
      const v = x[xo + j];
      const q = KVALUES_IQ4NL[trial[j]];
      const w = fr(v * v);
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

function packNibbles(L: Uint8Array, n: number, dst: Uint8Array, at: number): void {
  for (let i = 0; i < n / 32; i++) {
    for (let j = 0; j < 16; j++) dst[at + 16 * i + j] = L[32 * i + j] | (L[32 * i + 16 + j] << 4);
  }
}

/** quantize_iq4_nl (no importance matrix): per block of 32, blockScale then requantise with the final scale. */
function quantizeIq4Nl(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  const L = new Uint8Array(32);
  for (let i = 0, o = off; i < n; i += 32, o += NL_BYTES) {
    const scale = blockScale(x, i, 32, L, 0, 7);
    putF16(dst, o, scale);
    const id = scale ? fr(1 / scale) : 0;
    for (let j = 0; j < 32; j++) L[j] = bestIndexInt8(KVALUES_IQ4NL, fr(id * x[i + j]));
    packNibbles(L, 32, dst, o + 2);
  }
}

/** ggml_vec_dot_iq4_nl_q8_0_generic. */
function vecDotIq4Nl(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += 32, p += NL_BYTES, q += 34) {
    const d = fr(f16At(a, q) * f16At(w, p));
    sumf = fr(sumf + fr(d * nibbleDot(KVALUES_IQ4NL, w, p + 2, a8, q + 2)));
  }
  return sumf;
}

export const IQ4_NL_FORMAT: BlockFormat = {
  type: GgmlType.IQ4_NL, dequantize: dequantizeIq4Nl, quantize: quantizeIq4Nl, vecDotType: GgmlType.Q8_0, vecDot: vecDotIq4Nl,
};

// ---------------------------------------------------------------------------------------------
// IQ4_XS

function xsScale(b: Uint8Array, o: number, ib: number): number {
  const h = b[o + 2] | (b[o + 3] << 8);
  return ((b[o + 4 + (ib >> 1)] >> (4 * (ib & 1))) & 0xf) | (((h >> (2 * ib)) & 3) << 4);
}

function dequantizeIq4Xs(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += XS_BYTES) {
    const d = f16At(src, o);
    for (let ib = 0; ib < 8; ib++) {
      dequantizeNibbles(KVALUES_IQ4NL, fr(d * (xsScale(src, o, ib) - 32)), src, o + 8 + 16 * ib, dst, i + 32 * ib);
    }
  }
}

/** quantize_iq4_xs (no importance matrix): block scales, then 6-bit scales relative to max/-32. */
function quantizeIq4Xs(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  const L = new Uint8Array(QK_K);
  const scales = new Float32Array(8);
  for (let i = 0, o = off; i < n; i += QK_K, o += XS_BYTES) {
    for (let ib = 0; ib < 8; ib++) scales[ib] = blockScale(x, i + 32 * ib, 32, L, 32 * ib, 7);
    const d = fr(-signedMax(scales, 0, 8) / 32);
    putF16(dst, o, d);
    const id = d ? fr(1 / d) : 0;
    let scalesH = 0;
    dst.fill(0, o + 4, o + 8);
    for (let ib = 0; ib < 8; ib++) {
      let l = nearestInt(fr(id * scales[ib]));
      l = Math.max(-32, Math.min(31, l));
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
    packNibbles(L, QK_K, dst, o + 8);
  }
}

/** ggml_vec_dot_iq4_xs_q8_K_generic. */
function vecDotIq4Xs(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK_K, p += XS_BYTES, q += Q8K_BYTES) {
    const d4d8 = fr(f16At(w, p) * f32At(a, q));
    for (let ib = 0; ib < 8; ib++) {
      const dl = fr(d4d8 * (xsScale(w, p, ib) - 32));
      sumf = fr(sumf + fr(dl * nibbleDot(KVALUES_IQ4NL, w, p + 8 + 16 * ib, a8, q + Q8K_QS + 32 * ib)));
    }
  }
  return sumf;
}

export const IQ4_XS_FORMAT: BlockFormat = {
  type: GgmlType.IQ4_XS, dequantize: dequantizeIq4Xs, quantize: quantizeIq4Xs, vecDotType: GgmlType.Q8_K, vecDot: vecDotIq4Xs,
};
