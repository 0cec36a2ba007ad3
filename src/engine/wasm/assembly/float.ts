// F32, F16 and BF16 weights. The activation is f32 and, for F16/BF16 too, not rounded (Pantheon's
// choice, with llama.cpp's per-CPU behaviour, in src/engine/quant/float.ts), so each kernel widens
// weights to f32 and multiplies-adds.
// ggml_vec_dot_f16 accumulates in ggml_float (double) in its generic path; we accumulate in f32
// over 16 lanes, so results agree to float rounding, not bit for bit.

import { f16, hsumF } from './common';

/** 8 halves (one v128) → the low 4 as f32x4 (bit-exact for finite halves, see f16 in common.ts). */
// @ts-ignore: decorator
@inline function halfLo(h: v128): v128 {
  return halfWiden(i32x4.extend_low_i16x8_u(h));
}
// @ts-ignore: decorator
@inline function halfHi(h: v128): v128 {
  return halfWiden(i32x4.extend_high_i16x8_u(h));
}
/**
 * Four halves in u32 lanes → f32x4, exact for every half without subnormal float operands (the
 * method of Maratyszcza's FP16 library, which ggml_compute_fp16_to_fp32 also uses): normal halves
 * are shifted into place with exponent offset 0xE0 << 23 and scaled by 2^-112; subnormal halves
 * are built as 0.5 + m·2^-24 (exponent 126) and 0.5 is subtracted.
 */
// @ts-ignore: decorator
@inline function halfWiden(u: v128): v128 {
  const w = i32x4.shl(u, 16);
  const twoW = i32x4.add(w, w);
  const norm = f32x4.mul(i32x4.add(i32x4.shr_u(twoW, 4), i32x4.splat(0x70000000)), f32x4.splat(1.925929944387236e-34));
  const den = f32x4.sub(v128.or(i32x4.shr_u(twoW, 17), i32x4.splat(0x3f000000)), f32x4.splat(0.5));
  const isDen = i32x4.lt_u(twoW, i32x4.splat(0x08000000));
  return v128.or(v128.and(w, i32x4.splat(0x80000000)), v128.bitselect(den, norm, isDen));
}

// ---- dots over one row ------------------------------------------------------------------------

// @ts-ignore: decorator
@inline function dot_f32(w: usize, x: usize, cols: i32): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= cols; i += 16) {
    const o = <usize>i << 2;
    a0 = f32x4.add(a0, f32x4.mul(v128.load(w + o), v128.load(x + o)));
    a1 = f32x4.add(a1, f32x4.mul(v128.load(w + o, 16), v128.load(x + o, 16)));
    a2 = f32x4.add(a2, f32x4.mul(v128.load(w + o, 32), v128.load(x + o, 32)));
    a3 = f32x4.add(a3, f32x4.mul(v128.load(w + o, 48), v128.load(x + o, 48)));
  }
  for (; i + 4 <= cols; i += 4) {
    const o = <usize>i << 2;
    a0 = f32x4.add(a0, f32x4.mul(v128.load(w + o), v128.load(x + o)));
  }
  let s = hsumF(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  for (; i < cols; i++) s += load<f32>(w + (<usize>i << 2)) * load<f32>(x + (<usize>i << 2));
  return s;
}

// @ts-ignore: decorator
@inline function dot_f16(w: usize, x: usize, cols: i32): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= cols; i += 16) {
    const h0 = v128.load(w + (<usize>i << 1));
    const h1 = v128.load(w + (<usize>i << 1), 16);
    const o = x + (<usize>i << 2);
    a0 = f32x4.add(a0, f32x4.mul(halfLo(h0), v128.load(o)));
    a1 = f32x4.add(a1, f32x4.mul(halfHi(h0), v128.load(o, 16)));
    a2 = f32x4.add(a2, f32x4.mul(halfLo(h1), v128.load(o, 32)));
    a3 = f32x4.add(a3, f32x4.mul(halfHi(h1), v128.load(o, 48)));
  }
  let s = hsumF(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  for (; i < cols; i++) s += f16(load<u16>(w + (<usize>i << 1))) * load<f32>(x + (<usize>i << 2));
  return s;
}

// @ts-ignore: decorator
@inline function dot_bf16(w: usize, x: usize, cols: i32): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= cols; i += 16) {
    const h0 = v128.load(w + (<usize>i << 1));
    const h1 = v128.load(w + (<usize>i << 1), 16);
    const o = x + (<usize>i << 2);
    a0 = f32x4.add(a0, f32x4.mul(i32x4.shl(i32x4.extend_low_i16x8_u(h0), 16), v128.load(o)));
    a1 = f32x4.add(a1, f32x4.mul(i32x4.shl(i32x4.extend_high_i16x8_u(h0), 16), v128.load(o, 16)));
    a2 = f32x4.add(a2, f32x4.mul(i32x4.shl(i32x4.extend_low_i16x8_u(h1), 16), v128.load(o, 32)));
    a3 = f32x4.add(a3, f32x4.mul(i32x4.shl(i32x4.extend_high_i16x8_u(h1), 16), v128.load(o, 48)));
  }
  let s = hsumF(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  for (; i < cols; i++) s += reinterpret<f32>(<u32>load<u16>(w + (<usize>i << 1)) << 16) * load<f32>(x + (<usize>i << 2));
  return s;
}

// ---- exported kernels -------------------------------------------------------------------------
// matvec_T(out, w, rowBytes, r0, r1, xq, cols): out[r] = W[r,:]·x for r in [r0, r1).
// matmul_T(..., n, xqStride, outStride): out[t·outStride + r] = W[r,:]·x_t; each row is read once
// and reused for the n activations while it sits in L1.
// dequant_T(out, w, cols): one row of W → f32.

export function matvec_f32(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dot_f32(w + <usize>r * rowBytes, xq, cols));
}
export function matmul_f32(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) store<f32>(out + (<usize>(t * outStride + r) << 2), dot_f32(wr, xq + <usize>t * xqStride, cols));
  }
}
export function dequant_f32(out: usize, w: usize, cols: i32): void {
  memory.copy(out, w, <usize>cols << 2);
}

export function matvec_f16(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dot_f16(w + <usize>r * rowBytes, xq, cols));
}
export function matmul_f16(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) store<f32>(out + (<usize>(t * outStride + r) << 2), dot_f16(wr, xq + <usize>t * xqStride, cols));
  }
}
export function dequant_f16(out: usize, w: usize, cols: i32): void {
  let i = 0;
  for (; i + 8 <= cols; i += 8) {
    const h = v128.load(w + (<usize>i << 1));
    v128.store(out + (<usize>i << 2), halfLo(h));
    v128.store(out + (<usize>i << 2), halfHi(h), 16);
  }
  for (; i < cols; i++) store<f32>(out + (<usize>i << 2), f16(load<u16>(w + (<usize>i << 1))));
}

export function matvec_bf16(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dot_bf16(w + <usize>r * rowBytes, xq, cols));
}
export function matmul_bf16(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) store<f32>(out + (<usize>(t * outStride + r) << 2), dot_bf16(wr, xq + <usize>t * xqStride, cols));
  }
}
export function dequant_bf16(out: usize, w: usize, cols: i32): void {
  for (let i = 0; i < cols; i++) store<f32>(out + (<usize>i << 2), reinterpret<f32>(<u32>load<u16>(w + (<usize>i << 1)) << 16));
}
