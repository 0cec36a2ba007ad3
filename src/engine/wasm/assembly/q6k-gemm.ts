// Prompt GEMM of Q6_K in groups of four rows (relaxed build; q6k-group.ts's layout), read where the
// weights lie, as q4k-gemm.ts does for Q4_K: each pack's weight vectors (the 6-bit quants of four
// rows, row r in lane r) are joined from their three stored vectors once and dotted with four
// tokens' activation bytes, in the group order, broadcast; the pair's scales scale both sub-blocks
// in one i16 dot per token. Per 32 products and token: two broadcasts, two i16 dots (pmaddubsw), an
// add and one pmaddwd: no instruction that needs AVX-VNNI, so x64 without it runs the same code.
//
// Bit for bit matvecG_q6_K (and so kquants.ts dot_q6_K) per token: the integer sums S_i (lane r:
// row r) are exact in any order, and per block and token each is scaled as the matvec's, acc_i +=
// f32(S_i)·(d·d_x), added at the end as (acc_0 + acc_2) + (acc_1 + acc_3).
//
// Inputs: the widened q8_K batch (gemm.ts widen_q8_K: d_x, and each token's bytes in the group
// order, prepX's, at XG) and the quantised rows it records (q4k-gemm.ts WIDE_SRC: their bsums, for
// the −32 offset). Loop order as q4k-gemm.ts: a few groups stay in L2 while the token groups pass.

import { qKBsums } from './common';
import { f16Hi } from './legacy';
import { WIDE_SRC, WQ8_K_BLOCK, XK_TOKEN } from './q4k-gemm';
import { G_D, G_SC, Q6G_BLOCK, fma, kg, offset, w3 } from './q6k-group';

/** Token 0's activation bytes in the group order in a widened block (gemm.ts XK + XS). */
export const XG: usize = 144 + 288;
/** Groups of rows that stay in L2 while the token groups pass. */
const GEMMG_GROUPS: i32 = 4;

/** Per token of the tile: acc_0 … acc_3 (dotGBody's) and dd = d·d_x of the current block, 80 B each. */
const TILE: usize = memory.data(4 * 80, 16);
/** A partial first group's results (four tokens × four rows) before the rows in range are stored. */
const PART: usize = memory.data(64, 16);

/** Adds block a of a group (840 B) against four tokens (their widened block wb; b0 … b3: their bsums of this block) to TILE. */
// @ts-ignore: decorator
@inline function tileBlock(a: usize, wb: usize, b0: usize, b1: usize, b2: usize, b3: usize): void {
  const dw = f16Hi(i32x4.shl(v128.load16x4_u(a + G_D), 16));
  for (let t: usize = 0; t < 4; t++) v128.store(TILE + t * 80, f32x4.mul(dw, v128.load32_splat(wb + (t << 2))), 64);
  const m = kg(0);
  // S_i, i = 2k + j: pack k of every pair, its W0 and W1 (j = 0) or W2 and W3 (j = 1)
  for (let k = 0; k < 2; k++) {
    for (let j = 0; j < 2; j++) {
      const i = 2 * k + j;
      let s0 = offset(a, b0, i), s1 = offset(a, b1, i), s2 = offset(a, b2, i), s3 = offset(a, b3, i);
      let q = a + <usize>k * 48, sp = a + G_SC, x = wb + XG + (<usize>k << 4) + (<usize>j << 3);
      for (let p = 0; p < 8; p++) {
        const sc = v128.load8x8_s(sp);
        let wa: v128, wc: v128;
        if (j == 0) {
          wa = v128.and(v128.load(q), m);
          wc = v128.and(v128.load(q, 16), m);
        } else {
          const A = v128.load(q), B = v128.load(q, 16), C = v128.load(q, 32);
          wa = v128.and(C, m);
          wc = w3(A, B, C);
        }
        s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x), wa), i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x, 4), wc)), sc));
        s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x, XK_TOKEN), wa), i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x, XK_TOKEN + 4), wc)), sc));
        s2 = i32x4.add(s2, i32x4.dot_i16x8_s(i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x, 2 * XK_TOKEN), wa), i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x, 2 * XK_TOKEN + 4), wc)), sc));
        s3 = i32x4.add(s3, i32x4.dot_i16x8_s(i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x, 3 * XK_TOKEN), wa), i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x, 3 * XK_TOKEN + 4), wc)), sc));
        q += 96;
        sp += 8;
        x += 32;
      }
      const o = <usize>i << 4;
      v128.store(TILE + o, fma(v128.load(TILE + o), s0, v128.load(TILE, 64)));
      v128.store(TILE + 80 + o, fma(v128.load(TILE + 80 + o), s1, v128.load(TILE, 144)));
      v128.store(TILE + 160 + o, fma(v128.load(TILE + 160 + o), s2, v128.load(TILE, 224)));
      v128.store(TILE + 240 + o, fma(v128.load(TILE + 240 + o), s3, v128.load(TILE, 304)));
    }
  }
}

/** One group (at g) against one group of four tokens (bsums of token t at bt, widened copy at xw): token t's four rows stored at o + t·os (t < live). */
function tile6(o: usize, os: usize, live: i32, g: usize, b0: usize, b1: usize, b2: usize, b3: usize, xw: usize, nb: i32): void {
  const z = f32x4.splat(0);
  for (let i: usize = 0; i < 4 * 80; i += 16) v128.store(TILE + i, z);
  for (let b = 0; b < nb; b++) {
    const bo = <usize>b << 5;
    tileBlock(g + <usize>b * Q6G_BLOCK, xw + <usize>b * WQ8_K_BLOCK, b0 + bo, b1 + bo, b2 + bo, b3 + bo);
  }
  for (let t = 0; t < live; t++) {
    const acc = TILE + <usize>t * 80;
    v128.store(o + <usize>t * os, f32x4.add(f32x4.add(v128.load(acc), v128.load(acc, 32)), f32x4.add(v128.load(acc, 16), v128.load(acc, 48))));
  }
}

/**
 * out[t·outStride + r] = row r · x_t for the rows r in [r0, r1) below r1 & ~3 (the grouped rows; a
 * partial first group is computed whole and its rows in range stored) and t < n, from the widened
 * batch at xw; returns r1 & ~3, where ggml's rows begin (the caller takes those).
 */
export function gemmG_q6_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32): i32 {
  const end = r1 & ~3;
  const g0 = r0 & ~3;
  if (g0 >= end || n <= 0) return end;
  const nb = cols >> 8;
  const xq = <usize>load<u32>(xw, WIDE_SRC), xs = <usize>load<u32>(xw, WIDE_SRC + 4);
  const bp = qKBsums(xq, cols);
  const os = <usize>outStride << 2;
  const tg = (n + 3) >> 2;
  for (let c0 = g0; c0 < end; c0 += 4 * GEMMG_GROUPS) {
    const c1 = min<i32>(end, c0 + 4 * GEMMG_GROUPS);
    for (let k = 0; k < tg; k++) {
      const live = min<i32>(4, n - 4 * k);
      // tokens past n read the last token's bsums (their widened d is zero; not stored)
      const t0 = 4 * k;
      const b0 = bp + <usize>t0 * xs;
      const b1 = bp + <usize>min<i32>(t0 + 1, n - 1) * xs, b2 = bp + <usize>min<i32>(t0 + 2, n - 1) * xs, b3 = bp + <usize>min<i32>(t0 + 3, n - 1) * xs;
      const wk = xw + <usize>(k * nb) * WQ8_K_BLOCK;
      const ok = out + <usize>t0 * os;
      for (let g = c0; g < c1; g += 4) {
        const gp = w + <usize>g * rowBytes;
        if (g < r0) {
          tile6(PART, 16, live, gp, b0, b1, b2, b3, wk, nb);
          for (let t = 0; t < live; t++) {
            for (let r = r0; r < g + 4; r++) store<f32>(ok + <usize>t * os + (<usize>r << 2), load<f32>(PART + (<usize>t << 4) + (<usize>(r - g) << 2)));
          }
        } else tile6(ok + (<usize>g << 2), os, live, gp, b0, b1, b2, b3, wk, nb);
      }
    }
  }
  return end;
}
