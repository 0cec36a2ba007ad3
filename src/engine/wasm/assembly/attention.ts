// Attention of one query position over the f16 KV cache, every head, in SIMD. The scalar reference
// is src/engine/model/attention.ts (same two modes, same roundings; see there for the ggml sources):
//   attn_f16  ggml's flash-attention path for single tokens and small batches: q rounded to f16, an
//             online softmax, the V accumulator rounded to f16 after every position; bit for bit
//             the reference (ggml's AVX-512 summation order in the K dot, V += v·vs fused)
//             (relaxed build: V += v·vs is relaxed SIMD's madd when the engine fuses it, else in f64)
//   attn_f32  ggml's tiled path for batches of 64 or more: plain f32 scores, softmax, weighted V;
//             attn_f32_batch does a whole prompt batch, each query exactly as attn_f32 does it
// Query heads that share a KV head (GQA) are done together, so each cached K and V row is loaded and
// widened to f32 once per KV head rather than once per query head (and, in attn_f32_batch, once per
// tile of 8 queries). attn_f16 walks the positions in chunks of 16, in order, with every head at each
// chunk, so the cache rows are read once, a chunk at a time (see the 'f16' section for its two passes).
//
// Layouts (byte addresses): q [nHead, hdK] f32; out [nHead, hdV] f32; kc/vc the layer's cache rows,
// position t at kc + 2·t·strideK (strideK ≥ nHeadKv·hdK halves: a worker's share of heads sees whole rows), KV head g at + 2·g·hdK. hdK and hdV
// are multiples of 4. `scratch` needs attn_scratch_bytes(...) bytes, 16-aligned.

import { f16 } from './common';

// ---- half-precision in four lanes -------------------------------------------------------------

// Vector constants, loaded from memory where used: V8 (Turboshaft) rebuilds a v128.const at every
// use inside a loop (3 instructions each), while a load is one instruction (as in float.ts).
const K: usize = memory.data<u32>([
  0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000, //   0 f32 exponent (and infinity)
  0x38800000, 0x38800000, 0x38800000, 0x38800000, //  16 2^-14
  0x47800000, 0x47800000, 0x47800000, 0x47800000, //  32 2^16
  0x06c00000, 0x06c00000, 0x06c00000, 0x06c00000, //  48 (13 << 23) | (1 << 22): 2^e → 1.5·2^(e+13)
  0x80000000, 0x80000000, 0x80000000, 0x80000000, //  64 f32 sign
  0x77800000, 0x77800000, 0x77800000, 0x77800000, //  80 2^112
  0x07800000, 0x07800000, 0x07800000, 0x07800000, //  96 2^-112
  0x8fffffff, 0x8fffffff, 0x8fffffff, 0x8fffffff, // 112 rawHalf's mask
  0x00007fff, 0x00007fff, 0x00007fff, 0x00007fff, // 128 half exponent and mantissa
  0x00008000, 0x00008000, 0x00008000, 0x00008000, // 144 half sign
], 16);
const K_EXP: usize = 0;
const K_MIN: usize = 16;
const K_MAX: usize = 32;
const K_C: usize = 48;
const K_SIGN: usize = 64;
const K_UP: usize = 80;
const K_DOWN: usize = 96;
const K_RAW: usize = 112;
const K_HMAG: usize = 128;
const K_HSIGN: usize = 144;
// @ts-ignore: decorator
@inline function kv(off: usize): v128 {
  return v128.load(K + off);
}

/**
 * Four halves (zero-extended to i32 lanes) → f32. Exponent and mantissa shifted into place read as
 * an f32 2^112 too small; one multiply fixes normal and subnormal halves alike (exactly), and
 * infinities/NaNs (which land on 65536 and above) get the all-ones exponent back.
 */
// @ts-ignore: decorator
@inline function halfToF32(h: v128): v128 {
  let f = f32x4.mul(i32x4.shl(v128.and(h, kv(K_HMAG)), 13), kv(K_UP));
  f = v128.or(f, v128.and(f32x4.ge(f, kv(K_MAX)), kv(K_EXP)));
  return v128.or(f, i32x4.shl(v128.and(h, kv(K_HSIGN)), 16));
}

/** Halves at p..p+3 as f32x4. */
// @ts-ignore: decorator
@inline function load4h(p: usize): v128 {
  return halfToF32(i32x4.extend_low_i16x8_u(v128.load64_zero(p)));
}

/** 2^112: a half's value over its raw f32 (rawHalf), and the scale in roundHalf's overflow test. */
const TWO112: f32 = 5.192296858534828e33;

/**
 * Four halves (sign-extended to i32 lanes) → their values times 2^-112 as f32, exactly: sign,
 * exponent and mantissa shifted into place (halfToF32 without the multiply; subnormal halves land on
 * f32 subnormals). Infinities and NaNs come out finite (2^-96 and up), so a caller that uses this
 * checks its rows with scanHalves.
 */
// @ts-ignore: decorator
@inline function rawHalf(h: v128): v128 {
  return v128.and(i32x4.shl(h, 13), kv(K_RAW));
}

/** Halves at p..p+3 as raw f32 (rawHalf). */
// @ts-ignore: decorator
@inline function load4raw(p: usize): v128 {
  return rawHalf(i32x4.extend_low_i16x8_s(v128.load64_zero(p)));
}

/**
 * bad folded with the n halves at p (n a multiple of 4): the lane-wise unsigned max of half << 1
 * (the sign dropped), which reaches 0xf800 once an infinity or NaN has been seen (hasInfNaN).
 */
// @ts-ignore: decorator
@inline function scanHalves(bad: v128, p: usize, n: i32): v128 {
  let i = 0;
  for (; i + 8 <= n; i += 8) bad = i16x8.max_u(bad, i16x8.shl(v128.load(p + (<usize>i << 1)), 1));
  if (i < n) bad = i16x8.max_u(bad, i16x8.shl(v128.load64_zero(p + (<usize>i << 1)), 1));
  return bad;
}

// @ts-ignore: decorator
@inline function hasInfNaN(bad: v128): bool {
  return v128.any_true(i16x8.ge_u(bad, i16x8.splat(<i16>0xf800)));
}

/**
 * x rounded to the nearest half (ties to even), as f32: what f16(f32ToF16(x)) gives, in four lanes.
 * x + c − c with c = 1.5·2^(e+13), 2^e the exponent of x clamped to [2^-14, 2^16]: x + c stays within
 * [2^(e+13), 2^(e+14)), where the f32 ulp is 2^(e−10), so the add rounds x to 11 significant bits
 * (to multiples of 2^-24 below 2^-14, where halves are subnormal) with the FPU's ties to even (c is
 * an even multiple of that ulp, so both signs round alike), and the subtraction is exact. A zero
 * gets x's sign back. Overflow: what rounds to 2^16 or more (|x| ≥ 65520; the clamp keeps c finite)
 * becomes infinity through ·2^112 (2^16·2^112 overflows, 65504·2^112 does not), and ·2^-112
 * restores the rest exactly; NaN stays NaN. (tests/wasm/attention-round.test.ts checks it on every f32 from 2^-26 to 2^17 against
 * quant/half.ts.)
 */
// @ts-ignore: decorator
@inline function roundHalf(x: v128): v128 {
  const e = i32x4.min_s(i32x4.max_s(v128.and(x, kv(K_EXP)), kv(K_MIN)), kv(K_MAX));
  const c = i32x4.add(e, kv(K_C));
  const r = v128.or(f32x4.sub(f32x4.add(x, c), c), v128.and(x, kv(K_SIGN)));
  return f32x4.mul(f32x4.mul(r, kv(K_UP)), kv(K_DOWN));
}

/**
 * roundHalf for |x| < 65520: without the clamp and the ·2^112·2^-112, which only serve overflow, so
 * the chain from x to the result is 6 operations shorter. The fast pass checks |x| apart (roundHalfE).
 */
// @ts-ignore: decorator
@inline function roundHalfFinite(x: v128): v128 {
  const c = i32x4.add(i32x4.max_s(v128.and(x, kv(K_EXP)), kv(K_MIN)), kv(K_C));
  return v128.or(f32x4.sub(f32x4.add(x, c), c), v128.and(x, kv(K_SIGN)));
}

/**
 * The fast pass's f16 of a sum x whose exponent field e = x & 0x7f800000 the caller keeps: folded
 * into big (i32 max: one operation, where folding |x| took two), it shows |x| ≥ 32768 or NaN (isBigE),
 * a safe bound for roundHalfFinite's 65520 (a sum in [32768, 65520) just sends the call to the exact
 * pass, rare as roundHalf's own overflow). The constants come in as values (K_MIN, K_C, K_SIGN), loaded
 * once before a loop: V8 does not hoist loads, and a register is cheaper than a load per use.
 */
// @ts-ignore: decorator
@inline function roundHalfE(x: v128, e: v128, kMin: v128, kC: v128, kSign: v128): v128 {
  const c = i32x4.add(i32x4.max_s(e, kMin), kC);
  return v128.or(f32x4.sub(f32x4.add(x, c), c), v128.and(x, kSign));
}

/** Whether an exponent field folded into big (roundHalfE) was 2^15 or more (|x| ≥ 32768), or NaN. */
// @ts-ignore: decorator
@inline function isBigE(big: v128): bool {
  return v128.any_true(i32x4.ge_s(big, i32x4.splat(0x47000000)));
}

/** Sum of four f32 lanes. */
// @ts-ignore: decorator
@inline function hsum(v: v128): f32 {
  const s = f32x4.add(v, i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  return f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1);
}

/** dst[0..n) = f32 of the halves at src (n a multiple of 4). */
// @ts-ignore: decorator
@inline function widen(dst: usize, src: usize, n: i32): void {
  for (let i = 0; i < n; i += 4) v128.store(dst + (<usize>i << 2), load4h(src + (<usize>i << 1)));
}

/**
 * Four values at element i of a cache row: halves (T = u16, widened here; T = i16, raw: rawHalf) or
 * f32 (T = f32, widened before).
 */
// @ts-ignore: decorator
@inline function row4<T>(p: usize, i: i32): v128 {
  if (sizeof<T>() == 4) return v128.load(p + (<usize>i << 2));
  if (isSigned<T>()) return load4raw(p + (<usize>i << 1));
  return load4h(p + (<usize>i << 1));
}

/** row4, with rawHalf's mask kRaw (K_RAW) as a value. */
// @ts-ignore: decorator
@inline function rowV<T>(p: usize, i: i32, kRaw: v128): v128 {
  if (sizeof<T>() == 2 && isSigned<T>()) return v128.and(i32x4.shl(i32x4.extend_low_i16x8_s(v128.load64_zero(p + (<usize>i << 1))), 13), kRaw);
  return row4<T>(p, i);
}

/** Σ a[i]·b[i] over n f32 (a multiple of 4), four lanes of partial sums. */
// @ts-ignore: decorator
@inline function dotF(a: usize, b: usize, n: i32): f32 {
  let acc = f32x4.splat(0);
  for (let i = 0; i < n; i += 4) {
    const o = <usize>i << 2;
    acc = f32x4.add(acc, f32x4.mul(v128.load(a + o), v128.load(b + o)));
  }
  return hsum(acc);
}

/**
 * acc + a·b where a·b is exact (a product of two halves, or of a half and a half ·2^112): one
 * rounding whether the engine fuses it or not, so relaxed SIMD's madd (one instruction) is exact.
 */
// @ts-ignore: decorator
@inline function addExact(acc: v128, a: v128, b: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, acc);
  return f32x4.add(acc, f32x4.mul(a, b));
}

/** Σ over the 64-element chunks c of q[64c + o ..+4]·k[same]: lanes o..o+3 of ggml's accumulators. */
// @ts-ignore: decorator
@inline function chunkLanes<T>(q: usize, k: usize, np: i32, o: i32, kRaw: v128): v128 {
  if (np == 64) return f32x4.mul(v128.load(q + (<usize>o << 2)), rowV<T>(k, o, kRaw)); // 0 + p = p (but for the sign of a zero score, which nothing sees)
  let acc = f32x4.splat(0);
  for (let c = o; c < np; c += 64) acc = addExact(acc, v128.load(q + (<usize>c << 2)), rowV<T>(k, c, kRaw));
  return acc;
}

/**
 * chunkLanes(o) + chunkLanes(o + 32), the fold by 32. With one chunk and relaxed SIMD, the add is
 * fused into lane o's product (one instruction fewer; the plain build keeps the separate multiply,
 * which V8 compiles better there).
 */
// @ts-ignore: decorator
@inline function chunkPair<T>(q: usize, k: usize, np: i32, o: i32, kRaw: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD && np == 64) return addExact(f32x4.mul(v128.load(q + (<usize>(o + 32) << 2)), rowV<T>(k, o + 32, kRaw)), v128.load(q + (<usize>o << 2)), rowV<T>(k, o, kRaw));
  return f32x4.add(chunkLanes<T>(q, k, np, o, kRaw), chunkLanes<T>(q, k, np, o + 32, kRaw));
}

/**
 * Four elements of a cache row as f32 from their loaded floats, or halves loaded extended to i32
 * lanes (v128.load16x4_s for raw, _u for exact: one instruction, where load64_zero and an extend
 * are two): see row4 (kRaw: rowV).
 */
// @ts-ignore: decorator
@inline function kAt<T>(h: v128, kRaw: v128): v128 {
  if (sizeof<T>() == 4) return h;
  if (isSigned<T>()) return v128.and(i32x4.shl(h, 13), kRaw);
  return halfToF32(h);
}

/** qa·ka + qb·kb (chunkPair with one chunk), the products exact. */
// @ts-ignore: decorator
@inline function pairAt(qa: v128, ka: v128, qb: v128, kb: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return addExact(f32x4.mul(qb, kb), qa, ka);
  return f32x4.add(f32x4.mul(qa, ka), f32x4.mul(qb, kb));
}

/**
 * dotF16 of one 64-element chunk (n = 64), its loads at constant offsets: wasm adds those in the
 * load instruction, where q + 4·o computed apart costs an instruction per load (V8 cannot fold an
 * i32 add into the address, as it might wrap). Relaxed build only: the plain one ran slower with
 * it (A/B: docs/performance.md), for reasons in V8's code generation.
 */
// @ts-ignore: decorator
@inline function dot64<T>(q: usize, k: usize, kRaw: v128): f32 {
  const p0 = pairAt(v128.load(q, 0), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 0) : (isSigned<T>() ? v128.load16x4_s(k, 0) : v128.load16x4_u(k, 0)), kRaw), v128.load(q, 128), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 128) : (isSigned<T>() ? v128.load16x4_s(k, 64) : v128.load16x4_u(k, 64)), kRaw));
  const p4 = pairAt(v128.load(q, 16), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 16) : (isSigned<T>() ? v128.load16x4_s(k, 8) : v128.load16x4_u(k, 8)), kRaw), v128.load(q, 144), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 144) : (isSigned<T>() ? v128.load16x4_s(k, 72) : v128.load16x4_u(k, 72)), kRaw));
  const p8 = pairAt(v128.load(q, 32), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 32) : (isSigned<T>() ? v128.load16x4_s(k, 16) : v128.load16x4_u(k, 16)), kRaw), v128.load(q, 160), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 160) : (isSigned<T>() ? v128.load16x4_s(k, 80) : v128.load16x4_u(k, 80)), kRaw));
  const p12 = pairAt(v128.load(q, 48), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 48) : (isSigned<T>() ? v128.load16x4_s(k, 24) : v128.load16x4_u(k, 24)), kRaw), v128.load(q, 176), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 176) : (isSigned<T>() ? v128.load16x4_s(k, 88) : v128.load16x4_u(k, 88)), kRaw));
  const p16 = pairAt(v128.load(q, 64), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 64) : (isSigned<T>() ? v128.load16x4_s(k, 32) : v128.load16x4_u(k, 32)), kRaw), v128.load(q, 192), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 192) : (isSigned<T>() ? v128.load16x4_s(k, 96) : v128.load16x4_u(k, 96)), kRaw));
  const p20 = pairAt(v128.load(q, 80), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 80) : (isSigned<T>() ? v128.load16x4_s(k, 40) : v128.load16x4_u(k, 40)), kRaw), v128.load(q, 208), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 208) : (isSigned<T>() ? v128.load16x4_s(k, 104) : v128.load16x4_u(k, 104)), kRaw));
  const p24 = pairAt(v128.load(q, 96), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 96) : (isSigned<T>() ? v128.load16x4_s(k, 48) : v128.load16x4_u(k, 48)), kRaw), v128.load(q, 224), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 224) : (isSigned<T>() ? v128.load16x4_s(k, 112) : v128.load16x4_u(k, 112)), kRaw));
  const p28 = pairAt(v128.load(q, 112), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 112) : (isSigned<T>() ? v128.load16x4_s(k, 56) : v128.load16x4_u(k, 56)), kRaw), v128.load(q, 240), kAt<T>(sizeof<T>() == 4 ? v128.load(k, 240) : (isSigned<T>() ? v128.load16x4_s(k, 120) : v128.load16x4_u(k, 120)), kRaw));
  const u0 = f32x4.add(p0, p16);
  const u1 = f32x4.add(p4, p20);
  const u2 = f32x4.add(p8, p24);
  const u3 = f32x4.add(p12, p28);
  return hsum(f32x4.add(f32x4.add(u0, u2), f32x4.add(u1, u3)));
}

/**
 * Σ q[i]·k[i] over n halves (n a multiple of 4) in the order of ggml_vec_dot_f16 on AVX-512 (the
 * reference, model/attention.ts dotF16, spells it out): 64 lanes summed over the 64-element chunks,
 * GGML_F32Cx16_REDUCE and _mm512_reduce_add_ps fold them by halves (32, 16, 8, 4, then hsum's 2 and
 * 1), and the n mod 64 left over are added one by one in f64. k: see row4 (kRaw: rowV).
 */
// @ts-ignore: decorator
@inline function dotF16<T>(q: usize, k: usize, n: i32, kRaw: v128): f32 {
  const np = n & ~63;
  let sum: f64 = 0;
  if (np > 0) {
    // lanes 4m..4m+3 after the folds by 32 and 16, m = 0..3
    const u0 = f32x4.add(chunkPair<T>(q, k, np, 0, kRaw), chunkPair<T>(q, k, np, 16, kRaw));
    const u1 = f32x4.add(chunkPair<T>(q, k, np, 4, kRaw), chunkPair<T>(q, k, np, 20, kRaw));
    const u2 = f32x4.add(chunkPair<T>(q, k, np, 8, kRaw), chunkPair<T>(q, k, np, 24, kRaw));
    const u3 = f32x4.add(chunkPair<T>(q, k, np, 12, kRaw), chunkPair<T>(q, k, np, 28, kRaw));
    sum = <f64>hsum(f32x4.add(f32x4.add(u0, u2), f32x4.add(u1, u3)));
  }
  for (let i = np; i < n; i += 4) {
    const p = f32x4.mul(v128.load(q + (<usize>i << 2)), rowV<T>(k, i, kRaw));
    sum += <f64>f32x4.extract_lane(p, 0);
    sum += <f64>f32x4.extract_lane(p, 1);
    sum += <f64>f32x4.extract_lane(p, 2);
    sum += <f64>f32x4.extract_lane(p, 3);
  }
  return <f32>sum;
}

/**
 * Four lanes of round_f32(a + v·s), fused as _mm512_fmadd_ps is: in f64, where v·s (a half times a
 * float, 35 bits) is exact and so is the sum unless a and v·s are ~2^29 apart (then the extra
 * rounding cannot move the f32 result). s2 is s splatted as f64x2.
 */
// @ts-ignore: decorator
@inline function fmaF(a: v128, v: v128, s2: v128): v128 {
  const lo = f64x2.add(f64x2.promote_low_f32x4(a), f64x2.mul(f64x2.promote_low_f32x4(v), s2));
  const aHi = i8x16.shuffle(a, a, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  const vHi = i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  const hi = f64x2.add(f64x2.promote_low_f32x4(aHi), f64x2.mul(f64x2.promote_low_f32x4(vHi), s2));
  const l = f32x4.demote_f64x2_zero(lo);
  const h = f32x4.demote_f64x2_zero(hi);
  return i8x16.shuffle(l, h, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
}

/**
 * True when this engine's relaxed madd is fused (one rounding, as _mm512_fmadd_ps): x64 with FMA3 and
 * arm64 are, an x64 without FMA3 rounds the product first. (1 + 2^-23)(1 − 2^-23) − 1 is −2^-46 fused
 * and 0 unfused; the operands go through memory so that the compiler cannot fold the probe. Always
 * false in the plain SIMD build.
 */
function fusedMadd(tmp: usize): bool {
  if (!ASC_FEATURE_RELAXED_SIMD) return false;
  store<f32>(tmp, 1.00000011920928955078125);
  store<f32>(tmp + 4, 0.99999988079071044921875);
  const r = f32x4.relaxed_madd(f32x4.splat(load<f32>(tmp)), f32x4.splat(load<f32>(tmp + 4)), f32x4.splat(-1));
  return i32x4.all_true(f32x4.eq(r, f32x4.splat(-1.4210854715202004e-14)));
}

/** Query positions attn_f32_batch takes together (the K and V rows are widened once for all). */
const TILE: i32 = 8;

/** Scratch bytes attn_f16 / attn_f32 / attn_f32_batch need. */
export function attn_scratch_bytes(nHead: i32, nHeadKv: i32, hdK: i32, hdV: i32, positions: i32): i32 {
  const group = nHead / nHeadKv;
  // f32 batch: K and V rows [positions, hdK + hdV], query rows [TILE·group] (u32), sums
  // [TILE·group] (f64), scores [TILE·group, positions]
  const c = (positions * (hdK + hdV) + TILE * group) * 4 + TILE * group * 8 + 8 + TILE * group * positions * 4;
  const a = f16ScratchBytes(nHead, hdK, hdV);
  // f32: scores [group·positions], k row [hdK], v row [hdV], sums [group] (f64)
  const b = (group * positions + hdK + hdV) * 4 + group * 8;
  return (max(max(a, b), c) + 15) & ~15;
}

// ---- 'f16' mode --------------------------------------------------------------------------------
//
// One body (f16Pass), two passes. The fast one reads the cache as raw halves (rawHalf: no multiply),
// with q16 scaled by 2^112 and e^(s − M) too where it multiplies V, so every product (q·k, v·vs) is
// the same number, bit for bit, for every finite half; and it rounds the accumulator to f16 without
// the overflow handling (roundHalfFinite). It scans the rows it reads and keeps the largest sum it
// rounded (its exponent field): if an infinity or NaN was in the cache, or a sum reached 32768 (a
// safe bound for f16 infinity's 65520; see roundHalfE) or NaN, the call is done again by the exact
// pass (halfToF32 widening, roundHalf), which is rare.
//
// The positions go by in chunks of CHUNK, and for each head in three steps: the chunk's scores (the
// K dots), the online softmax's bookkeeping in scalars (M, S and each position's two factors), then
// the V accumulator (f16Accumulate). Each head's sequence of operations is the reference's; only the
// interleaving across heads and lanes differs.

/** Positions per chunk. */
const CHUNK: i32 = 16;

/**
 * The online softmax over a chunk's scores sc [n] for one head, M and S at mp, sp (f32): for each
 * position, the factor cm of the accumulator (e^(M_old − M) at a new maximum, else 1) and the
 * factor cv of v (1 at a new maximum, else e^(s − M); ·vScale, 2^112 for raw V), into cm, cv [n].
 */
// @ts-ignore: decorator
@inline function f16Softmax(sc: usize, cm: usize, cv: usize, n: i32, mp: usize, sp: usize, vScale: f32): void {
  let M = load<f32>(mp);
  let S = load<f32>(sp);
  for (let t = 0; t < n; t++) {
    const o = <usize>t << 2;
    const s = load<f32>(sc + o);
    if (s > M) {
      const ms = <f32>Math.exp(<f64>(M - s));
      M = s;
      store<f32>(cm + o, ms);
      store<f32>(cv + o, vScale);
      S = <f32>(<f64>S * <f64>ms + 1); // S·ms + vs fused as the compiler contracts it (S·ms exact in f64)
    } else {
      const vs = <f32>Math.exp(<f64>(s - M));
      store<f32>(cm + o, 1);
      store<f32>(cv + o, vs * vScale); // exact (vs ≤ 1)
      S = <f32>(<f64>S + <f64>vs); // S·1 + vs
    }
  }
  store<f32>(mp, M);
  store<f32>(sp, S);
}

/** a + v·cv fused (ggml_vec_mad_f16: relaxed madd when the engine fuses it, else in f64), one rounding to f32. */
// @ts-ignore: decorator
@inline function mad(a: v128, v: v128, cv: f32, fused: bool): v128 {
  if (ASC_FEATURE_RELAXED_SIMD && fused) return f32x4.relaxed_madd(v, f32x4.splat(cv), a);
  return fmaF(a, v, f64x2.splat(<f64>cv));
}

/** f16 of a sum: roundHalf, or in the fast pass (raw) roundHalfFinite, the sum checked apart (expOf). */
// @ts-ignore: decorator
@inline function toHalf(y: v128, raw: bool): v128 {
  return raw ? roundHalfFinite(y) : roundHalf(y);
}

/** The exponent field of four f32 (for roundHalfE and the fast pass's overflow check). */
// @ts-ignore: decorator
@inline function expOf(y: v128, kExp: v128): v128 {
  return v128.and(y, kExp);
}

/** toHalf of y with e = expOf(y) at hand. */
// @ts-ignore: decorator
@inline function toHalfE(y: v128, e: v128, raw: bool, kMin: v128, kC: v128, kSign: v128): v128 {
  return raw ? roundHalfE(y, e, kMin, kC, kSign) : roundHalf(y);
}


/** a·cm (an f32 multiply), then f16: ggml_vec_scale_f16 at a new maximum (cm ≤ 1: no overflow). */
// @ts-ignore: decorator
@inline function scaleHalf(a: v128, cm: f32, raw: bool): v128 {
  return toHalf(f32x4.mul(a, f32x4.splat(cm)), raw);
}

/**
 * One head's accumulator acc [hdV] through the n positions of a chunk: V rows at v + t·vStride bytes
 * (see row4), factors cm, cv [n] (f16Softmax): acc·cm then f16 where cm ≠ 1 (a new maximum; at
 * cm = 1 that would change nothing), then acc + v·cv (mad), f16. 32 lanes at a time stay in
 * registers for the chunk (eight chains of dependent operations, enough to hide their latency),
 * then 16, then 4. fused, raw: constants in each copy; big: a v128 cell where the fast pass
 * folds its sums' exponents (roundHalfE).
 */
// @ts-ignore: decorator
@inline function f16Lanes<T>(acc: usize, v: usize, vStride: usize, cm: usize, cv: usize, n: i32, hdV: i32, fused: bool, raw: bool, big: usize): void {
  const kRaw = kv(K_RAW), kExp = kv(K_EXP), kMin = kv(K_MIN), kC = kv(K_C), kSign = kv(K_SIGN);
  let bg = i32x4.splat(0);
  let i = 0;
  for (; i + 32 <= hdV; i += 32) {
    const p = acc + (<usize>i << 2);
    let a0 = v128.load(p);
    let a1 = v128.load(p, 16);
    let a2 = v128.load(p, 32);
    let a3 = v128.load(p, 48);
    let a4 = v128.load(p, 64);
    let a5 = v128.load(p, 80);
    let a6 = v128.load(p, 96);
    let a7 = v128.load(p, 112);
    let vt = v + (<usize>i << (sizeof<T>() == 4 ? 2 : 1));
    for (let t = 0; t < n; t++) {
      if (load<u32>(cm + (<usize>t << 2)) != 0x3f800000) {
        // cm ≠ 1 (an integer compare: V8 rebuilds a float constant every time)
        const m = load<f32>(cm + (<usize>t << 2));
        a0 = scaleHalf(a0, m, raw);
        a1 = scaleHalf(a1, m, raw);
        a2 = scaleHalf(a2, m, raw);
        a3 = scaleHalf(a3, m, raw);
        a4 = scaleHalf(a4, m, raw);
        a5 = scaleHalf(a5, m, raw);
        a6 = scaleHalf(a6, m, raw);
        a7 = scaleHalf(a7, m, raw);
      }
      // each group of lanes from load to f16 in turn, the row loads at constant offsets from one
      // pointer (no address arithmetic per load), kRaw and kSign loaded where used: 8 accumulators
      // and 5 constants in registers left V8 spilling accumulators (this order runs fewer
      // instructions per head and position than all eight sums first, then their exponents, then
      // their f16)
      const c = load<f32>(cv + (<usize>t << 2));
      const y0 = mad(a0, kAt<T>(sizeof<T>() == 4 ? v128.load(vt, 0) : isSigned<T>() ? v128.load16x4_s(vt, 0) : v128.load16x4_u(vt, 0), kv(K_RAW)), c, fused);
      const e0 = expOf(y0, kExp);
      if (raw) bg = i32x4.max_s(bg, e0);
      a0 = toHalfE(y0, e0, raw, kMin, kC, kv(K_SIGN));
      const y1 = mad(a1, kAt<T>(sizeof<T>() == 4 ? v128.load(vt, 16) : isSigned<T>() ? v128.load16x4_s(vt, 8) : v128.load16x4_u(vt, 8), kv(K_RAW)), c, fused);
      const e1 = expOf(y1, kExp);
      if (raw) bg = i32x4.max_s(bg, e1);
      a1 = toHalfE(y1, e1, raw, kMin, kC, kv(K_SIGN));
      const y2 = mad(a2, kAt<T>(sizeof<T>() == 4 ? v128.load(vt, 32) : isSigned<T>() ? v128.load16x4_s(vt, 16) : v128.load16x4_u(vt, 16), kv(K_RAW)), c, fused);
      const e2 = expOf(y2, kExp);
      if (raw) bg = i32x4.max_s(bg, e2);
      a2 = toHalfE(y2, e2, raw, kMin, kC, kv(K_SIGN));
      const y3 = mad(a3, kAt<T>(sizeof<T>() == 4 ? v128.load(vt, 48) : isSigned<T>() ? v128.load16x4_s(vt, 24) : v128.load16x4_u(vt, 24), kv(K_RAW)), c, fused);
      const e3 = expOf(y3, kExp);
      if (raw) bg = i32x4.max_s(bg, e3);
      a3 = toHalfE(y3, e3, raw, kMin, kC, kv(K_SIGN));
      const y4 = mad(a4, kAt<T>(sizeof<T>() == 4 ? v128.load(vt, 64) : isSigned<T>() ? v128.load16x4_s(vt, 32) : v128.load16x4_u(vt, 32), kv(K_RAW)), c, fused);
      const e4 = expOf(y4, kExp);
      if (raw) bg = i32x4.max_s(bg, e4);
      a4 = toHalfE(y4, e4, raw, kMin, kC, kv(K_SIGN));
      const y5 = mad(a5, kAt<T>(sizeof<T>() == 4 ? v128.load(vt, 80) : isSigned<T>() ? v128.load16x4_s(vt, 40) : v128.load16x4_u(vt, 40), kv(K_RAW)), c, fused);
      const e5 = expOf(y5, kExp);
      if (raw) bg = i32x4.max_s(bg, e5);
      a5 = toHalfE(y5, e5, raw, kMin, kC, kv(K_SIGN));
      const y6 = mad(a6, kAt<T>(sizeof<T>() == 4 ? v128.load(vt, 96) : isSigned<T>() ? v128.load16x4_s(vt, 48) : v128.load16x4_u(vt, 48), kv(K_RAW)), c, fused);
      const e6 = expOf(y6, kExp);
      if (raw) bg = i32x4.max_s(bg, e6);
      a6 = toHalfE(y6, e6, raw, kMin, kC, kv(K_SIGN));
      const y7 = mad(a7, kAt<T>(sizeof<T>() == 4 ? v128.load(vt, 112) : isSigned<T>() ? v128.load16x4_s(vt, 56) : v128.load16x4_u(vt, 56), kv(K_RAW)), c, fused);
      const e7 = expOf(y7, kExp);
      if (raw) bg = i32x4.max_s(bg, e7);
      a7 = toHalfE(y7, e7, raw, kMin, kC, kv(K_SIGN));
      vt += vStride;
    }
    v128.store(p, a0);
    v128.store(p, a1, 16);
    v128.store(p, a2, 32);
    v128.store(p, a3, 48);
    v128.store(p, a4, 64);
    v128.store(p, a5, 80);
    v128.store(p, a6, 96);
    v128.store(p, a7, 112);
  }
  for (; i + 16 <= hdV; i += 16) {
    const p = acc + (<usize>i << 2);
    let a0 = v128.load(p);
    let a1 = v128.load(p, 16);
    let a2 = v128.load(p, 32);
    let a3 = v128.load(p, 48);
    let vt = v;
    for (let t = 0; t < n; t++) {
      const m = load<f32>(cm + (<usize>t << 2));
      if (m != 1) {
        a0 = scaleHalf(a0, m, raw);
        a1 = scaleHalf(a1, m, raw);
        a2 = scaleHalf(a2, m, raw);
        a3 = scaleHalf(a3, m, raw);
      }
      const c = load<f32>(cv + (<usize>t << 2));
      const y0 = mad(a0, rowV<T>(vt, i, kRaw), c, fused);
      const y1 = mad(a1, rowV<T>(vt, i + 4, kRaw), c, fused);
      const y2 = mad(a2, rowV<T>(vt, i + 8, kRaw), c, fused);
      const y3 = mad(a3, rowV<T>(vt, i + 12, kRaw), c, fused);
      const e0 = expOf(y0, kExp), e1 = expOf(y1, kExp), e2 = expOf(y2, kExp), e3 = expOf(y3, kExp);
      if (raw) bg = i32x4.max_s(i32x4.max_s(bg, i32x4.max_s(e0, e1)), i32x4.max_s(e2, e3));
      a0 = toHalfE(y0, e0, raw, kMin, kC, kSign);
      a1 = toHalfE(y1, e1, raw, kMin, kC, kSign);
      a2 = toHalfE(y2, e2, raw, kMin, kC, kSign);
      a3 = toHalfE(y3, e3, raw, kMin, kC, kSign);
      vt += vStride;
    }
    v128.store(p, a0);
    v128.store(p, a1, 16);
    v128.store(p, a2, 32);
    v128.store(p, a3, 48);
  }
  for (; i < hdV; i += 4) {
    const p = acc + (<usize>i << 2);
    let a0 = v128.load(p);
    let vt = v;
    for (let t = 0; t < n; t++) {
      const m = load<f32>(cm + (<usize>t << 2));
      if (m != 1) a0 = scaleHalf(a0, m, raw);
      const y0 = mad(a0, rowV<T>(vt, i, kRaw), load<f32>(cv + (<usize>t << 2)), fused);
      const e0 = expOf(y0, kExp);
      if (raw) bg = i32x4.max_s(bg, e0);
      a0 = toHalfE(y0, e0, raw, kMin, kC, kSign);
      vt += vStride;
    }
    v128.store(p, a0);
  }
  if (raw) v128.store(big, i32x4.max_s(v128.load(big), bg));
}

/**
 * f16Lanes position by position, the accumulator in memory: for the f64 madd (fmaF), whose longer
 * sequence of operations per lane would not fit in registers for 32 lanes (TurboFan spills);
 * independent lanes within a position let the CPU overlap them instead.
 */
// @ts-ignore: decorator
@inline function f16LanesMem<T>(acc: usize, v: usize, vStride: usize, cm: usize, cv: usize, n: i32, hdV: i32, raw: bool, big: usize): void {
  const kRaw = kv(K_RAW), kExp = kv(K_EXP), kMin = kv(K_MIN), kC = kv(K_C), kSign = kv(K_SIGN);
  let bg = i32x4.splat(0);
  let vt = v;
  for (let t = 0; t < n; t++) {
    const m = load<f32>(cm + (<usize>t << 2));
    if (m != 1) {
      for (let i = 0; i < hdV; i += 4) {
        const p = acc + (<usize>i << 2);
        v128.store(p, scaleHalf(v128.load(p), m, raw));
      }
    }
    const c = load<f32>(cv + (<usize>t << 2));
    for (let i = 0; i < hdV; i += 4) {
      const p = acc + (<usize>i << 2);
      const y = mad(v128.load(p), rowV<T>(vt, i, kRaw), c, false);
      const e = expOf(y, kExp);
      if (raw) bg = i32x4.max_s(bg, e);
      v128.store(p, toHalfE(y, e, raw, kMin, kC, kSign));
    }
    vt += vStride;
  }
  if (raw) v128.store(big, i32x4.max_s(v128.load(big), bg));
}

/** The accumulator through a chunk: f16Lanes with the relaxed madd, else f16LanesMem. */
// @ts-ignore: decorator
@inline function f16Accumulate<T>(acc: usize, v: usize, vStride: usize, cm: usize, cv: usize, n: i32, hdV: i32, fused: bool, raw: bool, big: usize): void {
  if (ASC_FEATURE_RELAXED_SIMD && fused) f16Lanes<T>(acc, v, vStride, cm, cv, n, hdV, true, raw, big);
  else f16LanesMem<T>(acc, v, vStride, cm, cv, n, hdV, raw, big);
}

/**
 * One head through a chunk of n positions: scores into sc [n] from K rows at k + t·kStride bytes,
 * the softmax factors, the accumulator. T: how the rows are stored (row4); raw: raw halves (q16
 * and V's factor scaled by 2^112).
 */
// @ts-ignore: decorator
@inline function f16Head<T>(
  q16: usize, k: usize, kStride: usize, v: usize, vStride: usize, n: i32, acc: usize, mp: usize, sp: usize,
  sc: usize, cm: usize, cv: usize, hdK: i32, hdV: i32, scale: f32, fused: bool, raw: bool, big: usize,
): void {
  const kRaw = kv(K_RAW);
  let kt = k;
  for (let t = 0; t < n; t++) {
    store<f32>(sc + (<usize>t << 2), (ASC_FEATURE_RELAXED_SIMD && hdK == 64 ? dot64<T>(q16, kt, kRaw) : dotF16<T>(q16, kt, hdK, kRaw)) * scale);
    kt += kStride;
  }
  f16Softmax(sc, cm, cv, n, mp, sp, raw ? TWO112 : 1);
  f16Accumulate<T>(acc, v, vStride, cm, cv, n, hdV, fused, raw, big);
}

/** dst[t·n ..+n) = raw f32 (rawHalf) of the n halves at src + t·stride bytes, t < rows (n a multiple of 4). */
// @ts-ignore: decorator
@inline function widenRowsRaw(dst: usize, src: usize, stride: usize, rows: i32, n: i32): void {
  const kRaw = kv(K_RAW);
  for (let t = 0; t < rows; t++) {
    let i = 0;
    for (; i + 16 <= n; i += 16) {
      // four at a time: fewer loop steps
      const d = dst + (<usize>i << 2);
      v128.store(d, rowV<i16>(src, i, kRaw));
      v128.store(d, rowV<i16>(src, i + 4, kRaw), 16);
      v128.store(d, rowV<i16>(src, i + 8, kRaw), 32);
      v128.store(d, rowV<i16>(src, i + 12, kRaw), 48);
    }
    for (; i < n; i += 4) v128.store(dst + (<usize>i << 2), rowV<i16>(src, i, kRaw));
    dst += <usize>n << 2;
    src += stride;
  }
}

/** widenRowsRaw, exactly (halfToF32). */
// @ts-ignore: decorator
@inline function widenRows(dst: usize, src: usize, stride: usize, rows: i32, n: i32): void {
  for (let t = 0; t < rows; t++) {
    widen(dst, src, n);
    dst += <usize>n << 2;
    src += stride;
  }
}

/** bad folded with rows of n halves at p + t·stride bytes, t < rows (scanHalves). */
// @ts-ignore: decorator
@inline function scanRows(bad: v128, p: usize, stride: usize, rows: i32, n: i32): v128 {
  if ((n & 63) == 0) {
    // 64 halves per step in straight code (a loop step per 8 counted about as much as the scan)
    for (let t = 0; t < rows; t++) {
      for (let i = 0; i < n; i += 64) {
        const q = p + (<usize>i << 1);
        const a = i16x8.max_u(i16x8.max_u(i16x8.shl(v128.load(q), 1), i16x8.shl(v128.load(q, 16), 1)), i16x8.max_u(i16x8.shl(v128.load(q, 32), 1), i16x8.shl(v128.load(q, 48), 1)));
        const b = i16x8.max_u(i16x8.max_u(i16x8.shl(v128.load(q, 64), 1), i16x8.shl(v128.load(q, 80), 1)), i16x8.max_u(i16x8.shl(v128.load(q, 96), 1), i16x8.shl(v128.load(q, 112), 1)));
        bad = i16x8.max_u(bad, i16x8.max_u(a, b));
      }
      p += stride;
    }
    return bad;
  }
  for (let t = 0; t < rows; t++) {
    bad = scanHalves(bad, p, n);
    p += stride;
  }
  return bad;
}

/**
 * Scratch bytes of attn_f16: q16 [nHead·hdK], acc [nHead·hdV], M/S [2·nHead], rows [CHUNK·(hdK + hdV)],
 * sc/cm/cv [3·CHUNK], big [4], probe [2].
 */
// @ts-ignore: decorator
@inline function f16ScratchBytes(nHead: i32, hdK: i32, hdV: i32): i32 {
  return (nHead * (hdK + hdV + 2) + CHUNK * (hdK + hdV + 3) + 6) * 4;
}

/**
 * attn_f16's work, raw (the fast pass) or exact; false when the raw pass met an infinity or NaN in
 * the cache rows (its output is then garbage, and the exact pass must run). scan: look for them
 * (false when the caller knows every row is finite).
 */
// @ts-ignore: decorator
@inline function f16Pass(
  raw: bool, scan: bool, out: usize, q: usize, kc: usize, vc: usize, strideK: i32, strideV: i32, from: i32, to: i32,
  nHead: i32, nHeadKv: i32, hdK: i32, hdV: i32, scale: f32, scratch: usize, fused: bool, sinks: usize,
): bool {
  const group = nHead / nHeadKv;
  const q16 = scratch; // [nHead, hdK]
  const acc = q16 + (<usize>(nHead * hdK) << 2); // [nHead, hdV]
  const ms = acc + (<usize>(nHead * hdV) << 2); // M [nHead]
  const ss = ms + (<usize>nHead << 2); // S [nHead]
  const kf = ss + (<usize>nHead << 2); // [CHUNK, hdK]: a chunk's K rows widened, for a group of query heads
  const vf = kf + (<usize>(CHUNK * hdK) << 2); // [CHUNK, hdV]
  const sc = vf + (<usize>(CHUNK * hdV) << 2); // scores [CHUNK]
  const cm = sc + (<usize>CHUNK << 2); // factors [CHUNK] (f16Softmax)
  const cv = cm + (<usize>CHUNK << 2);
  const big = cv + (<usize>CHUNK << 2); // v128: the fast pass's sums' exponents before f16 (roundHalfE)
  // every head: q rounded to f16 (·2^112 for raw K), accumulator cleared, M = −inf, S = 0
  for (let h = 0; h < nHead; h++) {
    const qh = q + (<usize>(h * hdK) << 2);
    const qj = q16 + (<usize>(h * hdK) << 2);
    for (let i = 0; i < hdK; i += 4) {
      const r = roundHalf(v128.load(qh + (<usize>i << 2)));
      v128.store(qj + (<usize>i << 2), raw ? f32x4.mul(r, f32x4.splat(TWO112)) : r);
    }
    store<f32>(ms + (<usize>h << 2), -Infinity);
    store<f32>(ss + (<usize>h << 2), 0);
  }
  memory.fill(acc, 0, <usize>(nHead * hdV) << 2);
  const kRow = <usize>strideK << 1;
  const vRow = <usize>strideV << 1;
  let bad = i16x8.splat(0);
  if (raw) v128.store(big, i32x4.splat(0));
  // chunks of positions in order, every head at each (one pass over the cache rows)
  for (let t0 = from; t0 <= to; t0 += CHUNK) {
    const n = min(CHUNK, to - t0 + 1);
    for (let g = 0; g < nHeadKv; g++) {
      const kg = kc + (<usize>(t0 * strideK + g * hdK) << 1);
      const vg = vc + (<usize>(t0 * strideV + g * hdV) << 1);
      if (raw && scan) bad = scanRows(scanRows(bad, kg, kRow, n, hdK), vg, vRow, n, hdV);
      if (group == 1) {
        // straight from the cache
        const h = g;
        const qh = q16 + (<usize>(h * hdK) << 2);
        const ah = acc + (<usize>(h * hdV) << 2);
        if (raw) f16Head<i16>(qh, kg, kRow, vg, vRow, n, ah, ms + (<usize>h << 2), ss + (<usize>h << 2), sc, cm, cv, hdK, hdV, scale, fused, true, big);
        else f16Head<u16>(qh, kg, kRow, vg, vRow, n, ah, ms + (<usize>h << 2), ss + (<usize>h << 2), sc, cm, cv, hdK, hdV, scale, fused, false, big);
        continue;
      }
      // GQA: the chunk's K and V rows widened once for the group's query heads
      if (raw) {
        widenRowsRaw(kf, kg, kRow, n, hdK);
        widenRowsRaw(vf, vg, vRow, n, hdV);
      } else {
        widenRows(kf, kg, kRow, n, hdK);
        widenRows(vf, vg, vRow, n, hdV);
      }
      for (let h = g * group; h < (g + 1) * group; h++) {
        f16Head<f32>(q16 + (<usize>(h * hdK) << 2), kf, <usize>hdK << 2, vf, <usize>hdV << 2, n, acc + (<usize>(h * hdV) << 2), ms + (<usize>h << 2), ss + (<usize>h << 2), sc, cm, cv, hdK, hdV, scale, fused, raw, big);
      }
    }
  }
  if (raw && (hasInfNaN(bad) || isBigE(load<v128>(big)))) return false;
  for (let h = 0; h < nHead; h++) {
    let S = load<f32>(ss + (<usize>h << 2));
    const ah = acc + (<usize>(h * hdV) << 2);
    if (sinks != 0) S = sinkInto(ah, hdV, S, load<f32>(ms + (<usize>h << 2)), load<f32>(sinks + (<usize>h << 2)));
    const inv = f32x4.splat(S == 0 ? 0 : <f32>1 / S);
    const oh = out + (<usize>(h * hdV) << 2);
    for (let i = 0; i < hdV; i += 4) v128.store(oh + (<usize>i << 2), f32x4.mul(v128.load(ah + (<usize>i << 2)), inv));
  }
  return true;
}

/**
 * A head's attention sink (gpt-oss), after its positions, as ggml's flash attention applies it: a
 * logit sk in the softmax's denominator with no value. At a new maximum the accumulator acc [hdV]
 * (f32, no f16 rounding) is scaled by e^(M − sk) and S = S·e^(M − sk) + 1 (contracted); else
 * S = S + e^(sk − M). Returns the new S.
 */
function sinkInto(acc: usize, hdV: i32, S: f32, M: f32, sk: f32): f32 {
  if (sk > M) {
    const m = <f32>Math.exp(<f64>(M - sk));
    const mv = f32x4.splat(m);
    for (let i = 0; i < hdV; i += 4) v128.store(acc + (<usize>i << 2), f32x4.mul(v128.load(acc + (<usize>i << 2)), mv));
    return <f32>(<f64>S * <f64>m + 1);
  }
  return <f32>(<f64>S + <f64><f32>Math.exp(<f64>(sk - M)));
}

/**
 * Reads one word of every 64 bytes of [p, p + min(n, TOUCH_MAX)): a generated token's cache rows, which
 * the layer's weight products have pushed out of L1/L2 since the last token, come in with every
 * load independent (many misses in flight), before the passes walk them with their arithmetic in
 * between. 1.34-1.44x on the 110M's attention with the caches evicted before each layer
 * (bench/attn-cold.ts, 165 positions, one thread). At most TOUCH_MAX bytes each for keys and values,
 * so that what is read stays in L2; longer caches are read as before past that.
 */
const TOUCH_MAX: usize = 512 * 1024;
const TOUCH_SINK: usize = memory.data(16, 16);
function touchRows(p: usize, n: usize): void {
  const end = p + min(n, TOUCH_MAX);
  let s: u32 = 0;
  for (let q = p; q < end; q += 64) s ^= load<u32>(q);
  store<u32>(TOUCH_SINK, s); // (the loads' use)
}

/**
 * finite: 1 when the caller guarantees no cache row holds an infinity or NaN half (it tracked what
 * kv_store reported), so the fast pass skips scanning the rows; 0 (or left out): scan them.
 */
export function attn_f16(
  out: usize, q: usize, kc: usize, vc: usize, strideK: i32, strideV: i32, from: i32, to: i32,
  nHead: i32, nHeadKv: i32, hdK: i32, hdV: i32, scale: f32, scratch: usize, finite: i32, sinks: usize,
): void {
  const fused = fusedMadd(scratch + <usize>f16ScratchBytes(nHead, hdK, hdV) - 8); // the probe, last
  touchRows(kc + (<usize>(from * strideK) << 1), <usize>((to - from + 1) * strideK) << 1);
  touchRows(vc + (<usize>(from * strideV) << 1), <usize>((to - from + 1) * strideV) << 1);
  if (f16Pass(true, finite == 0, out, q, kc, vc, strideK, strideV, from, to, nHead, nHeadKv, hdK, hdV, scale, scratch, fused, sinks)) return;
  f16Pass(false, false, out, q, kc, vc, strideK, strideV, from, to, nHead, nHeadKv, hdK, hdV, scale, scratch, fused, sinks);
}

// ---- 'f32' mode --------------------------------------------------------------------------------

export function attn_f32(
  out: usize, q: usize, kc: usize, vc: usize, strideK: i32, strideV: i32, from: i32, to: i32,
  nHead: i32, nHeadKv: i32, hdK: i32, hdV: i32, scale: f32, scratch: usize, sinks: usize,
): void {
  const group = nHead / nHeadKv;
  const np = to - from + 1;
  const sc = scratch; // [group, np]
  const kf = sc + (<usize>(group * np) << 2);
  const vf = kf + (<usize>hdK << 2);
  const sums = (vf + (<usize>hdV << 2) + 7) & ~7; // f64 [group]
  for (let g = 0; g < nHeadKv; g++) {
    // scores and their maximum
    for (let t = from; t <= to; t++) {
      widen(kf, kc + (<usize>(t * strideK + g * hdK) << 1), hdK);
      for (let j = 0; j < group; j++) {
        const qh = q + (<usize>((g * group + j) * hdK) << 2);
        store<f32>(sc + (<usize>(j * np + t - from) << 2), dotF(qh, kf, hdK) * scale);
      }
    }
    for (let j = 0; j < group; j++) {
      const sj = sc + (<usize>(j * np) << 2);
      // a sink (gpt-oss) joins the maximum and, after the positions, the sum
      const sk: f32 = sinks != 0 ? load<f32>(sinks + (<usize>(g * group + j) << 2)) : -Infinity;
      let M: f32 = sk;
      for (let i = 0; i < np; i++) M = max<f32>(M, load<f32>(sj + (<usize>i << 2)));
      let S: f64 = 0;
      for (let i = 0; i < np; i++) {
        const e = <f32>Math.exp(<f64>(load<f32>(sj + (<usize>i << 2)) - M));
        store<f32>(sj + (<usize>i << 2), e);
        S += <f64>e;
      }
      if (sinks != 0) S += <f64><f32>Math.exp(<f64>(sk - M));
      store<f64>(sums + (<usize>j << 3), S);
      memory.fill(out + (<usize>((g * group + j) * hdV) << 2), 0, <usize>hdV << 2);
    }
    // weighted sum of V rows
    for (let t = from; t <= to; t++) {
      widen(vf, vc + (<usize>(t * strideV + g * hdV) << 1), hdV);
      for (let j = 0; j < group; j++) {
        const p = f32x4.splat(load<f32>(sc + (<usize>(j * np + t - from) << 2)));
        const oh = out + (<usize>((g * group + j) * hdV) << 2);
        for (let i = 0; i < hdV; i += 4) {
          const o = <usize>i << 2;
          v128.store(oh + o, f32x4.add(v128.load(oh + o), f32x4.mul(p, v128.load(vf + o))));
        }
      }
    }
    for (let j = 0; j < group; j++) {
      const inv = f32x4.splat(<f32>(1 / load<f64>(sums + (<usize>j << 3))));
      const oh = out + (<usize>((g * group + j) * hdV) << 2);
      for (let i = 0; i < hdV; i += 4) v128.store(oh + (<usize>i << 2), f32x4.mul(v128.load(oh + (<usize>i << 2)), inv));
    }
  }
}

/** [hsum(s0), hsum(s1), hsum(s2), hsum(s3)]: each (lane 0 + lane 2) + (lane 1 + lane 3), as hsum. */
// @ts-ignore: decorator
@inline function hsum4(s0: v128, s1: v128, s2: v128, s3: v128): v128 {
  const u = v128.shuffle<f32>(s0, s1, 0, 4, 2, 6), w = v128.shuffle<f32>(s2, s3, 0, 4, 2, 6);
  const u1 = v128.shuffle<f32>(s0, s1, 1, 5, 3, 7), w1 = v128.shuffle<f32>(s2, s3, 1, 5, 3, 7);
  const even = f32x4.add(v128.shuffle<f32>(u, w, 0, 1, 4, 5), v128.shuffle<f32>(u, w, 2, 3, 6, 7));
  const odd = f32x4.add(v128.shuffle<f32>(u1, w1, 0, 1, 4, 5), v128.shuffle<f32>(u1, w1, 2, 3, 6, 7));
  return f32x4.add(even, odd);
}

/** Store the four lanes of s to p, p + ms, p + 2·ms, p + 3·ms. */
// @ts-ignore: decorator
@inline function put4s(p: usize, ms: usize, s: v128): void {
  store<f32>(p, f32x4.extract_lane(s, 0));
  store<f32>(p + ms, f32x4.extract_lane(s, 1));
  store<f32>(p + 2 * ms, f32x4.extract_lane(s, 2));
  store<f32>(p + 3 * ms, f32x4.extract_lane(s, 3));
}

/**
 * Scores of four query rows a0..a3 against two K rows b and b + 4·n (positions t, t + 1), each
 * dotF(a, b, n)·sv's number (its lane sums in the same order, then hsum4), eight chains at once;
 * stored at st (position t, pair m; pairs ms bytes apart) and st + 4.
 */
// @ts-ignore: decorator
@inline function scores4x2(a0: usize, a1: usize, a2: usize, a3: usize, b: usize, n: i32, sv: v128, st: usize, ms: usize): void {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  let r0 = f32x4.splat(0), r1 = f32x4.splat(0), r2 = f32x4.splat(0), r3 = f32x4.splat(0);
  const b1 = b + (<usize>n << 2);
  for (let i = 0; i < n; i += 4) {
    const o = <usize>i << 2;
    const k0 = v128.load(b + o), k1 = v128.load(b1 + o);
    let x = v128.load(a0 + o);
    s0 = f32x4.add(s0, f32x4.mul(x, k0));
    r0 = f32x4.add(r0, f32x4.mul(x, k1));
    x = v128.load(a1 + o);
    s1 = f32x4.add(s1, f32x4.mul(x, k0));
    r1 = f32x4.add(r1, f32x4.mul(x, k1));
    x = v128.load(a2 + o);
    s2 = f32x4.add(s2, f32x4.mul(x, k0));
    r2 = f32x4.add(r2, f32x4.mul(x, k1));
    x = v128.load(a3 + o);
    s3 = f32x4.add(s3, f32x4.mul(x, k0));
    r3 = f32x4.add(r3, f32x4.mul(x, k1));
  }
  put4s(st, ms, f32x4.mul(hsum4(s0, s1, s2, s3), sv));
  put4s(st + 4, ms, f32x4.mul(hsum4(r0, r1, r2, r3), sv));
}

// e^x for the softmax: fround(Math.exp(x)) as the reference (glibc's expf in ggml) has it, four
// at a time. In f64: k = nearest(x·log2 e), r = x − k·ln 2 (Cody-Waite, |r| ≤ ~0.35), e^r by its
// Taylor polynomial to r^11 (relative error < 2^-46), times 2^k. That is within 2^-45 of e^x, and
// Math.exp within 2^-52; so unless the f64 result lies within 2^-40 (relative) of a midpoint between
// two f32 (its low 29 mantissa bits within 2^12 of 2^28), both round to the same f32. The lanes that
// do (about one in 60 000), and x < −87 (results below f32's normal range), take Math.exp itself.

const LOG2E: f64 = 1.4426950408889634;
const LN2_HI: f64 = 6.93147180369123816490e-01; // low 21 bits zero: k·LN2_HI is exact
const LN2_LO: f64 = 1.90821492927058770002e-10;
/** 1.5·2^52: y + ROUND's low mantissa bits hold nearest(y) as a two's complement integer. */
const ROUND: f64 = 6755399441055744.0;

/**
 * The constants of exp2lanes, read from memory (as loads they cost one µop each; V8 would rebuild
 * each v128 constant from immediates in every iteration): LOG2E, ROUND, LN2_HI, LN2_LO, then the
 * Taylor coefficients c_n = 1/n!, n = 0..11.
 */
const EXP_K: usize = memory.data<f64>([
  LOG2E, ROUND, LN2_HI, LN2_LO,
  1.0, 1.0, 0.5, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0,
  1.0 / 720.0, 1.0 / 5040.0, 1.0 / 40320.0, 1.0 / 362880.0, 1.0 / 3628800.0, 1.0 / 39916800.0,
]);

/** c_n + c_{n+1}·r (f64x2). */
// @ts-ignore: decorator
@inline function cpair(n: usize, r: v128): v128 {
  return f64x2.add(v128.load64_splat(EXP_K + 32 + (n << 3)), f64x2.mul(v128.load64_splat(EXP_K + 40 + (n << 3)), r));
}

/**
 * e^x for two f64 lanes, x in [−87, 0] (above: Cody-Waite, Taylor, see the section comment); the
 * polynomial by Estrin's scheme (a third of Horner's latency; its rounding differs in the last bits,
 * which the midpoint test covers).
 */
// @ts-ignore: decorator
@inline function exp2lanes(x: v128): v128 {
  const y = f64x2.add(f64x2.mul(x, v128.load64_splat(EXP_K)), v128.load64_splat(EXP_K, 8));
  const k = f64x2.sub(y, v128.load64_splat(EXP_K, 8));
  const r = f64x2.sub(f64x2.sub(x, f64x2.mul(k, v128.load64_splat(EXP_K, 16))), f64x2.mul(k, v128.load64_splat(EXP_K, 24)));
  const r2 = f64x2.mul(r, r), r4 = f64x2.mul(r2, r2), r8 = f64x2.mul(r4, r4);
  const q0 = f64x2.add(cpair(0, r), f64x2.mul(cpair(2, r), r2));
  const q1 = f64x2.add(cpair(4, r), f64x2.mul(cpair(6, r), r2));
  const q2 = f64x2.add(cpair(8, r), f64x2.mul(cpair(10, r), r2));
  const p = f64x2.add(f64x2.add(q0, f64x2.mul(q1, r4)), f64x2.mul(q2, r8));
  // 2^k: the exponent field k + 1023 (only the low 12 bits of y's integer survive the shift)
  return f64x2.mul(p, i64x2.shl(i64x2.add(y, i64x2.splat(1023)), 52));
}

/** Lanes of e (f64x2) that lie within 2^12 f64 ulps of an f32 rounding midpoint, as an i64x2 mask. */
// @ts-ignore: decorator
@inline function nearMidpoint(e: v128): v128 {
  const d = i64x2.sub(v128.and(e, i64x2.splat(0x1fffffff)), i64x2.splat(0x10000000));
  return i64x2.le_s(i64x2.abs(d), i64x2.splat(4096));
}

/**
 * The softmax's exponentials over the n scores at s (in place): s[t] = fround(e^(s[t] − M)), M their
 * maximum; returns their sum S, added in f64 one position after another (attn_f32's numbers).
 */
// @ts-ignore: decorator
@inline function softmaxExp(s: usize, n: i32, sink: f32): f64 {
  // the maximum (f32 max is exact in any order), the sink's logit among them (−inf: none)
  let mv = f32x4.splat(sink);
  let t = 0;
  for (; t + 4 <= n; t += 4) mv = f32x4.max(mv, v128.load(s + (<usize>t << 2)));
  let M = max<f32>(max<f32>(f32x4.extract_lane(mv, 0), f32x4.extract_lane(mv, 1)), max<f32>(f32x4.extract_lane(mv, 2), f32x4.extract_lane(mv, 3)));
  for (; t < n; t++) M = max<f32>(M, load<f32>(s + (<usize>t << 2)));
  const Mv = f32x4.splat(M);
  let S: f64 = 0;
  t = 0;
  for (; t + 4 <= n; t += 4) {
    const p = s + (<usize>t << 2);
    const x = f32x4.sub(v128.load(p), Mv);
    const lo = exp2lanes(f64x2.promote_low_f32x4(x));
    const hi = exp2lanes(f64x2.promote_low_f32x4(v128.shuffle<f32>(x, x, 2, 3, 0, 1)));
    const bad = i32x4.bitmask(f32x4.lt(x, f32x4.splat(-87))) | i64x2.bitmask(nearMidpoint(lo)) | i64x2.bitmask(nearMidpoint(hi));
    if (bad == 0 && !v128.any_true(f32x4.ne(x, x))) {
      v128.store(p, v128.shuffle<f32>(f32x4.demote_f64x2_zero(lo), f32x4.demote_f64x2_zero(hi), 0, 1, 4, 5));
    } else {
      // rare: these four as the reference does them
      for (let l = 0; l < 4; l++) store<f32>(p + (<usize>l << 2), <f32>Math.exp(<f64>(load<f32>(p + (<usize>l << 2)) - M)));
    }
    S += <f64>load<f32>(p);
    S += <f64>load<f32>(p, 4);
    S += <f64>load<f32>(p, 8);
    S += <f64>load<f32>(p, 12);
  }
  for (; t < n; t++) {
    const e = <f32>Math.exp(<f64>(load<f32>(s + (<usize>t << 2)) - M));
    store<f32>(s + (<usize>t << 2), e);
    S += <f64>e;
  }
  if (sink != -Infinity) S += <f64><f32>Math.exp(<f64>(sink - M)); // the sink's term, last
  return S;
}

/** softmaxExp on its own (for the tests): s[0..n) ← fround(e^(s[t] − max s)); returns their f64 sum. */
export function attn_softmax_exp(s: usize, n: i32): f64 {
  return softmaxExp(s, n, -Infinity);
}

/**
 * attn_f32 for the n query positions pos..pos+n−1 of a prompt batch: query i (its heads at
 * q + i·nHead·hdK, its output at out + i·nHead·hdV) over cache positions [from_i, pos + i], from_i
 * = max(0, pos + i − window + 1) with a sliding window (window > 0), else 0. Every query's numbers
 * are attn_f32's, in the same order. TILE queries at a time, per KV head: each K row is widened once
 * and dotted with four (query, head) pairs at a time; the V rows are widened once into a block, then
 * each pair's output is summed over its positions in registers, 32 floats at a time.
 */
export function attn_f32_batch(
  out: usize, q: usize, kc: usize, vc: usize, strideK: i32, strideV: i32, pos: i32, n: i32, window: i32,
  nHead: i32, nHeadKv: i32, hdK: i32, hdV: i32, scale: f32, scratch: usize, sinks: usize,
): void {
  const group = nHead / nHeadKv;
  const sv = f32x4.splat(scale);
  const first = window > 0 ? max(0, pos - window + 1) : 0; // first position any query sees
  const last = pos + n - 1;
  const kb = scratch; // K rows [last − first + 1, hdK] f32, position t at t − first
  const vb = kb + (<usize>((last - first + 1) * hdK) << 2); // V rows, the same
  const qa = vb + (<usize>((last - first + 1) * hdV) << 2); // u32 [TILE·group]: pair m's query row
  const sums = (qa + (<usize>(TILE * group) << 2) + 7) & ~7; // f64 [TILE·group]
  const sc = sums + (<usize>(TILE * group) << 3); // scores [pairs, np] of a tile, position t at t − lo
  for (let g = 0; g < nHeadKv; g++) {
    // the KV head's cache rows, widened once for every tile
    for (let t = first; t <= last; t++) {
      widen(kb + (<usize>((t - first) * hdK) << 2), kc + (<usize>(t * strideK + g * hdK) << 1), hdK);
      widen(vb + (<usize>((t - first) * hdV) << 2), vc + (<usize>(t * strideV + g * hdV) << 1), hdV);
    }
    for (let t0 = 0; t0 < n; t0 += TILE) {
      const nt = min(TILE, n - t0);
      const lo = window > 0 ? max(0, pos + t0 - window + 1) : 0; // first position any query of the tile sees
      const hi = pos + t0 + nt - 1; // last
      const np = hi - lo + 1;
      // pair m = i·group + j: query t0 + i, head j of the KV head
      const pairs = nt * group;
      for (let i = 0; i < nt; i++) {
        for (let j = 0; j < group; j++) store<u32>(qa + (<usize>(i * group + j) << 2), <u32>(q + (<usize>((t0 + i) * nHead * hdK + (g * group + j) * hdK) << 2)));
      }
      // scores of every pair at every position of the tile (those a query does not see, a few near
      // the diagonal and the window's edge, are never read): four pairs by two positions at a time
      const ms = <usize>np << 2;
      for (let t = lo; t <= hi; t += 2) {
        const kf = kb + (<usize>((t - first) * hdK) << 2);
        const st = sc + (<usize>(t - lo) << 2);
        let m = 0;
        if (t < hi) {
          for (; m + 4 <= pairs; m += 4) {
            const qm = qa + (<usize>m << 2);
            scores4x2(load<u32>(qm), load<u32>(qm, 4), load<u32>(qm, 8), load<u32>(qm, 12), kf, hdK, sv, st + <usize>m * ms, ms);
          }
        }
        for (; m < pairs; m++) {
          const qm = load<u32>(qa + (<usize>m << 2));
          store<f32>(st + <usize>m * ms, dotF(qm, kf, hdK) * scale);
          if (t < hi) store<f32>(st + <usize>m * ms + 4, dotF(qm, kf + (<usize>hdK << 2), hdK) * scale);
        }
      }
      // softmax of each query's scores, over its own positions
      for (let i = 0; i < nt; i++) {
        const p = pos + t0 + i;
        const from = window > 0 ? max(0, p - window + 1) : 0;
        for (let j = 0; j < group; j++) {
          const sj = sc + (<usize>((i * group + j) * np + from - lo) << 2);
          const sk: f32 = sinks != 0 ? load<f32>(sinks + (<usize>(g * group + j) << 2)) : -Infinity;
          store<f64>(sums + (<usize>(i * group + j) << 3), softmaxExp(sj, p - from + 1, sk));
        }
      }
      // weighted sums of V rows: per pair, out = (Σ_t w_t·v_t, in t order) · (1/S)
      for (let i = 0; i < nt; i++) {
        const p = pos + t0 + i;
        const from = window > 0 ? max(0, p - window + 1) : 0;
        for (let j = 0; j < group; j++) {
          const m = i * group + j;
          const inv = f32x4.splat(<f32>(1 / load<f64>(sums + (<usize>m << 3))));
          const oh = out + (<usize>((t0 + i) * nHead * hdV + (g * group + j) * hdV) << 2);
          const sm = sc + (<usize>(m * np) << 2);
          vRows(oh, sm - (<usize>(lo - first) << 2), vb, hdV, from - first, p - first, inv);
        }
      }
    }
  }
}

/**
 * out[0..hdV) = (Σ over t in [t1, t2] of w[t]·v_t, one position after another) · inv, v_t the f32 row
 * at vb + 4·t·hdV: 32 floats at a time in eight registers, then four at a time.
 */
// @ts-ignore: decorator
@inline function vRows(out: usize, w: usize, vb: usize, hdV: i32, t1: i32, t2: i32, inv: v128): void {
  const rs = <usize>hdV << 2;
  let e = 0;
  for (; e + 32 <= hdV; e += 32) {
    let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
    let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
    let v = vb + <usize>t1 * rs + (<usize>e << 2);
    for (let t = t1; t <= t2; t++, v += rs) {
      const c = v128.load32_splat(w + (<usize>t << 2));
      a0 = f32x4.add(a0, f32x4.mul(c, v128.load(v)));
      a1 = f32x4.add(a1, f32x4.mul(c, v128.load(v, 16)));
      a2 = f32x4.add(a2, f32x4.mul(c, v128.load(v, 32)));
      a3 = f32x4.add(a3, f32x4.mul(c, v128.load(v, 48)));
      a4 = f32x4.add(a4, f32x4.mul(c, v128.load(v, 64)));
      a5 = f32x4.add(a5, f32x4.mul(c, v128.load(v, 80)));
      a6 = f32x4.add(a6, f32x4.mul(c, v128.load(v, 96)));
      a7 = f32x4.add(a7, f32x4.mul(c, v128.load(v, 112)));
    }
    const o = out + (<usize>e << 2);
    v128.store(o, f32x4.mul(a0, inv));
    v128.store(o, f32x4.mul(a1, inv), 16);
    v128.store(o, f32x4.mul(a2, inv), 32);
    v128.store(o, f32x4.mul(a3, inv), 48);
    v128.store(o, f32x4.mul(a4, inv), 64);
    v128.store(o, f32x4.mul(a5, inv), 80);
    v128.store(o, f32x4.mul(a6, inv), 96);
    v128.store(o, f32x4.mul(a7, inv), 112);
  }
  for (; e < hdV; e += 4) {
    let a = f32x4.splat(0);
    let v = vb + <usize>t1 * rs + (<usize>e << 2);
    for (let t = t1; t <= t2; t++, v += rs) a = f32x4.add(a, f32x4.mul(v128.load32_splat(w + (<usize>t << 2)), v128.load(v)));
    v128.store(out + (<usize>e << 2), f32x4.mul(a, inv));
  }
}

// ---- the cache ---------------------------------------------------------------------------------

/**
 * dst[0..n) = f16 bits of src[0..n) f32 (round to nearest even), one position's keys or values;
 * 1 when a stored half is an infinity or NaN (exponent 31: |x| ≥ 65520 or NaN), else 0.
 */
export function kv_store(dst: usize, src: usize, n: i32): i32 {
  let bad: u32 = 0;
  let i = 0;
  let b8 = i16x8.splat(0);
  for (; i + 8 <= n; i += 8) {
    const h = i16x8.narrow_i32x4_u(toHalf4(v128.load(src + (<usize>i << 2))), toHalf4(v128.load(src + (<usize>i << 2), 16)));
    v128.store(dst + (<usize>i << 1), h);
    const e = v128.load(KH, 128);
    b8 = v128.or(b8, i16x8.eq(v128.and(h, e), e)); // exponent 31
  }
  bad = <u32>v128.any_true(b8);
  for (; i < n; i++) {
    const h = f32ToF16Bits(load<f32>(src + (<usize>i << 2)));
    store<u16>(dst + (<usize>i << 1), <u16>h);
    bad |= <u32>((h & 0x7c00) == 0x7c00);
  }
  return <i32>bad;
}

/** toHalf4's constants (loaded: see K). */
const KH: usize = memory.data<u32>([
  0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, //  0 |x|
  0xc8000fff, 0xc8000fff, 0xc8000fff, 0xc8000fff, // 16 rebias to the half exponent, and round (+ 0xfff + odd bit)
  0x00000001, 0x00000001, 0x00000001, 0x00000001, // 32
  0x4b800000, 0x4b800000, 0x4b800000, 0x4b800000, // 48 2^24
  0x4b000000, 0x4b000000, 0x4b000000, 0x4b000000, // 64 2^23
  0x477ff000, 0x477ff000, 0x477ff000, 0x477ff000, // 80 65520: rounds to infinity
  0x00007c00, 0x00007c00, 0x00007c00, 0x00007c00, // 96 half infinity
  0x00007e00, 0x00007e00, 0x00007e00, 0x00007e00, // 112 half quiet NaN
  0x7c007c00, 0x7c007c00, 0x7c007c00, 0x7c007c00, // 128 the half exponent in each i16
], 16);

/**
 * f32ToF16Bits of four lanes, as u32 lanes: the normal formula everywhere, then the lanes below
 * 2^-14 (subnormal halves and zero: |x|·2^24 rounded to an integer, half to even, by adding 2^23
 * as the scalar form's nearest does), at or above 65520 (infinity) and NaN replaced, and the sign
 * put back.
 */
// @ts-ignore: decorator
@inline function toHalf4(x: v128): v128 {
  const ax = v128.and(x, v128.load(KH));
  let h = i32x4.shr_u(i32x4.add(i32x4.add(ax, v128.load(KH, 16)), v128.and(i32x4.shr_u(ax, 13), v128.load(KH, 32))), 13);
  const sub = i32x4.sub(f32x4.add(f32x4.mul(ax, v128.load(KH, 48)), v128.load(KH, 64)), v128.load(KH, 64));
  h = v128.bitselect(sub, h, i32x4.lt_s(ax, kv(K_MIN)));
  h = v128.bitselect(v128.load(KH, 96), h, i32x4.ge_s(ax, v128.load(KH, 80)));
  h = v128.bitselect(v128.load(KH, 112), h, i32x4.gt_s(ax, kv(K_EXP)));
  return v128.or(h, v128.and(i32x4.shr_u(x, 16), kv(K_HSIGN)));
}

/** f32 → half bits exactly as quant/half.ts f32ToF16Bits (NaN → quiet 0x7e00). */
// @ts-ignore: decorator
@inline function f32ToF16Bits(f: f32): u32 {
  const x = reinterpret<u32>(f);
  const sign = (x >> 16) & 0x8000;
  const ax = x & 0x7fffffff;
  if (ax > 0x7f800000) return sign | 0x7e00;
  if (ax >= 0x477ff000) return sign | 0x7c00;
  if (ax < 0x38800000) return sign | <u32>nearest<f32>(reinterpret<f32>(ax) * 16777216.0);
  return sign | ((ax + 0xc8000fff + ((ax >> 13) & 1)) >> 13);
}

/** out[0..n) = f32 of the halves at src (tests: the widening used above). */
export function half_to_f32(out: usize, src: usize, n: i32): void {
  let i = 0;
  for (; i + 4 <= n; i += 4) v128.store(out + (<usize>i << 2), load4h(src + (<usize>i << 1)));
  for (; i < n; i++) store<f32>(out + (<usize>i << 2), f16(load<u16>(src + (<usize>i << 1))));
}

/** out[0..n) = x rounded to f16 precision (tests: the rounding used above; n a multiple of 4). */
export function round_half(out: usize, x: usize, n: i32): void {
  for (let i = 0; i < n; i += 4) v128.store(out + (<usize>i << 2), roundHalf(v128.load(x + (<usize>i << 2))));
}

/** round_half by the fast pass's roundHalfFinite (tests; right for |x| < 65520 only). */
export function round_half_finite(out: usize, x: usize, n: i32): void {
  for (let i = 0; i < n; i += 4) v128.store(out + (<usize>i << 2), roundHalfFinite(v128.load(x + (<usize>i << 2))));
}

/** 1 when attn_f16 uses the relaxed fused madd in this build and engine (tests). tmp: 8 bytes. */
export function attn_fused_madd(tmp: usize): i32 {
  return fusedMadd(tmp) ? 1 : 0;
}
