// Helpers every kernel uses: half-precision conversions, 16-lane integer dot products (plain SIMD or
// relaxed SIMD, chosen at compile time), horizontal sums.
//
// Activation layouts (written by activation.ts, read by the dot kernels; mirrored in ../layout.ts):
//   q8_0 / q8_1:  qs[cols] i8 | d[cols/32] f32 | aux[cols/32]   aux = Σqs (i32) for q8_0, s = d·Σqs (f32) for q8_1
//   q8_K:         qs[cols] i8 | d[cols/256] f32 | bsums[cols/16] i16
//   f32/f16/bf16: x[cols] f32 (for f16/bf16 already rounded to that precision)
// Keeping the int8 lanes contiguous (ggml interleaves d and qs per block) lets every kernel load
// 16 activation lanes with one aligned v128.load.

/**
 * IEEE half bits → f32, exact for every half (ggml_compute_fp16_to_fp32). Normal halves rebias the
 * exponent by adding (127 − 15) << 23 (twice for Inf/NaN, whose exponent must become 255);
 * subnormal halves are m·2^-24. No float operation sees a subnormal input, which x86 makes slow.
 */
// @ts-ignore: decorator
@inline export function f16(h: u32): f32 {
  const e = h & 0x7c00;
  let v: f32;
  if (e == 0) v = <f32>(h & 0x3ff) * 5.9604644775390625e-8;
  else v = reinterpret<f32>(((h & 0x7fff) << 13) + (e == 0x7c00 ? 0x70000000 : 0x38000000));
  return reinterpret<f32>(reinterpret<u32>(v) | ((h & 0x8000) << 16));
}

// Constants of the f16Top family, loaded where used (V8 rebuilds a v128.const at every use in a loop).
const F16K: usize = memory.data<u8>([
  0, 0, 0, 0x70, 0, 0, 0, 0x70, 0, 0, 0, 0x70, 0, 0, 0, 0x70, //                      0 0xE0 << 23 (also f16HiMul's Inf/NaN rebias)
  0, 0, 0x80, 0x07, 0, 0, 0x80, 0x07, 0, 0, 0x80, 0x07, 0, 0, 0x80, 0x07, //          16 2^-112
  0, 0, 0, 0x3f, 0, 0, 0, 0x3f, 0, 0, 0, 0x3f, 0, 0, 0, 0x3f, //                      32 0.5
  0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0x80, //                      48 f32 sign
  0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f, // 64 f32 magnitude
  0, 0, 0, 0x04, 0, 0, 0, 0x04, 0, 0, 0, 0x04, 0, 0, 0, 0x04, //                      80 2^26
  0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff, //          96 top 16 bits
  0, 0xe0, 0xff, 0x8f, 0, 0xe0, 0xff, 0x8f, 0, 0xe0, 0xff, 0x8f, 0, 0xe0, 0xff, 0x8f, // 112 sign, 3 zero bits, half >> 3
  0, 0, 0x80, 0x77, 0, 0, 0x80, 0x77, 0, 0, 0x80, 0x77, 0, 0, 0x80, 0x77, //          128 2^112
  0, 0, 0, 0x7c, 0, 0, 0, 0x7c, 0, 0, 0, 0x7c, 0, 0, 0, 0x7c, //                      144 half exponent (top half)
  0, 0x7c, 0, 0x7c, 0, 0x7c, 0, 0x7c, 0, 0x7c, 0, 0x7c, 0, 0x7c, 0, 0x7c, //          160 both halves' exponents
], 16);
// @ts-ignore: decorator
@inline function f16k(off: usize): v128 {
  return v128.load(F16K + off);
}

/**
 * Halves in the top 16 bits of u32 lanes w (zeros below) → f32x4, exactly as f16() gives each and
 * without subnormal float operands, which cost x86 an assist of dozens of cycles each (the method
 * of Maratyszcza's FP16 library, which ggml_compute_fp16_to_fp32 also uses): normal halves are
 * shifted into place with exponent offset 0xE0 << 23 and scaled by 2^-112; subnormal halves are
 * built as 0.5 + m·2^-24 (exponent 126) and 0.5 is subtracted. (A NaN comes out quiet.) Q6_K's d
 * is a subnormal half in most blocks of trained models, Q4_K's and Q8_0's in those of small
 * weights (docs/performance.md); F16 weights have some too (float.ts).
 */
// @ts-ignore: decorator
@inline export function f16Top(w: v128): v128 {
  const twoW = i32x4.add(w, w);
  const norm = f32x4.mul(i32x4.add(i32x4.shr_u(twoW, 4), f16k(0)), f16k(16));
  const den = f32x4.sub(v128.or(i32x4.shr_u(twoW, 17), f16k(32)), f16k(32));
  const isDen = i32x4.lt_s(v128.and(w, f16k(64)), f16k(80)); // twoW < 2^27 unsigned, in one signed compare
  return v128.or(v128.and(w, f16k(48)), v128.bitselect(den, norm, isDen));
}

/** f16Top of the halves in the high 16 bits of h's lanes, whatever the low 16 bits hold. */
// @ts-ignore: decorator
@inline export function f16Hi(h: v128): v128 {
  return f16Top(v128.and(h, f16k(96)));
}

/**
 * f16Hi by one multiplication (the magnitude read as an f32 2^112 times too small), exact for every
 * half too and 7 instructions instead of 13, but a subnormal half becomes a subnormal operand: for
 * kernels whose halves are rarely subnormal, or that check first (f16HiPick, f16Sub).
 */
// @ts-ignore: decorator
@inline export function f16HiMul(h: v128): v128 {
  const m = v128.and(i32x4.shr_s(h, 3), f16k(112));
  const rebias = v128.and(i32x4.eq(v128.and(h, f16k(144)), f16k(144)), f16k(0));
  return f32x4.mul(v128.or(m, rebias), f16k(128));
}

/** f16Hi where sub (a half of the block is subnormal: f16Sub), else f16HiMul. */
// @ts-ignore: decorator
@inline export function f16HiIf(h: v128, sub: bool): v128 {
  if (sub) return f16Hi(h);
  return f16HiMul(h);
}

/** f16Hi, by f16HiMul when no lane's half has a zero exponent (the low halves are not read). */
// @ts-ignore: decorator
@inline export function f16HiPick(h: v128): v128 {
  return f16HiIf(h, v128.any_true(i32x4.eq(v128.and(h, f16k(144)), i32x4.splat(0))));
}

/** True when one of the 8 halves in h (both of each lane) has a zero exponent: subnormal or zero. */
// @ts-ignore: decorator
@inline export function f16Sub(h: v128): bool {
  return v128.any_true(i16x8.eq(v128.and(h, f16k(160)), i32x4.splat(0)));
}

/** f32 → IEEE half bits, round to nearest even (what ggml_compute_fp32_to_fp16 / F16C produce). */
export function f32ToF16(f: f32): u32 {
  const x = reinterpret<u32>(f);
  const sign = (x >> 16) & 0x8000;
  const ax = x & 0x7fffffff;
  if (ax >= 0x7f800000) return sign | (ax > 0x7f800000 ? 0x7e00 : 0x7c00);
  if (ax >= 0x477ff000) return sign | 0x7c00; // ≥ 65520 rounds to infinity
  if (ax < 0x38800000) {
    // Below 2^-14 the half is subnormal: its bits are round(|f|·2^24); the scaling is exact.
    return sign | <u32>nearest<f32>(reinterpret<f32>(ax) * 16777216.0);
  }
  // Rebias the exponent (−112 << 23) and round the 23-bit mantissa to 10 bits, ties to even.
  return sign | ((ax + 0xc8000fff + ((ax >> 13) & 1)) >> 13);
}

/** f32 rounded to the nearest half, as f32. */
// @ts-ignore: decorator
@inline export function roundF16(f: f32): f32 {
  return f16(f32ToF16(f));
}

// ---- 16-lane integer dot products -------------------------------------------------------------

/**
 * acc + Σ w·x over 16 lanes, w in [0, 127], x in [−127, 127]: four i32 lanes, each the sum of four
 * products. The relaxed build uses one i32x4.relaxed_dot_i8x16_i7x16_add_s (deterministic because w
 * is 7-bit); the plain build widens to i16 and uses i32x4.dot_i16x8_s.
 */
// @ts-ignore: decorator
@inline export function dotU(w: v128, x: v128, acc: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.relaxed_dot_i8x16_i7x16_add_s(x, w, acc);
  const lo = i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(w), i16x8.extend_low_i8x16_s(x));
  const hi = i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(w), i16x8.extend_high_i8x16_s(x));
  return i32x4.add(acc, i32x4.add(lo, hi));
}

/**
 * acc + Σ w·x over 16 lanes, both signed, by the widening i16 path. (Q8_0's relaxed build instead
 * dots w ^ (x < 0) with |x| and adds a per-block correction: legacy.ts q8Sum.)
 */
// @ts-ignore: decorator
@inline export function dotS(w: v128, x: v128, acc: v128): v128 {
  const lo = i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(w), i16x8.extend_low_i8x16_s(x));
  const hi = i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(w), i16x8.extend_high_i8x16_s(x));
  return i32x4.add(acc, i32x4.add(lo, hi));
}

/**
 * dotU / dotS with the weight's i16 halves widened beforehand (wl = low 8 lanes, wh = high 8), for
 * kernels that dot one weight block with several activations (the matmul tiles): the plain build
 * widens the weights once per tile instead of once per token. The integer sums are the same as
 * dotU's / dotS's, so a tile's results equal the one-token kernels' bit for bit. The relaxed build
 * uses its single-instruction dot on the bytes.
 */
// @ts-ignore: decorator
@inline export function dotUw(w: v128, wl: v128, wh: v128, x: v128, acc: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.relaxed_dot_i8x16_i7x16_add_s(x, w, acc);
  const lo = i32x4.dot_i16x8_s(wl, i16x8.extend_low_i8x16_s(x));
  const hi = i32x4.dot_i16x8_s(wh, i16x8.extend_high_i8x16_s(x));
  return i32x4.add(acc, i32x4.add(lo, hi));
}
// @ts-ignore: decorator
@inline export function dotSw(wl: v128, wh: v128, x: v128, acc: v128): v128 {
  const lo = i32x4.dot_i16x8_s(wl, i16x8.extend_low_i8x16_s(x));
  const hi = i32x4.dot_i16x8_s(wh, i16x8.extend_high_i8x16_s(x));
  return i32x4.add(acc, i32x4.add(lo, hi));
}
/** The low and high eight lanes of 16 signed bytes, widened to i16. */
// @ts-ignore: decorator
@inline export function wlo(w: v128): v128 {
  return i16x8.extend_low_i8x16_s(w);
}
// @ts-ignore: decorator
@inline export function whi(w: v128): v128 {
  return i16x8.extend_high_i8x16_s(w);
}

/** Tokens per cache block of the matmul kernels: a block's activations stay in L2 while every row passes. */
export const TOKEN_BLOCK: i32 = 64;

/** Sum of the four i32 lanes. */
// @ts-ignore: decorator
@inline export function hsumI(v: v128): i32 {
  const s = i32x4.add(v, i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  return i32x4.extract_lane(s, 0) + i32x4.extract_lane(s, 1);
}

/** Sum of the four f32 lanes. */
// @ts-ignore: decorator
@inline export function hsumF(v: v128): f32 {
  const s = f32x4.add(v, i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  return f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1);
}

/** acc + f32(isum)·scale, lane-wise: a block's exact integer sum weighted by its float scale. */
// @ts-ignore: decorator
@inline export function fmaI(acc: v128, isum: v128, scale: f32): v128 {
  return f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(isum), f32x4.splat(scale)));
}

/** The low nibbles of 16 bytes. */
// @ts-ignore: decorator
@inline export function lo4(q: v128): v128 {
  return v128.and(q, i8x16.splat(0x0f));
}

/** The high nibbles of 16 bytes. */
// @ts-ignore: decorator
@inline export function hi4(q: v128): v128 {
  return v128.and(i16x8.shr_u(q, 4), i8x16.splat(0x0f));
}

/** Bits (q >> s) & mask of each byte (s < 8; a 16-bit shift is fine once the mask drops the spill). */
// @ts-ignore: decorator
@inline export function bits(q: v128, s: i32, mask: i8): v128 {
  return v128.and(i16x8.shr_u(q, s), i8x16.splat(mask));
}

/** Activation pointers for the q8_0 / q8_1 layout. */
// @ts-ignore: decorator
@inline export function q8Scales(xq: usize, cols: i32): usize {
  return xq + <usize>cols;
}
// @ts-ignore: decorator
@inline export function q8Aux(xq: usize, cols: i32): usize {
  return xq + <usize>cols + (<usize>(cols >> 5) << 2);
}
/** Activation pointers for the q8_K layout. */
// @ts-ignore: decorator
@inline export function qKScales(xq: usize, cols: i32): usize {
  return xq + <usize>cols;
}
// @ts-ignore: decorator
@inline export function qKBsums(xq: usize, cols: i32): usize {
  return xq + <usize>cols + (<usize>(cols >> 8) << 2);
}

/** A 16-byte scratch area for per-block scale unpacking. */
export const SCRATCH: usize = memory.data(64, 16);

// ---- four blocks at a time ------------------------------------------------------------------

/**
 * Four IEEE halves (in the low 16 bits of each u32 lane) → f32x4, exactly as f16() does per lane:
 * normal halves rebias the exponent, subnormals are m·2^-24, Inf/NaN keep an all-ones exponent.
 */
// @ts-ignore: decorator
@inline export function f16x4(h: v128): v128 {
  const e = v128.and(h, i32x4.splat(0x7c00));
  const bias = v128.bitselect(i32x4.splat(0x70000000), i32x4.splat(0x38000000), i32x4.eq(e, i32x4.splat(0x7c00)));
  const normal = i32x4.add(i32x4.shl(v128.and(h, i32x4.splat(0x7fff)), 13), bias);
  const sub = f32x4.mul(f32x4.convert_i32x4_s(v128.and(h, i32x4.splat(0x3ff))), f32x4.splat(5.9604644775390625e-8));
  const mag = v128.bitselect(sub, normal, i32x4.eq(e, i32x4.splat(0)));
  return v128.or(mag, i32x4.shl(v128.and(h, i32x4.splat(0x8000)), 16));
}

/** The f16 at p, p + stride, p + 2·stride, p + 3·stride as f32x4 (block scales of four blocks). */
// @ts-ignore: decorator
@inline export function f16x4At(p: usize, stride: usize): v128 {
  let v = v128.load16_lane(p, i32x4.splat(0), 0);
  v = v128.load16_lane(p + stride, v, 2);
  v = v128.load16_lane(p + 2 * stride, v, 4);
  v = v128.load16_lane(p + 3 * stride, v, 6);
  return f16x4(v);
}

/** [Σa, Σb, Σc, Σd]: the lane sums of four i32x4 vectors, one lane each. */
// @ts-ignore: decorator
@inline export function sum4(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = i32x4.add(i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  const cd = i32x4.add(i8x16.shuffle(c, d, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(c, d, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  // ab = [a0+a2, b0+b2, a1+a3, b1+b3], cd likewise
  return i32x4.add(i8x16.shuffle(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), i8x16.shuffle(ab, cd, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
}

// ---- rows of a matrix, four at a time (legacy.ts and kquants.ts) ------------------------------------

/** A dot4_* kernel. */
export type Dot4 = (p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32) => v128;

/**
 * Sequential weight streams per thread in a matvec. One core reading one stream leaves much of
 * the bandwidth unused (its misses wait in a few fill buffers): the hardware prefetcher runs one
 * stream per page, so more streams keep more of DRAM busy. Eight beat four through the Q8_0
 * kernel, and sixteen are no better than eight (docs/performance.md).
 */
export const STREAMS: i32 = 8;

/**
 * out[r] = row r · xq for r in [r0, r1). The range is cut into STREAMS parts of q rows; each call
 * of dot takes the next row of four of them (lane k: part g + k), so every part is one long
 * sequential stream (four adjacent rows at a time are four short streams, which the prefetcher
 * does not follow: measurably slower). Lanes past the end of the range repeat
 * its last row and are not stored.
 */
// @ts-ignore: decorator
@inline export function rows4(dot: Dot4, out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  const q = (r1 - r0 + STREAMS - 1) / STREAMS;
  const last = r1 - 1;
  for (let i = 0; i < q; i++) {
    for (let g = 0; g < STREAMS; g += 4) {
      const a = r0 + g * q + i;
      if (a > last) break;
      const b = min(a + q, last), c = min(a + 2 * q, last), d = min(a + 3 * q, last);
      const v = dot(w + <usize>a * rowBytes, w + <usize>b * rowBytes, w + <usize>c * rowBytes, w + <usize>d * rowBytes, xq, cols);
      store<f32>(out + (<usize>a << 2), f32x4.extract_lane(v, 0));
      if (a + q <= last) store<f32>(out + (<usize>b << 2), f32x4.extract_lane(v, 1));
      if (a + 2 * q <= last) store<f32>(out + (<usize>c << 2), f32x4.extract_lane(v, 2));
      if (a + 3 * q <= last) store<f32>(out + (<usize>d << 2), f32x4.extract_lane(v, 3));
    }
  }
}

/**
 * out[t·outStride + r] = row r · x_t for t < n (x_t at xq + t·xqStride): tokens in cache blocks of
 * TOKEN_BLOCK, within a block each group of four rows against every token while it sits in L1.
 * Each output is computed exactly as by rows4, so it equals matvec's bit for bit.
 */
// @ts-ignore: decorator
@inline export function rows4Batch(dot: Dot4, out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  for (let t0 = 0; t0 < n; t0 += TOKEN_BLOCK) {
    const t1 = min<i32>(n, t0 + TOKEN_BLOCK);
    for (let r = r0; r < r1; r += 4) {
      const r4 = min<i32>(r + 4, r1);
      for (let t = t0; t < t1; t++) rows4(dot, out + (<usize>(t * outStride) << 2), w, rowBytes, r, r4, xq + <usize>t * xqStride, cols);
    }
  }
}

/**
 * a·b + c in both f64 lanes: relaxed madd in the relaxed build (fused or not, as the engine likes),
 * else mul then add. For sums whose error bound holds either way (ffn.ts swiglu, sample.ts exp sums).
 */
// @ts-ignore: decorator
@inline export function madd64(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f64x2.relaxed_madd(a, b, c);
  return f64x2.add(f64x2.mul(a, b), c);
}
