// The 32-element block formats: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4. Block layouts (ggml-common.h):
//   Q4_0   18 B  { f16 d; u8 qs[16] }                 x = d·(q − 8)
//   Q4_1   20 B  { f16 d; f16 m; u8 qs[16] }          x = d·q + m
//   Q5_0   22 B  { f16 d; u8 qh[4]; u8 qs[16] }       x = d·(q − 16), q = nibble | bit<<4
//   Q5_1   24 B  { f16 d; f16 m; u8 qh[4]; u8 qs[16] } x = d·q + m
//   Q8_0   34 B  { f16 d; i8 qs[32] }                 x = d·q
//   IQ4_NL 18 B  { f16 d; u8 qs[16] }                 x = d·kvalues_iq4nl[nibble]
//   MXFP4  17 B  { u8 e; u8 qs[16] }                  x = 2^(e−128)·kvalues_mxfp4[nibble] (E8M0 e)
// Nibble j of byte k: low nibble → element k, high nibble → element k + 16. The 5th bit of element
// j is bit j of qh (little-endian u32).
//
// Bit-identical to the scalar reference (src/engine/quant/legacy.ts, iq4.ts = ggml_vec_dot_*_generic):
// per block an exact integer sum, one float term rounded as the reference rounds it (its operand
// order is kept, e.g. Q4_0 (sumi·d_w)·d_x but Q5_0 (d_w·d_x)·sumi), and a running f32 sum over the
// blocks in order. Four ROWS share each pass, one per f32 lane: lane k of the running sum is row
// k's sum, so the lane-wise adds are the reference's sequential adds and no horizontal float sum is
// needed. The four rows also share the activation loads (and, in the plain build, its i16 split).
// Offsets (−8, −16) come off the integer sum with the activation's Σq (the q8_0 aux field).
// The relaxed build stores Q4_0 in groups of four rows interleaved (layout.ts), one row per lane of
// each dot, so its matvec needs no sum4 (dotG4_q4_0).

import { Dot4, STREAMS, f16, f16HiMul, f16HiPick, q8Aux, q8Scales, rows4, rows4Batch, sum4 } from './common';
import { Q4G_BLOCK, q4Grouped } from './layout';

// ---- vector constants ---------------------------------------------------------------------------
// Loaded from memory where used: V8 rebuilds a v128.const at every use inside a loop (2-4
// instructions each, a dozen per block here), while a load is one instruction off the ALU ports.

const K: usize = memory.data<u8>([
  0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, //  0 nibble mask
  0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, //                        16 i16 low byte
  0x81, 0x98, 0xad, 0xbf, 0xcf, 0xdd, 0xea, 0xf6, 1, 13, 25, 38, 53, 69, 89, 113, //                  32 kvalues_iq4nl
  0, 1, 2, 3, 4, 6, 8, 12, 0, 0xff, 0xfe, 0xfd, 0xfc, 0xfa, 0xf8, 0xf4, //                            48 kvalues_mxfp4
  0xff, 0, 0, 0, 0xff, 0, 0, 0, 0xff, 0, 0, 0, 0xff, 0, 0, 0, //                                     64 i32 low byte
], 16);
// @ts-ignore: decorator
@inline function kv(off: usize): v128 {
  return v128.load(K + off);
}

/** The low and high nibbles of 16 bytes. */
// @ts-ignore: decorator
@inline function lo4(q: v128): v128 {
  return v128.and(q, kv(0));
}
// @ts-ignore: decorator
@inline function hi4(q: v128): v128 {
  return v128.and(i16x8.shr_u(q, 4), kv(0));
}

// ---- 16-lane integer dots -----------------------------------------------------------------------
// The plain build multiplies in i16 lanes (i32x4.dot_i16x8_s) without widening instructions: 16
// bytes are split into their even and odd bytes by i16 shifts, so a lane's four products are
// elements 4i, 4i+2 and 4i+1, 4i+3 (any grouping gives the same exact integer sum). The activation
// is split once per block for all four rows.

/** The even (lanes 0, 2, …) and odd bytes of 16 as i16x8, sign-extended / zero-extended. */
// @ts-ignore: decorator
@inline function evS(v: v128): v128 {
  return i16x8.shr_s(i16x8.shl(v, 8), 8);
}
// @ts-ignore: decorator
@inline function odS(v: v128): v128 {
  return i16x8.shr_s(v, 8);
}
// @ts-ignore: decorator
@inline function evU(v: v128): v128 {
  return v128.and(v, kv(16));
}
// @ts-ignore: decorator
@inline function odU(v: v128): v128 {
  return i16x8.shr_u(v, 8);
}

/** Σ w·x over 16 lanes as four i32 lane sums, w and x each given as even/odd i16 halves. */
// @ts-ignore: decorator
@inline function dotEO(we: v128, wo: v128, xe: v128, xo: v128): v128 {
  return i32x4.add(i32x4.dot_i16x8_s(we, xe), i32x4.dot_i16x8_s(wo, xo));
}

/**
 * Σ w·x over a block: w0 · activation bytes 0-15 (x0; xe0, xo0 its halves) + w1 · bytes 16-31, as
 * four i32 lane sums; w bytes in [0, 127]. The relaxed build uses
 * i32x4.relaxed_dot_i8x16_i7x16_add_s, deterministic because w is 7-bit.
 */
// @ts-ignore: decorator
@inline function dotU(w0: v128, w1: v128, x0: v128, x1: v128, xe0: v128, xo0: v128, xe1: v128, xo1: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.relaxed_dot_i8x16_i7x16_add_s(x1, w1, i32x4.relaxed_dot_i8x16_i7x16_add_s(x0, w0, i32x4.splat(0)));
  return i32x4.add(dotEO(evU(w0), odU(w0), xe0, xo0), dotEO(evU(w1), odU(w1), xe1, xo1));
}

/** The same with signed w (both builds: x86 has no signed×signed byte dot). */
// @ts-ignore: decorator
@inline function dotS(w0: v128, w1: v128, xe0: v128, xo0: v128, xe1: v128, xo1: v128): v128 {
  return i32x4.add(dotEO(evS(w0), odS(w0), xe0, xo0), dotEO(evS(w1), odS(w1), xe1, xo1));
}

// ---- block unpacking ------------------------------------------------------------------------------

// Q5's fifth bits by table: QH5 + 16·b + 8 holds e(b) ‖ 0⁸, e(b) byte k = 0x10·(bit k of b), and
// the 8 bytes before it are zero (the previous entry's tail, or padding for b = 0). qh byte i (the
// bits of elements 8i … 8i+7) is OR-ed into a row's quants as the 16 bytes at QH5 + 16·b + 8 (into
// lanes 0-7) or QH5 + 16·b (lanes 8-15): per byte a byte load, a shift, a load and an OR, where
// spreading qh over the lanes and testing each lane's bit took 8 vector instructions a row more
// (shuffles, and, compare, and). Filled at instantiation, as the data segments are: 4 KiB, in L1.

const QH5: usize = memory.data(8 + 256 * 16, 16);
for (let b = 0; b < 256; b++) {
  for (let k = 0; k < 8; k++) store<u8>(QH5 + 8 + (<usize>b << 4) + k, ((b >> k) & 1) << 4);
}

/** n | the fifth bits of qh bytes b0 (lanes 0-7) and b1 (lanes 8-15); the table's address is the loads' offset. */
// @ts-ignore: decorator
@inline function q5Or(n: v128, b0: u32, b1: u32): v128 {
  return v128.or(v128.or(n, v128.load(<usize>b0 << 4, QH5 + 8)), v128.load(<usize>b1 << 4, QH5));
}

// The dot kernels step a pointer per row, a = the block's address − 2, and read the block at
// constant offsets from it, which V8 folds into the loads (addresses computed per row and block
// cost measurably more on Q4_0). The f16 d sits in the high half of the u32 at a (u32At, f16HiMul).

/** The u32s at a0 … a3 as the lanes of one vector: plain loads and three unpacks instead of lane inserts. */
// @ts-ignore: decorator
@inline function u32At(a0: usize, a1: usize, a2: usize, a3: usize): v128 {
  const a = v128.load32_zero(a0), b = v128.load32_zero(a1);
  const c = v128.load32_zero(a2), d = v128.load32_zero(a3);
  const ab = i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const cd = i8x16.shuffle(c, d, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  return i8x16.shuffle(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
}

/**
 * The f16 at a0 + 2 … a3 + 2 as f32x4 (each block's d). Reads the two bytes before each row's first
 * block: rows never sit at address 0 (the data segment does).
 */
// @ts-ignore: decorator
@inline function f16At(a0: usize, a1: usize, a2: usize, a3: usize): v128 {
  return f16HiMul(u32At(a0, a1, a2, a3));
}

// One block's integer sum, as four i32 lane sums. Plain functions, not @inline: binaryen inlines
// them itself, which measured faster on Q5_0 (no change beyond noise on the others) than
// bodies inlined by AssemblyScript; why (V8's scheduling) was not studied. The relaxed build starts
// the integer sum at c, whose lanes sum to the offset term (−8·Σx, −16·Σx) of Q4_0 and Q5_0, so
// nothing is subtracted after sum4; the plain build measured faster subtracting it there.

/** Q4_0: Σ nibble·x of the block at a + 2, plus c in the relaxed build (plain: added after sum4, 3% faster). */
function q4Sum(a: usize, x0: v128, x1: v128, xe0: v128, xo0: v128, xe1: v128, xo1: v128, c: v128): v128 {
  const q = v128.load(a, 4);
  if (ASC_FEATURE_RELAXED_SIMD) {
    return i32x4.relaxed_dot_i8x16_i7x16_add_s(x1, hi4(q), i32x4.relaxed_dot_i8x16_i7x16_add_s(x0, lo4(q), c));
  }
  return dotU(lo4(q), hi4(q), x0, x1, xe0, xo0, xe1, xo1);
}
/** Q4_1: Σ nibble·x of the block at a + 2 (qs at a + 6). */
function q41Sum(a: usize, x0: v128, x1: v128, xe0: v128, xo0: v128, xe1: v128, xo1: v128): v128 {
  const q = v128.load(a, 6);
  return dotU(lo4(q), hi4(q), x0, x1, xe0, xo0, xe1, xo1);
}
/** Plain build, Q5_0: Σ q·x of the block at a + 2 (qh at a + 4, qs at a + 8), before its −16. */
function q5SumP(a: usize, x0: v128, x1: v128, xe0: v128, xo0: v128, xe1: v128, xo1: v128): v128 {
  const q = v128.load(a, 8);
  const w0 = q5Or(lo4(q), load<u8>(a, 4), load<u8>(a, 5));
  const w1 = q5Or(hi4(q), load<u8>(a, 6), load<u8>(a, 7));
  return dotU(w0, w1, x0, x1, xe0, xo0, xe1, xo1);
}
/** Relaxed build, Q5_0: c + Σ q·x of the block at a + 2. */
function q5Sum0(a: usize, x0: v128, x1: v128, c: v128): v128 {
  const q = v128.load(a, 8);
  const w0 = q5Or(lo4(q), load<u8>(a, 4), load<u8>(a, 5));
  const w1 = q5Or(hi4(q), load<u8>(a, 6), load<u8>(a, 7));
  return i32x4.relaxed_dot_i8x16_i7x16_add_s(x1, w1, i32x4.relaxed_dot_i8x16_i7x16_add_s(x0, w0, c));
}
/** Q5_1: Σ q·x of the block at a + 2 (qh at a + 6, qs at a + 10). */
function q51Sum(a: usize, x0: v128, x1: v128, xe0: v128, xo0: v128, xe1: v128, xo1: v128): v128 {
  const q = v128.load(a, 10);
  const w0 = q5Or(lo4(q), load<u8>(a, 6), load<u8>(a, 7));
  const w1 = q5Or(hi4(q), load<u8>(a, 8), load<u8>(a, 9));
  return dotU(w0, w1, x0, x1, xe0, xo0, xe1, xo1);
}
/**
 * IQ4_NL: Σ w·x of the block at a + 2 (table indices at a + 4). The relaxed build as q8Sum: w ^ xo
 * (−w − 1 where x < 0, in [−114, 126] since kvalues_iq4nl lie in [−127, 113]) dotted with |x|, the
 * integer sum starting at c = Σ_{x<0} |x|.
 */
function nlSum(a: usize, xe0: v128, xo0: v128, xe1: v128, xo1: v128, c: v128): v128 {
  const q = v128.load(a, 4);
  const t = kv(32); // kvalues_iq4nl (ggml-common.h); nibbles are in range, so the relaxed swizzle is exact
  const w0 = swz(t, lo4(q)), w1 = swz(t, hi4(q));
  if (ASC_FEATURE_RELAXED_SIMD) {
    const s = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.xor(w0, xo0), xe0, c);
    return i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.xor(w1, xo1), xe1, s);
  }
  return dotS(w0, w1, xe0, xo0, xe1, xo1);
}
/** MXFP4: Σ w·x of the block at a + 3 (E2M1 codes at a + 4), as nlSum with kvalues_mxfp4 (in [−12, 12]). */
function mxSum(a: usize, xe0: v128, xo0: v128, xe1: v128, xo1: v128, c: v128): v128 {
  const q = v128.load(a, 4);
  const t = kv(48);
  const w0 = swz(t, lo4(q)), w1 = swz(t, hi4(q));
  if (ASC_FEATURE_RELAXED_SIMD) {
    const s = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.xor(w0, xo0), xe0, c);
    return i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.xor(w1, xo1), xe1, s);
  }
  return dotS(w0, w1, xe0, xo0, xe1, xo1);
}
/**
 * The E8M0 bytes at a0 … a3 as the f32 2^(e−128) (ggml GGML_E8M0_TO_FP32_HALF), exactly: the bits
 * (e − 1) << 23 for e ≥ 2, and the subnormals 2^-128 = 0x00200000 (e = 0), 2^-127 (e = 1), which are
 * (e + 1) << 21.
 */
// @ts-ignore: decorator
@inline function e8m0Half(a0: usize, a1: usize, a2: usize, a3: usize): v128 {
  const e = v128.and(u32At(a0, a1, a2, a3), kv(64));
  const normal = i32x4.shl(i32x4.sub(e, i32x4.splat(1)), 23);
  const sub = i32x4.shl(i32x4.add(e, i32x4.splat(1)), 21);
  return v128.bitselect(sub, normal, i32x4.lt_u(e, i32x4.splat(2)));
}
/** An activation half as nlSum and q8Sum take it: plain build its even/odd i16 halves, relaxed |x| and x < 0. */
// @ts-ignore: decorator
@inline function nlXe(x: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i8x16.abs(x); // x ≥ −127: the Q8 activation is never −128
  return evS(x);
}
// @ts-ignore: decorator
@inline function nlXo(x: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i8x16.lt_s(x, i32x4.splat(0));
  return odS(x);
}
/** t[i] per lane for indices i < 16 (relaxed_swizzle needs no out-of-range fix-up). */
// @ts-ignore: decorator
@inline function swz(t: v128, i: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i8x16.relaxed_swizzle(t, i);
  return i8x16.swizzle(t, i);
}
/**
 * Σ w·x of the Q8_0 block at a + 2 (32 signed bytes at a + 4). The plain build: dotS on x's
 * even/odd halves. The relaxed build takes xe = |x| (the 7-bit operand), xo = x < 0 (nlXe, nlXo)
 * and c (q8Corr): where x < 0, w ^ xo = −w − 1 and (−w − 1)·|x| = w·x + x, so
 * Σ w·x = Σ (w ^ xo)·|x| + Σ_{x<0} |x|, and c is a vector whose lanes sum to that last term. w ^ xo
 * is any i8, −128 included: one bitwise op and one relaxed dot per 16 bytes (vpdpbusd with
 * AVX-VNNI; pmaddubsw's pair sums stay below 2·128·127, no saturation), exact for every weight byte.
 */
function q8Sum(a: usize, xe0: v128, xo0: v128, xe1: v128, xo1: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    const s = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.xor(v128.load(a, 4), xo0), xe0, c);
    return i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.xor(v128.load(a, 20), xo1), xe1, s);
  }
  return dotS(v128.load(a, 4), v128.load(a, 20), xe0, xo0, xe1, xo1);
}
/** Relaxed build: Σ_{x<0} |x| of a block as four i32 lanes, from q8Sum's xe, xo (−Σ xo·|x|). */
// @ts-ignore: decorator
@inline function q8Corr(xe0: v128, xo0: v128, xe1: v128, xo1: v128): v128 {
  return i32x4.neg(i32x4.relaxed_dot_i8x16_i7x16_add_s(xo1, xe1, i32x4.relaxed_dot_i8x16_i7x16_add_s(xo0, xe0, i32x4.splat(0))));
}

// ---- four rows · x ------------------------------------------------------------------------------
// dot4_<type>(p0, p1, p2, p3, xq, cols): lane k = the reference's vecDot of the row at pk with the
// quantised activation xq (layout in common.ts). Per block: the activation's two 16-byte halves
// (x0, x1; in the plain build also split into even/odd i16 halves), the four rows' integer sums
// folded into one i32x4 (sum4), then the reference's float term per lane, added to acc.

/** vecDotQ4_0: sumf += (sumi·d_w)·d_x, sumi = Σ nibble·x − 8·Σx. */
function dot4_q4_0(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const ap = q8Aux(xq, cols);
  let acc = f32x4.splat(0);
  let a0 = p0 - 2, a1 = p1 - 2, a2 = p2 - 2, a3 = p3 - 2;
  for (let b = 0; b < nb; b++) {
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const xe0 = ASC_FEATURE_RELAXED_SIMD ? x0 : evS(x0), xo0 = ASC_FEATURE_RELAXED_SIMD ? x0 : odS(x0);
    const xe1 = ASC_FEATURE_RELAXED_SIMD ? x1 : evS(x1), xo1 = ASC_FEATURE_RELAXED_SIMD ? x1 : odS(x1);
    const c = i32x4.splat(-(load<i32>(ap + (<usize>b << 2)) << 1)); // 4 lanes: −8·Σx
    let s = sum4(q4Sum(a0, x0, x1, xe0, xo0, xe1, xo1, c), q4Sum(a1, x0, x1, xe0, xo0, xe1, xo1, c),
      q4Sum(a2, x0, x1, xe0, xo0, xe1, xo1, c), q4Sum(a3, x0, x1, xe0, xo0, xe1, xo1, c));
    if (!ASC_FEATURE_RELAXED_SIMD) s = i32x4.add(s, i32x4.shl(c, 2));
    acc = f32x4.add(acc, f32x4.mul(f32x4.mul(f32x4.convert_i32x4_s(s), f16At(a0, a1, a2, a3)), f32x4.splat(load<f32>(dp + (<usize>b << 2)))));
    a0 += 18; a1 += 18; a2 += 18; a3 += 18;
  }
  return acc;
}

/**
 * vecDotQ4_1 and vecDotQ5_1's float term: acc + ((d_w·d_x)·sumi + m·s) with the activation's q8_1
 * d_x and s = d_x·Σx; d_w and m from one u32 per row (d its low half, m its high half).
 */
// @ts-ignore: decorator
@inline function addQ41(acc: v128, s: v128, a0: usize, a1: usize, a2: usize, a3: usize, dx: usize, sx: usize): v128 {
  const dm = u32At(a0 + 2, a1 + 2, a2 + 2, a3 + 2);
  const dd = f32x4.mul(f16HiMul(i32x4.shl(dm, 16)), v128.load32_splat(dx));
  const ms = f32x4.mul(f16HiMul(dm), v128.load32_splat(sx));
  return f32x4.add(acc, f32x4.add(f32x4.mul(dd, f32x4.convert_i32x4_s(s)), ms));
}

/** vecDotQ4_1: sumf += (d_w·d_x)·sumi + m·s (activation q8_1: s = d_x·Σx). */
function dot4_q4_1(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const sp = q8Aux(xq, cols);
  let acc = f32x4.splat(0);
  let a0 = p0 - 2, a1 = p1 - 2, a2 = p2 - 2, a3 = p3 - 2;
  for (let b = 0; b < nb; b++) {
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const xe0 = evS(x0), xo0 = odS(x0), xe1 = evS(x1), xo1 = odS(x1);
    const s = sum4(q41Sum(a0, x0, x1, xe0, xo0, xe1, xo1), q41Sum(a1, x0, x1, xe0, xo0, xe1, xo1),
      q41Sum(a2, x0, x1, xe0, xo0, xe1, xo1), q41Sum(a3, x0, x1, xe0, xo0, xe1, xo1));
    acc = addQ41(acc, s, a0, a1, a2, a3, dp + (<usize>b << 2), sp + (<usize>b << 2));
    a0 += 20; a1 += 20; a2 += 20; a3 += 20;
  }
  return acc;
}

/** vecDotQ5_0: sumf += (d_w·d_x)·sumi, sumi = Σ q·x − 16·Σx. */
function dot4_q5_0(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const ap = q8Aux(xq, cols);
  let acc = f32x4.splat(0);
  if (ASC_FEATURE_RELAXED_SIMD) {
    let a0 = p0 - 2, a1 = p1 - 2, a2 = p2 - 2, a3 = p3 - 2;
    for (let b = 0; b < nb; b++) {
      const xb = xq + (<usize>b << 5);
      const x0 = v128.load(xb), x1 = v128.load(xb, 16);
      const c = i32x4.splat(-(load<i32>(ap + (<usize>b << 2)) << 2)); // 4 lanes: −16·Σx
      const s = sum4(q5Sum0(a0, x0, x1, c), q5Sum0(a1, x0, x1, c), q5Sum0(a2, x0, x1, c), q5Sum0(a3, x0, x1, c));
      acc = f32x4.add(acc, f32x4.mul(f32x4.mul(f16At(a0, a1, a2, a3), f32x4.splat(load<f32>(dp + (<usize>b << 2)))), f32x4.convert_i32x4_s(s)));
      a0 += 22; a1 += 22; a2 += 22; a3 += 22;
    }
    return acc;
  }
  // The plain build: the offset after sum4 (c per row measured slower).
  let a0 = p0 - 2, a1 = p1 - 2, a2 = p2 - 2, a3 = p3 - 2;
  for (let b = 0; b < nb; b++) {
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const xe0 = evS(x0), xo0 = odS(x0), xe1 = evS(x1), xo1 = odS(x1);
    const s = sum4(q5SumP(a0, x0, x1, xe0, xo0, xe1, xo1), q5SumP(a1, x0, x1, xe0, xo0, xe1, xo1),
      q5SumP(a2, x0, x1, xe0, xo0, xe1, xo1), q5SumP(a3, x0, x1, xe0, xo0, xe1, xo1));
    const sumi = f32x4.convert_i32x4_s(i32x4.sub(s, i32x4.splat(load<i32>(ap + (<usize>b << 2)) << 4)));
    acc = f32x4.add(acc, f32x4.mul(f32x4.mul(f16At(a0, a1, a2, a3), f32x4.splat(load<f32>(dp + (<usize>b << 2)))), sumi));
    a0 += 22; a1 += 22; a2 += 22; a3 += 22;
  }
  return acc;
}

/** vecDotQ5_1: as Q4_1 with 5-bit quants. */
function dot4_q5_1(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const sp = q8Aux(xq, cols);
  let acc = f32x4.splat(0);
  let a0 = p0 - 2, a1 = p1 - 2, a2 = p2 - 2, a3 = p3 - 2;
  for (let b = 0; b < nb; b++) {
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const xe0 = evS(x0), xo0 = odS(x0), xe1 = evS(x1), xo1 = odS(x1);
    const s = sum4(q51Sum(a0, x0, x1, xe0, xo0, xe1, xo1), q51Sum(a1, x0, x1, xe0, xo0, xe1, xo1),
      q51Sum(a2, x0, x1, xe0, xo0, xe1, xo1), q51Sum(a3, x0, x1, xe0, xo0, xe1, xo1));
    acc = addQ41(acc, s, a0, a1, a2, a3, dp + (<usize>b << 2), sp + (<usize>b << 2));
    a0 += 24; a1 += 24; a2 += 24; a3 += 24;
  }
  return acc;
}

/**
 * vecDotQ8_0: sumf += sumi·(d_w·d_x). `prepared` (relaxed build): the activation's terms per block
 * come from prepQ8's scratch instead of being made here from x (a constant: two loops).
 */
// @ts-ignore: decorator
@inline function dot4q8(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32, prepared: bool): v128 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  let acc = f32x4.splat(0);
  let a0 = p0 - 2, a1 = p1 - 2, a2 = p2 - 2, a3 = p3 - 2;
  for (let b = 0; b < nb; b++) {
    let xe0: v128, xo0: v128, xe1: v128, xo1: v128, c: v128;
    if (prepared) {
      const p = Q8X + <usize>b * 80;
      xe0 = v128.load(p); xo0 = v128.load(p, 16); xe1 = v128.load(p, 32); xo1 = v128.load(p, 48); c = v128.load(p, 64);
    } else {
      const xb = xq + (<usize>b << 5);
      const x0 = v128.load(xb), x1 = v128.load(xb, 16);
      xe0 = nlXe(x0); xo0 = nlXo(x0); xe1 = nlXe(x1); xo1 = nlXo(x1);
      c = ASC_FEATURE_RELAXED_SIMD ? q8Corr(xe0, xo0, xe1, xo1) : i32x4.splat(0);
    }
    const s = sum4(q8Sum(a0, xe0, xo0, xe1, xo1, c), q8Sum(a1, xe0, xo0, xe1, xo1, c),
      q8Sum(a2, xe0, xo0, xe1, xo1, c), q8Sum(a3, xe0, xo0, xe1, xo1, c));
    const dd = f32x4.mul(f16HiPick(u32At(a0, a1, a2, a3)), v128.load32_splat(dp + (<usize>b << 2)));
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(s), dd));
    a0 += 34; a1 += 34; a2 += 34; a3 += 34;
  }
  return acc;
}
function dot4_q8_0(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  return dot4q8(p0, p1, p2, p3, xq, cols, false);
}

/** vecDotIq4Nl: sumf += (d_x·d_w)·sumi. */
function dot4_iq4_nl(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  let acc = f32x4.splat(0);
  let a0 = p0 - 2, a1 = p1 - 2, a2 = p2 - 2, a3 = p3 - 2;
  for (let b = 0; b < nb; b++) {
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const xe0 = nlXe(x0), xo0 = nlXo(x0), xe1 = nlXe(x1), xo1 = nlXo(x1);
    const c = ASC_FEATURE_RELAXED_SIMD ? q8Corr(xe0, xo0, xe1, xo1) : i32x4.splat(0);
    const s = sum4(nlSum(a0, xe0, xo0, xe1, xo1, c), nlSum(a1, xe0, xo0, xe1, xo1, c),
      nlSum(a2, xe0, xo0, xe1, xo1, c), nlSum(a3, xe0, xo0, xe1, xo1, c));
    const dd = f32x4.mul(v128.load32_splat(dp + (<usize>b << 2)), f16At(a0, a1, a2, a3));
    acc = f32x4.add(acc, f32x4.mul(dd, f32x4.convert_i32x4_s(s)));
    a0 += 18; a1 += 18; a2 += 18; a3 += 18;
  }
  return acc;
}

/** vecDotMxfp4: sumf += (d_x·2^(e−128))·sumi. Blocks are 17 bytes: a = block − 3 keeps mxSum's offsets nlSum's. */
function dot4_mxfp4(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  let acc = f32x4.splat(0);
  let a0 = p0 - 3, a1 = p1 - 3, a2 = p2 - 3, a3 = p3 - 3;
  for (let b = 0; b < nb; b++) {
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const xe0 = nlXe(x0), xo0 = nlXo(x0), xe1 = nlXe(x1), xo1 = nlXo(x1);
    const c = ASC_FEATURE_RELAXED_SIMD ? q8Corr(xe0, xo0, xe1, xo1) : i32x4.splat(0);
    const s = sum4(mxSum(a0, xe0, xo0, xe1, xo1, c), mxSum(a1, xe0, xo0, xe1, xo1, c),
      mxSum(a2, xe0, xo0, xe1, xo1, c), mxSum(a3, xe0, xo0, xe1, xo1, c));
    const dd = f32x4.mul(v128.load32_splat(dp + (<usize>b << 2)), e8m0Half(a0 + 3, a1 + 3, a2 + 3, a3 + 3));
    acc = f32x4.add(acc, f32x4.mul(dd, f32x4.convert_i32x4_s(s)));
    a0 += 17; a1 += 17; a2 += 17; a3 += 17;
  }
  return acc;
}

// ---- rows of a matrix -----------------------------------------------------------------------------


// ---- exported kernels (signatures as in float.ts) ----------------------------------------------

/**
 * Relaxed build: q8Sum's activation terms, prepared once per call of matvec_q8_0 rather than in
 * every dot4_q8_0 (each four rows): per block at Q8X + 80·b, xe0, xo0, xe1, xo1 (nlXe, nlXo of its
 * two halves) and c (q8Corr). For activations of up to Q8X_COLS columns; a measured gain on
 * Q8_0 models.
 */
const Q8X_COLS: i32 = 32768;
const Q8X: usize = memory.data((Q8X_COLS >> 5) * 80, 16);
function prepQ8(xq: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const x0 = v128.load(xq + (<usize>b << 5)), x1 = v128.load(xq + (<usize>b << 5), 16);
    const xe0 = nlXe(x0), xo0 = nlXo(x0), xe1 = nlXe(x1), xo1 = nlXo(x1);
    const p = Q8X + <usize>b * 80;
    v128.store(p, xe0);
    v128.store(p, xo0, 16);
    v128.store(p, xe1, 32);
    v128.store(p, xo1, 48);
    v128.store(p, q8Corr(xe0, xo0, xe1, xo1), 64);
  }
}
/** dot4_q8_0 with the activation terms from prepQ8 (relaxed build). */
function dot4_q8_0p(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  return dot4q8(p0, p1, p2, p3, xq, cols, true);
}

export function matvec_q8_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  if (ASC_FEATURE_RELAXED_SIMD && cols <= Q8X_COLS) {
    prepQ8(xq, cols);
    rows4(dot4_q8_0p, out, w, rowBytes, r0, r1, xq, cols);
    return;
  }
  rows4(dot4_q8_0, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_q8_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_q8_0, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function dequant_q8_0(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 34;
    const d = f16(load<u16>(wb));
    for (let j = 0; j < 32; j++) store<f32>(out + (<usize>(b * 32 + j) << 2), <f32>load<i8>(wb + 2 + j) * d);
  }
}

// Q4_0 in groups of four rows (relaxed build; layout.ts). Per block: each row's integer sum in its
// own lane from eight relaxed dots (quant vector j's low nibbles with activation bytes 4j … 4j+3
// broadcast, its high nibbles with bytes 16+4j …), starting at −8·Σx; the four scales from one
// 8-byte load; then the reference's float step per lane, as dot4_q4_0.

/** Relaxed: c + Σ nibble·x of the group block at a (one row per lane), x the block's activation at xb. */
// @ts-ignore: decorator
@inline function q4gSum(a: usize, xb: usize, c: v128): v128 {
  const m = kv(0);
  let s = c;
  for (let j = 0; j < 4; j++) {
    const q = v128.load(a + 8 + (<usize>j << 4));
    s = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xb + (<usize>j << 2)), v128.and(q, m), s);
    s = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load32_splat(xb + 16 + (<usize>j << 2)), v128.and(i16x8.shr_u(q, 4), m), s);
  }
  return s;
}

/** The group block at a's four f16 scales as f32x4. */
// @ts-ignore: decorator
@inline function q4gD(a: usize): v128 {
  return f16HiMul(i32x4.shl(v128.load16x4_u(a), 16));
}

/** Relaxed: lane k = vecDotQ4_0 of row k of the group at g with xq. */
function dotG_q4_0(g: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const ap = q8Aux(xq, cols);
  let acc = f32x4.splat(0);
  let a = g;
  for (let b = 0; b < nb; b++) {
    const xb = xq + (<usize>b << 5);
    const s = q4gSum(a, xb, i32x4.splat(-(load<i32>(ap + (<usize>b << 2)) << 3))); // −8·Σx
    acc = f32x4.add(acc, f32x4.mul(f32x4.mul(f32x4.convert_i32x4_s(s), q4gD(a)), v128.load32_splat(dp + (<usize>b << 2))));
    a += Q4G_BLOCK;
  }
  return acc;
}

/** Relaxed: dotG_q4_0 of the four groups at g, g + d, g + 2d, g + 3d at once, four streams, stored at o, o + od, o + 2od, o + 3od. */
function dotG4_q4_0(o: usize, od: usize, g: usize, d: usize, xq: usize, cols: i32): void {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const ap = q8Aux(xq, cols);
  const m = kv(0);
  let f0 = f32x4.splat(0), f1 = f32x4.splat(0), f2 = f32x4.splat(0), f3 = f32x4.splat(0);
  let a = g;
  for (let b = 0; b < nb; b++) {
    const xb = xq + (<usize>b << 5);
    const c = i32x4.splat(-(load<i32>(ap + (<usize>b << 2)) << 3)); // −8·Σx
    let s0 = c, s1 = c, s2 = c, s3 = c;
    for (let j = 0; j < 4; j++) {
      const xl = v128.load32_splat(xb + (<usize>j << 2)), xh = v128.load32_splat(xb + 16 + (<usize>j << 2));
      const oj: usize = 8 + (<usize>j << 4);
      const q0 = v128.load(a + oj), q1 = v128.load(a + d + oj), q2 = v128.load(a + 2 * d + oj), q3 = v128.load(a + 3 * d + oj);
      s0 = i32x4.relaxed_dot_i8x16_i7x16_add_s(xl, v128.and(q0, m), s0);
      s1 = i32x4.relaxed_dot_i8x16_i7x16_add_s(xl, v128.and(q1, m), s1);
      s2 = i32x4.relaxed_dot_i8x16_i7x16_add_s(xl, v128.and(q2, m), s2);
      s3 = i32x4.relaxed_dot_i8x16_i7x16_add_s(xl, v128.and(q3, m), s3);
      s0 = i32x4.relaxed_dot_i8x16_i7x16_add_s(xh, v128.and(i16x8.shr_u(q0, 4), m), s0);
      s1 = i32x4.relaxed_dot_i8x16_i7x16_add_s(xh, v128.and(i16x8.shr_u(q1, 4), m), s1);
      s2 = i32x4.relaxed_dot_i8x16_i7x16_add_s(xh, v128.and(i16x8.shr_u(q2, 4), m), s2);
      s3 = i32x4.relaxed_dot_i8x16_i7x16_add_s(xh, v128.and(i16x8.shr_u(q3, 4), m), s3);
    }
    const dx = v128.load32_splat(dp + (<usize>b << 2));
    f0 = f32x4.add(f0, f32x4.mul(f32x4.mul(f32x4.convert_i32x4_s(s0), q4gD(a)), dx));
    f1 = f32x4.add(f1, f32x4.mul(f32x4.mul(f32x4.convert_i32x4_s(s1), q4gD(a + d)), dx));
    f2 = f32x4.add(f2, f32x4.mul(f32x4.mul(f32x4.convert_i32x4_s(s2), q4gD(a + 2 * d)), dx));
    f3 = f32x4.add(f3, f32x4.mul(f32x4.mul(f32x4.convert_i32x4_s(s3), q4gD(a + 3 * d)), dx));
    a += Q4G_BLOCK;
  }
  v128.store(o, f0);
  v128.store(o + od, f1);
  v128.store(o + 2 * od, f2);
  v128.store(o + 3 * od, f3);
}

/** Lanes [k0, k1) of v to out + 4·(r + k). */
// @ts-ignore: decorator
@inline function putLanes(out: usize, r: i32, v: v128, k0: i32, k1: i32): void {
  if (k0 <= 0 && k1 > 0) store<f32>(out + (<usize>r << 2), f32x4.extract_lane(v, 0));
  if (k0 <= 1 && k1 > 1) store<f32>(out + (<usize>(r + 1) << 2), f32x4.extract_lane(v, 1));
  if (k0 <= 2 && k1 > 2) store<f32>(out + (<usize>(r + 2) << 2), f32x4.extract_lane(v, 2));
  if (k0 <= 3 && k1 > 3) store<f32>(out + (<usize>(r + 3) << 2), f32x4.extract_lane(v, 3));
}

/**
 * out[r] = row r · xq for r in [r0, r1) of a Q4_0 tensor at w in the build's layout (layout.ts).
 * Relaxed: r1 is a multiple of 4 or the tensor's last row + 1 (its last r1 % 4 rows are then in
 * ggml's layout); r0 is any row (a partial first group is computed whole and stored in part). The
 * groups go four at a time through dotG4_q4_0, each step one group from each of STREAMS parts of
 * the range: STREAMS sequential streams, as rows4's (one stream, or two, measured slower from
 * L3 and DRAM than four).
 */
export function matvec_q4_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  if (!q4Grouped()) {
    rows4(dot4_q4_0, out, w, rowBytes, r0, r1, xq, cols);
    return;
  }
  const t = r1 & ~3; // rows [t, r1): ggml's layout
  let g0 = r0 & ~3;
  if (g0 < t && g0 < r0) {
    putLanes(out, g0, dotG_q4_0(w + <usize>g0 * rowBytes, xq, cols), r0 - g0, 4);
    g0 += 4;
  }
  if (g0 < t) {
    const groups = (t - g0) >> 2, q = groups / STREAMS;
    const gb = 4 * rowBytes, ob: usize = <usize>q << 4;
    const base = w + <usize>g0 * rowBytes, o = out + (<usize>g0 << 2);
    for (let i = 0; i < q; i++) {
      for (let k = 0; k < STREAMS; k += 4) dotG4_q4_0(o + (<usize>(k * q + i) << 4), ob, base + <usize>(k * q + i) * gb, <usize>q * gb, xq, cols);
    }
    for (let i = STREAMS * q; i < groups; i++) v128.store(o + (<usize>i << 4), dotG_q4_0(base + <usize>i * gb, xq, cols));
  }
  if (max(r0, t) < r1) rows4(dot4_q4_0, out, w, rowBytes, max(r0, t), r1, xq, cols);
}
/** matvec_q4_0 for each of n activations, each with matvec's bits (plain build: in token cache blocks, as the other types). */
export function matmul_q4_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  if (!q4Grouped()) {
    rows4Batch(dot4_q4_0, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
    return;
  }
  for (let t = 0; t < n; t++) matvec_q4_0(out + (<usize>(t * outStride) << 2), w, rowBytes, r0, r1, xq + <usize>t * xqStride, cols);
}
/** One row of ggml Q4_0 blocks at w, dequantised. */
export function dequant_q4_0(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 18;
    const d = f16(load<u16>(wb));
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(wb + 2 + j);
      store<f32>(o + (<usize>j << 2), <f32>((q & 15) - 8) * d);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>((q >> 4) - 8) * d);
    }
  }
}
/** Row r of the rows × cols Q4_0 tensor at w in the build's layout, dequantised (dequant_q4_0's numbers). */
export function dequant_row_q4_0(out: usize, w: usize, rowBytes: usize, rows: i32, r: i32, cols: i32): void {
  if (!q4Grouped() || r >= (rows & ~3)) {
    dequant_q4_0(out, w + <usize>r * rowBytes, cols);
    return;
  }
  const g = w + <usize>(r & ~3) * rowBytes, k = <usize>(r & 3);
  for (let b = 0; b < (cols >> 5); b++) {
    const a = g + <usize>b * Q4G_BLOCK;
    const d = f16(load<u16>(a + (k << 1)));
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(a + 8 + (<usize>(j >> 2) << 4) + (k << 2) + <usize>(j & 3)); // qs[j] of row k
      store<f32>(o + (<usize>j << 2), <f32>((q & 15) - 8) * d);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>((q >> 4) - 8) * d);
    }
  }
}

export function matvec_q4_1(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_q4_1, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_q4_1(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_q4_1, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function dequant_q4_1(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 20;
    const d = f16(load<u16>(wb));
    const m = f16(load<u16>(wb, 2));
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(wb + 4 + j);
      store<f32>(o + (<usize>j << 2), <f32>(q & 15) * d + m);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>(q >> 4) * d + m);
    }
  }
}

export function matvec_q5_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_q5_0, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_q5_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_q5_0, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function dequant_q5_0(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 22;
    const d = f16(load<u16>(wb));
    const qh = load<u32>(wb, 2);
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(wb + 6 + j);
      const h0 = <i32>((qh >> j) << 4) & 0x10;
      const h1 = <i32>(qh >> (j + 12)) & 0x10;
      store<f32>(o + (<usize>j << 2), <f32>(((q & 15) | h0) - 16) * d);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>(((q >> 4) | h1) - 16) * d);
    }
  }
}

export function matvec_q5_1(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_q5_1, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_q5_1(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_q5_1, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function dequant_q5_1(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 24;
    const d = f16(load<u16>(wb));
    const m = f16(load<u16>(wb, 2));
    const qh = load<u32>(wb, 4);
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(wb + 8 + j);
      const h0 = <i32>((qh >> j) << 4) & 0x10;
      const h1 = <i32>(qh >> (j + 12)) & 0x10;
      store<f32>(o + (<usize>j << 2), <f32>((q & 15) | h0) * d + m);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>((q >> 4) | h1) * d + m);
    }
  }
}

export function matvec_iq4_nl(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_iq4_nl, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_iq4_nl(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_iq4_nl, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function dequant_iq4_nl(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 18;
    const d = f16(load<u16>(wb));
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(wb + 2 + j);
      store<f32>(o + (<usize>j << 2), <f32>load<i8>(IQ4NL + (q & 15)) * d);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>load<i8>(IQ4NL + (q >> 4)) * d);
    }
  }
}

export function matvec_mxfp4(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_mxfp4, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_mxfp4(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_mxfp4, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
/** One row of MXFP4 blocks: 2^(e−128)·kvalues_mxfp4[q], one f32 product as ggml's dequantize_row_mxfp4. */
export function dequant_mxfp4(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 17;
    const e = <u32>load<u8>(wb);
    const d = reinterpret<f32>(e < 2 ? 0x00200000 << e : (e - 1) << 23);
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(wb + 1 + j);
      store<f32>(o + (<usize>j << 2), <f32>load<i8>(K + 48 + (q & 15)) * d);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>load<i8>(K + 48 + (q >> 4)) * d);
    }
  }
}

/** kvalues_iq4nl in memory, for scalar lookups (ggml-common.h). */
export const IQ4NL: usize = memory.data<i8>([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]);
