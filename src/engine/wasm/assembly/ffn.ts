// The FFN's elementwise activation in WebAssembly, so a prompt batch's n·n_ff gate values do not
// each pay a call into Math.exp from TypeScript. Same arithmetic as model/ops.ts silu + gatedAct
// (the reference, and tests/model/ops-wasm-act.test.ts compares the two): silu in f64, rounded
// to f32, times up in f32.
//
// swiglu_ref is that loop as written (Math.exp is AssemblyScript's, musl/ARM exp within 0.52 ulp);
// swiglu gives its bits for every input, eight lanes a step (then four, then one), in f64 (two per
// f64x2):
//   k = nearest(−x·log2 e), u = x + k·ln 2 (Cody-Waite: k·LN2_HI exact, |u| ≤ 0.3466 + 2^-40),
//   e = 2^k·P(u) ≈ e^−x, P the degree-9 Chebyshev fit of e^−u on [−0.347, 0.347] (mpmath
//       chebyfit; with its coefficients as stored, |P(u)·e^u − 1| ≤ 2^-45.58 there, measured with
//       mpmath on 20 001 points), evaluated by Estrin's scheme, 2^k from its exponent bits,
//   s = x / (1 + e), the f64 the reference rounds to f32.
// For 2^-124 ≤ |x| ≤ 80 every value stays a normal f64 and s a normal f32 (|s| ≥ 2^-125), e is within
// 2^-45.4 of e^−x (u's and the evaluation's roundings are below 2^-50) and Math.exp within 2^-52.9, so
// with the add's and divide's roundings the two s differ by less than 2^-45.2 relative: 2^8 ulps
// of s's binade. Two f64 that close round to the same f32 unless a rounding midpoint between f32
// lies between them; so a lane whose s is more than 2^12 ulps from every midpoint (its low 29
// mantissa bits more than 2^12 from 2^28) is the reference's number. A step's eight (or four) lanes
// are recomputed as the reference does them if any is near a midpoint (one lane in 65 536) or has |x|
// outside [2^-124, 80] (NaN, ±Inf, huge gates, and the tiny |s| where f32's subnormals round at
// other bits).
// The relaxed build evaluates with relaxed madd: fused or not, the bounds hold.

import { madd64 } from './common';

/** silu(x)·u as the reference: silu in f64 (AssemblyScript's Math.exp), rounded to f32, times u. */
// @ts-ignore: decorator
@inline function siluUp(x: f32, u: f32): f32 {
  const xd = <f64>x;
  return <f32>(xd / (1.0 + Math.exp(-xd))) * u;
}

/** out[i] = silu(gate[i]) · up[i] for i < n, the scalar reference of swiglu; out may alias gate. */
export function swiglu_ref(out: usize, gate: usize, up: usize, n: i32): void {
  for (let i = 0; i < n; i++) {
    const o = <usize>i << 2;
    store<f32>(out + o, siluUp(load<f32>(gate + o), load<f32>(up + o)));
  }
}

const LOG2E: f64 = 1.4426950408889634;
const LN2_HI: f64 = 6.93147180369123816490e-01; // low 21 bits zero: k·LN2_HI is exact for |k| < 2^21
const LN2_LO: f64 = 1.90821492927058770002e-10;
/** 1.5·2^52: y + ROUND's low mantissa bits hold nearest(y) as a two's complement integer. */
const ROUND: f64 = 6755399441055744.0;

/**
 * swiglu's constants as v128 loads (V8 would rebuild each v128 constant from immediates in every
 * iteration; a load is one µop): f64 pairs −LOG2E, ROUND, LN2_HI, LN2_LO, P's coefficients c_0..c_9,
 * then 1.
 */
const SG: usize = memory.data<f64>([
  -LOG2E, -LOG2E, ROUND, ROUND, LN2_HI, LN2_HI, LN2_LO, LN2_LO,
  1.0000000000000135, 1.0000000000000135, -1.0000000000000013, -1.0000000000000013,
  0.49999999999433037, 0.49999999999433037, -0.16666666666615143, -0.16666666666615143,
  0.04166666704332249, 0.04166666704332249, -0.008333333367563363, -0.008333333367563363,
  0.0013888801319594057, 0.0013888801319594057, -0.00019841190256754374, -0.00019841190256754374,
  2.488466410538577e-05, 2.488466410538577e-05, -2.7632826366889156e-06, -2.7632826366889156e-06,
  1.0, 1.0,
], 16);
const SG_C: usize = 64; // byte offset of c_0
const SG_ONE: usize = 224; // byte offset of 1
const SGI: usize = memory.data<i64>([1023, 1023], 16); // the exponent bias
/**
 * i32 lanes: 2^12 − 2^28 to add to an f64's low word, the low-29-bit mask, 2^13 + 1 (low bits within
 * 2^12 of 2^28 land below it); then 2^31 − bits(2^-124) and its bound: |x|'s bits plus the former
 * exceed the latter (signed) exactly when |x| is outside [2^-124, 80] or NaN (the range maps to
 * [−2^31, −2^31 + bits(80) − bits(2^-124)], everything else wraps above it).
 */
const SGM: usize = memory.data<i32>([
  -0x0ffff000, -0x0ffff000, -0x0ffff000, -0x0ffff000,
  0x1fffffff, 0x1fffffff, 0x1fffffff, 0x1fffffff,
  0x2001, 0x2001, 0x2001, 0x2001,
  0x7e800000, 0x7e800000, 0x7e800000, 0x7e800000,
  -0x3ee00000, -0x3ee00000, -0x3ee00000, -0x3ee00000,
], 16);

// @ts-ignore: decorator
@inline function sg(off: usize): v128 {
  return v128.load(SG + off);
}


/** c_n + c_{n+1}·u (f64x2). */
// @ts-ignore: decorator
@inline function cpair(n: usize, u: v128): v128 {
  return madd64(sg(SG_C + 16 + (n << 4)), u, sg(SG_C + (n << 4)));
}

/** s = x / (1 + e^−x) for two f64 lanes, |x| ≤ 80 (see the section comment). */
// @ts-ignore: decorator
@inline function silu2(x: v128): v128 {
  const y = madd64(x, sg(0), sg(16));
  const k = f64x2.sub(y, sg(16));
  const u = madd64(k, sg(48), madd64(k, sg(32), x));
  const u2 = f64x2.mul(u, u), u4 = f64x2.mul(u2, u2);
  const q0 = madd64(cpair(2, u), u2, cpair(0, u));
  const q1 = madd64(cpair(6, u), u2, cpair(4, u));
  const p = madd64(madd64(cpair(8, u), u4, q1), u4, q0);
  // 2^k: the exponent field k + 1023 (only the low 12 bits of y's integer survive the shift)
  const e = f64x2.mul(p, i64x2.shl(i64x2.add(y, v128.load(SGI)), 52));
  return f64x2.div(x, f64x2.add(sg(SG_ONE), e));
}

/** silu2 of lanes 0, 1 of four f32 (f64x2). */
// @ts-ignore: decorator
@inline function siluLo(x: v128): v128 {
  return silu2(f64x2.promote_low_f32x4(x));
}

/** silu2 of lanes 2, 3 of four f32 (f64x2). */
// @ts-ignore: decorator
@inline function siluHi(x: v128): v128 {
  return silu2(f64x2.promote_low_f32x4(v128.shuffle<f32>(x, x, 2, 3, 0, 1)));
}

/**
 * The lanes (i32x4 masks) of four gates x, with s = (lo, hi) from siluLo/siluHi, whose f32 might not
 * be the reference's: s's low 29 bits within 2^12 of 2^28 (an f32 rounding midpoint), or |x| outside
 * [2^-124, 80] (NaN too), where |s| may be below 2^-126 or x beyond silu2's range.
 */
// @ts-ignore: decorator
@inline function unsure(lo: v128, hi: v128, x: v128): v128 {
  const w = v128.and(i32x4.add(v128.shuffle<i32>(lo, hi, 0, 2, 4, 6), v128.load(SGM)), v128.load(SGM, 16));
  const near = i32x4.lt_s(w, v128.load(SGM, 32));
  return v128.or(near, i32x4.gt_s(i32x4.add(f32x4.abs(x), v128.load(SGM, 48)), v128.load(SGM, 64)));
}

/** The four outputs f32(s)·up from s = (lo, hi). */
// @ts-ignore: decorator
@inline function times(lo: v128, hi: v128, up: v128): v128 {
  return f32x4.mul(v128.shuffle<f32>(f32x4.demote_f64x2_zero(lo), f32x4.demote_f64x2_zero(hi), 0, 1, 4, 5), up);
}

/** out[i] = silu(gate[i]) · up[i] for i < n (ggml_swiglu with the gate first); f32 arrays, out may alias gate. */
export function swiglu(out: usize, gate: usize, up: usize, n: i32): void {
  let i = 0;
  // eight lanes a step: faster than four (more independent work between the checks) on Node 20's
  // V8 and Node 24's; sixteen gain a little more on Node 24's but lose more on Node 20's
  for (; i + 8 <= n; i += 8) {
    const o = <usize>i << 2;
    const x0 = v128.load(gate + o), x1 = v128.load(gate + o, 16);
    const lo0 = siluLo(x0), hi0 = siluHi(x0), lo1 = siluLo(x1), hi1 = siluHi(x1);
    if (v128.any_true(v128.or(unsure(lo0, hi0, x0), unsure(lo1, hi1, x1)))) {
      // rare: these eight as the reference does them
      for (let l: usize = 0; l < 32; l += 4) store<f32>(out + o + l, siluUp(load<f32>(gate + o + l), load<f32>(up + o + l)));
    } else {
      v128.store(out + o, times(lo0, hi0, v128.load(up + o)));
      v128.store(out + o, times(lo1, hi1, v128.load(up + o, 16)), 16);
    }
  }
  if (i + 4 <= n) {
    const o = <usize>i << 2;
    const x = v128.load(gate + o);
    const lo = siluLo(x), hi = siluHi(x);
    if (v128.any_true(unsure(lo, hi, x))) {
      for (let l: usize = 0; l < 16; l += 4) store<f32>(out + o + l, siluUp(load<f32>(gate + o + l), load<f32>(up + o + l)));
    } else {
      v128.store(out + o, times(lo, hi, v128.load(up + o)));
    }
    i += 4;
  }
  for (; i < n; i++) {
    const o = <usize>i << 2;
    store<f32>(out + o, siluUp(load<f32>(gate + o), load<f32>(up + o)));
  }
}
