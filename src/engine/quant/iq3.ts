// IQ3_XXS and IQ3_S: 3-bit i-quants. Each group of 4 elements is one entry of a codebook of 4-byte
// magnitude patterns (iq-grids.ts), each group of 8 has 8 signs; ggml-common.h block_iq3_*, 256
// elements per block:
//   IQ3_XXS  98 B: f16 d | u8 qs[64] | u32 ss[8]   qs: 8-bit grid indices; ss per 32: 4×7 sign bits (ksigns_iq2xs), 4-bit scale s
//   IQ3_S   110 B: f16 d | u8 qs[64] | u8 qh[8] | u8 signs[32] | u8 scales[4]   9-bit indices (qh: bit 8), 4-bit scale per 32
// IQ3_XXS x = d·(0.5 + s)·0.5·grid·sign, IQ3_S x = d·(1 + 2s)·grid·sign (ggml-quants.c
// dequantize_row_iq3_*). The dots are ggml-cpu quants.c ggml_vec_dot_iq3_*_q8_K_generic: per
// sub-block of 32 an integer Σ grid·sign·q8 times ls = 2s + 1, then d_w·d_x·Σ (IQ3_XXS times 1/4).

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, f16At, f32At, fr } from './half.js';
import { IQ3S_GRID, IQ3XXS_GRID, KSIGNS_IQ2XS } from './iq-grids.js';
import { Q8K_BYTES, Q8K_QS, QK_K } from './q8k.js';

const XXS_BYTES = 98;
const S_BYTES = 110;

/** dst[y..y+4) = db·grid[g..g+4)·(−1 where bit j of signs is set). */
function put4(dst: Float32Array, y: number, db: number, g: number, grid: Uint8Array, signs: number): void {
  for (let j = 0; j < 4; j++) {
    const v = fr(db * grid[g + j]);
    dst[y + j] = signs & (1 << j) ? -v : v;
  }
}

function dot4(grid: Uint8Array, g: number, signs: number, a8: Int8Array, ao: number): number {
  let s = 0;
  for (let j = 0; j < 4; j++) {
    const p = grid[g + j] * a8[ao + j];
    s += signs & (1 << j) ? -p : p;
  }
  return s;
}

function u32At(b: Uint8Array, o: number): number {
  return (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;
}

// ---------------------------------------------------------------------------------------------
// IQ3_XXS

function dequantizeIq3Xxs(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += XXS_BYTES) {
    const d = f16At(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const aux = u32At(src, o + 66 + 4 * ib);
      const db = fr(fr(d * (0.5 + (aux >>> 28))) * 0.5);
      const q = o + 2 + 8 * ib;
      for (let l = 0; l < 4; l++) {
        const signs = KSIGNS_IQ2XS[(aux >>> (7 * l)) & 127];
        const y = i + 32 * ib + 8 * l;
        put4(dst, y, db, 4 * src[q + 2 * l], IQ3XXS_GRID, signs);
        put4(dst, y + 4, db, 4 * src[q + 2 * l + 1], IQ3XXS_GRID, signs >> 4);
      }
    }
  }
}

function vecDotIq3Xxs(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, y = aOff; i < n; i += QK_K, p += XXS_BYTES, y += Q8K_BYTES) {
    const d = fr(f16At(w, p) * f32At(a, y));
    let bsum = 0;
    for (let ib = 0; ib < 8; ib++) {
      const aux = u32At(w, p + 66 + 4 * ib);
      const q = p + 2 + 8 * ib;
      let sumi = 0;
      for (let l = 0; l < 4; l++) {
        const signs = KSIGNS_IQ2XS[(aux >>> (7 * l)) & 127];
        const ao = y + Q8K_QS + 32 * ib + 8 * l;
        sumi += dot4(IQ3XXS_GRID, 4 * w[q + 2 * l], signs, a8, ao) + dot4(IQ3XXS_GRID, 4 * w[q + 2 * l + 1], signs >> 4, a8, ao + 4);
      }
      bsum += sumi * (2 * (aux >>> 28) + 1);
    }
    sumf = fr(sumf + fr(d * fr(bsum)));
  }
  return fr(0.25 * sumf);
}

export const IQ3_XXS_FORMAT: BlockFormat = {
  type: GgmlType.IQ3_XXS, dequantize: dequantizeIq3Xxs, vecDotType: GgmlType.Q8_K, vecDot: vecDotIq3Xxs,
};

// ---------------------------------------------------------------------------------------------
// IQ3_S

/** Byte offsets in iq3s_grid of the two halves of group l (0..3) of sub-block ib of the IQ3_S block at o. */
function iq3sGrid(b: Uint8Array, o: number, ib: number, l: number, half: number): number {
  const qh = b[o + 66 + ib];
  return 4 * (b[o + 2 + 8 * ib + 2 * l + half] | ((qh << (8 - 2 * l - half)) & 256));
}

function iq3sScale(b: Uint8Array, o: number, ib: number): number {
  return 1 + 2 * ((b[o + 106 + (ib >> 1)] >> (4 * (ib & 1))) & 0xf);
}

function dequantizeIq3S(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += S_BYTES) {
    const d = f16At(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const db = fr(d * iq3sScale(src, o, ib));
      for (let l = 0; l < 4; l++) {
        const signs = src[o + 74 + 4 * ib + l];
        const y = i + 32 * ib + 8 * l;
        put4(dst, y, db, iq3sGrid(src, o, ib, l, 0), IQ3S_GRID, signs);
        put4(dst, y + 4, db, iq3sGrid(src, o, ib, l, 1), IQ3S_GRID, signs >> 4);
      }
    }
  }
}

function vecDotIq3S(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, y = aOff; i < n; i += QK_K, p += S_BYTES, y += Q8K_BYTES) {
    const d = fr(f16At(w, p) * f32At(a, y));
    let bsum = 0;
    for (let ib = 0; ib < 8; ib++) {
      let sumi = 0;
      for (let l = 0; l < 4; l++) {
        const signs = w[p + 74 + 4 * ib + l];
        const ao = y + Q8K_QS + 32 * ib + 8 * l;
        sumi += dot4(IQ3S_GRID, iq3sGrid(w, p, ib, l, 0), signs, a8, ao) + dot4(IQ3S_GRID, iq3sGrid(w, p, ib, l, 1), signs >> 4, a8, ao + 4);
      }
      bsum += sumi * iq3sScale(w, p, ib);
    }
    sumf = fr(sumf + fr(d * fr(bsum)));
  }
  return sumf;
}

export const IQ3_S_FORMAT: BlockFormat = {
  type: GgmlType.IQ3_S, dequantize: dequantizeIq3S, vecDotType: GgmlType.Q8_K, vecDot: vecDotIq3S,
};
