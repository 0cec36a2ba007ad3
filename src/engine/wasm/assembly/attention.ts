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
// tile of 8 queries). attn_f16 walks the positions in order with every head at each, so the cache
// rows are read once, in address order.
//
// Layouts (byte addresses): q [nHead, hdK] f32; out [nHead, hdV] f32; kc/vc the layer's cache rows,
// position t at kc + 2·t·strideK (strideK = nHeadKv·hdK halves), KV head g at + 2·g·hdK. hdK and hdV
// are multiples of 4. `scratch` needs attn_scratch_bytes(...) bytes, 16-aligned.

import { f16 } from './common';

// ---- half-precision in four lanes -------------------------------------------------------------

/**
 * Four halves (zero-extended to i32 lanes) → f32. Exponent and mantissa shifted into place read as
 * an f32 2^112 too small; one multiply fixes normal and subnormal halves alike (exactly), and
 * infinities/NaNs (which land on 65536 and above) get the all-ones exponent back.
 */
// @ts-ignore: decorator
@inline function halfToF32(h: v128): v128 {
  let f = f32x4.mul(i32x4.shl(v128.and(h, i32x4.splat(0x7fff)), 13), f32x4.splat(5.192296858534828e33));
  f = v128.or(f, v128.and(f32x4.ge(f, f32x4.splat(65536)), i32x4.splat(0x7f800000)));
  return v128.or(f, i32x4.shl(v128.and(h, i32x4.splat(0x8000)), 16));
}

/** Halves at p..p+3 as f32x4. */
// @ts-ignore: decorator
@inline function load4h(p: usize): v128 {
  return halfToF32(i32x4.extend_low_i16x8_u(v128.load64_zero(p)));
}

/** 2^112: a half's value over its raw f32 (rawHalf), and the scale in roundHalf's overflow test. */
const TWO112: f32 = 5.192296858534828e33;
const TWO_112: f32 = 1.925929944387236e-34; // 2^-112

/**
 * Four halves (sign-extended to i32 lanes) → their values times 2^-112 as f32, exactly: sign,
 * exponent and mantissa shifted into place (halfToF32 without the multiply; subnormal halves land on
 * f32 subnormals). Infinities and NaNs come out finite (2^-96 and up), so a caller that uses this
 * checks its rows with scanHalves.
 */
// @ts-ignore: decorator
@inline function rawHalf(h: v128): v128 {
  return v128.and(i32x4.shl(h, 13), i32x4.splat(0x8fffffff));
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
 * fp16.ts.)
 */
// @ts-ignore: decorator
@inline function roundHalf(x: v128): v128 {
  const e = i32x4.min_s(i32x4.max_s(v128.and(x, i32x4.splat(0x7f800000)), i32x4.splat(0x38800000)), i32x4.splat(0x47800000));
  const c = i32x4.add(e, i32x4.splat((13 << 23) | 0x400000));
  const r = v128.or(f32x4.sub(f32x4.add(x, c), c), v128.and(x, i32x4.splat(0x80000000)));
  return f32x4.mul(f32x4.mul(r, f32x4.splat(TWO112)), f32x4.splat(TWO_112));
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

/** Σ over the 64-element chunks c of q[64c + o ..+4]·k[same]: lanes o..o+3 of ggml's accumulators. */
// @ts-ignore: decorator
@inline function chunkLanes<T>(q: usize, k: usize, np: i32, o: i32): v128 {
  if (np == 64) return f32x4.mul(v128.load(q + (<usize>o << 2)), row4<T>(k, o)); // 0 + p = p (but for the sign of a zero score, which nothing sees)
  let acc = f32x4.splat(0);
  for (let c = o; c < np; c += 64) acc = f32x4.add(acc, f32x4.mul(v128.load(q + (<usize>c << 2)), row4<T>(k, c))); // a product of halves is exact
  return acc;
}

/**
 * Σ q[i]·k[i] over n halves (n a multiple of 4) in the order of ggml_vec_dot_f16 on AVX-512 (the
 * reference, model/attention.ts dotF16, spells it out): 64 lanes summed over the 64-element chunks,
 * GGML_F32Cx16_REDUCE and _mm512_reduce_add_ps fold them by halves (32, 16, 8, 4, then hsum's 2 and
 * 1), and the n mod 64 left over are added one by one in f64. k: see row4.
 */
// @ts-ignore: decorator
@inline function dotF16<T>(q: usize, k: usize, n: i32): f32 {
  const np = n & ~63;
  let sum: f64 = 0;
  if (np > 0) {
    // lanes 4m..4m+3 after the folds by 32 and 16, m = 0..3
    const u0 = f32x4.add(f32x4.add(chunkLanes<T>(q, k, np, 0), chunkLanes<T>(q, k, np, 32)), f32x4.add(chunkLanes<T>(q, k, np, 16), chunkLanes<T>(q, k, np, 48)));
    const u1 = f32x4.add(f32x4.add(chunkLanes<T>(q, k, np, 4), chunkLanes<T>(q, k, np, 36)), f32x4.add(chunkLanes<T>(q, k, np, 20), chunkLanes<T>(q, k, np, 52)));
    const u2 = f32x4.add(f32x4.add(chunkLanes<T>(q, k, np, 8), chunkLanes<T>(q, k, np, 40)), f32x4.add(chunkLanes<T>(q, k, np, 24), chunkLanes<T>(q, k, np, 56)));
    const u3 = f32x4.add(f32x4.add(chunkLanes<T>(q, k, np, 12), chunkLanes<T>(q, k, np, 44)), f32x4.add(chunkLanes<T>(q, k, np, 28), chunkLanes<T>(q, k, np, 60)));
    sum = <f64>hsum(f32x4.add(f32x4.add(u0, u2), f32x4.add(u1, u3)));
  }
  for (let i = np; i < n; i += 4) {
    const p = f32x4.mul(v128.load(q + (<usize>i << 2)), row4<T>(k, i));
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
  // f32 batch: scores [TILE, group, positions + TILE], k row [hdK], v row [hdV], sums [TILE·group] (f64)
  const c = (TILE * group * (positions + TILE) + hdK + hdV) * 4 + TILE * group * 8 + 8;
  // f16: q16 [nHead·hdK], acc [nHead·hdV], k row [hdK], v row [hdV], M/S [2·nHead], probe [2]
  const a = (nHead * (hdK + hdV) + hdK + hdV + 2 * nHead + 2) * 4;
  // f32: scores [group·positions], k row [hdK], v row [hdV], sums [group] (f64)
  const b = (group * positions + hdK + hdV) * 4 + group * 8;
  return (max(max(a, b), c) + 15) & ~15;
}

// ---- 'f16' mode --------------------------------------------------------------------------------
//
// One body (f16Pass), two passes. The fast one reads the cache as raw halves (rawHalf: no multiply),
// with q16 scaled by 2^112 and e^(s − M) too where it multiplies V, so every product (q·k, v·vs) is
// the same number, bit for bit, for every finite half; it also scans the rows it reads, and if an
// infinity or NaN was among them the call is done again by the exact pass (halfToF32 widening).

/**
 * One position of one head's online softmax: score q16·k, then M, the accumulator acc [hdV] and S
 * as the reference updates them. k, v: the position's cache rows (see row4); raw: they (and q16)
 * are raw halves.
 */
// @ts-ignore: decorator
@inline function f16Step<T>(q16: usize, k: usize, v: usize, acc: usize, mp: usize, sp: usize, hdK: i32, hdV: i32, scale: f32, fused: bool, raw: bool): void {
  const sc: f32 = dotF16<T>(q16, k, hdK) * scale;
  const M = load<f32>(mp);
  if (sc > M) {
    // a new maximum: rescale the accumulator by e^(M_old − M) (an f32 multiply, then f16), then add
    // v·1 (exact, so the fused add is one f32 add), f16 again
    store<f32>(mp, sc);
    const msc = <f32>Math.exp(<f64>(M - sc));
    const m4 = f32x4.splat(msc);
    for (let i = 0; i < hdV; i += 4) {
      const o = <usize>i << 2;
      const v4 = raw ? f32x4.mul(row4<T>(v, i), f32x4.splat(TWO112)) : row4<T>(v, i); // ·2^112: v itself, exactly
      v128.store(acc + o, roundHalf(f32x4.add(roundHalf(f32x4.mul(v128.load(acc + o), m4)), v4)));
    }
    // S = S·ms + vs, fused as the compiler contracts it (S·ms exact in f64)
    store<f32>(sp, <f32>(<f64>load<f32>(sp) * <f64>msc + 1));
    return;
  }
  const vs = <f32>Math.exp(<f64>(sc - M));
  const vr = raw ? vs * TWO112 : vs; // exact (vs ≤ 1), and v_raw·vr = v·vs
  // V += v·vs fused (ggml_vec_mad_f16), then f16
  if (ASC_FEATURE_RELAXED_SIMD && fused) {
    const s4 = f32x4.splat(vr);
    for (let i = 0; i < hdV; i += 4) {
      const o = <usize>i << 2;
      v128.store(acc + o, roundHalf(f32x4.relaxed_madd(row4<T>(v, i), s4, v128.load(acc + o))));
    }
  } else {
    const s2 = f64x2.splat(<f64>vr);
    for (let i = 0; i < hdV; i += 4) {
      const o = <usize>i << 2;
      v128.store(acc + o, roundHalf(fmaF(v128.load(acc + o), row4<T>(v, i), s2)));
    }
  }
  store<f32>(sp, <f32>(<f64>load<f32>(sp) + <f64>vs)); // S·1 + vs
}

/** dst[0..n) = raw f32 (rawHalf) of the halves at src (n a multiple of 4). */
// @ts-ignore: decorator
@inline function widenRaw(dst: usize, src: usize, n: i32): void {
  for (let i = 0; i < n; i += 4) v128.store(dst + (<usize>i << 2), load4raw(src + (<usize>i << 1)));
}

/**
 * attn_f16's work, raw (the fast pass) or exact; false when the raw pass met an infinity or NaN in
 * the cache rows (its output is then garbage, and the exact pass must run).
 */
// @ts-ignore: decorator
@inline function f16Pass(
  raw: bool, out: usize, q: usize, kc: usize, vc: usize, strideK: i32, strideV: i32, from: i32, to: i32,
  nHead: i32, nHeadKv: i32, hdK: i32, hdV: i32, scale: f32, scratch: usize, fused: bool,
): bool {
  const group = nHead / nHeadKv;
  const q16 = scratch; // [nHead, hdK]
  const acc = q16 + (<usize>(nHead * hdK) << 2); // [nHead, hdV]
  const kf = acc + (<usize>(nHead * hdV) << 2); // [hdK]: a K row widened, for a group of query heads
  const vf = kf + (<usize>hdK << 2); // [hdV]
  const ms = vf + (<usize>hdV << 2); // M [nHead]
  const ss = ms + (<usize>nHead << 2); // S [nHead]
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
  let bad = i16x8.splat(0);
  // positions in order, every head at each (one pass over the cache rows, in address order)
  for (let t = from; t <= to; t++) {
    const kt = kc + (<usize>(t * strideK) << 1);
    const vt = vc + (<usize>(t * strideV) << 1);
    if (group == 1) {
      if (raw) {
        bad = scanHalves(scanHalves(bad, kt, nHead * hdK), vt, nHead * hdV);
        for (let h = 0; h < nHead; h++) {
          f16Step<i16>(q16 + (<usize>(h * hdK) << 2), kt + (<usize>(h * hdK) << 1), vt + (<usize>(h * hdV) << 1), acc + (<usize>(h * hdV) << 2), ms + (<usize>h << 2), ss + (<usize>h << 2), hdK, hdV, scale, fused, true);
        }
      } else {
        for (let h = 0; h < nHead; h++) {
          f16Step<u16>(q16 + (<usize>(h * hdK) << 2), kt + (<usize>(h * hdK) << 1), vt + (<usize>(h * hdV) << 1), acc + (<usize>(h * hdV) << 2), ms + (<usize>h << 2), ss + (<usize>h << 2), hdK, hdV, scale, fused, false);
        }
      }
      continue;
    }
    for (let g = 0; g < nHeadKv; g++) {
      // GQA: the K and V rows widened once for the group's query heads
      const kg = kt + (<usize>(g * hdK) << 1);
      const vg = vt + (<usize>(g * hdV) << 1);
      if (raw) {
        bad = scanHalves(scanHalves(bad, kg, hdK), vg, hdV);
        widenRaw(kf, kg, hdK);
        widenRaw(vf, vg, hdV);
      } else {
        widen(kf, kg, hdK);
        widen(vf, vg, hdV);
      }
      for (let h = g * group; h < (g + 1) * group; h++) {
        f16Step<f32>(q16 + (<usize>(h * hdK) << 2), kf, vf, acc + (<usize>(h * hdV) << 2), ms + (<usize>h << 2), ss + (<usize>h << 2), hdK, hdV, scale, fused, raw);
      }
    }
  }
  if (raw && hasInfNaN(bad)) return false;
  for (let h = 0; h < nHead; h++) {
    const S = load<f32>(ss + (<usize>h << 2));
    const inv = f32x4.splat(S == 0 ? 0 : <f32>1 / S);
    const ah = acc + (<usize>(h * hdV) << 2);
    const oh = out + (<usize>(h * hdV) << 2);
    for (let i = 0; i < hdV; i += 4) v128.store(oh + (<usize>i << 2), f32x4.mul(v128.load(ah + (<usize>i << 2)), inv));
  }
  return true;
}

export function attn_f16(
  out: usize, q: usize, kc: usize, vc: usize, strideK: i32, strideV: i32, from: i32, to: i32,
  nHead: i32, nHeadKv: i32, hdK: i32, hdV: i32, scale: f32, scratch: usize,
): void {
  const fused = fusedMadd(scratch + (<usize>(nHead * (hdK + hdV) + hdK + hdV + 2 * nHead) << 2)); // the probe after S
  if (f16Pass(true, out, q, kc, vc, strideK, strideV, from, to, nHead, nHeadKv, hdK, hdV, scale, scratch, fused)) return;
  f16Pass(false, out, q, kc, vc, strideK, strideV, from, to, nHead, nHeadKv, hdK, hdV, scale, scratch, fused);
}

// ---- 'f32' mode --------------------------------------------------------------------------------

export function attn_f32(
  out: usize, q: usize, kc: usize, vc: usize, strideK: i32, strideV: i32, from: i32, to: i32,
  nHead: i32, nHeadKv: i32, hdK: i32, hdV: i32, scale: f32, scratch: usize,
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
      let M: f32 = -Infinity;
      for (let i = 0; i < np; i++) M = max<f32>(M, load<f32>(sj + (<usize>i << 2)));
      let S: f64 = 0;
      for (let i = 0; i < np; i++) {
        const e = <f32>Math.exp(<f64>(load<f32>(sj + (<usize>i << 2)) - M));
        store<f32>(sj + (<usize>i << 2), e);
        S += <f64>e;
      }
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

/**
 * attn_f32 for the n query positions pos..pos+n−1 of a prompt batch: query i (its heads at
 * q + i·nHead·hdK, its output at out + i·nHead·hdV) over cache positions [from_i, pos + i], from_i
 * = max(0, pos + i − window + 1) with a sliding window (window > 0), else 0. Every query's numbers
 * are attn_f32's, in the same order; TILE queries at a time share each widened K and V row.
 */
export function attn_f32_batch(
  out: usize, q: usize, kc: usize, vc: usize, strideK: i32, strideV: i32, pos: i32, n: i32, window: i32,
  nHead: i32, nHeadKv: i32, hdK: i32, hdV: i32, scale: f32, scratch: usize,
): void {
  const group = nHead / nHeadKv;
  for (let t0 = 0; t0 < n; t0 += TILE) {
    const nt = min(TILE, n - t0);
    const lo = window > 0 ? max(0, pos + t0 - window + 1) : 0; // first position any query of the tile sees
    const hi = pos + t0 + nt - 1; // last
    const np = hi - lo + 1;
    const sc = scratch; // [nt, group, np], position t at t − lo
    const kf = sc + (<usize>(nt * group * np) << 2);
    const vf = kf + (<usize>hdK << 2);
    const sums = (vf + (<usize>hdV << 2) + 7) & ~7; // f64 [nt, group]
    for (let g = 0; g < nHeadKv; g++) {
      // scores of every query that sees position t
      for (let t = lo; t <= hi; t++) {
        widen(kf, kc + (<usize>(t * strideK + g * hdK) << 1), hdK);
        for (let i = max(0, t - pos - t0); i < nt; i++) {
          const p = pos + t0 + i;
          if (window > 0 && t <= p - window) break; // later queries start later still
          for (let j = 0; j < group; j++) {
            const qh = q + (<usize>((t0 + i) * nHead * hdK + (g * group + j) * hdK) << 2);
            store<f32>(sc + (<usize>((i * group + j) * np + t - lo) << 2), dotF(qh, kf, hdK) * scale);
          }
        }
      }
      // softmax of each query's scores, over its own positions
      for (let i = 0; i < nt; i++) {
        const p = pos + t0 + i;
        const from = window > 0 ? max(0, p - window + 1) : 0;
        for (let j = 0; j < group; j++) {
          const sj = sc + (<usize>((i * group + j) * np + from - lo) << 2);
          let M: f32 = -Infinity;
          for (let t = 0; t <= p - from; t++) M = max<f32>(M, load<f32>(sj + (<usize>t << 2)));
          let S: f64 = 0;
          for (let t = 0; t <= p - from; t++) {
            const e = <f32>Math.exp(<f64>(load<f32>(sj + (<usize>t << 2)) - M));
            store<f32>(sj + (<usize>t << 2), e);
            S += <f64>e;
          }
          store<f64>(sums + (<usize>(i * group + j) << 3), S);
          memory.fill(out + (<usize>((t0 + i) * nHead * hdV + (g * group + j) * hdV) << 2), 0, <usize>hdV << 2);
        }
      }
      // weighted sums of V rows
      for (let t = lo; t <= hi; t++) {
        widen(vf, vc + (<usize>(t * strideV + g * hdV) << 1), hdV);
        for (let i = max(0, t - pos - t0); i < nt; i++) {
          const p = pos + t0 + i;
          if (window > 0 && t <= p - window) break;
          for (let j = 0; j < group; j++) {
            const w = f32x4.splat(load<f32>(sc + (<usize>((i * group + j) * np + t - lo) << 2)));
            const oh = out + (<usize>((t0 + i) * nHead * hdV + (g * group + j) * hdV) << 2);
            for (let e = 0; e < hdV; e += 4) {
              const o = <usize>e << 2;
              v128.store(oh + o, f32x4.add(v128.load(oh + o), f32x4.mul(w, v128.load(vf + o))));
            }
          }
        }
      }
      for (let i = 0; i < nt; i++) {
        for (let j = 0; j < group; j++) {
          const inv = f32x4.splat(<f32>(1 / load<f64>(sums + (<usize>(i * group + j) << 3))));
          const oh = out + (<usize>((t0 + i) * nHead * hdV + (g * group + j) * hdV) << 2);
          for (let e = 0; e < hdV; e += 4) v128.store(oh + (<usize>e << 2), f32x4.mul(v128.load(oh + (<usize>e << 2)), inv));
        }
      }
    }
  }
}

// ---- the cache ---------------------------------------------------------------------------------

/** dst[0..n) = f16 bits of src[0..n) f32 (round to nearest even), one position's keys or values. */
export function kv_store(dst: usize, src: usize, n: i32): void {
  for (let i = 0; i < n; i++) store<u16>(dst + (<usize>i << 1), <u16>f32ToF16Bits(load<f32>(src + (<usize>i << 2))));
}

/** f32 → half bits exactly as fp16.ts f32ToF16Bits (NaN → quiet 0x7e00). */
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

/** 1 when attn_f16 uses the relaxed fused madd in this build and engine (tests). tmp: 8 bytes. */
export function attn_fused_madd(tmp: usize): i32 {
  return fusedMadd(tmp) ? 1 : 0;
}
