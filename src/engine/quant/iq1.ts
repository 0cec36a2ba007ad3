// IQ1_S and IQ1_M: 1.5- and 1.75-bit i-quants. Each group of 8 elements is one entry of iq1s_grid
// (2048 patterns of −1, 0, 1; iq-grids.ts) shifted by ±delta (1/8); ggml-common.h block_iq1_*, 256
// elements per block:
//   IQ1_S  50 B: f16 d | u8 qs[32] | u16 qh[8]   per 32: qh = 4×3 index high bits | 3-bit scale s | delta sign
//   IQ1_M  56 B: u8 qs[32] | u8 qh[16] | u16 sc[4]  per 16: a 3-bit scale; per 8: 3 index high bits + delta
//          sign in a nibble of qh; the block's f16 d is spread over the top nibbles of sc[0..3]
// x = d·(2s + 1)·(grid + delta) (ggml-quants.c dequantize_row_iq1_*). The dots are ggml-cpu
// quants.c ggml_vec_dot_iq1_*_q8_K_generic: Σ ls·Σ grid·q8 plus delta·Σ ls·(±Σ q8), the latter
// from the activation's bsums (IQ1_S) or summed directly (IQ1_M).

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, F16, f16At, f32At, fr } from './half.js';
import { IQ1M_DELTA, IQ1S_DELTA, IQ1S_GRID_I8 } from './iq-grids.js';
import { q8kBsum, Q8K_BYTES, Q8K_QS, QK_K } from './q8k.js';

const S_BYTES = 50;
const M_BYTES = 56;

function u16At(b: Uint8Array, o: number): number {
  return b[o] | (b[o + 1] << 8);
}

/** Σ grid[g + j]·a8[ao + j] over 8 elements. */
function dot8(g: number, a8: Int8Array, ao: number): number {
  let s = 0;
  for (let j = 0; j < 8; j++) s += IQ1S_GRID_I8[g + j] * a8[ao + j];
  return s;
}

// ---------------------------------------------------------------------------------------------
// IQ1_S

function dequantizeIq1S(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += S_BYTES) {
    const d = f16At(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const qh = u16At(src, o + 34 + 2 * ib);
      const dl = fr(d * (2 * ((qh >> 12) & 7) + 1));
      const delta = qh & 0x8000 ? -IQ1S_DELTA : IQ1S_DELTA;
      for (let l = 0; l < 4; l++) {
        const g = 8 * (src[o + 2 + 4 * ib + l] | (((qh >> (3 * l)) & 7) << 8));
        const y = i + 32 * ib + 8 * l;
        for (let j = 0; j < 8; j++) dst[y + j] = fr(dl * (IQ1S_GRID_I8[g + j] + delta));
      }
    }
  }
}

function vecDotIq1S(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, y = aOff; i < n; i += QK_K, p += S_BYTES, y += Q8K_BYTES) {
    let sumi = 0;
    let sumi1 = 0;
    for (let ib = 0; ib < 8; ib++) {
      const qh = u16At(w, p + 34 + 2 * ib);
      const ls = 2 * ((qh >> 12) & 7) + 1;
      const delta = qh & 0x8000 ? -1 : 1;
      let lsum = 0;
      for (let l = 0; l < 4; l++) lsum += dot8(8 * (w[p + 2 + 4 * ib + l] | (((qh >> (3 * l)) & 7) << 8)), a8, y + Q8K_QS + 32 * ib + 8 * l);
      sumi += ls * lsum;
      sumi1 += ls * delta * (q8kBsum(a, y, 2 * ib) + q8kBsum(a, y, 2 * ib + 1));
    }
    sumf = fr(sumf + fr(fr(f16At(w, p) * f32At(a, y)) * fr(sumi + fr(IQ1S_DELTA * sumi1))));
  }
  return sumf;
}

export const IQ1_S_FORMAT: BlockFormat = {
  type: GgmlType.IQ1_S, dequantize: dequantizeIq1S, vecDotType: GgmlType.Q8_K, vecDot: vecDotIq1S,
};

// ---------------------------------------------------------------------------------------------
// IQ1_M

/** The block's d: the top nibbles of sc[0..3] (iq1m_scale_t). */
function iq1mD(b: Uint8Array, o: number): number {
  const sc0 = u16At(b, o + 48), sc1 = u16At(b, o + 50), sc2 = u16At(b, o + 52), sc3 = u16At(b, o + 54);
  return F16[(sc0 >> 12) | ((sc1 >> 8) & 0x00f0) | ((sc2 >> 4) & 0x0f00) | (sc3 & 0xf000)];
}

/** Scale 2s + 1 of half h (0, 1) of sub-block ib. */
function iq1mScale(b: Uint8Array, o: number, ib: number, h: number): number {
  return 2 * ((u16At(b, o + 48 + 2 * (ib >> 1)) >> (6 * (ib & 1) + 3 * h)) & 7) + 1;
}

/** Byte offset in iq1s_grid of group l of sub-block ib, and its delta sign bit (qh nibble bit 3). */
function iq1mGrid(b: Uint8Array, o: number, ib: number, l: number): number {
  const qh = b[o + 32 + 2 * ib + (l >> 1)];
  return 8 * (b[o + 4 * ib + l] | ((qh << (8 - 4 * (l & 1))) & 0x700));
}

function iq1mNeg(b: Uint8Array, o: number, ib: number, l: number): boolean {
  return (b[o + 32 + 2 * ib + (l >> 1)] & (l & 1 ? 0x80 : 0x08)) !== 0;
}

function dequantizeIq1M(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += M_BYTES) {
    const d = iq1mD(src, o);
    for (let ib = 0; ib < 8; ib++) {
      const dl1 = fr(d * iq1mScale(src, o, ib, 0));
      const dl2 = fr(d * iq1mScale(src, o, ib, 1));
      for (let l = 0; l < 4; l++) {
        const g = iq1mGrid(src, o, ib, l);
        const delta = iq1mNeg(src, o, ib, l) ? -IQ1M_DELTA : IQ1M_DELTA;
        const dl = l < 2 ? dl1 : dl2;
        const y = i + 32 * ib + 8 * l;
        for (let j = 0; j < 8; j++) dst[y + j] = fr(dl * (IQ1S_GRID_I8[g + j] + delta));
      }
    }
  }
}

function vecDotIq1M(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, y = aOff; i < n; i += QK_K, p += M_BYTES, y += Q8K_BYTES) {
    let sumi1 = 0;
    let sumi2 = 0;
    for (let ib = 0; ib < 8; ib++) {
      const sum1 = [0, 0];
      const sum2 = [0, 0];
      for (let l = 0; l < 4; l++) {
        const ao = y + Q8K_QS + 32 * ib + 8 * l;
        let lsum2 = 0;
        for (let j = 0; j < 8; j++) lsum2 += a8[ao + j];
        sum1[l >> 1] += dot8(iq1mGrid(w, p, ib, l), a8, ao);
        sum2[l >> 1] += iq1mNeg(w, p, ib, l) ? -lsum2 : lsum2;
      }
      const ls1 = iq1mScale(w, p, ib, 0);
      const ls2 = iq1mScale(w, p, ib, 1);
      sumi1 += sum1[0] * ls1 + sum1[1] * ls2;
      sumi2 += sum2[0] * ls1 + sum2[1] * ls2;
    }
    sumf = fr(sumf + fr(fr(iq1mD(w, p) * f32At(a, y)) * fr(sumi1 + fr(IQ1M_DELTA * sumi2))));
  }
  return sumf;
}

export const IQ1_M_FORMAT: BlockFormat = {
  type: GgmlType.IQ1_M, dequantize: dequantizeIq1M, vecDotType: GgmlType.Q8_K, vecDot: vecDotIq1M,
};
