// The 256-element super-block formats, dotted with a Q8_K activation. Block layouts (ggml-common.h):
//   Q2_K   84 B { u8 scales[16]; u8 qs[64]; f16 d; f16 dmin }             x = d·(sc&15)·q − dmin·(sc>>4)
//   Q3_K  110 B { u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d }         x = d·(sc−32)·(q + 4·h − 4)
//   Q4_K  144 B { f16 d; f16 dmin; u8 scales[12]; u8 qs[128] }            x = d·sc·q − dmin·m
//   Q5_K  176 B { f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128] } x = d·sc·(q + 16·h) − dmin·m
//   Q6_K  210 B { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d }           x = d·sc·(q − 32)
//   IQ4_XS 136 B { f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128] }      x = d·(ls−32)·kvalues_iq4nl[q]
//   TQ1_0  54 B { u8 qs[48]; u8 qh[4]; f16 d }  base-3 packed trits       x = d·(t − 1)
//   TQ2_0  66 B { u8 qs[64]; f16 d }            2-bit fields               x = d·(q − 1)
// Element order inside a block is ggml's dequantize_row_* order. Each dot forms the block's exact
// integer sum (sub-block scale × 16-lane dot, offsets and minimums taken out with the activation's
// bsums, as ggml_vec_dot_*_q8_K do), then scales it by d_w·d_x in f32. matvec of Q2_K…Q6_K takes
// four rows per pass (dot4_*, rows4), each row summed exactly as by its one-row dot_* (matvec1_*).

import { Dot4, SCRATCH, bits, dotS, dotU, dotUw, f16, f16x4, fmaI, hi4, hsumF, hsumI, lo4, qKBsums, qKScales, rows4, rows4Batch, whi, wlo } from './common';
import { IQ4NL } from './legacy';
import { Q4KG_BLOCK, Q4KG_ROW, matvecG_q4_K, q4kGrouped, q4kgBlock } from './q4k-group';
import { dequantG_q6_K, matvecG_q6_K, q6Grouped } from './q6k-group';

const Z: v128 = i32x4.splat(0);

// Vector constants of the hot loops, loaded from memory where used: V8 rebuilds a v128.const at
// every use inside a loop (2-4 instructions), while a load is one instruction (legacy.ts does the same).
const KC: usize = memory.data<u8>([
  0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, //  0 nibble mask
  0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, // 16 Q6_K high bits 4–5
  0x0f, 0, 0x0f, 0, 0x0f, 0, 0x0f, 0, 0x0f, 0, 0x0f, 0, 0x0f, 0, 0x0f, 0, //                         32 i16 0x000f
  0, 0x0f, 0, 0x0f, 0, 0x0f, 0, 0x0f, 0, 0x0f, 0, 0x0f, 0, 0x0f, 0, 0x0f, //                         48 i16 0x0f00
  0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, //                         64 i16 0x00ff
  0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, //                         80 i16 0xff00
  3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, //                                                  96 2-bit mask
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, //                                                 112 1-bit mask
  0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, // 128 bit 4
  4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, //                                                 144 bit 2
  32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, //                                 160 Q3_K scale offset
  0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, // 176 6-bit mask
], 16);
/** The low and high nibbles of 16 bytes (common.ts lo4 / hi4 with the mask loaded). */
// @ts-ignore: decorator
@inline function lo4k(q: v128): v128 {
  return v128.and(q, v128.load(KC));
}
// @ts-ignore: decorator
@inline function hi4k(q: v128): v128 {
  return v128.and(i16x8.shr_u(q, 4), v128.load(KC));
}
/** Bits 2-bit field (q >> s) & 3 and 1-bit field (q >> s) & 1 of each byte (common.ts bits, mask loaded). */
// @ts-ignore: decorator
@inline function bits2(q: v128, s: i32): v128 {
  return v128.and(i16x8.shr_u(q, s), v128.load(KC, 96));
}
// @ts-ignore: decorator
@inline function bits1(q: v128, s: i32): v128 {
  return v128.and(i16x8.shr_u(q, s), v128.load(KC, 112));
}

/** Σ_k coef_k · bsum_k for the 16 bsums of a block (coefficients as 16 i8 lanes). */
// @ts-ignore: decorator
@inline function bsumDotS(bs: usize, coef: v128): v128 {
  return i32x4.add(
    i32x4.dot_i16x8_s(v128.load(bs), i16x8.extend_low_i8x16_s(coef)),
    i32x4.dot_i16x8_s(v128.load(bs, 16), i16x8.extend_high_i8x16_s(coef)),
  );
}
/** The same with unsigned coefficients (0..255). */
// @ts-ignore: decorator
@inline function bsumDotU(bs: usize, coef: v128): v128 {
  return i32x4.add(
    i32x4.dot_i16x8_s(v128.load(bs), i16x8.extend_low_i8x16_u(coef)),
    i32x4.dot_i16x8_s(v128.load(bs, 16), i16x8.extend_high_i8x16_u(coef)),
  );
}
/** Σ of the 16 bsums as i32x4 lanes (Σx over the block). */
// @ts-ignore: decorator
@inline function bsumAll(bs: usize): v128 {
  return i32x4.add(i32x4.extadd_pairwise_i16x8_s(v128.load(bs)), i32x4.extadd_pairwise_i16x8_s(v128.load(bs, 16)));
}
/** isum + dot·scale. */
// @ts-ignore: decorator
@inline function mulAdd(isum: v128, dot: v128, scale: i32): v128 {
  return i32x4.add(isum, i32x4.mul(dot, i32x4.splat(scale)));
}

/**
 * Q4_K/Q5_K 6-bit scales and mins (get_scale_min_k4) as 16 bytes: sc[0..7] then m[0..7]; the u32
 * shuffle is the one ggml's SIMD paths use (kmask1 = 0x3f3f3f3f, kmask2 = 0x0f0f0f0f, kmask3 = 0x03030303).
 */
// @ts-ignore: decorator
@inline function scalesK4(p: usize): v128 {
  const u0 = load<u32>(p), u1 = load<u32>(p, 4), u2 = load<u32>(p, 8);
  const s0 = u0 & 0x3f3f3f3f;
  const s1 = (u2 & 0x0f0f0f0f) | (((u0 >> 6) & 0x03030303) << 4);
  const m0 = u1 & 0x3f3f3f3f;
  const m1 = ((u2 >> 4) & 0x0f0f0f0f) | (((u1 >> 6) & 0x03030303) << 4);
  return i32x4.replace_lane(i32x4.replace_lane(i32x4.replace_lane(i32x4.splat(s0), 1, s1), 2, m0), 3, m1);
}

/** Q3_K's sixteen 6-bit scales, minus 32, as 16 signed bytes (dequantize_row_q3_K's aux unpacking). */
// @ts-ignore: decorator
@inline function scalesQ3(p: usize): v128 {
  const a0 = load<u32>(p), a1 = load<u32>(p, 4), t = load<u32>(p, 8);
  const s2 = ((a0 >> 4) & 0x0f0f0f0f) | (((t >> 4) & 0x03030303) << 4);
  const s3 = ((a1 >> 4) & 0x0f0f0f0f) | (((t >> 6) & 0x03030303) << 4);
  const s0 = (a0 & 0x0f0f0f0f) | ((t & 0x03030303) << 4);
  const s1 = (a1 & 0x0f0f0f0f) | (((t >> 2) & 0x03030303) << 4);
  const v = i32x4.replace_lane(i32x4.replace_lane(i32x4.replace_lane(i32x4.splat(s0), 1, s1), 2, s2), 3, s3);
  return i8x16.sub(v, v128.load(KC, 160));
}

/** [Σa, Σb, Σc, Σd]: the lane sums of four vectors, as four lanes. */
// @ts-ignore: decorator
@inline function reduce4(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = i32x4.add(i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  const cd = i32x4.add(i8x16.shuffle(c, d, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(c, d, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  // ab = [a0+a2, b0+b2, a1+a3, b1+b3], cd likewise
  return i32x4.add(i8x16.shuffle(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), i8x16.shuffle(ab, cd, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
}

/**
 * isum + scale·Σ w·x over 16 lanes (w in [0, 63]), lanes as mulAdd(isum, dotU(w, x, Z), scale). The
 * relaxed build needs two instructions fewer: the i16 pair sums (|·| ≤ 2·63·128, never saturating;
 * lane i's pair 2i, 2i+1 = products 4i..4i+3, dotU's lane i) meet the scale in one i16 dot.
 */
// @ts-ignore: decorator
@inline function dotSc(isum: v128, w: v128, x: v128, scale: i32): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.add(isum, i32x4.dot_i16x8_s(i16x8.relaxed_dot_i8x16_i7x16_s(x, w), i16x8.splat(<i16>scale)));
  return mulAdd(isum, dotU(w, x, Z), scale);
}
/** The same for 32 lanes w0·x0 + w1·x1 (w in [0, 31]), lanes as mulAdd(isum, dotU(w1, x1, dotU(w0, x0, Z)), scale). */
// @ts-ignore: decorator
@inline function dotSc2(isum: v128, w0: v128, x0: v128, w1: v128, x1: v128, scale: i32): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    const p = i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(x0, w0), i16x8.relaxed_dot_i8x16_i7x16_s(x1, w1));
    return i32x4.add(isum, i32x4.dot_i16x8_s(p, i16x8.splat(<i16>scale)));
  }
  return mulAdd(isum, dotU(w1, x1, dotU(w0, x0, Z)), scale);
}

/**
 * Σ w0·x0 + w1·x1 over 32 lanes (w in [0, 15]), relaxed build, as eight i16 pair sums: each half's
 * pair sums (pmaddubsw on x86, |·| ≤ 2·15·128 = 3840) added in i16, |·| ≤ 7680.
 */
// @ts-ignore: decorator
@inline function dot32w(w0: v128, x0: v128, w1: v128, x1: v128): v128 {
  return i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(x0, w0), i16x8.relaxed_dot_i8x16_i7x16_s(x1, w1));
}
/**
 * [Σa, Σb, Σc, Σd] of four dot32w results as i32 lanes (reduce4 of their widened sums, the same
 * integers): pairs of i16 lanes are added in i16 twice (|·| ≤ 2·7680, then 4·7680 = 30720, no
 * wrap) and widened by one pairwise add at the end, where widening each first takes four.
 */
// @ts-ignore: decorator
@inline function reduce4w(a: v128, b: v128, c: v128, d: v128): v128 {
  // as i32 lanes (two i16 each): ab = [a0+a2, b0+b2, a1+a3, b1+b3], cd likewise
  const ab = i16x8.add(i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  const cd = i16x8.add(i8x16.shuffle(c, d, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(c, d, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  const abcd = i16x8.add(i8x16.shuffle(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), i8x16.shuffle(ab, cd, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
  return i32x4.extadd_pairwise_i16x8_s(abcd);
}
/** Q4_K chunk c (64 elements): the low-nibble sub-block 2c's i16 pair sums (relaxed build) … */
// @ts-ignore: decorator
@inline function q4Lo(wb: usize, xb: usize, c: i32): v128 {
  const q = wb + 16 + (<usize>c << 5);
  const x = xb + (<usize>c << 6);
  return dot32w(lo4k(v128.load(q)), v128.load(x), lo4k(v128.load(q, 16)), v128.load(x, 16));
}
/** … and the high-nibble sub-block 2c+1's. */
// @ts-ignore: decorator
@inline function q4Hi(wb: usize, xb: usize, c: i32): v128 {
  const q = wb + 16 + (<usize>c << 5);
  const x = xb + (<usize>c << 6);
  return dot32w(hi4k(v128.load(q)), v128.load(x, 32), hi4k(v128.load(q, 16)), v128.load(x, 48));
}

/**
 * Q4_K nibbles dotted in i16 lanes with no byte widening, each product scaled by 256: lane i of q
 * as i16 holds bytes 2i (even element) and 2i+1 (odd). Even nibbles are masked to the low byte and
 * meet the even activation byte shifted into the high byte (256·x); odd nibbles are masked in place
 * (256·w) and meet the odd activation byte shifted down (sar 8). Low nibbles (q4LoW) …
 */
// @ts-ignore: decorator
@inline function q4LoW(q: v128, x: v128): v128 {
  return i32x4.add(
    i32x4.dot_i16x8_s(v128.and(q, v128.load(KC, 32)), i16x8.shl(x, 8)),
    i32x4.dot_i16x8_s(v128.and(q, v128.load(KC, 48)), i16x8.shr_s(x, 8)),
  );
}
/** … and high nibbles (q4HiW). */
// @ts-ignore: decorator
@inline function q4HiW(q: v128, x: v128): v128 {
  const h = i16x8.shr_u(q, 4);
  return i32x4.add(
    i32x4.dot_i16x8_s(v128.and(h, v128.load(KC, 32)), i16x8.shl(x, 8)),
    i32x4.dot_i16x8_s(v128.and(h, v128.load(KC, 48)), i16x8.shr_s(x, 8)),
  );
}

/** Two vectors a, b folded to lanes [a0+a2, b0+b2, a1+a3, b1+b3]. */
// @ts-ignore: decorator
@inline function foldPair(a: v128, b: v128): v128 {
  return i32x4.add(i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
}
/**
 * 256·Σ w·x over 16 lanes, w unsigned bytes below 128 and x signed, without widening either: the
 * q4LoW split, with the weight given as its even bytes (we = w & 0x00ff per i16, met by 256·x_even)
 * and odd bytes (wo = w & 0xff00, met by x_odd). The matmul tile masks a weight once per tile.
 */
// @ts-ignore: decorator
@inline function dot256m(we: v128, wo: v128, x: v128): v128 {
  return i32x4.add(i32x4.dot_i16x8_s(we, i16x8.shl(x, 8)), i32x4.dot_i16x8_s(wo, i16x8.shr_s(x, 8)));
}
// @ts-ignore: decorator
@inline function evenB(w: v128): v128 {
  return v128.and(w, v128.load(KC, 64));
}
// @ts-ignore: decorator
@inline function oddB(w: v128): v128 {
  return v128.and(w, v128.load(KC, 80));
}
/**
 * Two 256-scaled sub-block sums a, b folded (foldPair), unscaled (exact shift) and multiplied by
 * their i8 scales sc[0] and sc[2].
 */
// @ts-ignore: decorator
@inline function pairB(a: v128, b: v128, sc: usize): v128 {
  const s = <u64><u32><i32>load<i8>(sc) | (<u64><u32><i32>load<i8>(sc, 2) << 32);
  return i32x4.mul(i32x4.shr_s(foldPair(a, b), 8), i64x2.splat(s));
}

// ---- dots over one row ------------------------------------------------------------------------

/**
 * One Q4_K block's integer sum Σ_j s_j·S_j (S_j = sub-block j's Σ q·x, s_j its 6-bit scale; sm =
 * scalesK4 of the block), as four i32 lanes: lane j = s_j·S_j + s_j+4·S_j+4 in both builds.
 */
// @ts-ignore: decorator
@inline function q4KSum(wb: usize, xb: usize, sm: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    // Sub-block sums S_j (i16 pair sums each), reduced four at a time to one i32 lane per
    // sub-block, then scaled with one i32x4 multiply per four sub-blocks.
    const r0 = reduce4w(q4Lo(wb, xb, 0), q4Hi(wb, xb, 0), q4Lo(wb, xb, 1), q4Hi(wb, xb, 1));
    const r1 = reduce4w(q4Lo(wb, xb, 2), q4Hi(wb, xb, 2), q4Lo(wb, xb, 3), q4Hi(wb, xb, 3));
    const sc16 = i16x8.extend_low_i8x16_u(sm);
    return i32x4.add(i32x4.mul(r0, i32x4.extend_low_i16x8_u(sc16)), i32x4.mul(r1, i32x4.extend_high_i16x8_u(sc16)));
  }
  // One 64-element chunk (sub-blocks 2c, 2c+1) per pass of a loop the compiler keeps rolled, so
  // V8 keeps one chunk's values in registers instead of spilling all eight sub-blocks' (measured).
  // The scales s_0..7 as bytes of a u64, consumed a pair per pass as lanes [s_2c, s_2c+1, s_2c, s_2c+1].
  // Lanes end as the relaxed build's: chunks 0, 2 land in lanes 0–1 (accA) and chunks 1, 3 in
  // lanes 2–3 (accB), swapped each pass.
  let scw = i64x2.extract_lane(sm, 0);
  let accA = Z, accB = Z;
  for (let c = 0; c < 4; c++) {
    const q = wb + 16 + (<usize>c << 5);
    const x = xb + (<usize>c << 6);
    const sl = i32x4.add(q4LoW(v128.load(q), v128.load(x)), q4LoW(v128.load(q, 16), v128.load(x, 16)));
    const sh = i32x4.add(q4HiW(v128.load(q), v128.load(x, 32)), q4HiW(v128.load(q, 16), v128.load(x, 48)));
    const t = i32x4.shr_s(foldPair(sl, sh), 8);
    const m = i32x4.mul(i32x4.add(t, i8x16.shuffle(t, t, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7)), i64x2.splat((scw & 0xff) | ((scw & 0xff00) << 24)));
    const next = i32x4.add(accA, m);
    accA = accB;
    accB = next;
    scw >>= 16;
  }
  return i8x16.shuffle(accA, accB, 0, 1, 2, 3, 4, 5, 6, 7, 24, 25, 26, 27, 28, 29, 30, 31);
}
/** Σ_j m_j·(bsum_2j + bsum_2j+1) as i32x4 lanes: the block's minimums (sm's high 8 bytes) each cover two 16-lane bsums. */
// @ts-ignore: decorator
@inline function q4KMins(bs: usize, sm: v128): v128 {
  return bsumDotU(bs, i8x16.shuffle(sm, sm, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15));
}

// @ts-ignore: decorator
@inline function dot_q4_K(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc = f32x4.splat(0);
  let accm: f32 = 0;
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 144;
    const sm = scalesK4(wb + 4);
    const minsum = hsumI(q4KMins(bp + (<usize>b << 5), sm));
    const isum = q4KSum(wb, xq + (<usize>b << 8), sm);
    const dx = load<f32>(dp + (<usize>b << 2));
    acc = fmaI(acc, isum, f16(load<u16>(wb)) * dx);
    accm += f16(load<u16>(wb, 2)) * dx * <f32>minsum;
  }
  return hsumF(acc) - accm;
}

/**
 * Chunk c of a Q5_K block (sub-blocks 2c, 2c+1) added to isum. hs0, hs1: the block's qh halves, shifted
 * left by 4 for c < 2, so bit j of each byte lands on bit 4 by one shift right by j & 3 (i16 lanes: the
 * byte above gets its own bit 12 = bit 4, nothing crosses the 0x10 mask).
 */
// @ts-ignore: decorator
@inline function q5Chunk(isum: v128, wb: usize, xb: usize, c: i32, hs0: v128, hs1: v128): v128 {
  const q0 = v128.load(wb + 48 + (<usize>c << 5));
  const q1 = v128.load(wb + 48 + (<usize>c << 5), 16);
  const xc = xb + (<usize>c << 6);
  const j = 2 * c;
  const m = v128.load(KC, 128);
  const l0 = v128.or(lo4k(q0), v128.and(i16x8.shr_u(hs0, j & 3), m));
  const l1 = v128.or(lo4k(q1), v128.and(i16x8.shr_u(hs1, j & 3), m));
  const u0 = v128.or(hi4k(q0), v128.and(i16x8.shr_u(hs0, (j + 1) & 3), m));
  const u1 = v128.or(hi4k(q1), v128.and(i16x8.shr_u(hs1, (j + 1) & 3), m));
  isum = dotSc2(isum, l0, v128.load(xc), l1, v128.load(xc, 16), <i32>load<u8>(SCRATCH + j));
  return dotSc2(isum, u0, v128.load(xc, 32), u1, v128.load(xc, 48), <i32>load<u8>(SCRATCH + j + 1));
}

/** One Q5_K block's integer sum Σ_j s_j·Σ q·x as four i32 lanes (sm: scalesK4 of the block; its scales go through SCRATCH). */
// @ts-ignore: decorator
@inline function q5KSum(wb: usize, xb: usize, sm: v128): v128 {
  v128.store(SCRATCH, sm);
  const h0 = v128.load(wb, 16);
  const h1 = v128.load(wb, 32);
  const g0 = i16x8.shl(h0, 4), g1 = i16x8.shl(h1, 4);
  let isum = Z;
  for (let c = 0; c < 2; c++) isum = q5Chunk(isum, wb, xb, c, g0, g1);
  for (let c = 2; c < 4; c++) isum = q5Chunk(isum, wb, xb, c, h0, h1);
  return isum;
}

// @ts-ignore: decorator
@inline function dot_q5_K(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc = f32x4.splat(0);
  let accm: f32 = 0;
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 176;
    const sm = scalesK4(wb + 4);
    const minsum = hsumI(q4KMins(bp + (<usize>b << 5), sm));
    const isum = q5KSum(wb, xq + (<usize>b << 8), sm);
    const dx = load<f32>(dp + (<usize>b << 2));
    acc = fmaI(acc, isum, f16(load<u16>(wb)) * dx);
    accm += f16(load<u16>(wb, 2)) * dx * <f32>minsum;
  }
  return hsumF(acc) - accm;
}

/** isum + quarter (n, v) of a Q6_K block: its 64 elements in four groups of 16 (quants 32n + 16v … of ql's halves), each with its scale. */
// @ts-ignore: decorator
@inline function q6Quarter(isum: v128, wb: usize, xb: usize, n: i32, v: i32): v128 {
  const ql = wb + (<usize>n << 6) + (<usize>v << 4);
  const a = v128.load(ql);
  const c = v128.load(ql, 32);
  const h = v128.load(wb + 128 + (<usize>n << 5) + (<usize>v << 4));
  const xv = xb + (<usize>n << 7) + (<usize>v << 4);
  const sc = wb + 192 + (<usize>n << 3) + <usize>v;
  // qh bit pairs moved straight to bits 4–5 (one shift and one mask each)
  const m = v128.load(KC, 16);
  const q1 = v128.or(lo4k(a), v128.and(i16x8.shl(h, 4), m));
  const q2 = v128.or(lo4k(c), v128.and(i16x8.shl(h, 2), m));
  const q3 = v128.or(hi4k(a), v128.and(h, m));
  const q4 = v128.or(hi4k(c), v128.and(i16x8.shr_u(h, 2), m));
  if (ASC_FEATURE_RELAXED_SIMD) {
    isum = dotSc(isum, q1, v128.load(xv), <i32>load<i8>(sc));
    isum = dotSc(isum, q2, v128.load(xv, 32), <i32>load<i8>(sc, 2));
    isum = dotSc(isum, q3, v128.load(xv, 64), <i32>load<i8>(sc, 4));
    return dotSc(isum, q4, v128.load(xv, 96), <i32>load<i8>(sc, 6));
  }
  isum = i32x4.add(isum, pairB(dot256m(evenB(q1), oddB(q1), v128.load(xv)), dot256m(evenB(q2), oddB(q2), v128.load(xv, 32)), sc));
  return i32x4.add(isum, pairB(dot256m(evenB(q3), oddB(q3), v128.load(xv, 64)), dot256m(evenB(q4), oddB(q4), v128.load(xv, 96)), sc + 4));
}

/** One Q6_K block's integer sum Σ_g sc_g·Σ (q − 32)·x as four i32 lanes (bs: the activation block's bsums). */
// @ts-ignore: decorator
@inline function q6KSum(wb: usize, xb: usize, bs: usize): v128 {
  const scv = v128.load(wb, 192);
  // −32 offset of every quant, taken out as 32·Σ_g sc_g·bsum_g.
  let isum = i32x4.shl(i32x4.sub(Z, bsumDotS(bs, scv)), 5);
  if (!ASC_FEATURE_RELAXED_SIMD) {
    // plain: one quarter per pass of a rolled loop; written out, Node 20's V8 keeps all four
    // quarters' values live and spills them (docs/performance.md)
    for (let q = 0; q < 4; q++) isum = q6Quarter(isum, wb, xb, q >> 1, q & 1);
    return isum;
  }
  // the four quarters (n, v) written out with constant n and v, so every offset below folds into
  // its load (V8 then computes no addresses in the block)
  isum = q6Quarter(isum, wb, xb, 0, 0);
  isum = q6Quarter(isum, wb, xb, 0, 1);
  isum = q6Quarter(isum, wb, xb, 1, 0);
  isum = q6Quarter(isum, wb, xb, 1, 1);
  return isum;
}

// @ts-ignore: decorator
@inline function dot_q6_K(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 210;
    const isum = q6KSum(wb, xq + (<usize>b << 8), bp + (<usize>b << 5));
    acc = fmaI(acc, isum, f16(load<u16>(wb, 208)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc);
}

/** One Q2_K block's integer sum Σ_g sc_g·Σ q·x as four i32 lanes (its scales go through SCRATCH). */
// @ts-ignore: decorator
@inline function q2KSum(wb: usize, xb: usize): v128 {
  v128.store(SCRATCH, lo4k(v128.load(wb)));
  let isum = Z;
  for (let n = 0; n < 2; n++) {
    const q0 = v128.load(wb + 16 + (<usize>n << 5));
    const q1 = v128.load(wb + 16 + (<usize>n << 5), 16);
    // written out: constant shift counts (V8 shifts by a variable count through an extra register
    // move; much faster relaxed on Q2_K and Q3_K, while Q5_K's rolled loop is as fast or faster)
    isum = q2Pair(isum, q0, q1, xb, n, 0);
    isum = q2Pair(isum, q0, q1, xb, n, 1);
    isum = q2Pair(isum, q0, q1, xb, n, 2);
    isum = q2Pair(isum, q0, q1, xb, n, 3);
  }
  return isum;
}
/** Groups g = 8n + 2j and g + 1 of a Q2_K block (2-bit field j of q0, q1) added to isum. */
// @ts-ignore: decorator
@inline function q2Pair(isum: v128, q0: v128, q1: v128, xb: usize, n: i32, j: i32): v128 {
  const g = 8 * n + 2 * j;
  const xg = xb + (<usize>g << 4);
  isum = dotSc(isum, bits2(q0, 2 * j), v128.load(xg), <i32>load<u8>(SCRATCH + g));
  return dotSc(isum, bits2(q1, 2 * j), v128.load(xg, 16), <i32>load<u8>(SCRATCH + g + 1));
}

// @ts-ignore: decorator
@inline function dot_q2_K(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc = f32x4.splat(0);
  let accm: f32 = 0;
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 84;
    const minsum = hsumI(bsumDotU(bp + (<usize>b << 5), hi4k(v128.load(wb))));
    const isum = q2KSum(wb, xq + (<usize>b << 8));
    const dx = load<f32>(dp + (<usize>b << 2));
    acc = fmaI(acc, isum, f16(load<u16>(wb, 80)) * dx);
    accm += f16(load<u16>(wb, 82)) * dx * <f32>minsum;
  }
  return hsumF(acc) - accm;
}

/**
 * Half n of a Q3_K block (groups 8n..8n+7) added to isum. hs0, hs1: the hmask halves, shifted left by
 * 2 for n = 0, so hmask bit 4n + j lands on bit 2 by one shift right by j + 2n (i16 lanes: the byte
 * above gets its own bit 10 = bit 2, nothing crosses the 0x04 mask).
 */
// @ts-ignore: decorator
@inline function q3Half(isum: v128, wb: usize, xb: usize, n: i32, hs0: v128, hs1: v128, hn: i32): v128 {
  const q0 = v128.load(wb + 32 + (<usize>n << 5));
  const q1 = v128.load(wb + 32 + (<usize>n << 5), 16);
  isum = q3Pair(isum, q0, q1, hs0, hs1, xb, n, 0, hn);
  isum = q3Pair(isum, q0, q1, hs0, hs1, xb, n, 1, hn);
  isum = q3Pair(isum, q0, q1, hs0, hs1, xb, n, 2, hn);
  return q3Pair(isum, q0, q1, hs0, hs1, xb, n, 3, hn);
}
/** Groups g = 8n + 2j and g + 1 of q3Half (written out per j: constant shift counts j + hn). */
// @ts-ignore: decorator
@inline function q3Pair(isum: v128, q0: v128, q1: v128, hs0: v128, hs1: v128, xb: usize, n: i32, j: i32, hn: i32): v128 {
  const g = 8 * n + 2 * j;
  const xg = xb + (<usize>g << 4);
  const m = v128.load(KC, 144);
  const v0 = v128.or(bits2(q0, 2 * j), v128.and(i16x8.shr_u(hs0, j + hn), m));
  const v1 = v128.or(bits2(q1, 2 * j), v128.and(i16x8.shr_u(hs1, j + hn), m));
  isum = dotSc(isum, v0, v128.load(xg), <i32>load<i8>(SCRATCH + g));
  return dotSc(isum, v1, v128.load(xg, 16), <i32>load<i8>(SCRATCH + g + 1));
}

/** One Q3_K block's integer sum Σ_g sc_g·Σ (q − 4)·x as four i32 lanes (bs: the activation block's bsums). */
// @ts-ignore: decorator
@inline function q3KSum(wb: usize, xb: usize, bs: usize): v128 {
  const scv = scalesQ3(wb + 96);
  v128.store(SCRATCH, scv);
  // quant = low2 + 4·h − 4: the −4 comes out as 4·Σ_g sc_g·bsum_g.
  const isum = i32x4.shl(i32x4.sub(Z, bsumDotS(bs, scv)), 2);
  const h0 = v128.load(wb);
  const h1 = v128.load(wb, 16);
  if (ASC_FEATURE_RELAXED_SIMD) return q3Half(q3Half(isum, wb, xb, 0, i16x8.shl(h0, 2), i16x8.shl(h1, 2), 0), wb, xb, 1, h0, h1, 2);
  // plain: one half per pass of a rolled loop (written out, Node 20's V8 spills both halves'
  // values), with hmask shifted so that the shift counts stay constant: bit 4 + j lands on bit 2
  // of (h >> 2) >> j, inside its byte
  let hs0 = i16x8.shl(h0, 2), hs1 = i16x8.shl(h1, 2);
  let acc = isum;
  for (let n = 0; n < 2; n++) {
    acc = q3Half(acc, wb, xb, n, hs0, hs1, 0);
    hs0 = i16x8.shr_u(h0, 2);
    hs1 = i16x8.shr_u(h1, 2);
  }
  return acc;
}

// @ts-ignore: decorator
@inline function dot_q3_K(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 110;
    const isum = q3KSum(wb, xq + (<usize>b << 8), bp + (<usize>b << 5));
    acc = fmaI(acc, isum, f16(load<u16>(wb, 108)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc);
}

/**
 * IQ4_XS sub-block ib (32 elements) of the block at wb: Σ kvalues_iq4nl[q]·x as four i32 lanes,
 * times its scale ls − 32. The relaxed build as legacy.ts nlSum: the table value flipped where
 * x < 0 (w ^ xo), dotted with |x|, starting from c = Σ_{x<0} |x| (xe, xo, c from iq4Terms, shared
 * by the rows of dot4_iq4_xs); the plain build widens both to i16 (x0, x1 in xe0, xe1).
 */
// @ts-ignore: decorator
@inline function iq4xsSub(isum: v128, wb: usize, ib: i32, xe0: v128, xo0: v128, xe1: v128, xo1: v128, c: v128): v128 {
  const sh = <i32>load<u16>(wb, 2);
  const ls = ((<i32>load<u8>(wb + 4 + <usize>(ib >> 1)) >> (4 * (ib & 1))) & 15) | (((sh >> (2 * ib)) & 3) << 4);
  const q = v128.load(wb + 8 + (<usize>ib << 4));
  const t = v128.load(IQ4NL);
  let s: v128;
  if (ASC_FEATURE_RELAXED_SIMD) {
    // nibbles are in range, so the relaxed swizzle is exact
    s = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.xor(i8x16.relaxed_swizzle(t, lo4k(q)), xo0), xe0, c);
    s = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.xor(i8x16.relaxed_swizzle(t, hi4k(q)), xo1), xe1, s);
  } else {
    s = dotS(i8x16.swizzle(t, hi4k(q)), xe1, dotS(i8x16.swizzle(t, lo4k(q)), xe0, Z));
  }
  return mulAdd(isum, s, ls - 32);
}

/**
 * The activation's terms for iq4xsSub at xg (32 bytes): relaxed xe = |x| (a Q8_K activation is
 * never −128), xo = x < 0, c = Σ_{x<0} |x| spread over four lanes; plain: x itself in xe0, xe1.
 */
// @ts-ignore: decorator
@inline function iq4Terms(xg: usize, out: usize): void {
  const x0 = v128.load(xg), x1 = v128.load(xg, 16);
  if (ASC_FEATURE_RELAXED_SIMD) {
    const xe0 = i8x16.abs(x0), xo0 = i8x16.lt_s(x0, Z), xe1 = i8x16.abs(x1), xo1 = i8x16.lt_s(x1, Z);
    v128.store(out, xe0);
    v128.store(out, xo0, 16);
    v128.store(out, xe1, 32);
    v128.store(out, xo1, 48);
    v128.store(out, i32x4.neg(i32x4.relaxed_dot_i8x16_i7x16_add_s(xo1, xe1, i32x4.relaxed_dot_i8x16_i7x16_add_s(xo0, xe0, Z))), 64);
  } else {
    v128.store(out, x0);
    v128.store(out, x1, 32);
  }
}

/** Scratch of iq4Terms for the eight sub-blocks of one block (80 bytes each). */
const IQ4X: usize = memory.data(8 * 80, 16);

/** IQ4_XS, four rows (lane k: row k), the activation's terms made once per block for all four. */
function dot4_iq4_xs(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  let acc0 = f32x4.splat(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  for (let b = 0; b < nb; b++) {
    const o = <usize>b * 136;
    const xb = xq + (<usize>b << 8);
    for (let ib = 0; ib < 8; ib++) iq4Terms(xb + (<usize>ib << 5), IQ4X + <usize>ib * 80);
    let s0 = Z, s1 = Z, s2 = Z, s3 = Z;
    for (let ib = 0; ib < 8; ib++) {
      const tp = IQ4X + <usize>ib * 80;
      const xe0 = v128.load(tp), xo0 = v128.load(tp, 16), xe1 = v128.load(tp, 32), xo1 = v128.load(tp, 48), c = v128.load(tp, 64);
      s0 = iq4xsSub(s0, p0 + o, ib, xe0, xo0, xe1, xo1, c);
      s1 = iq4xsSub(s1, p1 + o, ib, xe0, xo0, xe1, xo1, c);
      s2 = iq4xsSub(s2, p2 + o, ib, xe0, xo0, xe1, xo1, c);
      s3 = iq4xsSub(s3, p3 + o, ib, xe0, xo0, xe1, xo1, c);
    }
    const dx = load<f32>(dp + (<usize>b << 2));
    acc0 = fmaI(acc0, s0, f16(load<u16>(p0 + o)) * dx);
    acc1 = fmaI(acc1, s1, f16(load<u16>(p1 + o)) * dx);
    acc2 = fmaI(acc2, s2, f16(load<u16>(p2 + o)) * dx);
    acc3 = fmaI(acc3, s3, f16(load<u16>(p3 + o)) * dx);
  }
  return hsumF4(acc0, acc1, acc2, acc3);
}

// @ts-ignore: decorator
@inline function dot_tq2_0(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 66;
    const xb = xq + (<usize>b << 8);
    let isum = i32x4.sub(Z, bsumAll(bp + (<usize>b << 5))); // the −1 of every quant
    for (let j = 0; j < 2; j++) {
      const q0 = v128.load(wb + (<usize>j << 5));
      const q1 = v128.load(wb + (<usize>j << 5), 16);
      for (let l = 0; l < 4; l++) {
        const xg = xb + (<usize>(128 * j + 32 * l));
        isum = dotU(bits(q0, 2 * l, 3), v128.load(xg), isum);
        isum = dotU(bits(q1, 2 * l, 3), v128.load(xg, 16), isum);
      }
    }
    acc = fmaI(acc, isum, f16(load<u16>(wb, 64)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc);
}

/** Trit n of 16 TQ1_0 bytes: ((q·3^n mod 256)·3) >> 8, in 0..2 (dequantize_row_tq1_0). */
// @ts-ignore: decorator
@inline function trits(q: v128, pow3: i32): v128 {
  const p = i16x8.splat(<i16>pow3);
  const m = i16x8.splat(0xff);
  const lo = i16x8.shr_u(i16x8.mul(v128.and(i16x8.mul(i16x8.extend_low_i8x16_u(q), p), m), i16x8.splat(3)), 8);
  const hi = i16x8.shr_u(i16x8.mul(v128.and(i16x8.mul(i16x8.extend_high_i8x16_u(q), p), m), i16x8.splat(3)), 8);
  return i8x16.narrow_i16x8_u(lo, hi);
}
// @ts-ignore: decorator
@inline function trit(q: u32, pow3: u32): i32 {
  return <i32>((((q * pow3) & 0xff) * 3) >> 8);
}

// @ts-ignore: decorator
@inline function dot_tq1_0(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 54;
    const xb = xq + (<usize>b << 8);
    let isum = i32x4.sub(Z, bsumAll(bp + (<usize>b << 5)));
    const q0 = v128.load(wb);
    const q1 = v128.load(wb, 16);
    const q2 = v128.load(wb, 32);
    let p = 1;
    for (let n = 0; n < 5; n++) {
      const xg = xb + (<usize>(32 * n));
      isum = dotU(trits(q0, p), v128.load(xg), isum);
      isum = dotU(trits(q1, p), v128.load(xg, 16), isum);
      isum = dotU(trits(q2, p), v128.load(xb + <usize>(160 + 16 * n)), isum);
      p *= 3;
    }
    // qh: 4 bytes × 4 trits → elements 240 + 4n + j.
    let tail = 0;
    let pt: u32 = 1;
    for (let n = 0; n < 4; n++) {
      for (let j = 0; j < 4; j++) tail += trit(load<u8>(wb + 48 + j), pt) * <i32>load<i8>(xb + 240 + 4 * n + j);
      pt *= 3;
    }
    isum = i32x4.add(isum, i32x4.replace_lane(Z, 0, tail));
    acc = fmaI(acc, isum, f16(load<u16>(wb, 52)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc);
}

// ---- four rows per pass ------------------------------------------------------------------------
// dot4_<type>(p0, p1, p2, p3, xq, cols): lane k = dot_<type>(pk, xq, cols) BIT FOR BIT. Each row
// keeps dot_<type>'s own f32x4 accumulator and forms its blocks' integer sums as dot_<type> does
// (q4KSum, q6KSum); the rows share the activation's loads (qs, bsums, d_x), convert their blocks'
// f16 scales four at a time (f16x4: exact, as f16) and take their horizontal sums together
// (reduce4, hsumF4: the same integers, the same float additions in the same order).

/** The f16 at byte off of rows p0…p3 as f32x4, lane k from row k. */
// @ts-ignore: decorator
@inline function f16Rows(p0: usize, p1: usize, p2: usize, p3: usize, off: usize): v128 {
  let v = v128.load16_lane(p0 + off, Z, 0);
  v = v128.load16_lane(p1 + off, v, 2);
  v = v128.load16_lane(p2 + off, v, 4);
  v = v128.load16_lane(p3 + off, v, 6);
  return f16x4(v);
}

/** [hsumF(a), hsumF(b), hsumF(c), hsumF(d)]: each in hsumF's order, (v0 + v2) + (v1 + v3). */
// @ts-ignore: decorator
@inline function hsumF4(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = f32x4.add(i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  const cd = f32x4.add(i8x16.shuffle(c, d, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(c, d, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  // ab = [a0+a2, b0+b2, a1+a3, b1+b3], cd likewise
  return f32x4.add(i8x16.shuffle(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), i8x16.shuffle(ab, cd, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
}

/**
 * Q4_K / Q5_K (five), four rows: the first 16 bytes of the four rows' blocks (d, dmin, the 12 scale
 * bytes u0..u2) transposed so lane k is row k's, and unpacked for all four at once as scalesK4 does
 * for one; the minimums' sums Σ_j m_j·(bsum_2j + bsum_2j+1) as i16 dots against the bsum pairs
 * (exact, as q4KMins + hsumI).
 */
// @ts-ignore: decorator
@inline function dot4K45(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32, five: bool): v128 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc0 = f32x4.splat(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  let accm = f32x4.splat(0); // lane k: row k's accm
  for (let b = 0; b < nb; b++) {
    const o = <usize>b * (five ? 176 : 144);
    const xb = xq + (<usize>b << 8);
    const bs = bp + (<usize>b << 5);
    const dx = f32x4.splat(load<f32>(dp + (<usize>b << 2)));
    // u32 lanes of each row's first 16 bytes: [d | dmin << 16, u0, u1, u2] → H, U0, U1, U2 over the rows
    const v0 = v128.load(p0 + o), v1 = v128.load(p1 + o), v2 = v128.load(p2 + o), v3 = v128.load(p3 + o);
    const t0 = i8x16.shuffle(v0, v1, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const t1 = i8x16.shuffle(v2, v3, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const t2 = i8x16.shuffle(v0, v1, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    const t3 = i8x16.shuffle(v2, v3, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    const H = i8x16.shuffle(t0, t1, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    const U0 = i8x16.shuffle(t0, t1, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    const U1 = i8x16.shuffle(t2, t3, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    const U2 = i8x16.shuffle(t2, t3, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    // scalesK4 lane-wise: scales s0..3 (S0), s4..7 (S1), minimums m0..3 (M0), m4..7 (M1)
    const k3 = v128.load(KC, 96), kf = v128.load(KC), k3f = v128.load(KC, 176);
    const S0 = v128.and(U0, k3f);
    const S1 = v128.or(v128.and(U2, kf), i32x4.shl(v128.and(i32x4.shr_u(U0, 6), k3), 4));
    const M0 = v128.and(U1, k3f);
    const M1 = v128.or(v128.and(i32x4.shr_u(U2, 4), kf), i32x4.shl(v128.and(i32x4.shr_u(U1, 6), k3), 4));
    // bsum pairs B_j = bsum_2j + bsum_2j+1 (|B_j| ≤ 2·16·127) as i16 [B0..B3] twice and [B4..B7] twice
    const B = i16x8.narrow_i32x4_s(i32x4.extadd_pairwise_i16x8_s(v128.load(bs)), i32x4.extadd_pairwise_i16x8_s(v128.load(bs, 16)));
    const Blo = i8x16.shuffle(B, B, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
    const Bhi = i8x16.shuffle(B, B, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15);
    // rows 0, 1 (low halves of M0, M1) and rows 2, 3: two i32 lanes per row, then summed per row
    const ma = i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(M0), Blo), i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(M1), Bhi));
    const mb = i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(M0), Blo), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(M1), Bhi));
    const mins = i32x4.add(i8x16.shuffle(ma, mb, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27), i8x16.shuffle(ma, mb, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31));
    accm = f32x4.add(accm, f32x4.mul(f32x4.mul(f16x4(i32x4.shr_u(H, 16)), dx), f32x4.convert_i32x4_s(mins)));
    const dd = f32x4.mul(f16x4(H), dx);
    // each row's scales [s0..3, s4..7] in its low 8 bytes, as q4KSum takes them
    const s01 = i8x16.shuffle(S0, S1, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const s23 = i8x16.shuffle(S0, S1, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    const s1 = i8x16.shuffle(s01, s01, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15);
    const s3 = i8x16.shuffle(s23, s23, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15);
    if (five) {
      acc0 = fmaI(acc0, q5KSum(p0 + o, xb, s01), f32x4.extract_lane(dd, 0));
      acc1 = fmaI(acc1, q5KSum(p1 + o, xb, s1), f32x4.extract_lane(dd, 1));
      acc2 = fmaI(acc2, q5KSum(p2 + o, xb, s23), f32x4.extract_lane(dd, 2));
      acc3 = fmaI(acc3, q5KSum(p3 + o, xb, s3), f32x4.extract_lane(dd, 3));
    } else {
      acc0 = fmaI(acc0, q4KSum(p0 + o, xb, s01), f32x4.extract_lane(dd, 0));
      acc1 = fmaI(acc1, q4KSum(p1 + o, xb, s1), f32x4.extract_lane(dd, 1));
      acc2 = fmaI(acc2, q4KSum(p2 + o, xb, s23), f32x4.extract_lane(dd, 2));
      acc3 = fmaI(acc3, q4KSum(p3 + o, xb, s3), f32x4.extract_lane(dd, 3));
    }
  }
  return f32x4.sub(hsumF4(acc0, acc1, acc2, acc3), accm);
}
function dot4_q4_K(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  return dot4K45(p0, p1, p2, p3, xq, cols, false);
}
function dot4_q5_K(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  return dot4K45(p0, p1, p2, p3, xq, cols, true);
}

/** Q2_K, four rows: d, dmin four at a time, the minimums' sums reduced together. */
function dot4_q2_K(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc0 = f32x4.splat(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  let accm = f32x4.splat(0); // lane k: row k's accm
  for (let b = 0; b < nb; b++) {
    const o = <usize>b * 84;
    const xb = xq + (<usize>b << 8);
    const bs = bp + (<usize>b << 5);
    const dx = f32x4.splat(load<f32>(dp + (<usize>b << 2)));
    const mins = reduce4(bsumDotU(bs, hi4k(v128.load(p0 + o))), bsumDotU(bs, hi4k(v128.load(p1 + o))), bsumDotU(bs, hi4k(v128.load(p2 + o))), bsumDotU(bs, hi4k(v128.load(p3 + o))));
    accm = f32x4.add(accm, f32x4.mul(f32x4.mul(f16Rows(p0, p1, p2, p3, o + 82), dx), f32x4.convert_i32x4_s(mins)));
    const dd = f32x4.mul(f16Rows(p0, p1, p2, p3, o + 80), dx);
    acc0 = fmaI(acc0, q2KSum(p0 + o, xb), f32x4.extract_lane(dd, 0));
    acc1 = fmaI(acc1, q2KSum(p1 + o, xb), f32x4.extract_lane(dd, 1));
    acc2 = fmaI(acc2, q2KSum(p2 + o, xb), f32x4.extract_lane(dd, 2));
    acc3 = fmaI(acc3, q2KSum(p3 + o, xb), f32x4.extract_lane(dd, 3));
  }
  return f32x4.sub(hsumF4(acc0, acc1, acc2, acc3), accm);
}

function dot4_q3_K(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc0 = f32x4.splat(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  for (let b = 0; b < nb; b++) {
    const o = <usize>b * 110;
    const xb = xq + (<usize>b << 8);
    const bs = bp + (<usize>b << 5);
    const dd = f32x4.mul(f16Rows(p0, p1, p2, p3, o + 108), f32x4.splat(load<f32>(dp + (<usize>b << 2))));
    acc0 = fmaI(acc0, q3KSum(p0 + o, xb, bs), f32x4.extract_lane(dd, 0));
    acc1 = fmaI(acc1, q3KSum(p1 + o, xb, bs), f32x4.extract_lane(dd, 1));
    acc2 = fmaI(acc2, q3KSum(p2 + o, xb, bs), f32x4.extract_lane(dd, 2));
    acc3 = fmaI(acc3, q3KSum(p3 + o, xb, bs), f32x4.extract_lane(dd, 3));
  }
  return hsumF4(acc0, acc1, acc2, acc3);
}

function dot4_q6_K(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc0 = f32x4.splat(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  for (let b = 0; b < nb; b++) {
    const o = <usize>b * 210;
    const xb = xq + (<usize>b << 8);
    const bs = bp + (<usize>b << 5);
    const dd = f32x4.mul(f16Rows(p0, p1, p2, p3, o + 208), f32x4.splat(load<f32>(dp + (<usize>b << 2))));
    acc0 = fmaI(acc0, q6KSum(p0 + o, xb, bs), f32x4.extract_lane(dd, 0));
    acc1 = fmaI(acc1, q6KSum(p1 + o, xb, bs), f32x4.extract_lane(dd, 1));
    acc2 = fmaI(acc2, q6KSum(p2 + o, xb, bs), f32x4.extract_lane(dd, 2));
    acc3 = fmaI(acc3, q6KSum(p3 + o, xb, bs), f32x4.extract_lane(dd, 3));
  }
  return hsumF4(acc0, acc1, acc2, acc3);
}


// ---- one row a pass --------------------------------------------------------------------------
// The per-row loops, written once over a tag of the row dot. The tag is a compile-time constant in
// each exported kernel, so dotOf folds to that one dot_* and its body is inlined into the loop, as
// in a loop written out per type (a function reference, as rows4 takes, stays a call_indirect per
// dot: the shared memory is imported, so binaryen cannot resolve it; docs/performance.md).

/** Which dot_* a rows1 loop runs. */
const enum Row { Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, TQ1_0, TQ2_0 }

/** dot_<row>(w, xq, cols). */
// @ts-ignore: decorator
@inline function dotOf(row: Row, w: usize, xq: usize, cols: i32): f32 {
  switch (row) {
    case Row.Q4_K: return dot_q4_K(w, xq, cols);
    case Row.Q5_K: return dot_q5_K(w, xq, cols);
    case Row.Q6_K: return dot_q6_K(w, xq, cols);
    case Row.Q2_K: return dot_q2_K(w, xq, cols);
    case Row.Q3_K: return dot_q3_K(w, xq, cols);
    case Row.TQ1_0: return dot_tq1_0(w, xq, cols);
    default: return dot_tq2_0(w, xq, cols);
  }
}

/** out[r] = row r · xq for r in [r0, r1), one row a pass: the per-row definition rows4 is held to. */
// @ts-ignore: decorator
@inline function rows1(row: Row, out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dotOf(row, w + <usize>r * rowBytes, xq, cols));
}

/** out[t·outStride + r] = row r · x_t for t < n (x_t at xq + t·xqStride), each row against every token. */
// @ts-ignore: decorator
@inline function rows1Batch(row: Row, out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) store<f32>(out + (<usize>(t * outStride + r) << 2), dotOf(row, wr, xq + <usize>t * xqStride, cols));
  }
}

// ---- exported kernels (signatures as in float.ts) ----------------------------------------------

/**
 * out[r] = row r · xq for r in [r0, r1) of a Q4_K tensor at w in the build's layout (q4k-group.ts):
 * relaxed, the rows in whole groups through matvecG_q4_K (r1 a multiple of 4 or the tensor's last
 * row + 1, as matvec_q4_0's), ggml's last r1 % 4 rows here.
 */
export function matvec_q4_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  if (!q4kGrouped()) {
    rows4(dot4_q4_K, out, w, rowBytes, r0, r1, xq, cols);
    return;
  }
  const t = max(r0, matvecG_q4_K(out, w, rowBytes, r0, r1, xq, cols));
  if (t < r1) rows4(dot4_q4_K, out, w, rowBytes, t, r1, xq, cols);
}
/** matvec_q4_K one row per pass on ggml's rows in both builds (dot_q4_K, the per-row definition): tests hold the four-row and the grouped kernels to it. */
export function matvec1_q4_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows1(Row.Q4_K, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_q4_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  // prompts take gemm_q4_K (gemm.ts); this per-token form serves decode batches, tests and callers
  // without scratch; relaxed: matvec_q4_K per token (the stored groups), its bits
  if (q4kGrouped()) {
    for (let t = 0; t < n; t++) matvec_q4_K(out + (<usize>(t * outStride) << 2), w, rowBytes, r0, r1, xq + <usize>t * xqStride, cols);
    return;
  }
  rows1Batch(Row.Q4_K, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_q5_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_q5_K, out, w, rowBytes, r0, r1, xq, cols);
}
/** matvec_q5_K one row per pass (dot_q5_K): the reference of the four-row kernel in tests. */
export function matvec1_q5_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows1(Row.Q5_K, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_q5_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows1Batch(Row.Q5_K, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
/** Relaxed: the rows in groups of four through q6k-group.ts, the last rows % 4 (ggml's layout) here. */
export function matvec_q6_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  const t = q6Grouped() ? matvecG_q6_K(out, w, rowBytes, r0, r1, xq, cols) : r0;
  if (t < r1) rows4(dot4_q6_K, out, w, rowBytes, t, r1, xq, cols);
}
/** matvec_q6_K one row per pass (dot_q6_K) on ggml's layout in both builds: the reference of the four-row and grouped kernels in tests. */
export function matvec1_q6_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows1(Row.Q6_K, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_q6_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  // prompts take gemm_q6_K (gemm.ts); this per-token form serves tests and callers without scratch
  if (q6Grouped()) {
    for (let t = 0; t < n; t++) matvec_q6_K(out + (<usize>(t * outStride) << 2), w, rowBytes, r0, r1, xq + <usize>t * xqStride, cols);
    return;
  }
  rows1Batch(Row.Q6_K, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_q2_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_q2_K, out, w, rowBytes, r0, r1, xq, cols);
}
/** matvec_q2_K one row per pass (dot_q2_K): the reference of the four-row kernel in tests. */
export function matvec1_q2_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows1(Row.Q2_K, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_q2_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows1Batch(Row.Q2_K, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_q3_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_q3_K, out, w, rowBytes, r0, r1, xq, cols);
}
/** matvec_q3_K one row per pass (dot_q3_K): the reference of the four-row kernel in tests. */
export function matvec1_q3_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows1(Row.Q3_K, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_q3_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows1Batch(Row.Q3_K, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_iq4_xs(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_iq4_xs, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_iq4_xs(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_iq4_xs, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_tq1_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows1(Row.TQ1_0, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_tq1_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows1Batch(Row.TQ1_0, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_tq2_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows1(Row.TQ2_0, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_tq2_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows1Batch(Row.TQ2_0, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}

// ---- dequantise one row (dequantize_row_* order) --------------------------------------------

// @ts-ignore: decorator
@inline function put(out: usize, i: i32, v: f32): void {
  store<f32>(out + (<usize>i << 2), v);
}

export function dequant_q4_K(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 144;
    v128.store(SCRATCH, scalesK4(wb + 4));
    const d = f16(load<u16>(wb)), dmin = f16(load<u16>(wb, 2));
    for (let j = 0; j < 8; j++) {
      const dl = d * <f32>load<u8>(SCRATCH + j), ml = dmin * <f32>load<u8>(SCRATCH + 8 + j);
      const q = wb + 16 + (<usize>(j >> 1) << 5);
      const sh = 4 * (j & 1);
      for (let l = 0; l < 32; l++) put(out, b * 256 + j * 32 + l, dl * <f32>((<i32>load<u8>(q + l) >> sh) & 15) - ml);
    }
  }
}

/** Row r of the rows × cols Q4_K tensor at w in the build's layout, dequantised (dequant_q4_K's numbers), a block at a time through a ggml copy. */
export function dequant_row_q4_K(out: usize, w: usize, rowBytes: usize, rows: i32, r: i32, cols: i32): void {
  if (!q4kGrouped() || r >= (rows & ~3)) {
    dequant_q4_K(out, w + <usize>r * rowBytes, cols);
    return;
  }
  const g = w + <usize>(r & ~3) * rowBytes;
  for (let b = 0; b < (cols >> 8); b++) {
    q4kgBlock(Q4KG_ROW, g + <usize>b * Q4KG_BLOCK, <usize>(r & 3));
    dequant_q4_K(out + (<usize>b << 10), Q4KG_ROW, 256);
  }
}

export function dequant_q5_K(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 176;
    v128.store(SCRATCH, scalesK4(wb + 4));
    const d = f16(load<u16>(wb)), dmin = f16(load<u16>(wb, 2));
    for (let j = 0; j < 8; j++) {
      const dl = d * <f32>load<u8>(SCRATCH + j), ml = dmin * <f32>load<u8>(SCRATCH + 8 + j);
      const q = wb + 48 + (<usize>(j >> 1) << 5);
      const sh = 4 * (j & 1);
      for (let l = 0; l < 32; l++) {
        const v = ((<i32>load<u8>(q + l) >> sh) & 15) | (((<i32>load<u8>(wb + 16 + l) >> j) & 1) << 4);
        put(out, b * 256 + j * 32 + l, dl * <f32>v - ml);
      }
    }
  }
}

export function dequant_q6_K(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 210;
    const d = f16(load<u16>(wb, 208));
    for (let n = 0; n < 2; n++) {
      const ql = wb + (<usize>n << 6), qh = wb + 128 + (<usize>n << 5), sc = wb + 192 + (<usize>n << 3);
      const o = b * 256 + n * 128;
      for (let l = 0; l < 32; l++) {
        const a = <i32>load<u8>(ql + l), c = <i32>load<u8>(ql + 32 + l), h = <i32>load<u8>(qh + l);
        const is = l >> 4;
        put(out, o + l, d * <f32>load<i8>(sc + is) * <f32>(((a & 15) | ((h & 3) << 4)) - 32));
        put(out, o + l + 32, d * <f32>load<i8>(sc + is + 2) * <f32>(((c & 15) | (((h >> 2) & 3) << 4)) - 32));
        put(out, o + l + 64, d * <f32>load<i8>(sc + is + 4) * <f32>(((a >> 4) | (((h >> 4) & 3) << 4)) - 32));
        put(out, o + l + 96, d * <f32>load<i8>(sc + is + 6) * <f32>(((c >> 4) | (((h >> 6) & 3) << 4)) - 32));
      }
    }
  }
}

/** Row r of the rows × cols Q6_K tensor at w in the build's layout (q6k-group.ts), dequantised (dequant_q6_K's numbers). */
export function dequant_row_q6_K(out: usize, w: usize, rowBytes: usize, rows: i32, r: i32, cols: i32): void {
  if (!q6Grouped() || r >= (rows & ~3)) dequant_q6_K(out, w + <usize>r * rowBytes, cols);
  else dequantG_q6_K(out, w + <usize>(r & ~3) * rowBytes, r & 3, cols);
}

export function dequant_q2_K(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 84;
    const d = f16(load<u16>(wb, 80)), dmin = f16(load<u16>(wb, 82));
    for (let e = 0; e < 256; e++) {
      const sc = <i32>load<u8>(wb + (e >> 4));
      const byte = <i32>load<u8>(wb + 16 + 32 * (e >> 7) + (e & 31));
      const q = (byte >> (2 * ((e & 127) >> 5))) & 3;
      put(out, b * 256 + e, d * <f32>(sc & 15) * <f32>q - dmin * <f32>(sc >> 4));
    }
  }
}

export function dequant_q3_K(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 110;
    v128.store(SCRATCH, scalesQ3(wb + 96));
    const d = f16(load<u16>(wb, 108));
    for (let e = 0; e < 256; e++) {
      const byte = <i32>load<u8>(wb + 32 + 32 * (e >> 7) + (e & 31));
      const low = (byte >> (2 * ((e & 127) >> 5))) & 3;
      const h = (<i32>load<u8>(wb + (e & 31)) >> (e >> 5)) & 1;
      put(out, b * 256 + e, d * <f32>load<i8>(SCRATCH + (e >> 4)) * <f32>(low - (h ? 0 : 4)));
    }
  }
}

export function dequant_iq4_xs(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 136;
    const d = f16(load<u16>(wb));
    const sh = <i32>load<u16>(wb, 2);
    for (let ib = 0; ib < 8; ib++) {
      const ls = ((<i32>load<u8>(wb + 4 + (ib >> 1)) >> (4 * (ib & 1))) & 15) | (((sh >> (2 * ib)) & 3) << 4);
      const dl = d * <f32>(ls - 32);
      for (let j = 0; j < 16; j++) {
        const q = <i32>load<u8>(wb + 8 + 16 * ib + j);
        put(out, b * 256 + 32 * ib + j, dl * <f32>load<i8>(IQ4NL + (q & 15)));
        put(out, b * 256 + 32 * ib + j + 16, dl * <f32>load<i8>(IQ4NL + (q >> 4)));
      }
    }
  }
}

export function dequant_tq2_0(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 66;
    const d = f16(load<u16>(wb, 64));
    for (let e = 0; e < 256; e++) {
      const q = (<i32>load<u8>(wb + 32 * (e >> 7) + (e & 31)) >> (2 * ((e & 127) >> 5))) & 3;
      put(out, b * 256 + e, <f32>(q - 1) * d);
    }
  }
}

export function dequant_tq1_0(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 54;
    const d = f16(load<u16>(wb, 52));
    const o = b * 256;
    let p: u32 = 1;
    for (let n = 0; n < 5; n++) {
      for (let m = 0; m < 32; m++) put(out, o + 32 * n + m, <f32>(trit(load<u8>(wb + m), p) - 1) * d);
      for (let m = 0; m < 16; m++) put(out, o + 160 + 16 * n + m, <f32>(trit(load<u8>(wb + 32 + m), p) - 1) * d);
      p *= 3;
    }
    p = 1;
    for (let n = 0; n < 4; n++) {
      for (let j = 0; j < 4; j++) put(out, o + 240 + 4 * n + j, <f32>(trit(load<u8>(wb + 48 + j), p) - 1) * d);
      p *= 3;
    }
  }
}
