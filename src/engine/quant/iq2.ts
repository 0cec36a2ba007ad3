// IQ2_XXS, IQ2_XS, IQ2_S: 2-bit i-quants. Each group of 8 elements is one entry of a codebook of
// 8-byte magnitude patterns (iq-grids.ts; magnitudes 8, 25, 43) with 8 signs; ggml-common.h
// block_iq2_*, 256 elements per block:
//   IQ2_XXS  66 B: f16 d | u32 pairs[8][2]   per 32: 4 grid indices (u8), then 4×7 sign bits and a 4-bit scale s
//   IQ2_XS   74 B: f16 d | u16 qs[32] | u8 scales[8]   qs: 9-bit grid index | 7 sign bits; a 4-bit scale per 16
//   IQ2_S    82 B: f16 d | u8 qs[32] | u8 signs[32] | u8 qh[8] | u8 scales[8]   10-bit index (qh gives bits 8-9), 8 signs
// x = d·(0.5 + s)·0.25·grid·sign (ggml-quants.c dequantize_row_iq2_*); the 7 stored sign bits
// become 8 through ksigns_iq2xs (the 8th keeps the count of minus signs even).
// The dots are ggml-cpu quants.c ggml_vec_dot_iq2_*_q8_K_generic: per sub-block an integer
// Σ grid·sign·q8 times ls = 2s + 1, then d_w·d_x·Σ, times 1/8 at the end.

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, f16At, f32At, fr } from './half.js';
import { IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, KSIGNS_IQ2XS } from './iq-grids.js';
import { Q8K_BYTES, Q8K_QS, QK_K } from './q8k.js';

const XXS_BYTES = 66;
const XS_BYTES = 74;
const S_BYTES = 82;

/** dst[y..y+8) = db·grid[g..g+8)·(−1 where bit j of signs is set). */
function put8(dst: Float32Array, y: number, db: number, grid: Uint8Array, g: number, signs: number): void {
  for (let j = 0; j < 8; j++) {
    const v = fr(db * grid[g + j]);
    dst[y + j] = signs & (1 << j) ? -v : v;
  }
}

/** Σ grid[g + j]·sign_j·a8[ao + j] over 8 elements. */
function dot8(grid: Uint8Array, g: number, signs: number, a8: Int8Array, ao: number): number {
  let s = 0;
  for (let j = 0; j < 8; j++) {
    const p = grid[g + j] * a8[ao + j];
    s += signs & (1 << j) ? -p : p;
  }
  return s;
}

function u32At(b: Uint8Array, o: number): number {
  return (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;
}

function u16At(b: Uint8Array, o: number): number {
  return b[o] | (b[o + 1] << 8);
}

// ---------------------------------------------------------------------------------------------
// IQ2_XXS

function dequantizeIq2Xxs(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += XXS_BYTES) {
    const d = f16At(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const q = o + 2 + 8 * ib;
      const aux = u32At(src, q + 4);
      const db = fr(fr(d * (0.5 + (aux >>> 28))) * 0.25);
      for (let l = 0; l < 4; l++) put8(dst, i + 32 * ib + 8 * l, db, IQ2XXS_GRID, 8 * src[q + l], KSIGNS_IQ2XS[(aux >>> (7 * l)) & 127]);
    }
  }
}

function vecDotIq2Xxs(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, y = aOff; i < n; i += QK_K, p += XXS_BYTES, y += Q8K_BYTES) {
    const d = fr(f16At(w, p) * f32At(a, y));
    let bsum = 0;
    for (let ib = 0; ib < 8; ib++) {
      const q = p + 2 + 8 * ib;
      const aux = u32At(w, q + 4);
      let sumi = 0;
      for (let l = 0; l < 4; l++) sumi += dot8(IQ2XXS_GRID, 8 * w[q + l], KSIGNS_IQ2XS[(aux >>> (7 * l)) & 127], a8, y + Q8K_QS + 32 * ib + 8 * l);
      bsum += sumi * (2 * (aux >>> 28) + 1);
    }
    sumf = fr(sumf + fr(d * fr(bsum)));
  }
  return fr(0.125 * sumf);
}

export const IQ2_XXS_FORMAT: BlockFormat = {
  type: GgmlType.IQ2_XXS, dequantize: dequantizeIq2Xxs, vecDotType: GgmlType.Q8_K, vecDot: vecDotIq2Xxs,
};

// ---------------------------------------------------------------------------------------------
// IQ2_XS

function dequantizeIq2Xs(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += XS_BYTES) {
    const d = f16At(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const sc = src[o + 66 + ib];
      const db0 = fr(fr(d * (0.5 + (sc & 0xf))) * 0.25);
      const db1 = fr(fr(d * (0.5 + (sc >> 4))) * 0.25);
      for (let l = 0; l < 4; l++) {
        const q = u16At(src, o + 2 + 8 * ib + 2 * l);
        put8(dst, i + 32 * ib + 8 * l, l < 2 ? db0 : db1, IQ2XS_GRID, 8 * (q & 511), KSIGNS_IQ2XS[q >> 9]);
      }
    }
  }
}

function vecDotIq2Xs(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, y = aOff; i < n; i += QK_K, p += XS_BYTES, y += Q8K_BYTES) {
    const d = fr(f16At(w, p) * f32At(a, y));
    let bsum = 0;
    for (let ib = 0; ib < 8; ib++) {
      const sc = w[p + 66 + ib];
      for (let h = 0; h < 2; h++) {
        let sumi = 0;
        for (let l = 2 * h; l < 2 * h + 2; l++) {
          const q = u16At(w, p + 2 + 8 * ib + 2 * l);
          sumi += dot8(IQ2XS_GRID, 8 * (q & 511), KSIGNS_IQ2XS[q >> 9], a8, y + Q8K_QS + 32 * ib + 8 * l);
        }
        bsum += sumi * (2 * (h ? sc >> 4 : sc & 0xf) + 1);
      }
    }
    sumf = fr(sumf + fr(d * fr(bsum)));
  }
  return fr(0.125 * sumf);
}

export const IQ2_XS_FORMAT: BlockFormat = {
  type: GgmlType.IQ2_XS, dequantize: dequantizeIq2Xs, vecDotType: GgmlType.Q8_K, vecDot: vecDotIq2Xs,
};

// ---------------------------------------------------------------------------------------------
// IQ2_S

/** Byte offset in iq2s_grid of group l (0..3) of sub-block ib of the IQ2_S block at o. */
function iq2sGrid(b: Uint8Array, o: number, ib: number, l: number): number {
  return 8 * (b[o + 2 + 4 * ib + l] | ((b[o + 66 + ib] << (8 - 2 * l)) & 0x300));
}

function dequantizeIq2S(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += S_BYTES) {
    const d = f16At(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const sc = src[o + 74 + ib];
      const db0 = fr(fr(d * (0.5 + (sc & 0xf))) * 0.25);
      const db1 = fr(fr(d * (0.5 + (sc >> 4))) * 0.25);
      for (let l = 0; l < 4; l++) {
        put8(dst, i + 32 * ib + 8 * l, l < 2 ? db0 : db1, IQ2S_GRID, iq2sGrid(src, o, ib, l), src[o + 34 + 4 * ib + l]);
      }
    }
  }
}

function vecDotIq2S(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, y = aOff; i < n; i += QK_K, p += S_BYTES, y += Q8K_BYTES) {
    const d = fr(f16At(w, p) * f32At(a, y));
    let bsum = 0;
    for (let ib = 0; ib < 8; ib++) {
      const sc = w[p + 74 + ib];
      let sumi1 = 0;
      let sumi2 = 0;
      for (let l = 0; l < 4; l++) {
        const s = dot8(IQ2S_GRID, iq2sGrid(w, p, ib, l), w[p + 34 + 4 * ib + l], a8, y + Q8K_QS + 32 * ib + 8 * l);
        if (l < 2) sumi1 += s;
        else sumi2 += s;
      }
      bsum += (1 + 2 * (sc & 0xf)) * sumi1 + (1 + 2 * (sc >> 4)) * sumi2;
    }
    sumf = fr(sumf + fr(d * fr(bsum)));
  }
  return fr(0.125 * sumf);
}

export const IQ2_S_FORMAT: BlockFormat = {
  type: GgmlType.IQ2_S, dequantize: dequantizeIq2S, vecDotType: GgmlType.Q8_K, vecDot: vecDotIq2S,
};
