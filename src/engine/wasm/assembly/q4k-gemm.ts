// Prompt GEMM of Q4_K in groups of four rows (relaxed build; q4k-group.ts's layout), read where the
// weights lie: no prepared copy of the rows. A group block's quant vectors hold one u32 word of
// each of its four rows; their nibbles are extracted once and dotted with the broadcast activation
// bytes of four tokens, so each row's sum lands in its own i32 lane, as in the matvec (blockG), and
// the 6-bit scales and minimums unpack once per group block for the four tokens.
//
// Bit for bit matvecG_q4_K (and so kquants.ts dot_q4_K) per token: the integer sums are exact in
// any order, and per block and token the float steps are blockG's, F_j += f32(T_j)·(d·d_x) and
// M += (dmin·d_x)·f32(minsum), added at the end as (F0 + F2) + (F1 + F3) − M. So prompt and
// generation give the same bits for Q4_K (the plain build's gemm follows the scalar reference).
//
// Inputs: the widened q8_K batch (gemm.ts widen_q8_K) supplies d_x and the sub-block sums
// (B_2k, B_2k+1) of four tokens side by side, and records where its quantised rows lie (WIDE_SRC):
// the activation bytes come from there, in ggml's order, four at a time as the quant words want them.
//
// The tiling loop over groups and tokens is gemmg.ts's, shared with Q6_K.

import { f16HiIf, f16Sub } from './common';
import { Q4KG_BLOCK, addF, kg, nib, scaleS } from './q4k-group';

/** Bytes of a widened q8_K block of four tokens (gemm.ts WQ8_K_BLOCK), and of one token's part of it (gemm.ts XK_TOKEN; q6k-gemm.ts too). */
export const WQ8_K_BLOCK: usize = 2448;
export const XK_TOKEN: usize = 576;
/** Where widen_q8_K records its source in the widened copy's first block: u32 xq, u32 xqStride (bytes 80-143 are unused). */
export const WIDE_SRC: usize = 80;

/** Per token of the tile: F0 … F3, M (blockG's accumulators) and dd = d·d_x of the current block, 96 B each. */
const TILE: usize = memory.data(4 * 96, 16);
/** Per token: the first chunk's scaled sums (lanes 2c, 2c + 1 of dot_q4_K's isum), 32 B each. */
const HALF: usize = memory.data(4 * 32, 16);

/** Adds block a of a group (its 576 B) against four tokens' activation blocks x0 … x3 (256 B each; wb: their widened block) to TILE. */
// @ts-ignore: decorator
@inline function tileBlock(a: usize, x0: usize, x1: usize, x2: usize, x3: usize, wb: usize, dot32: bool): void {
  const H = v128.load(a), U0 = v128.load(a, 16), U1 = v128.load(a, 32), U2 = v128.load(a, 48);
  const k3 = kg(32), kf = kg(0), k3f = kg(16);
  // minimums m_0..3 (U1's low six bits) and m_4..7 as bytes per row lane, then as the i16 pairs
  // (m_2k, m_2k+1), against each token's (B_2k, B_2k+1) broadcast: Σ_j m_j·B_j per row (exact)
  const mlo = v128.and(U1, k3f);
  const mhi = v128.or(v128.and(i32x4.shr_u(U2, 4), kf), i32x4.shl(v128.and(i32x4.shr_u(U1, 6), k3), 4));
  const pe = kg(240), po = kg(256);
  const m01 = i8x16.relaxed_swizzle(mlo, pe), m23 = i8x16.relaxed_swizzle(mlo, po);
  const m45 = i8x16.relaxed_swizzle(mhi, pe), m67 = i8x16.relaxed_swizzle(mhi, po);
  // d and dmin as the matvec takes them (blockG: f16HiMul unless a half is subnormal)
  const sub = f16Sub(H);
  const dmin = f16HiIf(H, sub), dw = f16HiIf(i32x4.shl(H, 16), sub);
  for (let t: usize = 0; t < 4; t++) {
    const s = wb + 16 + (t << 2);
    const mins = i32x4.add(
      i32x4.add(i32x4.dot_i16x8_s(m01, v128.load32_splat(s)), i32x4.dot_i16x8_s(m23, v128.load32_splat(s, 16))),
      i32x4.add(i32x4.dot_i16x8_s(m45, v128.load32_splat(s, 32)), i32x4.dot_i16x8_s(m67, v128.load32_splat(s, 48))),
    );
    const dx = v128.load32_splat(wb + (t << 2));
    const acc = TILE + t * 96;
    v128.store(acc, f32x4.add(v128.load(acc, 64), f32x4.mul(f32x4.mul(dmin, dx), f32x4.convert_i32x4_s(mins))), 64);
    v128.store(acc, f32x4.mul(dw, dx), 80);
  }
  // scales s_0..3 and s_4..7
  const s0 = v128.and(U0, k3f);
  const s1 = v128.or(v128.and(U2, kf), i32x4.shl(v128.and(i32x4.shr_u(U0, 6), k3), 4));
  const mt: usize = dot32 ? 144 : 80;
  for (let c = 0; c < 2; c++) {
    // h = 0: chunk c (sub-blocks 2c, 2c + 1, scales from s0); h = 1: chunk c + 2 (2c + 4, 2c + 5, s1)
    for (let h = 0; h < 2; h++) {
      const q = a + 64 + (<usize>c << 8) + (<usize>h << 5);
      const xo = (<usize>c << 6) + (<usize>h << 7);
      let l0 = i32x4.splat(0), l1 = l0, l2 = l0, l3 = l0, g0 = l0, g1 = l0, g2 = l0, g3 = l0;
      // quant vectors (chunk, 2s) and (chunk, 2s + 1) at q + 64s and + 16: low nibbles meet the
      // activation bytes 8s + 4e of the chunk's first sub-block, high nibbles those 32 further
      for (let s: usize = 0; s < 4; s++) {
        for (let e: usize = 0; e < 2; e++) {
          const v = v128.load(q + (s << 6) + (e << 4));
          const o = xo + (s << 3) + (e << 2);
          const lo = nib(v, 0), hi = nib(v, 1);
          if (dot32) {
            l0 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(x0 + o), lo, l0);
            l1 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(x1 + o), lo, l1);
            l2 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(x2 + o), lo, l2);
            l3 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(x3 + o), lo, l3);
            g0 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(x0 + o, 32), hi, g0);
            g1 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(x1 + o, 32), hi, g1);
            g2 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(x2 + o, 32), hi, g2);
            g3 = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(x3 + o, 32), hi, g3);
          } else {
            l0 = i16x8.add(l0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x0 + o), lo));
            l1 = i16x8.add(l1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x1 + o), lo));
            l2 = i16x8.add(l2, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x2 + o), lo));
            l3 = i16x8.add(l3, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x3 + o), lo));
            g0 = i16x8.add(g0, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x0 + o, 32), hi));
            g1 = i16x8.add(g1, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x1 + o, 32), hi));
            g2 = i16x8.add(g2, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x2 + o, 32), hi));
            g3 = i16x8.add(g3, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load32_splat(x3 + o, 32), hi));
          }
        }
      }
      const sc = h ? s1 : s0, ml = kg(mt + (<usize>c << 5)), mh = kg(mt + 16 + (<usize>c << 5));
      halfOrAdd(0, h, c, scaleS(l0, sc, ml, dot32), scaleS(g0, sc, mh, dot32));
      halfOrAdd(1, h, c, scaleS(l1, sc, ml, dot32), scaleS(g1, sc, mh, dot32));
      halfOrAdd(2, h, c, scaleS(l2, sc, ml, dot32), scaleS(g2, sc, mh, dot32));
      halfOrAdd(3, h, c, scaleS(l3, sc, ml, dot32), scaleS(g3, sc, mh, dot32));
    }
  }
}

/** Token t's scaled sums of one chunk (lo: lane 2c of isum, hi: 2c + 1): kept (h = 0), or added to the kept ones into F_2c, F_2c+1 (h = 1). */
// @ts-ignore: decorator
@inline function halfOrAdd(t: usize, h: i32, c: i32, lo: v128, hi: v128): void {
  const p = HALF + (t << 5), acc = TILE + t * 96;
  if (h == 0) {
    v128.store(p, lo);
    v128.store(p, hi, 16);
  } else {
    const dd = v128.load(acc, 80);
    addF(acc, 2 * c, i32x4.add(v128.load(p), lo), dd);
    addF(acc, 2 * c + 1, i32x4.add(v128.load(p, 16), hi), dd);
  }
}

/** One group (at g) against one group of four tokens (activations x0 … x3, widened copy at xw): token t's four rows stored at o + t·os (t < live). */
// @ts-ignore: decorator
@inline function tileG(o: usize, os: usize, live: i32, g: usize, x0: usize, x1: usize, x2: usize, x3: usize, xw: usize, nb: i32, dot32: bool): void {
  const z = f32x4.splat(0);
  for (let i: usize = 0; i < 4 * 96; i += 16) v128.store(TILE + i, z);
  for (let b = 0; b < nb; b++) {
    const xo = <usize>b << 8;
    tileBlock(g + <usize>b * Q4KG_BLOCK, x0 + xo, x1 + xo, x2 + xo, x3 + xo, xw + <usize>b * WQ8_K_BLOCK, dot32);
  }
  for (let t = 0; t < live; t++) {
    const acc = TILE + <usize>t * 96;
    const s = f32x4.add(f32x4.add(v128.load(acc), v128.load(acc, 32)), f32x4.add(v128.load(acc, 16), v128.load(acc, 48)));
    v128.store(o + <usize>t * os, f32x4.sub(s, v128.load(acc, 64)));
  }
}

export function tiles32(o: usize, os: usize, live: i32, g: usize, x0: usize, x1: usize, x2: usize, x3: usize, xw: usize, nb: i32): void {
  tileG(o, os, live, g, x0, x1, x2, x3, xw, nb, true);
}
export function tiles16(o: usize, os: usize, live: i32, g: usize, x0: usize, x1: usize, x2: usize, x3: usize, xw: usize, nb: i32): void {
  tileG(o, os, live, g, x0, x1, x2, x3, xw, nb, false);
}
