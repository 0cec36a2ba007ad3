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
// the −32 offset). The tiling loop over groups and tokens is gemmg.ts's, shared with Q4_K.

import { f16Top } from './common';
import { WQ8_K_BLOCK, XK_TOKEN } from './q4k-gemm';
import { G_D, G_SC, Q6G_BLOCK, fma, kg, offset, w3 } from './q6k-group';

/** Token 0's activation bytes in the group order in a widened block (gemm.ts XK + XS). */
export const XG: usize = 144 + 288;

/** Per token of the tile: acc_0 … acc_3 (dotGBody's) and dd = d·d_x of the current block, 80 B each. */
const TILE: usize = memory.data(4 * 80, 16);

/** Adds block a of a group (840 B) against four tokens (their widened block wb; b0 … b3: their bsums of this block) to TILE. */
// @ts-ignore: decorator
@inline function tileBlock(a: usize, wb: usize, b0: usize, b1: usize, b2: usize, b3: usize): void {
  const dw = f16Top(i32x4.shl(v128.load16x4_u(a + G_D), 16));
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
export function tile6(o: usize, os: usize, live: i32, g: usize, b0: usize, b1: usize, b2: usize, b3: usize, xw: usize, nb: i32): void {
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
