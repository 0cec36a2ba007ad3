// The weight quantisers of Q8_0 and Q4_0 (ggml-quants.c quantize_row_q8_0_ref, quantize_row_q4_0_ref)
// four lanes at a time, bit for bit the scalar reference's (quant/legacy.ts quantizeQ8_0,
// quantizeQ4_0). Not the activation quantisers (activation.ts): those round as ggml's x86 path does.
// x: n f32 (n a multiple of 32); dst: n/32 blocks of 34 (Q8_0) or 18 (Q4_0) bytes.

import { f32ToF16 } from './common';

/** max |x[0..32)| ignoring NaN (pmax keeps the accumulator where a lane is NaN), as signedMax's scan. */
// @ts-ignore: decorator
@inline function absMax32(x: usize): f32 {
  let m = f32x4.splat(0);
  for (let o: usize = 0; o < 128; o += 16) m = f32x4.pmax(m, f32x4.abs(v128.load(x + o)));
  m = f32x4.pmax(m, v128.shuffle<u32>(m, m, 2, 3, 0, 1));
  m = f32x4.pmax(m, v128.shuffle<u32>(m, m, 1, 0, 3, 2));
  return f32x4.extract_lane(m, 0);
}

/** roundf in four lanes (half away from zero): trunc, plus ±1 where the dropped part is ≥ 0.5. */
// @ts-ignore: decorator
@inline function roundAway4(v: v128): v128 {
  const t = f32x4.trunc(v);
  const up = f32x4.ge(f32x4.abs(f32x4.sub(v, t)), f32x4.splat(0.5));
  const one = v128.or(v128.and(v, i32x4.splat(0x80000000)), f32x4.splat(1));
  return f32x4.add(t, v128.and(one, up));
}

/** quantize_row_q8_0_ref: d = amax/127 (stored as f16), q = roundf(x·(1/d)). */
export function quantize_row_q8_0_ref(dst: usize, x: usize, n: i32): void {
  for (let b = 0; b < n; b += 32, x += 128, dst += 34) {
    const amax = absMax32(x);
    const d: f32 = amax / 127;
    const id = f32x4.splat(d != 0 ? <f32>1 / d : 0);
    store<u16>(dst, <u16>f32ToF16(d));
    for (let o: usize = 0; o < 128; o += 64) {
      const q0 = i32x4.trunc_sat_f32x4_s(roundAway4(f32x4.mul(v128.load(x + o), id)));
      const q1 = i32x4.trunc_sat_f32x4_s(roundAway4(f32x4.mul(v128.load(x + o + 16), id)));
      const q2 = i32x4.trunc_sat_f32x4_s(roundAway4(f32x4.mul(v128.load(x + o + 32), id)));
      const q3 = i32x4.trunc_sat_f32x4_s(roundAway4(f32x4.mul(v128.load(x + o + 48), id)));
      v128.store(dst + 2 + (o >> 2), i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(q0, q1), i16x8.narrow_i32x4_s(q2, q3)));
    }
  }
}

/** quantize_row_q4_0_ref: d = max/-8 (max the signed value of largest magnitude), q = min(15, trunc(x/d + 8.5)). */
export function quantize_row_q4_0_ref(dst: usize, x: usize, n: i32): void {
  for (let b = 0; b < n; b += 32, x += 128, dst += 18) {
    const amax = absMax32(x);
    let max: f32 = 0;
    if (amax > 0) {
      // the first element of that magnitude, with its sign (signedMax)
      for (let i = 0; i < 32; i++) {
        const v = load<f32>(x + (<usize>i << 2));
        if (abs<f32>(v) == amax) { max = v; break; }
      }
    }
    const d: f32 = max / -8;
    const id = f32x4.splat(d != 0 ? <f32>1 / d : 0);
    store<u16>(dst, <u16>f32ToF16(d));
    const half = f32x4.splat(8.5);
    const top = f32x4.splat(15);
    const lo0 = i32x4.trunc_sat_f32x4_s(f32x4.min(top, f32x4.trunc(f32x4.add(f32x4.mul(v128.load(x), id), half))));
    const lo1 = i32x4.trunc_sat_f32x4_s(f32x4.min(top, f32x4.trunc(f32x4.add(f32x4.mul(v128.load(x, 16), id), half))));
    const lo2 = i32x4.trunc_sat_f32x4_s(f32x4.min(top, f32x4.trunc(f32x4.add(f32x4.mul(v128.load(x, 32), id), half))));
    const lo3 = i32x4.trunc_sat_f32x4_s(f32x4.min(top, f32x4.trunc(f32x4.add(f32x4.mul(v128.load(x, 48), id), half))));
    const hi0 = i32x4.trunc_sat_f32x4_s(f32x4.min(top, f32x4.trunc(f32x4.add(f32x4.mul(v128.load(x, 64), id), half))));
    const hi1 = i32x4.trunc_sat_f32x4_s(f32x4.min(top, f32x4.trunc(f32x4.add(f32x4.mul(v128.load(x, 80), id), half))));
    const hi2 = i32x4.trunc_sat_f32x4_s(f32x4.min(top, f32x4.trunc(f32x4.add(f32x4.mul(v128.load(x, 96), id), half))));
    const hi3 = i32x4.trunc_sat_f32x4_s(f32x4.min(top, f32x4.trunc(f32x4.add(f32x4.mul(v128.load(x, 112), id), half))));
    const b0 = v128.or(lo0, i32x4.shl(hi0, 4));
    const b1 = v128.or(lo1, i32x4.shl(hi1, 4));
    const b2 = v128.or(lo2, i32x4.shl(hi2, 4));
    const b3 = v128.or(lo3, i32x4.shl(hi3, 4));
    v128.store(dst + 2, i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_u(b0, b1), i16x8.narrow_i32x4_u(b2, b3)));
  }
}
