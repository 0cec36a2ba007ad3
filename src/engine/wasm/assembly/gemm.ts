// Prompt matmul (many tokens × one weight matrix) for Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, Q4_K, Q5_K and
// Q6_K, bit for bit equal to the scalar reference (src/engine/quant: ggml's *_generic dots with f32
// rounding) for every token. Two steps:
//   1. widen_*: the batch's quantised activations (layouts in common.ts) are copied once into
//      groups of four tokens, rearranged for the dot instruction the build uses, with the four
//      tokens' scales side by side as one f32x4;
//   2. gemm_*: the rows of a block of GEMM_ROWS rows are unpacked once into scratch (same
//      arrangement) and stay in L1 while every group of four tokens passes (the widened batch stays
//      in L2): each weight block is dotted with the four tokens, then the float steps are the
//      reference's, lane for lane, with one f32 lane per token or per reference lane.
//
// Exactness. Integer sums are exact in any order, so only the float steps must match:
//   32-element formats: one integer sum per block and token (plain: fold4 puts the four tokens in
//   the four lanes; relaxed: the layout does), then sumf += … in the type's own order (Q4_0 multiplies by d_w first, Q8_0/Q5_0
//   by d_w·d_x, Q4_1/Q5_1 add m_w·s_x).
//   K-quants: ggml keeps eight integer lanes per block (element e goes to lane e % 8), each scaled
//   by d = d_w·d_x and added to its own f32 lane sum; the lane sums are added in order at the end.
//   So each 16 (plain) or 32 (relaxed) elements are stored permuted so that every i32 lane of the
//   dot holds elements of one class e % 8: lanes 0-3 of one vector, 4-7 of the next.
//
// Plain SIMD: activations and weights widened to i16, pairs (e, e+8) side by side, so
//   i32x4.dot_i16x8_s gives classes 0-3 from the first eight i16 and 4-7 from the next eight;
//   K-quant sub-block scales are multiplied into the i16 weights (|q·sc| ≤ 4096).
// Relaxed SIMD, K-quants: Q4_K and Q6_K, stored in groups of four rows, are not prepared here: their
//   gemm reads the groups in place with the matvec's float steps (q4k-gemm.ts, q6k-gemm.ts), so
//   their prompt and generation give the same bits (ggml's last rows % 4 go through the matvec);
//   this file widens their activations. Q5_K: bytes stay bytes, elements of one class of a
//   sub-block side by side:
//   per pair of sub-blocks (2k, 2k + 1) two vectors of byte pairs, (c, c + 8) and
//   (c + 16, c + 24) of sub-block 2k, then of 2k + 1, for four classes c; the i16 dot
//   i16x8.relaxed_dot_i8x16_i7x16_s (pmaddubsw; deterministic because its second operand, the
//   weight, is 7-bit and two products cannot saturate) of each, added, gives the four products of
//   each (class, sub-block) in the i16 lanes (2k c, 2k+1 c), lined up with the scale pairs
//   (sc_2k, sc_2k+1) of one i32x4.dot_i16x8_s: per 32 bytes two i16 dots, an add and a pmaddwd.
//   Register tile (Q4_K, Q5_K: row_q45K2): one row against two groups of four tokens, so each
//   pair's weights and scales are loaded once for eight tokens: faster than the row-by-group
//   kernel with two i8 dots and a narrow per 32 bytes (fewer instructions). These kernels are
//   bound by the multiply ports (two per cycle, all dots and pmaddwd share them), the front end
//   and, for Q6_K, the dots' 5-cycle latency, not by loads: a tile of several rows would share the
//   activation loads only, and its accumulators (rows × tokens, lo and hi for Q6_K) do not fit in
//   the 16 xmm registers.
// Relaxed SIMD, 32-element formats: one lane per token. Each activation vector holds four bytes of
//   each of the four tokens, and the weights' matching four bytes are broadcast (v128.load32_splat),
//   so one dot adds four products per token and a block needs no horizontal sums. Q4_0 / Q5_0:
//   the weights are unsigned codes (the 7-bit operand), minus 8·Σx / 16·Σx (q8_0's Σq). Q8_0
//   (as legacy.ts q8Sum): the 7-bit operand is |x| (a q8_0 activation is never −128) and the signed
//   weight is flipped where x < 0, w ^ m with m = (x < 0 ? 0xFF : 0): there (−w − 1)·|x| = w·x + x,
//   so Σ w·x = Σ (w ^ m)·|x| + Σ_{x<0} |x|, the last term per token and block from the widening
//   (corr); one xor and one dot per 16 products. Where the dot reads its second operand as an
//   unsigned byte, exactly, Q8_0 takes the weight there instead (Q8U, below): one dot per 16.
//   Register tile (tile_prep32): four rows by two groups of four tokens, the integer sums starting
//   at the offset −8·Σx (Q8_0: corr) etc. (isum0), so each broadcast weight feeds two dots and each
//   activation vector four, and per block, row and group only the float step is left (faster
//   than the 4 × 4 kernel).
//
// Widened layouts, per group of four tokens (tokens past n are zero, so they add nothing):
//   q8_0 / q8_1 (32-element blocks): per block  d[4] f32 | aux[4] | x                            288 B
//     aux: q8_1's s = d·Σq (f32); q8_0's Σq (i32)
//     x, plain:   x[4][32] i16
//     x, relaxed: 8 vectors, vector v = elements 4v..4v+3 of tokens 0, 1, 2, 3 (i8); relaxed
//       blocks are WX_REL = 176 B (d | aux | x | corr: q8_0's Σ_{x<0} |x| per token, i32) and,
//       for the register tile, two groups 2P, 2P + 1
//       share the space of both: block b of group 2P + h at 2P's start + b·2·WX_REL + h·WX_REL (a
//       last, unpaired group: b·WX_REL); the rest of the pair's space is unused
//   q8_K (256-element blocks): per block d[4] f32 | sum32[4][4][2] i16 | 64 B | x[4] (576 B each) 2448 B
//     sum32[k][t][i] = Σ of token t's 32 activations in sub-block 2k + i (for the K-quants'
//     minimums: i32x4.dot_i16x8_s with the row's (m_2k, m_2k+1) gives one lane per token)
//     x, plain:   i16[256], per 16 elements e0 e8 e1 e9 … e7 e15
//     x, relaxed: per sub-block j, A = e0 e8 e16 e24 e1 e9 e17 e25 … e3 e11 e19 e27 (classes 0-3)
//                 and B (classes 4-7); stored as i8[256] in pairs of sub-blocks (putPairs), 32
//                 unused bytes, then i8[256] in Q6_K's group order (q6k-gemm.ts: per pair of
//                 sub-blocks q6k-group.ts unpackLo | unpackHi, as its prepX)
//     bytes 80-87 of the first block: u32 xq, xqStride, where the quantised rows lie (q4k-gemm.ts
//     and q6k-gemm.ts read their activation bytes and bsums there)

import { f16, lo4, hi4, bits, q8Scales, q8Aux, qKScales, qKBsums } from './common';
import { Q4G_BLOCK, q4Grouped, q4gQs } from './layout';
import { q6Grouped, unpackHi, unpackLo } from './q6k-group';
import { q4kGrouped } from './q4k-group';
import { gemmG_q4_K, gemmG_q6_K } from './gemmg';
import { WIDE_SRC } from './q4k-gemm';

const Z: v128 = i32x4.splat(0);

/** Rows per cache block. */
const GEMM_ROWS: i32 = 4;

export const WQ8_0_BLOCK: i32 = 288;
/** Relaxed: bytes of a widened q8_0 / q8_1 block (d | aux | x | corr), and between an unpaired group's blocks. */
const WX_REL: usize = 176;
/** Relaxed: offset of corr (q8_0: Σ_{x<0} |x| per token, i32x4) in a widened block. */
const WX_CORR: usize = 160;
const WX_BS: usize = ASC_FEATURE_RELAXED_SIMD ? WX_REL : WQ8_0_BLOCK;
export const WQ8_K_BLOCK: i32 = 2448;
/** Offset of token 0's activations in a widened q8_K block, and the bytes per token. */
const XK: usize = 144;
const XK_TOKEN: usize = 576;
/** Relaxed: offset of Q6_K's group-order copy (q6k-gemm.ts XG) in a token's activations. */
const XS: usize = 288;

// ---- Q8_0 with the weight as an unsigned byte (Q8U) ---------------------------------------------
// Relaxed SIMD leaves i32x4.relaxed_dot_i8x16_i7x16_add_s implementation-defined when its second
// operand has the top bit set. Where it is one vpdpbusd (x64 with AVX-VNNI, V8 in Liftoff and
// TurboFan alike: both call the same macro-assembler routine) the second operand is an unsigned
// byte and nothing saturates, so Q8_0 can take the weight as that operand, w + 128 = w ^ 0x80,
// against the signed activation: Σ x·(w + 128) − 128·Σx = Σ x·w exactly, one dot per 16 products
// as Q4_0 (no sign flip per dot as in the Q8_0 loop above). gemm_q8_0 checks, in its own body so
// the check is compiled and lowered as the loop is, that the dot multiplies unsigned bytes without
// saturating (pmaddubsw would, at 2·255·127) or reading them as signed (Arm's sdot); otherwise it
// keeps the Q8_0 loop. The float steps are Q8_0's, so both give the same bits.

/** gemmLoop's kind for Q8_0 with unsigned weights (negative: none of the `kind >= …` branches of the others). */
const Q8U: i32 = -1;
/** Bytes of the check: first operand (signed), second operand (unsigned), the exact i32x4 result. */
const U8_CHECK: usize = memory.data<u8>([
  0x81, 0x81, 0x81, 0x81, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0xff, 0x02, 0xfe, 0x03, 0x04, 0x05, 0x06, // −127 ×4, 127 ×4, 1, −1, 2, −2, 3, 4, 5, 6
  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0x81, 0xc8, 0x07, 0x01, 0x02, 0x03, 0x04, // 255 ×8, 128, 129, 200, 7, 1, 2, 3, 4
  0xfc, 0x05, 0xfe, 0xff, 0x04, 0xfa, 0x01, 0x00, 0x81, 0x01, 0x00, 0x00, 0x32, 0x00, 0x00, 0x00, // −129540, 129540, 385, 50
], 16);
/** Tests turn Q8U off to run the Q8_0 loop on machines where the check passes. */
let q8uAllowed = true;

/** True when the relaxed dot multiplies its second operand as unsigned bytes, exactly (see above). */
// @ts-ignore: decorator
@inline function dotTakesU8(): bool {
  const r = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(U8_CHECK), v128.load(U8_CHECK, 16), Z);
  return i32x4.all_true(i32x4.eq(r, v128.load(U8_CHECK, 32)));
}

/** Whether gemm_q8_0 may take the unsigned-weight loop (1, the default) where the dot allows it; 0 forces the Q8_0 loop. */
export function gemm_q8u_allow(on: i32): void {
  q8uAllowed = on != 0;
}

/** 1 when gemm_q8_0 would take the unsigned-weight loop here. */
export function gemm_q8u_active(): i32 {
  return useQ8U() ? 1 : 0;
}

/** gemm_q8_0's choice: the relaxed build, allowed, and a dot that takes unsigned bytes. */
// @ts-ignore: decorator
@inline function useQ8U(): bool {
  return ASC_FEATURE_RELAXED_SIMD && q8uAllowed && dotTakesU8();
}

// ---- permutations -------------------------------------------------------------------------------

/** Plain: 16 elements → e0 e8 e1 e9 … e7 e15 (widened halves: classes 0-3, 4-7). */
// @ts-ignore: decorator
@inline function perm16(x: v128): v128 {
  return i8x16.swizzle(x, i8x16(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
}

/** Relaxed: elements 0-15 (x0) and 16-31 (x1) → the four elements of classes 0-3 in order. */
// @ts-ignore: decorator
@inline function permA(x0: v128, x1: v128): v128 {
  return i8x16.shuffle(x0, x1, 0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27);
}
/** … and of classes 4-7. */
// @ts-ignore: decorator
@inline function permB(x0: v128, x1: v128): v128 {
  return i8x16.shuffle(x0, x1, 4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31);
}

/**
 * Relaxed: two sub-blocks' permA/permB vectors (a0, b0: sub-block 2k; a1, b1: 2k + 1) stored as
 * four vectors of byte pairs (2k c, 2k+1 c) for c = 0..3 (a0, a1) or 4..7 (b0, b1): the first of
 * each two holds elements (c, c + 8) of the sub-block, the second (c + 16, c + 24).
 */
// @ts-ignore: decorator
@inline function putPairs(p: usize, a0: v128, b0: v128, a1: v128, b1: v128): void {
  v128.store(p, v128.shuffle<i16>(a0, a1, 0, 8, 2, 10, 4, 12, 6, 14));
  v128.store(p, v128.shuffle<i16>(a0, a1, 1, 9, 3, 11, 5, 13, 7, 15), 16);
  v128.store(p, v128.shuffle<i16>(b0, b1, 0, 8, 2, 10, 4, 12, 6, 14), 32);
  v128.store(p, v128.shuffle<i16>(b0, b1, 1, 9, 3, 11, 5, 13, 7, 15), 48);
}

// ---- widening -----------------------------------------------------------------------------------

/** Bytes of the widened copy of n activations of `cols` (kind 0: q8_0 or q8_1, 1: q8_K). */
export function widen_bytes(kind: i32, n: i32, cols: i32): i32 {
  const groups = (n + 3) >> 2;
  return kind == 0 ? groups * (cols >> 5) * WQ8_0_BLOCK : groups * (cols >> 8) * WQ8_K_BLOCK;
}

/** q8_0 and q8_1: d and aux per block beside the widened quants (relaxed q8_0, `corr`: and Σ_{x<0} |x|). */
// @ts-ignore: decorator
@inline function widen32(dst: usize, xq: usize, n: i32, cols: i32, xqStride: usize, corr: bool): void {
  const nb = cols >> 5;
  const dOff = q8Scales(0, cols);
  const aOff = q8Aux(0, cols);
  const groups = (n + 3) >> 2;
  for (let g = 0; g < groups; g++) {
    let gp = dst + <usize>(g * nb) * WQ8_0_BLOCK, bs = <usize>WQ8_0_BLOCK;
    if (ASC_FEATURE_RELAXED_SIMD) {
      // pairs of groups interleaved per block, an unpaired last group alone (layout above)
      gp = dst + <usize>((g & ~1) * nb) * WQ8_0_BLOCK + <usize>(g & 1) * WX_REL;
      bs = (g | 1) < groups ? 2 * WX_REL : WX_REL;
    }
    for (let t = 0; t < 4; t++) {
      const tok = g * 4 + t;
      const xt = xq + <usize>tok * xqStride;
      for (let b = 0; b < nb; b++) {
        const bp = gp + <usize>b * bs;
        const xp = bp + 32 + (<usize>t << 6);
        if (ASC_FEATURE_RELAXED_SIMD) {
          // four bytes of each token per vector: vector v = elements 4v..4v+3 of tokens 0-3
          const live = tok < n;
          store<u32>(bp + (<usize>t << 2), live ? load<u32>(xt + dOff + (<usize>b << 2)) : 0);
          store<u32>(bp + 16 + (<usize>t << 2), live ? load<u32>(xt + aOff + (<usize>b << 2)) : 0);
          for (let v = 0; v < 8; v++) store<u32>(bp + 32 + (<usize>v << 4) + (<usize>t << 2), live ? load<u32>(xt + (<usize>b << 5) + (<usize>v << 2)) : 0);
          if (corr) {
            // Σ_{x<0} |x| = −Σ (x < 0 ? −1 : 0)·|x|
            const x0 = live ? v128.load(xt + (<usize>b << 5)) : Z, x1 = live ? v128.load(xt + (<usize>b << 5), 16) : Z;
            const c = vd(i8x16.lt_s(x1, Z), i8x16.abs(x1), vd(i8x16.lt_s(x0, Z), i8x16.abs(x0), Z));
            store<i32>(bp + WX_CORR + (<usize>t << 2), -(i32x4.extract_lane(c, 0) + i32x4.extract_lane(c, 1) + i32x4.extract_lane(c, 2) + i32x4.extract_lane(c, 3)));
          }
        } else if (tok < n) {
          store<u32>(bp + (<usize>t << 2), load<u32>(xt + dOff + (<usize>b << 2)));
          store<u32>(bp + 16 + (<usize>t << 2), load<u32>(xt + aOff + (<usize>b << 2)));
          const x0 = v128.load(xt + (<usize>b << 5));
          const x1 = v128.load(xt + (<usize>b << 5), 16);
          v128.store(xp, i16x8.extend_low_i8x16_s(x0));
          v128.store(xp, i16x8.extend_high_i8x16_s(x0), 16);
          v128.store(xp, i16x8.extend_low_i8x16_s(x1), 32);
          v128.store(xp, i16x8.extend_high_i8x16_s(x1), 48);
        } else {
          store<u32>(bp + (<usize>t << 2), 0);
          store<u32>(bp + 16 + (<usize>t << 2), 0);
          v128.store(xp, Z);
          v128.store(xp, Z, 16);
          v128.store(xp, Z, 32);
          v128.store(xp, Z, 48);
        }
      }
    }
  }
}

/** dst ← the widened q8_0 copy of n activations at xq, xqStride bytes apart. */
export function widen_q8_0(dst: usize, xq: usize, n: i32, cols: i32, xqStride: usize): void {
  widen32(dst, xq, n, cols, xqStride, true);
}

/** dst ← the widened q8_1 copy of n activations at xq, xqStride bytes apart. */
export function widen_q8_1(dst: usize, xq: usize, n: i32, cols: i32, xqStride: usize): void {
  widen32(dst, xq, n, cols, xqStride, false);
}

/** dst ← the widened q8_K copy of n activations at xq, xqStride bytes apart. */
export function widen_q8_K(dst: usize, xq: usize, n: i32, cols: i32, xqStride: usize): void {
  const nb = cols >> 8;
  const dOff = qKScales(0, cols);
  const sOff = qKBsums(0, cols);
  const groups = (n + 3) >> 2;
  // where the quantised rows lie (the relaxed Q4_K gemm reads them in place: q4k-gemm.ts)
  store<u32>(dst + WIDE_SRC, <u32>xq);
  store<u32>(dst + WIDE_SRC, <u32>xqStride, 4);
  for (let g = 0; g < groups; g++) {
    const gp = dst + <usize>(g * nb) * WQ8_K_BLOCK;
    for (let t = 0; t < 4; t++) {
      const tok = g * 4 + t;
      const xt = xq + <usize>tok * xqStride;
      for (let b = 0; b < nb; b++) {
        const bp = gp + <usize>b * WQ8_K_BLOCK;
        const xp = bp + XK + <usize>t * XK_TOKEN;
        const live = tok < n;
        store<f32>(bp + (<usize>t << 2), live ? load<f32>(xt + dOff + (<usize>b << 2)) : 0);
        for (let j = 0; j < 8; j++) {
          // bsums are per 16 (quantize_row_q8_K): a 32-element sub-block is two of them
          const bs = xt + sOff + (<usize>(b * 16 + 2 * j) << 1);
          store<i16>(bp + 16 + (<usize>(j >> 1) << 4) + (<usize>t << 2) + (<usize>(j & 1) << 1), live ? load<i16>(bs) + load<i16>(bs, 2) : 0);
        }
        const xb = xt + (<usize>b << 8);
        if (ASC_FEATURE_RELAXED_SIMD) {
          for (let k = 0; k < 4; k++) {
            // sub-blocks 2k, 2k + 1
            const p = xb + (<usize>k << 6);
            const x0 = live ? v128.load(p) : Z, x1 = live ? v128.load(p, 16) : Z;
            const y0 = live ? v128.load(p, 32) : Z, y1 = live ? v128.load(p, 48) : Z;
            putPairs(xp + (<usize>k << 6), permA(x0, x1), permB(x0, x1), permA(y0, y1), permB(y0, y1));
            // Q6_K's group order (q6k-gemm.ts): pairs 2k, 2k + 1 as prepX stores them
            v128.store(xp + XS + (<usize>k << 6), unpackLo(x0, x1));
            v128.store(xp + XS + (<usize>k << 6), unpackHi(x0, x1), 16);
            v128.store(xp + XS + (<usize>k << 6), unpackLo(y0, y1), 32);
            v128.store(xp + XS + (<usize>k << 6), unpackHi(y0, y1), 48);
          }
        } else {
          for (let k = 0; k < 16; k++) {
            const x = perm16(live ? v128.load(xb + (<usize>k << 4)) : Z);
            v128.store(xp + (<usize>k << 5), i16x8.extend_low_i8x16_s(x));
            v128.store(xp + (<usize>k << 5), i16x8.extend_high_i8x16_s(x), 16);
          }
        }
      }
    }
  }
}

// ---- helpers ------------------------------------------------------------------------------------

/** Σ (lanes) of 16 i16 weights (lo, hi) times the 16 i16 activations at p, as i32x4. */
// @ts-ignore: decorator
@inline function d16(lo: v128, hi: v128, p: usize): v128 {
  return i32x4.add(i32x4.dot_i16x8_s(lo, v128.load(p)), i32x4.dot_i16x8_s(hi, v128.load(p, 16)));
}

/** 32 weights as four i16x8 (a, b, c, d = elements 0-7, 8-15, 16-23, 24-31) dotted with 32 activations at p. */
// @ts-ignore: decorator
@inline function d32(a: v128, b: v128, c: v128, d: v128, p: usize): v128 {
  return i32x4.add(d16(a, b, p), d16(c, d, p + 32));
}

/** [Σa, Σb, Σc, Σd]: the lane sums of four i32x4, one lane each. */
// @ts-ignore: decorator
@inline function fold4(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = i32x4.add(i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  const cd = i32x4.add(i8x16.shuffle(c, d, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(c, d, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  return i32x4.add(i8x16.shuffle(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), i8x16.shuffle(ab, cd, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
}

/** Write the four lanes of acc (tokens 4g..4g+3, those below n) to out[t·outStride + r]. */
// @ts-ignore: decorator
@inline function put4(out: usize, os: usize, acc: v128, live: i32): void {
  store<f32>(out, f32x4.extract_lane(acc, 0));
  if (live > 1) store<f32>(out + os, f32x4.extract_lane(acc, 1));
  if (live > 2) store<f32>(out + 2 * os, f32x4.extract_lane(acc, 2));
  if (live > 3) store<f32>(out + 3 * os, f32x4.extract_lane(acc, 3));
}

// ---- 32-element formats -------------------------------------------------------------------------
// Prepared block, PREP_32 bytes: q | d f32 | m f32 (Q4_1/Q5_1) | 8 B pad
//   q, plain: [32] i16; relaxed: [32] u8 unsigned codes (Q8_0: [32] i8 weights)
// Plain: each row's blocks in a run (PREP_32 apart); relaxed: the block's GEMM_ROWS rows side by
// side (block b of row r at (b·GEMM_ROWS + r)·PREP_32), so the register tile reaches every row's
// weights at constant offsets from one pointer.

const PREP_32: i32 = 80;
/** Bytes between a prepared row's blocks (PREP32_BS) and between rows (PREP32_RS). */
const PREP32_BS: usize = ASC_FEATURE_RELAXED_SIMD ? GEMM_ROWS * PREP_32 : PREP_32;

/**
 * Prepare one row of a 32-element format (kind 0-4: Q8_0, Q4_0, Q5_0, Q4_1, Q5_1) as i16 quants.
 * Q4_0 with k ≥ 0 (relaxed build): row k of the group of four rows at w (assembly/layout.ts).
 */
// @ts-ignore: decorator
@inline function prep_32(kind: i32, dst: usize, w: usize, nb: i32, k: i32): void {
  const bm = i8x16(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  const bsz: usize = kind == 0 || kind == Q8U ? 34 : kind == 1 ? (k >= 0 ? Q4G_BLOCK : 18) : kind == 2 ? 22 : kind == 3 ? 20 : 24;
  for (let b = 0; b < nb; b++) {
    const pb = dst + <usize>b * PREP32_BS;
    const wb = w + <usize>b * bsz;
    let w0: v128, w1: v128;
    if (kind == 0) {
      w0 = v128.load(wb, 2);
      w1 = v128.load(wb, 18);
    } else if (kind == Q8U) {
      // w + 128 as an unsigned byte
      w0 = v128.xor(v128.load(wb, 2), i8x16.splat(-128));
      w1 = v128.xor(v128.load(wb, 18), i8x16.splat(-128));
    } else if (kind == 1 || kind == 3) {
      // Q4_0: x = d·(q − 8); Q4_1: x = d·q + m. Low nibbles are elements 0-15, high 16-31
      const q = kind == 1 && k >= 0 ? q4gQs(wb, <usize>k) : v128.load(wb + (kind == 1 ? 2 : 4));
      w0 = lo4(q);
      w1 = hi4(q);
      if (kind == 1 && !ASC_FEATURE_RELAXED_SIMD) {
        w0 = i8x16.sub(w0, i8x16.splat(8));
        w1 = i8x16.sub(w1, i8x16.splat(8));
      }
    } else {
      // Q5_0: x = d·(q − 16); Q5_1: x = d·q + m; the 5th bit of element j is bit j of qh
      const qo: usize = kind == 2 ? 2 : 4;
      const qhv = i32x4.splat(load<u32>(wb + qo));
      const q = v128.load(wb + qo + 4);
      const hl = v128.and(i8x16.eq(v128.and(i8x16.swizzle(qhv, i8x16(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1)), bm), bm), i8x16.splat(16));
      const hh = v128.and(i8x16.eq(v128.and(i8x16.swizzle(qhv, i8x16(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3)), bm), bm), i8x16.splat(16));
      w0 = v128.or(lo4(q), hl);
      w1 = v128.or(hi4(q), hh);
      if (kind == 2 && !ASC_FEATURE_RELAXED_SIMD) {
        w0 = i8x16.sub(w0, i8x16.splat(16));
        w1 = i8x16.sub(w1, i8x16.splat(16));
      }
    }
    if (ASC_FEATURE_RELAXED_SIMD) {
      // unsigned codes (Q4_0, Q5_0 without their offset, Q8U's w + 128); Q8_0: the signed weights
      v128.store(pb, w0);
      v128.store(pb, w1, 16);
    } else {
      v128.store(pb, i16x8.extend_low_i8x16_s(w0));
      v128.store(pb, i16x8.extend_high_i8x16_s(w0), 16);
      v128.store(pb, i16x8.extend_low_i8x16_s(w1), 32);
      v128.store(pb, i16x8.extend_high_i8x16_s(w1), 48);
    }
    store<f32>(pb, f16(load<u16>(kind == 1 && k >= 0 ? wb + (<usize>k << 1) : wb)), 64);
    store<f32>(pb, kind >= 3 ? f16(load<u16>(wb, 2)) : 0, 68);
  }
}

/**
 * Relaxed Q4_0 in groups of four rows (assembly/layout.ts): prepare the four rows of the group at w
 * at once, as prep_32 does row by row: each group block's four u32 vectors (vector j: u32 j of
 * rows 0-3) transposed into the rows' 16 quant bytes.
 */
// @ts-ignore: decorator
@inline function prep_q4g(dst: usize, w: usize, nb: i32): void {
  for (let b = 0; b < nb; b++) {
    const a = w + <usize>b * Q4G_BLOCK, pb = dst + <usize>b * PREP32_BS;
    const v0 = v128.load(a, 8), v1 = v128.load(a, 24), v2 = v128.load(a, 40), v3 = v128.load(a, 56);
    const l01 = i32x4.shuffle(v0, v1, 0, 4, 1, 5), l23 = i32x4.shuffle(v2, v3, 0, 4, 1, 5);
    const h01 = i32x4.shuffle(v0, v1, 2, 6, 3, 7), h23 = i32x4.shuffle(v2, v3, 2, 6, 3, 7);
    putQ4(pb, i64x2.shuffle(l01, l23, 0, 2), load<u16>(a));
    putQ4(pb + PREP_32, i64x2.shuffle(l01, l23, 1, 3), load<u16>(a, 2));
    putQ4(pb + 2 * PREP_32, i64x2.shuffle(h01, h23, 0, 2), load<u16>(a, 4));
    putQ4(pb + 3 * PREP_32, i64x2.shuffle(h01, h23, 1, 3), load<u16>(a, 6));
  }
}

/** A relaxed prepared Q4_0 block at pb: codes (low nibbles: elements 0-15, high: 16-31), d. */
// @ts-ignore: decorator
@inline function putQ4(pb: usize, q: v128, d: u16): void {
  v128.store(pb, lo4(q));
  v128.store(pb, hi4(q), 16);
  store<f32>(pb, f16(d), 64);
  store<f32>(pb, 0, 68);
}

/**
 * Relaxed, token-lane: Σ over v = 0, 2, 4, 6 of the four weights at w + 4v (broadcast) dotted with
 * vector v at x + 32 + 16v (elements 4v..4v+3 of tokens 0-3, one per lane); w + 4, x + 16: odd v.
 */
// @ts-ignore: decorator
@inline function dot32(w: usize, x: usize): v128 {
  let s = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(x, 32), v128.load32_splat(w), Z);
  s = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(x, 64), v128.load32_splat(w, 8), s);
  s = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(x, 96), v128.load32_splat(w, 16), s);
  return i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(x, 128), v128.load32_splat(w, 24), s);
}

/** Relaxed Q8_0: acc + the weight bytes c (broadcast) against the activation vector x, one lane per token: (c ^ m)·|x|. */
// @ts-ignore: decorator
@inline function vdQ8(c: v128, ax: v128, mx: v128, acc: v128): v128 {
  return i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.xor(c, mx), ax, acc);
}

/** The four tokens' integer sums of one prepared block at pb against the widened block at xb (relaxed: not Q8_0). */
// @ts-ignore: decorator
@inline function isum32(kind: i32, pb: usize, xb: usize): v128 {
  let isum: v128;
  if (ASC_FEATURE_RELAXED_SIMD) {
    // one lane per token: each dot takes four weights (broadcast) against four bytes of each token
    // (Q8_0 has its own loop in rows_prep32)
    isum = i32x4.add(dot32(pb, xb), dot32(pb + 4, xb + 16));
    if (kind < 3) isum = i32x4.add(isum, isum0(kind, xb)); // the weights' offset (Q4_0, Q5_0, Q8U)
  } else {
    const a = v128.load(pb), bb = v128.load(pb, 16), c = v128.load(pb, 32), d = v128.load(pb, 48);
    isum = fold4(d32(a, bb, c, d, xb + 32), d32(a, bb, c, d, xb + 96), d32(a, bb, c, d, xb + 160), d32(a, bb, c, d, xb + 224));
  }
  return isum;
}

/** acc + the reference's float step (legacy.ts vecDot*) for one block, one lane per token. */
// @ts-ignore: decorator
@inline function step32(kind: i32, acc: v128, isum: v128, pb: usize, xb: usize): v128 {
  const fsum = f32x4.convert_i32x4_s(isum);
  const dw = v128.load32_splat(pb, 64);
  const dx = v128.load(xb);
  // Q4_0: sumf += (sumi·d_w)·d_x
  if (kind == 1) return f32x4.add(acc, f32x4.mul(f32x4.mul(fsum, dw), dx));
  // Q4_1 / Q5_1: sumf += (d_w·d_x)·sumi + m_w·s_x
  if (kind >= 3) return f32x4.add(acc, f32x4.add(f32x4.mul(f32x4.mul(dw, dx), fsum), f32x4.mul(v128.load32_splat(pb, 68), v128.load(xb, 16))));
  // Q8_0 / Q5_0: sumf += sumi·(d_w·d_x)
  return f32x4.add(acc, f32x4.mul(fsum, f32x4.mul(dw, dx)));
}

/**
 * `rows` (1-4) prepared 32-element-format rows, ps bytes apart from p, against one group of four
 * tokens, written to out, out + 4, …: several rows per pass give the out-of-order core independent
 * dependency chains (relaxed build).
 */
// @ts-ignore: decorator
@inline function rows_prep32(kind: i32, p: usize, ps: usize, rows: i32, xg: usize, nb: i32, out: usize, os: usize, live: i32): void {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let pb = p, xb = xg;
  for (let b = 0; b < nb; b++, pb += PREP32_BS, xb += WX_BS) {
    if (ASC_FEATURE_RELAXED_SIMD && kind == 0) {
      // |x| and x < 0 made once per activation vector for all the rows
      let s0 = v128.load(xb, WX_CORR), s1 = s0, s2 = s0, s3 = s0;
      for (let v = 0; v < 8; v++) {
        const x = v128.load(xb + (<usize>v << 4), 32), q = pb + (<usize>v << 2);
        const a = i8x16.abs(x), m = i8x16.lt_s(x, Z);
        s0 = vdQ8(v128.load32_splat(q), a, m, s0);
        if (rows > 1) s1 = vdQ8(v128.load32_splat(q + ps), a, m, s1);
        if (rows > 2) s2 = vdQ8(v128.load32_splat(q + 2 * ps), a, m, s2);
        if (rows > 3) s3 = vdQ8(v128.load32_splat(q + 3 * ps), a, m, s3);
      }
      a0 = step32(kind, a0, s0, pb, xb);
      if (rows > 1) a1 = step32(kind, a1, s1, pb + ps, xb);
      if (rows > 2) a2 = step32(kind, a2, s2, pb + 2 * ps, xb);
      if (rows > 3) a3 = step32(kind, a3, s3, pb + 3 * ps, xb);
      continue;
    }
    a0 = step32(kind, a0, isum32(kind, pb, xb), pb, xb);
    if (rows > 1) a1 = step32(kind, a1, isum32(kind, pb + ps, xb), pb + ps, xb);
    if (rows > 2) a2 = step32(kind, a2, isum32(kind, pb + 2 * ps, xb), pb + 2 * ps, xb);
    if (rows > 3) a3 = step32(kind, a3, isum32(kind, pb + 3 * ps, xb), pb + 3 * ps, xb);
  }
  put4(out, os, a0, live);
  if (rows > 1) put4(out + 4, os, a1, live);
  if (rows > 2) put4(out + 8, os, a2, live);
  if (rows > 3) put4(out + 12, os, a3, live);
}

/** Relaxed: where a block's integer sums start, the weights' offset: Q4_0 −8·Σx, Q5_0 −16·Σx, Q8U −128·Σx, Q8_0 Σ_{x<0} |x|; else 0. */
// @ts-ignore: decorator
@inline function isum0(kind: i32, xb: usize): v128 {
  if (kind == 0) return v128.load(xb, WX_CORR);
  if (kind == 1) return i32x4.sub(Z, i32x4.shl(v128.load(xb, 16), 3));
  if (kind == 2) return i32x4.sub(Z, i32x4.shl(v128.load(xb, 16), 4));
  if (kind == Q8U) return i32x4.sub(Z, i32x4.shl(v128.load(xb, 16), 7));
  return Z;
}

/** step32 with the block's scales at hand: dw, mw the row's d and m (splat), dx, sx the group's d and s. */
// @ts-ignore: decorator
@inline function stepTile(kind: i32, acc: v128, isum: v128, dw: v128, mw: v128, dx: v128, sx: v128): v128 {
  const fsum = f32x4.convert_i32x4_s(isum);
  if (kind == 1) return f32x4.add(acc, f32x4.mul(f32x4.mul(fsum, dw), dx));
  if (kind >= 3) return f32x4.add(acc, f32x4.add(f32x4.mul(f32x4.mul(dw, dx), fsum), f32x4.mul(mw, sx)));
  return f32x4.add(acc, f32x4.mul(fsum, f32x4.mul(dw, dx)));
}

/** stepTile into acc (kind ≠ 0), or (Q8_0) into the f32x4 at fp in memory. */
// @ts-ignore: decorator
@inline function stepAcc(kind: i32, fp: usize, acc: v128, isum: v128, dw: v128, mw: v128, dx: v128, sx: v128): v128 {
  if (kind != 0) return stepTile(kind, acc, isum, dw, mw, dx, sx);
  v128.store(fp, stepTile(kind, v128.load(fp), isum, dw, mw, dx, sx));
  return acc;
}

/**
 * Relaxed, the register tile of the 32-element formats: `rows` prepared rows (1-4), ps bytes apart
 * from p, against two groups of four tokens widened at xg and xg + gs, written to out + 4r (tokens
 * 4g..4g+3) and out + 4·os + 4r (the next four; live0, live1 of them below n). Each broadcast
 * weight feeds two dots and each activation vector `rows` (Q8_0: |x| and x < 0, made once per
 * vector); the integer sums start from isum0, so per block, row and group only the float step is
 * left. Q8_0 keeps its float sums in memory (V8 otherwise spills integer sums inside the v loop).
 */
// @ts-ignore: decorator
@inline function tile_prep32(kind: i32, p: usize, rows: i32, xg: usize, nb: i32, out: usize, os: usize, live0: i32, live1: i32): void {
  const ps: usize = PREP_32;
  const has1 = rows > 1, has2 = rows > 2, has3 = rows > 3;
  let f00 = Z, f01 = Z, f10 = Z, f11 = Z, f20 = Z, f21 = Z, f30 = Z, f31 = Z;
  // Q8_0: the float sums of row r, groups 0 and 1 in the free bytes 32-63 of row r's first
  // prepared block (its weights take 32), so the integer sums, |x| and x < 0 keep the registers
  const fm = p + 32;
  if (kind == 0) for (let r = 0; r < rows; r++) { v128.store(fm + <usize>r * ps, Z); v128.store(fm + <usize>r * ps, Z, 16); }
  let pb = p, xb = xg;
  for (let b = 0; b < nb; b++, pb += PREP32_BS, xb += 2 * WX_REL) {
    const yb = xb + WX_REL;
    const i0 = isum0(kind, xb), i1 = isum0(kind, yb);
    // s<r><g>: row r, group g
    let s00 = i0, s01 = i1, s10 = i0, s11 = i1, s20 = i0, s21 = i1, s30 = i0, s31 = i1;
    // per v = 0..7, elements 4v..4v+3 of both groups' tokens (x, y) against the four weights of
    // each row at 4v, broadcast (c)
    // constant offsets from q and xv (V8 folds them into the loads' addresses), q the loop counter
    let xv = xb;
    for (let q = pb, qe = pb + 32; q < qe; q += 4, xv += 16) {
      const x = v128.load(xv, 32), y = v128.load(xv, WX_REL + 32);
      let c = v128.load32_splat(q);
      if (kind == 0) {
        // one group at a time: |x| and x < 0 of one group live with the four broadcast weights
        let a = i8x16.abs(x), m = i8x16.lt_s(x, Z);
        s00 = vdQ8(c, a, m, s00);
        if (has1) s10 = vdQ8(v128.load32_splat(q, PREP_32), a, m, s10);
        if (has2) s20 = vdQ8(v128.load32_splat(q, 2 * PREP_32), a, m, s20);
        if (has3) s30 = vdQ8(v128.load32_splat(q, 3 * PREP_32), a, m, s30);
        a = i8x16.abs(y);
        m = i8x16.lt_s(y, Z);
        s01 = vdQ8(c, a, m, s01);
        if (has1) s11 = vdQ8(v128.load32_splat(q, PREP_32), a, m, s11);
        if (has2) s21 = vdQ8(v128.load32_splat(q, 2 * PREP_32), a, m, s21);
        if (has3) s31 = vdQ8(v128.load32_splat(q, 3 * PREP_32), a, m, s31);
      } else {
        s00 = vd(x, c, s00);
        s01 = vd(y, c, s01);
        if (has1) { c = v128.load32_splat(q, PREP_32); s10 = vd(x, c, s10); s11 = vd(y, c, s11); }
        if (has2) { c = v128.load32_splat(q, 2 * PREP_32); s20 = vd(x, c, s20); s21 = vd(y, c, s21); }
        if (has3) { c = v128.load32_splat(q, 3 * PREP_32); s30 = vd(x, c, s30); s31 = vd(y, c, s31); }
      }
    }
    const dx = v128.load(xb), dy = v128.load(yb);
    const sx = kind >= 3 ? v128.load(xb, 16) : Z, sy = kind >= 3 ? v128.load(yb, 16) : Z;
    let dw = v128.load32_splat(pb, 64), mw = kind >= 3 ? v128.load32_splat(pb, 68) : Z;
    f00 = stepAcc(kind, fm, f00, s00, dw, mw, dx, sx);
    f01 = stepAcc(kind, fm + 16, f01, s01, dw, mw, dy, sy);
    if (rows > 1) {
      dw = v128.load32_splat(pb + ps, 64);
      mw = kind >= 3 ? v128.load32_splat(pb + ps, 68) : Z;
      f10 = stepAcc(kind, fm + ps, f10, s10, dw, mw, dx, sx);
      f11 = stepAcc(kind, fm + ps + 16, f11, s11, dw, mw, dy, sy);
    }
    if (rows > 2) {
      dw = v128.load32_splat(pb + 2 * ps, 64);
      mw = kind >= 3 ? v128.load32_splat(pb + 2 * ps, 68) : Z;
      f20 = stepAcc(kind, fm + 2 * ps, f20, s20, dw, mw, dx, sx);
      f21 = stepAcc(kind, fm + 2 * ps + 16, f21, s21, dw, mw, dy, sy);
    }
    if (rows > 3) {
      dw = v128.load32_splat(pb + 3 * ps, 64);
      mw = kind >= 3 ? v128.load32_splat(pb + 3 * ps, 68) : Z;
      f30 = stepAcc(kind, fm + 3 * ps, f30, s30, dw, mw, dx, sx);
      f31 = stepAcc(kind, fm + 3 * ps + 16, f31, s31, dw, mw, dy, sy);
    }
  }
  if (kind == 0) {
    f00 = v128.load(fm); f01 = v128.load(fm, 16);
    f10 = v128.load(fm + ps); f11 = v128.load(fm + ps, 16);
    f20 = v128.load(fm + 2 * ps); f21 = v128.load(fm + 2 * ps, 16);
    f30 = v128.load(fm + 3 * ps); f31 = v128.load(fm + 3 * ps, 16);
  }
  const out1 = out + (os << 2);
  put4(out, os, f00, live0);
  put4(out1, os, f01, live1);
  if (rows > 1) { put4(out + 4, os, f10, live0); put4(out1 + 4, os, f11, live1); }
  if (rows > 2) { put4(out + 8, os, f20, live0); put4(out1 + 8, os, f21, live1); }
  if (rows > 3) { put4(out + 12, os, f30, live0); put4(out1 + 12, os, f31, live1); }
}

// ---- K-quants -----------------------------------------------------------------------------------
// Prepared block, PREP_K bytes:
//   plain:   w[256] i16 (q·sc, perm16 order)                          | d f32 | dmin f32 | 8 B | m[4] i16x8
//   relaxed Q5_K: per pair k of sub-blocks (80 B): codes as putPairs,
//     64 B | (sc_2k, sc_2k+1) ×4 i16 | 192 B | d f32 | dmin f32 | 8 B | m[4] i16x8
//   (the relaxed build's Q4_K and Q6_K are not prepared: q4k-gemm.ts, q6k-gemm.ts)
// m[k]: (m_2k, m_2k+1) repeated, the minimums of sub-blocks 2k and 2k + 1 as i16 pairs.

const PREP_K: i32 = 592;
/** Bytes per sub-block in a prepared K-quant block (plain: 32 i16). */
const SUB: usize = 64;
/** Relaxed Q4_K/Q5_K: bytes per pair of sub-blocks (four code vectors, the two scales). */
const PAIR_Q45: usize = 80;
/** Plain: store 32 elements of sub-block j with scale(s) sc (i16x8): x0/x1 = elements 0-15 / 16-31 as bytes. */
// @ts-ignore: decorator
@inline function putSub(pb: usize, j: i32, x0: v128, x1: v128, sc0: v128, sc1: v128, signed: bool): void {
  const p = pb + (<usize>j << 6);
  const y0 = perm16(x0), y1 = perm16(x1);
  if (signed) {
    v128.store(p, i16x8.mul(i16x8.extend_low_i8x16_s(y0), sc0));
    v128.store(p, i16x8.mul(i16x8.extend_high_i8x16_s(y0), sc0), 16);
    v128.store(p, i16x8.mul(i16x8.extend_low_i8x16_s(y1), sc1), 32);
    v128.store(p, i16x8.mul(i16x8.extend_high_i8x16_s(y1), sc1), 48);
  } else {
    v128.store(p, i16x8.mul(i16x8.extend_low_i8x16_u(y0), sc0));
    v128.store(p, i16x8.mul(i16x8.extend_high_i8x16_u(y0), sc0), 16);
    v128.store(p, i16x8.mul(i16x8.extend_low_i8x16_u(y1), sc1), 32);
    v128.store(p, i16x8.mul(i16x8.extend_high_i8x16_u(y1), sc1), 48);
  }
}

/** Prepare one Q4_K (five = false) or Q5_K row: sub-block j = elements 32j..32j+31. */
// @ts-ignore: decorator
@inline function prep_q45_K(dst: usize, w: usize, nb: i32, five: bool): void {
  const bsz: usize = five ? 176 : 144;
  const qs: usize = five ? 48 : 16;
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * bsz;
    const pb = dst + <usize>b * PREP_K;
    // get_scale_min_k4 (ggml-quants.c): six-bit scales sc[0..7] and mins m[0..7]
    const u0 = load<u32>(wb, 4), u1 = load<u32>(wb, 8), u2 = load<u32>(wb, 12);
    const sLo = u0 & 0x3f3f3f3f;
    const sHi = (u2 & 0x0f0f0f0f) | (((u0 >> 6) & 0x03030303) << 4);
    const mLo = u1 & 0x3f3f3f3f;
    const mHi = ((u2 >> 4) & 0x0f0f0f0f) | (((u1 >> 6) & 0x03030303) << 4);
    const h0 = five ? v128.load(wb, 16) : Z;
    const h1 = five ? v128.load(wb, 32) : Z;
    for (let c = 0; c < 4; c++) {
      // chunk c: 32 bytes; low nibbles are sub-block 2c, high nibbles sub-block 2c+1
      const q0 = v128.load(wb + qs + (<usize>c << 5));
      const q1 = v128.load(wb + qs + (<usize>c << 5), 16);
      const scs = c < 2 ? sLo : sHi;
      const sh = (c & 1) << 4;
      const scA = i16x8.splat(<i16>((scs >> sh) & 0xff));
      const scB = i16x8.splat(<i16>((scs >> (sh + 8)) & 0xff));
      let l0 = lo4(q0), l1 = lo4(q1), g0 = hi4(q0), g1 = hi4(q1);
      if (five) {
        // Q5_K: bit 2c of qh[l] is the fifth bit of element 64c + l, bit 2c+1 that of 64c + 32 + l
        l0 = v128.or(l0, i16x8.shl(bits(h0, 2 * c, 1), 4));
        l1 = v128.or(l1, i16x8.shl(bits(h1, 2 * c, 1), 4));
        g0 = v128.or(g0, i16x8.shl(bits(h0, 2 * c + 1, 1), 4));
        g1 = v128.or(g1, i16x8.shl(bits(h1, 2 * c + 1, 1), 4));
      }
      if (ASC_FEATURE_RELAXED_SIMD) {
        // pair c: sub-blocks 2c, 2c + 1 as unsigned codes, then their scales as i16 pairs
        // putPairs(p, permA(l0, l1), permB(l0, l1), permA(g0, g1), permB(g0, g1)) in half the
        // shuffles: elements e of sub-blocks 2c and 2c + 1 are the two nibbles of byte e, so each
        // stored vector is one permA/permB of a byte vector's low and high nibbles
        const p = pb + <usize>c * PAIR_Q45;
        v128.store(p, permA(l0, g0));
        v128.store(p, permA(l1, g1), 16);
        v128.store(p, permB(l0, g0), 32);
        v128.store(p, permB(l1, g1), 48);
        v128.store(p, v128.shuffle<i16>(scA, scB, 0, 8, 0, 8, 0, 8, 0, 8), 64);
      } else {
        putSub(pb, 2 * c, l0, l1, scA, scA, false);
        putSub(pb, 2 * c + 1, g0, g1, scB, scB, false);
      }
    }
    store<f32>(pb, f16(load<u16>(wb)), 512);
    store<f32>(pb, f16(load<u16>(wb, 2)), 516);
    const m = i16x8.extend_low_i8x16_u(i32x4(mLo, mHi, 0, 0));
    v128.store(pb, v128.shuffle<i32>(m, m, 0, 0, 0, 0), 528);
    v128.store(pb, v128.shuffle<i32>(m, m, 1, 1, 1, 1), 544);
    v128.store(pb, v128.shuffle<i32>(m, m, 2, 2, 2, 2), 560);
    v128.store(pb, v128.shuffle<i32>(m, m, 3, 3, 3, 3), 576);
  }
}



/** Prepare one Q6_K row (dequantize_row_q6_K's element order, scale per 16). */
// @ts-ignore: decorator
@inline function prep_q6_K(dst: usize, w: usize, nb: i32): void {
  // signed codes q − 32 with the scale multiplied in (the plain build's; the relaxed one takes q6k-gemm.ts)
  const off = i8x16.splat(32);
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 210;
    const pb = dst + <usize>b * PREP_K;
    for (let n = 0; n < 2; n++) {
      const ql = wb + (<usize>n << 6);
      const qh = wb + 128 + (<usize>n << 5);
      const sc = wb + 192 + (<usize>n << 3);
      const qa0 = v128.load(ql), qa1 = v128.load(ql, 16);
      const qc0 = v128.load(ql, 32), qc1 = v128.load(ql, 48);
      const h0 = v128.load(qh), h1 = v128.load(qh, 16);
      // sub-block 4n + k = elements n·128 + 32k + (0..31): nibbles of qa (k = 0, 2) or qc
      // (k = 1, 3), high bits from h at 2k; groups 8n + 2k, 8n + 2k + 1
      for (let k = 0; k < 4; k++) {
        let n0: v128, n1: v128;
        if (k == 0) { n0 = lo4(qa0); n1 = lo4(qa1); }
        else if (k == 1) { n0 = lo4(qc0); n1 = lo4(qc1); }
        else if (k == 2) { n0 = hi4(qa0); n1 = hi4(qa1); }
        else { n0 = hi4(qc0); n1 = hi4(qc1); }
        const x0 = i8x16.sub(v128.or(n0, i16x8.shl(bits(h0, 2 * k, 3), 4)), off);
        const x1 = i8x16.sub(v128.or(n1, i16x8.shl(bits(h1, 2 * k, 3), 4)), off);
        const s0 = i16x8.splat(<i16>load<i8>(sc + 2 * k));
        const s1 = i16x8.splat(<i16>load<i8>(sc + 2 * k + 1));
        putSub(pb, 4 * n + k, x0, x1, s0, s1, true);
      }
    }
    store<f32>(pb, f16(load<u16>(wb, 208)), 512);
    store<f32>(pb, 0, 516);
  }
}


/** Plain: classes 0-3 (wa, wb = the i16 weights of elements 0-15, 16-31; xa, xb the activations') or 4-7 of one sub-block and one token. */
// @ts-ignore: decorator
@inline function pd(wa: v128, wb: v128, xa: v128, xb: v128): v128 {
  return i32x4.add(i32x4.dot_i16x8_s(wa, xa), i32x4.dot_i16x8_s(wb, xb));
}

/** Relaxed: acc + Σ x·w per lane of four bytes (one vpdpbusd with AVX-VNNI); w in [0, 127]. */
// @ts-ignore: decorator
@inline function vd(x: v128, w: v128, acc: v128): v128 {
  return i32x4.relaxed_dot_i8x16_i7x16_add_s(x, w, acc);
}


/**
 * Relaxed Q4_K/Q5_K: one token's pair of sub-blocks for four classes. The i16 dots x1·w1 and x2·w2
 * (pmaddubsw: two products per lane, |lane| ≤ 2·31·128, exact) give two products each of the
 * lanes (2k c, 2k+1 c) for four classes c; added, every lane holds its four (≤ 15872, exact), lined
 * up with the scales (sc_2k, sc_2k+1), so one i16 dot scales and adds the two sub-blocks of each
 * class. No accumulator to zero and no narrowing: two fewer ops than two i8 dots and a narrow.
 */
// @ts-ignore: decorator
@inline function vpair(x1: v128, x2: v128, w1: v128, w2: v128, sc: v128): v128 {
  return i32x4.dot_i16x8_s(i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(x1, w1), i16x8.relaxed_dot_i8x16_i7x16_s(x2, w2)), sc);
}

/** sums + f32(isum)·d lane-wise (addLanes: one class per lane). */
// @ts-ignore: decorator
@inline function addLanes(sums: v128, isum: v128, d: v128): v128 {
  return f32x4.add(sums, f32x4.mul(f32x4.convert_i32x4_s(isum), d));
}

/**
 * sumf + the eight lane sums in lane order (laneTotal), four tokens at once: l0..l3 are tokens
 * 0..3's lanes 0-3, h0..h3 their lanes 4-7; transposed so each add takes one lane of every token.
 */
// @ts-ignore: decorator
@inline function laneTotal4(sumf: v128, l0: v128, l1: v128, l2: v128, l3: v128, h0: v128, h1: v128, h2: v128, h3: v128): v128 {
  let t0 = v128.shuffle<i32>(l0, l1, 0, 4, 1, 5), t1 = v128.shuffle<i32>(l2, l3, 0, 4, 1, 5);
  let t2 = v128.shuffle<i32>(l0, l1, 2, 6, 3, 7), t3 = v128.shuffle<i32>(l2, l3, 2, 6, 3, 7);
  let s = f32x4.add(sumf, v128.shuffle<i32>(t0, t1, 0, 1, 4, 5));
  s = f32x4.add(s, v128.shuffle<i32>(t0, t1, 2, 3, 6, 7));
  s = f32x4.add(s, v128.shuffle<i32>(t2, t3, 0, 1, 4, 5));
  s = f32x4.add(s, v128.shuffle<i32>(t2, t3, 2, 3, 6, 7));
  t0 = v128.shuffle<i32>(h0, h1, 0, 4, 1, 5);
  t1 = v128.shuffle<i32>(h2, h3, 0, 4, 1, 5);
  t2 = v128.shuffle<i32>(h0, h1, 2, 6, 3, 7);
  t3 = v128.shuffle<i32>(h2, h3, 2, 6, 3, 7);
  s = f32x4.add(s, v128.shuffle<i32>(t0, t1, 0, 1, 4, 5));
  s = f32x4.add(s, v128.shuffle<i32>(t0, t1, 2, 3, 6, 7));
  s = f32x4.add(s, v128.shuffle<i32>(t2, t3, 0, 1, 4, 5));
  return f32x4.add(s, v128.shuffle<i32>(t2, t3, 2, 3, 6, 7));
}

/** Lane i of v in every lane. */
// @ts-ignore: decorator
@inline function lane(v: v128, i: i32): v128 {
  return i == 0 ? v128.shuffle<i32>(v, v, 0, 0, 0, 0) : i == 1 ? v128.shuffle<i32>(v, v, 1, 1, 1, 1) : i == 2 ? v128.shuffle<i32>(v, v, 2, 2, 2, 2) : v128.shuffle<i32>(v, v, 3, 3, 3, 3);
}

/** Relaxed Q4_K/Q5_K: Σ_j m_j·sum32_j of the prepared block at pb against the widened block at xb, one lane per token. */
// @ts-ignore: decorator
@inline function minSums(pb: usize, xb: usize): v128 {
  const ms = i32x4.add(i32x4.dot_i16x8_s(v128.load(xb, 16), v128.load(pb, 528)), i32x4.dot_i16x8_s(v128.load(xb, 32), v128.load(pb, 544)));
  return i32x4.add(ms, i32x4.add(i32x4.dot_i16x8_s(v128.load(xb, 48), v128.load(pb, 560)), i32x4.dot_i16x8_s(v128.load(xb, 64), v128.load(pb, 576))));
}

/**
 * Relaxed Q4_K/Q5_K, the register tile: one prepared row against two groups of four tokens (widened
 * at xg and xg + gs), written to out + t·os (tokens 4g..4g+3) and out + (4 + t)·os (live1 of the
 * next four). Each pair of sub-blocks' weights and scales are loaded once for eight tokens (row_prepK:
 * four); per token the float steps are row_prepK's, in its order.
 */
// @ts-ignore: decorator
@inline function row_q45K2(p: usize, xg: usize, gs: usize, nb: i32, out: usize, os: usize, live1: i32): void {
  let f0l = Z, f1l = Z, f2l = Z, f3l = Z, f4l = Z, f5l = Z, f6l = Z, f7l = Z;
  let f0h = Z, f1h = Z, f2h = Z, f3h = Z, f4h = Z, f5h = Z, f6h = Z, f7h = Z;
  let sumf = Z, sumg = Z;
  let a0: v128, a1: v128, a2: v128, a3: v128, a4: v128, a5: v128, a6: v128, a7: v128;
  for (let b = 0; b < nb; b++) {
    const pb = p + <usize>b * PREP_K;
    const xb = xg + <usize>b * WQ8_K_BLOCK;
    const dw = v128.load32_splat(pb, 512), dx = v128.load(xb), dy = v128.load(xb + gs);
    const d = f32x4.mul(dw, dx), e = f32x4.mul(dw, dy);
    // classes 0-3 (a0-a3: group 0's tokens, a4-a7: group 1's), then 4-7
    a0 = Z; a1 = Z; a2 = Z; a3 = Z; a4 = Z; a5 = Z; a6 = Z; a7 = Z;
    for (let k = 0, pw = pb, px = xb + XK; k < 4; k++, pw += PAIR_Q45, px += 64) {
      const w1 = v128.load(pw, 0), w2 = v128.load(pw, 16), sc = v128.load(pw, 64);
      a0 = i32x4.add(a0, vpair(v128.load(px, 0), v128.load(px, 16), w1, w2, sc));
      a4 = i32x4.add(a4, vpair(v128.load(px + gs, 0), v128.load(px + gs, 16), w1, w2, sc));
      a1 = i32x4.add(a1, vpair(v128.load(px, XK_TOKEN + 0), v128.load(px, XK_TOKEN + 16), w1, w2, sc));
      a5 = i32x4.add(a5, vpair(v128.load(px + gs, XK_TOKEN + 0), v128.load(px + gs, XK_TOKEN + 16), w1, w2, sc));
      a2 = i32x4.add(a2, vpair(v128.load(px, 2 * XK_TOKEN + 0), v128.load(px, 2 * XK_TOKEN + 16), w1, w2, sc));
      a6 = i32x4.add(a6, vpair(v128.load(px + gs, 2 * XK_TOKEN + 0), v128.load(px + gs, 2 * XK_TOKEN + 16), w1, w2, sc));
      a3 = i32x4.add(a3, vpair(v128.load(px, 3 * XK_TOKEN + 0), v128.load(px, 3 * XK_TOKEN + 16), w1, w2, sc));
      a7 = i32x4.add(a7, vpair(v128.load(px + gs, 3 * XK_TOKEN + 0), v128.load(px + gs, 3 * XK_TOKEN + 16), w1, w2, sc));
    }
    f0l = addLanes(f0l, a0, lane(d, 0));
    f1l = addLanes(f1l, a1, lane(d, 1));
    f2l = addLanes(f2l, a2, lane(d, 2));
    f3l = addLanes(f3l, a3, lane(d, 3));
    f4l = addLanes(f4l, a4, lane(e, 0));
    f5l = addLanes(f5l, a5, lane(e, 1));
    f6l = addLanes(f6l, a6, lane(e, 2));
    f7l = addLanes(f7l, a7, lane(e, 3));
    a0 = Z; a1 = Z; a2 = Z; a3 = Z; a4 = Z; a5 = Z; a6 = Z; a7 = Z;
    for (let k = 0, pw = pb, px = xb + XK; k < 4; k++, pw += PAIR_Q45, px += 64) {
      const w1 = v128.load(pw, 32), w2 = v128.load(pw, 48), sc = v128.load(pw, 64);
      a0 = i32x4.add(a0, vpair(v128.load(px, 32), v128.load(px, 48), w1, w2, sc));
      a4 = i32x4.add(a4, vpair(v128.load(px + gs, 32), v128.load(px + gs, 48), w1, w2, sc));
      a1 = i32x4.add(a1, vpair(v128.load(px, XK_TOKEN + 32), v128.load(px, XK_TOKEN + 48), w1, w2, sc));
      a5 = i32x4.add(a5, vpair(v128.load(px + gs, XK_TOKEN + 32), v128.load(px + gs, XK_TOKEN + 48), w1, w2, sc));
      a2 = i32x4.add(a2, vpair(v128.load(px, 2 * XK_TOKEN + 32), v128.load(px, 2 * XK_TOKEN + 48), w1, w2, sc));
      a6 = i32x4.add(a6, vpair(v128.load(px + gs, 2 * XK_TOKEN + 32), v128.load(px + gs, 2 * XK_TOKEN + 48), w1, w2, sc));
      a3 = i32x4.add(a3, vpair(v128.load(px, 3 * XK_TOKEN + 32), v128.load(px, 3 * XK_TOKEN + 48), w1, w2, sc));
      a7 = i32x4.add(a7, vpair(v128.load(px + gs, 3 * XK_TOKEN + 32), v128.load(px + gs, 3 * XK_TOKEN + 48), w1, w2, sc));
    }
    f0h = addLanes(f0h, a0, lane(d, 0));
    f1h = addLanes(f1h, a1, lane(d, 1));
    f2h = addLanes(f2h, a2, lane(d, 2));
    f3h = addLanes(f3h, a3, lane(d, 3));
    f4h = addLanes(f4h, a4, lane(e, 0));
    f5h = addLanes(f5h, a5, lane(e, 1));
    f6h = addLanes(f6h, a6, lane(e, 2));
    f7h = addLanes(f7h, a7, lane(e, 3));
    const dmin = v128.load32_splat(pb, 516);
    sumf = f32x4.sub(sumf, f32x4.mul(f32x4.mul(dmin, dx), f32x4.convert_i32x4_s(minSums(pb, xb))));
    sumg = f32x4.sub(sumg, f32x4.mul(f32x4.mul(dmin, dy), f32x4.convert_i32x4_s(minSums(pb, xb + gs))));
  }
  put4(out, os, laneTotal4(sumf, f0l, f1l, f2l, f3l, f0h, f1h, f2h, f3h), 4);
  put4(out + (os << 2), os, laneTotal4(sumg, f4l, f5l, f6l, f7l, f4h, f5h, f6h, f7h), live1);
}

/**
 * One prepared K-quant row against one group of four tokens (ggml_vec_dot_q4_K/q5_K/q6_K
 * _q8_K_generic): per block and token eight integer class sums, each times d = d_w·d_x into its
 * f32 lane; `mins` (Q4_K, Q5_K): sumf −= (dmin_w·d_x)·Σ_j m_j·Σ32_j; at the end sumf + lanes 0..7.
 */
// @ts-ignore: decorator
@inline function row_prepK(p: usize, xg: usize, nb: i32, mins: bool, q6: bool): v128 {
  let f0l = f32x4.splat(0), f0h = f32x4.splat(0), f1l = f32x4.splat(0), f1h = f32x4.splat(0);
  let f2l = f32x4.splat(0), f2h = f32x4.splat(0), f3l = f32x4.splat(0), f3h = f32x4.splat(0);
  let sumf = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const pb = p + <usize>b * PREP_K;
    const xb = xg + <usize>b * WQ8_K_BLOCK;
    let a0l = Z, a0h = Z, a1l = Z, a1h = Z, a2l = Z, a2h = Z, a3l = Z, a3h = Z;
    // classes 0-3, then 4-7 (four accumulators live at a time); each sub-block's weights are
    // loaded once for the four tokens, whose activations are XK_TOKEN bytes apart
    if (ASC_FEATURE_RELAXED_SIMD) {
      // Q4_K, Q5_K (relaxed Q6_K takes q6k-gemm.ts): per pair of sub-blocks and token, the dots of
      // classes (0, 1) and (2, 3) (or (4, 5), (6, 7)), narrowed to i16 and dotted with the two
      // sub-blocks' scales
      let pw: usize, px: usize;
      pw = pb;
      px = xb + XK;
      for (let k = 0; k < 4; k++, pw += PAIR_Q45, px += 64) {
        const w1 = v128.load(pw, 0), w2 = v128.load(pw, 16), sc = v128.load(pw, 64);
        a0l = i32x4.add(a0l, vpair(v128.load(px, 0), v128.load(px, 16), w1, w2, sc));
        a1l = i32x4.add(a1l, vpair(v128.load(px, XK_TOKEN + 0), v128.load(px, XK_TOKEN + 16), w1, w2, sc));
        a2l = i32x4.add(a2l, vpair(v128.load(px, 2 * XK_TOKEN + 0), v128.load(px, 2 * XK_TOKEN + 16), w1, w2, sc));
        a3l = i32x4.add(a3l, vpair(v128.load(px, 3 * XK_TOKEN + 0), v128.load(px, 3 * XK_TOKEN + 16), w1, w2, sc));
      }
      pw = pb;
      px = xb + XK;
      for (let k = 0; k < 4; k++, pw += PAIR_Q45, px += 64) {
        const w1 = v128.load(pw, 32), w2 = v128.load(pw, 48), sc = v128.load(pw, 64);
        a0h = i32x4.add(a0h, vpair(v128.load(px, 32), v128.load(px, 48), w1, w2, sc));
        a1h = i32x4.add(a1h, vpair(v128.load(px, XK_TOKEN + 32), v128.load(px, XK_TOKEN + 48), w1, w2, sc));
        a2h = i32x4.add(a2h, vpair(v128.load(px, 2 * XK_TOKEN + 32), v128.load(px, 2 * XK_TOKEN + 48), w1, w2, sc));
        a3h = i32x4.add(a3h, vpair(v128.load(px, 3 * XK_TOKEN + 32), v128.load(px, 3 * XK_TOKEN + 48), w1, w2, sc));
      }
    } else {
      let pw = pb, px = xb + XK;
      for (let j = 0; j < 8; j++, pw += SUB, px += 64) {
        const w0 = v128.load(pw), w2 = v128.load(pw, 32);
        a0l = i32x4.add(a0l, pd(w0, w2, v128.load(px), v128.load(px, 32)));
        a1l = i32x4.add(a1l, pd(w0, w2, v128.load(px, XK_TOKEN), v128.load(px, XK_TOKEN + 32)));
        a2l = i32x4.add(a2l, pd(w0, w2, v128.load(px, 2 * XK_TOKEN), v128.load(px, 2 * XK_TOKEN + 32)));
        a3l = i32x4.add(a3l, pd(w0, w2, v128.load(px, 3 * XK_TOKEN), v128.load(px, 3 * XK_TOKEN + 32)));
      }
      pw = pb;
      px = xb + XK;
      for (let j = 0; j < 8; j++, pw += SUB, px += 64) {
        const w1 = v128.load(pw, 16), w3 = v128.load(pw, 48);
        a0h = i32x4.add(a0h, pd(w1, w3, v128.load(px, 16), v128.load(px, 48)));
        a1h = i32x4.add(a1h, pd(w1, w3, v128.load(px, XK_TOKEN + 16), v128.load(px, XK_TOKEN + 48)));
        a2h = i32x4.add(a2h, pd(w1, w3, v128.load(px, 2 * XK_TOKEN + 16), v128.load(px, 2 * XK_TOKEN + 48)));
        a3h = i32x4.add(a3h, pd(w1, w3, v128.load(px, 3 * XK_TOKEN + 16), v128.load(px, 3 * XK_TOKEN + 48)));
      }
    }
    const dx = v128.load(xb);
    const d = f32x4.mul(v128.load32_splat(pb, 512), dx);
    const d0 = v128.shuffle<i32>(d, d, 0, 0, 0, 0), d1 = v128.shuffle<i32>(d, d, 1, 1, 1, 1);
    const d2 = v128.shuffle<i32>(d, d, 2, 2, 2, 2), d3 = v128.shuffle<i32>(d, d, 3, 3, 3, 3);
    f0l = addLanes(f0l, a0l, d0);
    f0h = addLanes(f0h, a0h, d0);
    f1l = addLanes(f1l, a1l, d1);
    f1h = addLanes(f1h, a1h, d1);
    f2l = addLanes(f2l, a2l, d2);
    f2h = addLanes(f2h, a2h, d2);
    f3l = addLanes(f3l, a3l, d3);
    f3h = addLanes(f3h, a3h, d3);
    if (mins) {
      // Σ_j m_j · sum32_j, one lane per token (exact integers)
      let ms: v128;
      ms = i32x4.add(i32x4.dot_i16x8_s(v128.load(xb, 16), v128.load(pb, 528)), i32x4.dot_i16x8_s(v128.load(xb, 32), v128.load(pb, 544)));
      ms = i32x4.add(ms, i32x4.add(i32x4.dot_i16x8_s(v128.load(xb, 48), v128.load(pb, 560)), i32x4.dot_i16x8_s(v128.load(xb, 64), v128.load(pb, 576))));
      const dmin = f32x4.mul(v128.load32_splat(pb, 516), dx);
      sumf = f32x4.sub(sumf, f32x4.mul(dmin, f32x4.convert_i32x4_s(ms)));
    }
  }
  return laneTotal4(sumf, f0l, f1l, f2l, f3l, f0h, f1h, f2h, f3h);
}

// ---- exported kernels ---------------------------------------------------------------------------
// gemm_<type>(out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch): out[t·outStride + r] =
// W[r,:]·x_t for r in [r0, r1), t < n, from the widened activations xw; scratch: gemm_scratch_bytes(cols)
// bytes the kernel overwrites (its prepared rows).

/** Bytes of scratch a gemm kernel needs for rows of `cols`: GEMM_ROWS prepared rows (PREP_32 per 32 ≥ PREP_K per 256). */
export function gemm_scratch_bytes(cols: i32): i32 {
  return GEMM_ROWS * (cols >> 5) * PREP_32;
}

/**
 * Rows [r0, r1) in blocks of GEMM_ROWS (kind 0-4: Q8_0, Q4_0, Q5_0, Q4_1, Q5_1; 5-7: Q4_K, Q5_K,
 * Q6_K): the block's rows prepared into scratch, then each against every group of four tokens.
 * Q4_0 is read in the build's layout, with matvec's condition on r1 (legacy.ts); Q4_K and Q6_K come
 * here in the plain build only (ggml's rows), the relaxed one takes q4k-gemm.ts and q6k-gemm.ts.
 */
// @ts-ignore: decorator
@inline function gemmLoop(kind: i32, out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  const os = <usize>outStride << 2;
  const groups = (n + 3) >> 2;
  const k = kind >= 5;
  const nb = k ? cols >> 8 : cols >> 5;
  const groupBytes = <usize>nb * (k ? WQ8_K_BLOCK : WQ8_0_BLOCK);
  // bytes between prepared rows (relaxed 32-element formats: interleaved per block, see PREP32_BS)
  const prepBytes = k ? <usize>nb * PREP_K : ASC_FEATURE_RELAXED_SIMD ? <usize>PREP_32 : <usize>nb * PREP_32;
  for (let rb = r0; rb < r1; rb += GEMM_ROWS) {
    const re = min<i32>(r1, rb + GEMM_ROWS);
    const inGroup = (rb & 3) == 0 && rb + 4 <= (r1 & ~3);
    const whole = kind == 1 && q4Grouped() && inGroup;
    if (whole && kind == 1) prep_q4g(scratch, w + <usize>rb * rowBytes, nb);
    for (let r = rb; r < re && !whole; r++) {
      const dst = scratch + <usize>(r - rb) * prepBytes;
      const src = w + <usize>r * rowBytes;
      if (kind == 5) prep_q45_K(dst, src, nb, false);
      else if (kind == 6) prep_q45_K(dst, src, nb, true);
      else if (kind == 7) prep_q6_K(dst, src, nb);
      else if (kind == 1 && q4Grouped() && r < (r1 & ~3)) prep_32(1, dst, w + <usize>(r & ~3) * rowBytes, nb, r & 3); // as matvec_q4_0 reads it
      else prep_32(kind, dst, src, nb, -1);
    }
    let g = 0;
    if (ASC_FEATURE_RELAXED_SIMD && (kind == 5 || kind == 6)) {
      // pairs of groups through the register tile, then the odd group
      for (; g + 1 < groups; g += 2) {
        const xg = xw + <usize>g * groupBytes;
        const o = out + (<usize>(g * 4 * outStride) << 2);
        const live1 = min<i32>(4, n - g * 4 - 4);
        for (let r = rb; r < re; r++) row_q45K2(scratch + <usize>(r - rb) * prepBytes, xg, groupBytes, nb, o + (<usize>r << 2), os, live1);
      }
    }
    if (ASC_FEATURE_RELAXED_SIMD && !k) {
      // pairs of groups through the register tile, then the odd group
      const rows = re - rb;
      for (; g + 1 < groups; g += 2) {
        const xg = xw + <usize>g * groupBytes;
        const o4 = out + (<usize>(g * 4 * outStride) << 2) + (<usize>rb << 2);
        const live1 = min<i32>(4, n - g * 4 - 4);
        if (rows == 4) tile_prep32(kind, scratch, 4, xg, nb, o4, os, 4, live1);
        else if (rows == 3) tile_prep32(kind, scratch, 3, xg, nb, o4, os, 4, live1);
        else if (rows == 2) tile_prep32(kind, scratch, 2, xg, nb, o4, os, 4, live1);
        else tile_prep32(kind, scratch, 1, xg, nb, o4, os, 4, live1);
      }
    }
    for (; g < groups; g++) {
      const xg = xw + <usize>g * groupBytes;
      const o = out + (<usize>(g * 4 * outStride) << 2);
      const live = min<i32>(4, n - g * 4);
      if (k) {
        for (let r = rb; r < re; r++) {
          const p = scratch + <usize>(r - rb) * prepBytes;
          put4(o + (<usize>r << 2), os, row_prepK(p, xg, nb, kind != 7, kind == 7), live);
        }
      } else {
        const o4 = o + (<usize>rb << 2), rows = re - rb;
        if (!ASC_FEATURE_RELAXED_SIMD) {
          // plain: one row per pass (its fold4 and i16 weights leave no registers for more)
          for (let r = 0; r < rows; r++) rows_prep32(kind, scratch + <usize>r * prepBytes, prepBytes, 1, xg, nb, o4 + (<usize>r << 2), os, live);
        } else if (rows == 4) rows_prep32(kind, scratch, prepBytes, 4, xg, nb, o4, os, live);
        else if (rows == 3) rows_prep32(kind, scratch, prepBytes, 3, xg, nb, o4, os, live);
        else if (rows == 2) rows_prep32(kind, scratch, prepBytes, 2, xg, nb, o4, os, live);
        else rows_prep32(kind, scratch, prepBytes, 1, xg, nb, o4, os, live);
      }
    }
  }
}

export function gemm_q8_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  // the check is inlined here, so it is compiled with, and lowered like, the loop it chooses
  if (useQ8U()) gemmLoop(Q8U, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
  else gemmLoop(0, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
export function gemm_q4_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  gemmLoop(1, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
export function gemm_q5_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  gemmLoop(2, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
export function gemm_q4_1(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  gemmLoop(3, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
export function gemm_q5_1(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  gemmLoop(4, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
export function gemm_q4_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  if (q4kGrouped()) {
    // the grouped rows in place (q4k-gemm.ts, matvec's bits), ggml's last rows % 4 by matvec per token
    gemmG_q4_K(out, w, rowBytes, r0, r1, xw, cols, n, outStride);
    return;
  }
  gemmLoop(5, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
export function gemm_q5_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  gemmLoop(6, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
export function gemm_q6_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  if (q6Grouped()) {
    // the grouped rows in place (q6k-gemm.ts, matvec's bits), ggml's last rows % 4 by matvec per token
    gemmG_q6_K(out, w, rowBytes, r0, r1, xw, cols, n, outStride);
    return;
  }
  gemmLoop(7, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
