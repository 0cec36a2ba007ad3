// The 32-element block formats: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL. Block layouts (ggml-common.h):
//   Q4_0   18 B  { f16 d; u8 qs[16] }                 x = d·(q − 8)
//   Q4_1   20 B  { f16 d; f16 m; u8 qs[16] }          x = d·q + m
//   Q5_0   22 B  { f16 d; u8 qh[4]; u8 qs[16] }       x = d·(q − 16), q = nibble | bit<<4
//   Q5_1   24 B  { f16 d; f16 m; u8 qh[4]; u8 qs[16] } x = d·q + m
//   Q8_0   34 B  { f16 d; i8 qs[32] }                 x = d·q
//   IQ4_NL 18 B  { f16 d; u8 qs[16] }                 x = d·kvalues_iq4nl[nibble]
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

import { Dot4, TOKEN_BLOCK, f16, q8Aux, q8Scales, rows4, sum4 } from './common';

// ---- vector constants ---------------------------------------------------------------------------
// Loaded from memory where used: V8 rebuilds a v128.const at every use inside a loop (2-4
// instructions each, a dozen per block here), while a load is one instruction off the ALU ports.

const K: usize = memory.data<u8>([
  0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, //  0 nibble mask
  1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128, //                                      16 bit j of byte
  0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, // 32 the 5th bit
  0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, //                        48 i16 low byte
  0x81, 0x98, 0xad, 0xbf, 0xcf, 0xdd, 0xea, 0xf6, 1, 13, 25, 38, 53, 69, 89, 113, //                  64 kvalues_iq4nl
  0, 0, 0x80, 0x77, 0, 0, 0x80, 0x77, 0, 0, 0x80, 0x77, 0, 0, 0x80, 0x77, //                         80 2^112
  0xff, 0xff, 0x7f, 0x0f, 0xff, 0xff, 0x7f, 0x0f, 0xff, 0xff, 0x7f, 0x0f, 0xff, 0xff, 0x7f, 0x0f, //  96 below f16 Inf, shifted
  0, 0, 0, 0x70, 0, 0, 0, 0x70, 0, 0, 0, 0x70, 0, 0, 0, 0x70, //                                     112 Inf/NaN rebias
  0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, //                                     128 f32 sign
  0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, //                                                 144 qh byte of element j
  2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, //                                                 160 … of element 16 + j
  0, 0xe0, 0xff, 0x8f, 0, 0xe0, 0xff, 0x8f, 0, 0xe0, 0xff, 0x8f, 0, 0xe0, 0xff, 0x8f, //              176 sign, 3 zero bits, half >> 3
  0, 0, 0, 0x7c, 0, 0, 0, 0x7c, 0, 0, 0, 0x7c, 0, 0, 0, 0x7c, //                                     192 half exponent
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

/**
 * Four IEEE halves (high 16 bits of each u32 lane, low bits zero) → f32x4, exactly
 * (ggml_compute_fp16_to_fp32): the half's sign is already the f32 sign bit; its magnitude bits
 * shifted into place (<< 1, >> 4) read as an f32 2^112 times too small, for normal and subnormal
 * halves alike, and the multiplication by 2^112 is exact; Inf/NaN (exponent 31) get 0x70000000
 * added first, which makes the f32 exponent all ones, and stay Inf/NaN through the multiplication.
 * A subnormal half is a subnormal f32 operand, slow on x86 but still exact; no block of the GGUF
 * models in bench/models has one.
 */
// @ts-ignore: decorator
@inline function f16x4(h: v128): v128 {
  const mag = i32x4.shr_u(i32x4.shl(h, 1), 4);
  const rebias = v128.and(i32x4.gt_s(mag, kv(96)), kv(112));
  return v128.or(f32x4.mul(i32x4.add(mag, rebias), kv(80)), v128.and(h, kv(128)));
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
  return v128.and(v, kv(48));
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

// Q5's qh spread over byte lanes: lane j of qhLo holds the byte with element j's bit (byte j >> 3),
// lane j of qhHi the one with element 16 + j's. Built with unpacks and 32-bit lane shuffles
// (punpcklbw, punpcklwd, punpck[lh]dq), which need no shuffle-mask constants.

/** qh's four bytes, each four times. */
// @ts-ignore: decorator
@inline function qhWide(qh: v128): v128 {
  const t = i8x16.shuffle(qh, qh, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  return i8x16.shuffle(t, t, 0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7); // b0×4 b1×4 b2×4 b3×4
}
// @ts-ignore: decorator
@inline function qhLo(w: v128): v128 {
  return i8x16.shuffle(w, w, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7);
}
// @ts-ignore: decorator
@inline function qhHi(w: v128): v128 {
  return i8x16.shuffle(w, w, 8, 9, 10, 11, 8, 9, 10, 11, 12, 13, 14, 15, 12, 13, 14, 15);
}
/** 0x10 in lane j where bit j & 7 of b's lane j is set (b from qhLo or qhHi), as ggml's x86 bytes_from_bits_32. */
// @ts-ignore: decorator
@inline function q5Bits(b: v128): v128 {
  return v128.and(i8x16.eq(v128.and(b, kv(16)), kv(16)), kv(32));
}

/**
 * f16Rows of the halves at a0 + 2 … a3 + 2, from four 32-bit loads (the two bytes before each half are ignored):
 * plain loads and three unpacks instead of four 16-bit lane inserts. The conversion keeps the sign
 * in place: an arithmetic shift by 3 leaves sign, three sign copies (cleared) and the magnitude
 * bits where f16x4 puts them, and the multiplication by 2^112 carries the sign exactly. Reads the
 * two bytes before each row's first block: rows never sit at address 0 (the data segment does).
 */
// @ts-ignore: decorator
@inline function f16At(a0: usize, a1: usize, a2: usize, a3: usize): v128 {
  const a = v128.load32_zero(a0), b = v128.load32_zero(a1);
  const c = v128.load32_zero(a2), d = v128.load32_zero(a3);
  const ab = i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const cd = i8x16.shuffle(c, d, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const h = i8x16.shuffle(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  const m = v128.and(i32x4.shr_s(h, 3), kv(176));
  const rebias = v128.and(i32x4.eq(v128.and(h, kv(192)), kv(192)), kv(112));
  return f32x4.mul(v128.or(m, rebias), kv(80));
}

/** The block scales (f16 at byte `off` of rows p0…p3) as f32x4, lane k from row k. */
// @ts-ignore: decorator
@inline function f16Rows(p0: usize, p1: usize, p2: usize, p3: usize, off: usize): v128 {
  let v = v128.load16_lane(p0 + off, i32x4.splat(0), 1);
  v = v128.load16_lane(p1 + off, v, 3);
  v = v128.load16_lane(p2 + off, v, 5);
  v = v128.load16_lane(p3 + off, v, 7);
  return f16x4(v);
}

// One block's integer sum, as four i32 lane sums. Plain functions, not @inline: binaryen keeps the
// calls and V8 inlines them itself, which measured 3-6% faster on Q5_0 (±2% on the others, both
// builds, A/B) than bodies inlined by AssemblyScript; why (V8's scheduling) was not studied.

/** Σ w·x of one block of unsigned 4-bit quants (16 bytes at qs) and the activation block. */
function nibSum(qs: usize, x0: v128, x1: v128, xe0: v128, xo0: v128, xe1: v128, xo1: v128): v128 {
  const q = v128.load(qs);
  return dotU(lo4(q), hi4(q), x0, x1, xe0, xo0, xe1, xo1);
}
/** Σ w·x of one block of unsigned 5-bit quants (Q5_0 before its −16, Q5_1): qh at qh, 16 bytes at qs. */
function q5Sum(qh: usize, qs: usize, x0: v128, x1: v128, xe0: v128, xo0: v128, xe1: v128, xo1: v128): v128 {
  const h = qhWide(v128.load32_zero(qh));
  const q = v128.load(qs);
  return dotU(v128.or(lo4(q), q5Bits(qhLo(h))), v128.or(hi4(q), q5Bits(qhHi(h))), x0, x1, xe0, xo0, xe1, xo1);
}
// Q4_0 and Q5_0 step a pointer per row, a = the block's address − 2 (f16At's load; the rest at
// constant offsets, which V8 folds into the loads: addresses computed per row and block cost 13% on
// Q4_0). The relaxed build starts the integer sum at c, whose lanes sum to the offset term (−8·Σx,
// −16·Σx), so nothing is subtracted after sum4; the plain build measured faster subtracting it there.

/** Q4_0: Σ nibble·x of the block at a + 2, plus c in the relaxed build (plain: added after sum4, 3% faster). */
function q4Sum(a: usize, x0: v128, x1: v128, xe0: v128, xo0: v128, xe1: v128, xo1: v128, c: v128): v128 {
  const q = v128.load(a, 4);
  if (ASC_FEATURE_RELAXED_SIMD) {
    return i32x4.relaxed_dot_i8x16_i7x16_add_s(x1, hi4(q), i32x4.relaxed_dot_i8x16_i7x16_add_s(x0, lo4(q), c));
  }
  return dotU(lo4(q), hi4(q), x0, x1, xe0, xo0, xe1, xo1);
}
/** Plain build, Q5_0: q5Sum of the block at a + 2. */
function q5SumP(a: usize, x0: v128, x1: v128, xe0: v128, xo0: v128, xe1: v128, xo1: v128): v128 {
  const h = qhWide(v128.load32_zero(a, 4));
  const q = v128.load(a, 8);
  return dotU(v128.or(lo4(q), q5Bits(qhLo(h))), v128.or(hi4(q), q5Bits(qhHi(h))), x0, x1, xe0, xo0, xe1, xo1);
}
/**
 * Relaxed build, Q5_0: c + Σ q·x of the block at a + 2 (qh at a + 4, qs at a + 8), qh spread over
 * the lanes by two relaxed swizzles (in-range constant indices) instead of four shuffles.
 */
function q5Sum0(a: usize, x0: v128, x1: v128, c: v128): v128 {
  const q = v128.load(a, 8);
  const h = v128.load32_zero(a, 4);
  const w0 = v128.or(lo4(q), q5Bits(i8x16.relaxed_swizzle(h, kv(144))));
  const w1 = v128.or(hi4(q), q5Bits(i8x16.relaxed_swizzle(h, kv(160))));
  return i32x4.relaxed_dot_i8x16_i7x16_add_s(x1, w1, i32x4.relaxed_dot_i8x16_i7x16_add_s(x0, w0, c));
}
/** Σ w·x of one IQ4_NL block (16 bytes of table indices at qs). */
// The relaxed build takes xe = |x| and xo = x's sign mask (nlXe, nlXo): w·x = (±w)·|x| with
// ±w = (w ^ m) − m, in [−127, 127] since kvalues_iq4nl ≥ −127, and |x| ≤ 127 the 7-bit operand.
function nlSum(qs: usize, xe0: v128, xo0: v128, xe1: v128, xo1: v128): v128 {
  const q = v128.load(qs);
  const t = kv(64); // kvalues_iq4nl (ggml-common.h); nibbles are in range, so the relaxed swizzle is exact
  const w0 = swz(t, lo4(q)), w1 = swz(t, hi4(q));
  if (ASC_FEATURE_RELAXED_SIMD) {
    const s = i32x4.relaxed_dot_i8x16_i7x16_add_s(i8x16.sub(v128.xor(w0, xo0), xo0), xe0, i32x4.splat(0));
    return i32x4.relaxed_dot_i8x16_i7x16_add_s(i8x16.sub(v128.xor(w1, xo1), xo1), xe1, s);
  }
  return dotS(w0, w1, xe0, xo0, xe1, xo1);
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
 * Σ w·x of one Q8_0 block (32 signed bytes at qs). The plain build: dotS on x's even/odd halves.
 * The relaxed build takes xe = |x| (the 7-bit operand), xo = x < 0 (nlXe, nlXo) and c (q8Corr):
 * where x < 0, w ^ xo = −w − 1 and (−w − 1)·|x| = w·x + x, so Σ w·x = Σ (w ^ xo)·|x| + Σ_{x<0} |x|,
 * and c is a vector whose lanes sum to that last term. w ^ xo is any i8, −128 included: one bitwise
 * op and one relaxed dot per 16 bytes (vpdpbusd with AVX-VNNI; pmaddubsw's pair sums stay below
 * 2·128·127, no saturation), exact for every weight byte.
 */
function q8Sum(qs: usize, xe0: v128, xo0: v128, xe1: v128, xo1: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    const s = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.xor(v128.load(qs), xo0), xe0, c);
    return i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.xor(v128.load(qs, 16), xo1), xe1, s);
  }
  return dotS(v128.load(qs), v128.load(qs, 16), xe0, xo0, xe1, xo1);
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

/** vecDotQ4_1: sumf += (d_w·d_x)·sumi + m·s (activation q8_1: s = d_x·Σx). */
function dot4_q4_1(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const sp = q8Aux(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const o = <usize>b * 20;
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const xe0 = evS(x0), xo0 = odS(x0), xe1 = evS(x1), xo1 = odS(x1);
    const s = sum4(nibSum(p0 + o + 4, x0, x1, xe0, xo0, xe1, xo1), nibSum(p1 + o + 4, x0, x1, xe0, xo0, xe1, xo1),
      nibSum(p2 + o + 4, x0, x1, xe0, xo0, xe1, xo1), nibSum(p3 + o + 4, x0, x1, xe0, xo0, xe1, xo1));
    const dd = f32x4.mul(f16Rows(p0, p1, p2, p3, o), f32x4.splat(load<f32>(dp + (<usize>b << 2))));
    const ms = f32x4.mul(f16Rows(p0, p1, p2, p3, o + 2), f32x4.splat(load<f32>(sp + (<usize>b << 2))));
    acc = f32x4.add(acc, f32x4.add(f32x4.mul(dd, f32x4.convert_i32x4_s(s)), ms));
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
  // The plain build: the offset after sum4 (c per row measured 5% slower).
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
  for (let b = 0; b < nb; b++) {
    const o = <usize>b * 24;
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const xe0 = evS(x0), xo0 = odS(x0), xe1 = evS(x1), xo1 = odS(x1);
    const s = sum4(q5Sum(p0 + o + 4, p0 + o + 8, x0, x1, xe0, xo0, xe1, xo1), q5Sum(p1 + o + 4, p1 + o + 8, x0, x1, xe0, xo0, xe1, xo1),
      q5Sum(p2 + o + 4, p2 + o + 8, x0, x1, xe0, xo0, xe1, xo1), q5Sum(p3 + o + 4, p3 + o + 8, x0, x1, xe0, xo0, xe1, xo1));
    const dd = f32x4.mul(f16Rows(p0, p1, p2, p3, o), f32x4.splat(load<f32>(dp + (<usize>b << 2))));
    const ms = f32x4.mul(f16Rows(p0, p1, p2, p3, o + 2), f32x4.splat(load<f32>(sp + (<usize>b << 2))));
    acc = f32x4.add(acc, f32x4.add(f32x4.mul(dd, f32x4.convert_i32x4_s(s)), ms));
  }
  return acc;
}

/** vecDotQ8_0: sumf += sumi·(d_w·d_x). */
function dot4_q8_0(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const o = <usize>b * 34;
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const xe0 = nlXe(x0), xo0 = nlXo(x0), xe1 = nlXe(x1), xo1 = nlXo(x1);
    const c = ASC_FEATURE_RELAXED_SIMD ? q8Corr(xe0, xo0, xe1, xo1) : i32x4.splat(0);
    const s = sum4(q8Sum(p0 + o + 2, xe0, xo0, xe1, xo1, c), q8Sum(p1 + o + 2, xe0, xo0, xe1, xo1, c),
      q8Sum(p2 + o + 2, xe0, xo0, xe1, xo1, c), q8Sum(p3 + o + 2, xe0, xo0, xe1, xo1, c));
    const dd = f32x4.mul(f16Rows(p0, p1, p2, p3, o), v128.load32_splat(dp + (<usize>b << 2)));
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(s), dd));
  }
  return acc;
}

/** vecDotIq4Nl: sumf += (d_x·d_w)·sumi. */
function dot4_iq4_nl(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const o = <usize>b * 18;
    const xb = xq + (<usize>b << 5);
    const x0 = v128.load(xb), x1 = v128.load(xb, 16);
    const xe0 = nlXe(x0), xo0 = nlXo(x0), xe1 = nlXe(x1), xo1 = nlXo(x1);
    const s = sum4(nlSum(p0 + o + 2, xe0, xo0, xe1, xo1), nlSum(p1 + o + 2, xe0, xo0, xe1, xo1),
      nlSum(p2 + o + 2, xe0, xo0, xe1, xo1), nlSum(p3 + o + 2, xe0, xo0, xe1, xo1));
    const dd = f32x4.mul(f32x4.splat(load<f32>(dp + (<usize>b << 2))), f16Rows(p0, p1, p2, p3, o));
    acc = f32x4.add(acc, f32x4.mul(dd, f32x4.convert_i32x4_s(s)));
  }
  return acc;
}

// ---- rows of a matrix -----------------------------------------------------------------------------


/**
 * out[t·outStride + r] = row r · x_t for t < n (x_t at xq + t·xqStride): tokens in cache blocks of
 * TOKEN_BLOCK, within a block each group of four rows against every token while it sits in L1.
 * Each output is computed exactly as by rows4, so it equals matvec's bit for bit.
 */
// @ts-ignore: decorator
@inline function rows4Batch(dot: Dot4, out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  for (let t0 = 0; t0 < n; t0 += TOKEN_BLOCK) {
    const t1 = min<i32>(n, t0 + TOKEN_BLOCK);
    for (let r = r0; r < r1; r += 4) {
      const r4 = min<i32>(r + 4, r1);
      for (let t = t0; t < t1; t++) rows4(dot, out + (<usize>(t * outStride) << 2), w, rowBytes, r, r4, xq + <usize>t * xqStride, cols);
    }
  }
}

// ---- exported kernels (signatures as in float.ts) ----------------------------------------------

export function matvec_q8_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
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

export function matvec_q4_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_q4_0, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_q4_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_q4_0, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
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

/** kvalues_iq4nl in memory, for scalar lookups (ggml-common.h). */
export const IQ4NL: usize = memory.data<i8>([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]);
