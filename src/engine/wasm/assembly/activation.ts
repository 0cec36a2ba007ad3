// Activation quantisation: f32 x[cols] → the weight type's vec_dot_type (ggml type_traits_cpu), done
// once per matvec. Layouts are described in common.ts. Numbers follow what llama.cpp runs on x86
// (byte for byte the scalar quantizeActQ8_0 / quantizeActQ8_1 / quantizeQ8K in src/engine/quant):
//   Q8_0  ggml-cpu/arch/x86/quants.c quantize_row_q8_0 (AVX2 branch): d = amax/127 stored as f16,
//         q = round-half-even(x·(127/amax))  (not the reference's roundf(x·(1/d)))
//   Q8_1  quantize_row_q8_1 (AVX2 branch): same, plus s = f16(d·Σq)
//   Q8_K  quantize_row_q8_K = ggml-quants.c quantize_row_q8_K_ref: iscale = −127/max (max = the
//         element of largest |x|), q = min(127, nearest_int(x·iscale)) (ties to even),
//         d = 1/iscale kept as f32, bsums = Σq per 16 lanes

import { f16, f32ToF16, q8Aux, q8Scales, qKBsums, qKScales } from './common';

/** Bytes the quantised activation of `cols` elements takes for activation kind `act` (see ACT_*). */
export function act_bytes(act: i32, cols: i32): i32 {
  if (act == ACT_Q8_0 || act == ACT_Q8_1) return cols + (cols >> 5) * 8;
  if (act == ACT_Q8_K) return cols + (cols >> 8) * 4 + (cols >> 4) * 2;
  return cols * 4;
}

export const ACT_F32: i32 = 0;
export const ACT_Q8_0: i32 = 3;
export const ACT_Q8_1: i32 = 4;
export const ACT_Q8_K: i32 = 5;

/** xq = x (F32 weights take the activation as it is). */
export function quantize_f32(xq: usize, x: usize, cols: i32): void {
  memory.copy(xq, x, <usize>cols << 2);
}

/** 1.5·2^23 in four f32 lanes (loaded: V8 rebuilds a v128.const at every use in a loop). */
const ROUND_MAGIC: usize = memory.data<u32>([0x4b400000, 0x4b400000, 0x4b400000, 0x4b400000], 16);

/** Largest lane of an f32x4 (NaN propagates, as the scalar max chain). */
// @ts-ignore: decorator
@inline function hmax(v: v128): f32 {
  const m = f32x4.max(v, i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  return max<f32>(f32x4.extract_lane(m, 0), f32x4.extract_lane(m, 1));
}

/**
 * Four lanes x·s rounded half to even, as i32 (trunc_sat: the values are whole numbers of at most
 * 127 in magnitude for finite x, so it only saturates for Inf/NaN, where the scalar form trapped).
 */
// @ts-ignore: decorator
@inline function roundMul(x: v128, s: v128): v128 {
  return i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(x, s)));
}

/**
 * roundMul for finite x with |x·s| < 2^22: adding 1.5·2^23 rounds the product to an integer, half to
 * even (the f32 spacing there is 1), which then sits in the low bits of the sum: the same integers
 * as nearest and trunc_sat, in two float ops and an integer one (trunc_sat is several on x64).
 */
// @ts-ignore: decorator
@inline function roundMulFinite(x: v128, s: v128, magic: v128): v128 {
  return i32x4.sub(f32x4.add(f32x4.mul(x, s), magic), magic);
}

/** Sixteen i32 lanes (each in [−128, 127]) packed to 16 bytes. */
// @ts-ignore: decorator
@inline function pack16(a: v128, b: v128, c: v128, d: v128): v128 {
  return i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(a, b), i16x8.narrow_i32x4_s(c, d));
}

/** Shared body of q8_0 / q8_1: writes qs, d and (q8_1 ? s : Σq); four lanes at a time. */
// @ts-ignore: decorator
@inline function quantizeQ8(xq: usize, x: usize, cols: i32, withS: bool): void {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const ap = q8Aux(xq, cols);
  for (let b = 0; b < nb; b++) {
    const xb = x + (<usize>b << 7);
    const v0 = v128.load(xb), v1 = v128.load(xb, 16), v2 = v128.load(xb, 32), v3 = v128.load(xb, 48);
    const v4 = v128.load(xb, 64), v5 = v128.load(xb, 80), v6 = v128.load(xb, 96), v7 = v128.load(xb, 112);
    const m = f32x4.max(
      f32x4.max(f32x4.max(f32x4.abs(v0), f32x4.abs(v1)), f32x4.max(f32x4.abs(v2), f32x4.abs(v3))),
      f32x4.max(f32x4.max(f32x4.abs(v4), f32x4.abs(v5)), f32x4.max(f32x4.abs(v6), f32x4.abs(v7))),
    );
    const amax = max<f32>(hmax(m), 0);
    const d: f32 = amax / 127;
    const id = f32x4.splat(amax != 0 ? <f32>127.0 / amax : 0);
    let q0: v128, q1: v128, q2: v128, q3: v128, q4: v128, q5: v128, q6: v128, q7: v128;
    if (amax < Infinity) {
      // finite block: |x·id| ≤ 127 (and a little rounding)
      const magic = v128.load(ROUND_MAGIC);
      q0 = roundMulFinite(v0, id, magic); q1 = roundMulFinite(v1, id, magic); q2 = roundMulFinite(v2, id, magic); q3 = roundMulFinite(v3, id, magic);
      q4 = roundMulFinite(v4, id, magic); q5 = roundMulFinite(v5, id, magic); q6 = roundMulFinite(v6, id, magic); q7 = roundMulFinite(v7, id, magic);
    } else {
      q0 = roundMul(v0, id); q1 = roundMul(v1, id); q2 = roundMul(v2, id); q3 = roundMul(v3, id);
      q4 = roundMul(v4, id); q5 = roundMul(v5, id); q6 = roundMul(v6, id); q7 = roundMul(v7, id);
    }
    const qb = xq + (<usize>b << 5);
    v128.store(qb, pack16(q0, q1, q2, q3));
    v128.store(qb, pack16(q4, q5, q6, q7), 16);
    const t = i32x4.add(i32x4.add(i32x4.add(q0, q1), i32x4.add(q2, q3)), i32x4.add(i32x4.add(q4, q5), i32x4.add(q6, q7)));
    const sum = i32x4.extract_lane(t, 0) + i32x4.extract_lane(t, 1) + i32x4.extract_lane(t, 2) + i32x4.extract_lane(t, 3);
    store<f32>(dp + (<usize>b << 2), f16(f32ToF16(d)));
    if (withS) store<f32>(ap + (<usize>b << 2), f16(f32ToF16(<f32>sum * d)));
    else store<i32>(ap + (<usize>b << 2), sum);
  }
}

export function quantize_q8_0(xq: usize, x: usize, cols: i32): void {
  quantizeQ8(xq, x, cols, false);
}

export function quantize_q8_1(xq: usize, x: usize, cols: i32): void {
  quantizeQ8(xq, x, cols, true);
}

export function quantize_q8_K(xq: usize, x: usize, cols: i32): void {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  for (let b = 0; b < nb; b++) {
    const xb = x + (<usize>b << 10);
    const qb = xq + (<usize>b << 8);
    // amax as the scalar loop's `if (|v| > amax)` finds it: pmax keeps the running max on NaN
    let m = f32x4.splat(0);
    for (let j = 0; j < 256; j += 4) m = f32x4.pmax(m, f32x4.abs(v128.load(xb + (<usize>j << 2))));
    const m2 = f32x4.pmax(m, i8x16.shuffle(m, m, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
    const l0 = f32x4.extract_lane(m2, 0), l1 = f32x4.extract_lane(m2, 1);
    const amax = l1 > l0 ? l1 : l0;
    if (amax == 0) {
      store<f32>(dp + (<usize>b << 2), 0);
      memory.fill(qb, 0, 256);
      memory.fill(bp + (<usize>(b * 16) << 1), 0, 32);
      continue;
    }
    // mx: the first element of largest |x| (its sign sets the scale's)
    let j = 0;
    while (j < 252 && !v128.any_true(f32x4.eq(f32x4.abs(v128.load(xb + (<usize>j << 2))), f32x4.splat(amax)))) j += 4;
    while (j < 255 && abs<f32>(load<f32>(xb + (<usize>j << 2))) != amax) j++;
    const mx = load<f32>(xb + (<usize>j << 2));
    const iscale: f32 = <f32>-127.0 / mx;
    const is4 = f32x4.splat(iscale);
    const top = i32x4.splat(127);
    for (let g = 0; g < 16; g++) {
      const xg = xb + (<usize>g << 6);
      const q0 = i32x4.min_s(roundMul(v128.load(xg), is4), top), q1 = i32x4.min_s(roundMul(v128.load(xg, 16), is4), top);
      const q2 = i32x4.min_s(roundMul(v128.load(xg, 32), is4), top), q3 = i32x4.min_s(roundMul(v128.load(xg, 48), is4), top);
      v128.store(qb + (<usize>g << 4), pack16(q0, q1, q2, q3));
      const t = i32x4.add(i32x4.add(q0, q1), i32x4.add(q2, q3));
      store<i16>(bp + (<usize>(b * 16 + g) << 1), <i16>(i32x4.extract_lane(t, 0) + i32x4.extract_lane(t, 1) + i32x4.extract_lane(t, 2) + i32x4.extract_lane(t, 3)));
    }
    store<f32>(dp + (<usize>b << 2), <f32>1.0 / iscale);
  }
}

// quantize_rows_<act>(xq, x, cols, n, ab): n activations (x: cols f32 apart) into xq (ab bytes
// apart), each as quantize_<act>: one call for a batch (a pool worker quantises its own copy).
export function quantize_rows_f32(xq: usize, x: usize, cols: i32, n: i32, ab: i32): void {
  for (let t = 0; t < n; t++) quantize_f32(xq + <usize>(t * ab), x + (<usize>(t * cols) << 2), cols);
}
export function quantize_rows_q8_0(xq: usize, x: usize, cols: i32, n: i32, ab: i32): void {
  for (let t = 0; t < n; t++) quantizeQ8(xq + <usize>(t * ab), x + (<usize>(t * cols) << 2), cols, false);
}
export function quantize_rows_q8_1(xq: usize, x: usize, cols: i32, n: i32, ab: i32): void {
  for (let t = 0; t < n; t++) quantizeQ8(xq + <usize>(t * ab), x + (<usize>(t * cols) << 2), cols, true);
}
export function quantize_rows_q8_K(xq: usize, x: usize, cols: i32, n: i32, ab: i32): void {
  for (let t = 0; t < n; t++) quantize_q8_K(xq + <usize>(t * ab), x + (<usize>(t * cols) << 2), cols);
}
