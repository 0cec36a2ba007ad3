// Number formats the block formats are built from: IEEE half (f16), bfloat16, E8M0, and the
// float32 rounding helpers that make TypeScript's double arithmetic reproduce ggml's float code.
// The one f16 module: llama.cpp also stores and computes in f16 where Pantheon rounds the same
// way, the KV cache (F16 by default, llama-context.cpp type_k/type_v), flash attention's F16 query
// and accumulator (ggml-cpu ops.cpp) and GELU's F16 table (ggml-cpu vec.h GGML_GELU_FP16).
//
// Every ggml kernel computes in C `float`. One double operation followed by Math.fround gives the
// correctly rounded float32 result for + - * / and sqrt (a double has more than 2×24+2 bits), so
// writing `fr(a * b)` after each operation reproduces the C result bit for bit, provided the C
// compiler did not fuse a multiply and an add (ggml's reference data, quant-reference.gguf, matches
// bit for bit without fused multiply-adds).

export const fr = Math.fround;

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

// ---------------------------------------------------------------------------------------------
// IEEE half

/** IEEE half → float (exact). */
export function f16ToF32(h: number): number {
  const s = (h & 0x8000) << 16;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) {
    if (m === 0) { u32[0] = s; return f32[0]; }
    const v = m * 5.960464477539063e-8; // m × 2^-24
    return s ? -v : v;
  }
  if (e === 31) u32[0] = s | 0x7f800000 | (m << 13);
  else u32[0] = s | ((e + 112) << 23) | (m << 13);
  return f32[0];
}

/** All 65536 halves as floats: F16[bits] (256 KiB, built once; the kernels' GGML_FP16_TO_FP32). */
export const F16 = (() => {
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) t[h] = f16ToF32(h);
  return t;
})();

/**
 * float → IEEE half, round to nearest even, overflow to ±inf, NaN stays NaN (ggml-impl.h
 * ggml_compute_fp32_to_fp16 and F16C's vcvtps2ph agree on every finite input).
 */
export function f32ToF16(x: number): number {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 | (mant >>> 13) : 0);
  const e = exp - 112; // rebias 127 → 15
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign; // below half the smallest subnormal: ±0
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    let r = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    if (rem > half || (rem === half && (r & 1))) r++;
    return sign | r;
  }
  let r = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (r & 1))) r++; // a carry rolls over into the exponent (or to inf)
  return sign | r;
}

/**
 * f32ToF16 with every NaN stored as the quiet 0x7e00 (its sign kept), as ggml's software
 * conversion does: the KV cache's halves (model/kv-cache.ts; assembly/attention.ts f32ToF16Bits).
 */
export function f32ToF16Bits(x: number): number {
  if (x === x) return f32ToF16(x);
  f32[0] = x;
  return ((u32[0] >>> 16) & 0x8000) | 0x7e00;
}

/** Round a float to the nearest half and back (what storing into ggml_half does). */
export function roundF16(x: number): number {
  return F16[f32ToF16(x)];
}

// ---------------------------------------------------------------------------------------------
// bfloat16

export function bf16ToF32(h: number): number {
  u32[0] = (h & 0xffff) << 16;
  return f32[0];
}

/** float → bf16, round to nearest even; NaN stays quiet NaN (ggml-impl.h ggml_compute_fp32_to_bf16). */
export function f32ToBf16(x: number): number {
  f32[0] = x;
  const b = u32[0];
  if ((b & 0x7fffffff) > 0x7f800000) return ((b >>> 16) | 64) & 0xffff;
  return ((b + 0x7fff + ((b >>> 16) & 1)) / 65536) & 0xffff; // b + bias can pass 2^32 only for NaN, handled above
}

// ---------------------------------------------------------------------------------------------
// E8M0 (MXFP4's shared exponent)

/** 2^(e-128): half the E8M0 value, because ggml's fp4 table holds doubled values (ggml-impl.h ggml_e8m0_to_fp32_half). */
export function e8m0HalfToF32(e: number): number {
  u32[0] = e < 2 ? 0x00200000 << e : (e - 1) << 23;
  return f32[0];
}

// ---------------------------------------------------------------------------------------------
// Rounding to integers, as ggml's C does it

/**
 * ggml-quants.c nearest_int: round a float to the nearest integer, ties to even (it adds 1.5×2^23
 * and reads the mantissa; the float add rounds). Valid for |f| ≤ 4194303, as in C.
 */
export function nearestInt(f: number): number {
  return fr(f + 12582912) - 12582912;
}

/** C roundf / lroundf: nearest integer, ties away from zero. */
export function roundAway(f: number): number {
  return f < 0 ? -Math.floor(-f + 0.5) : Math.floor(f + 0.5);
}

/** C's (int8_t) cast of an int: keep the low 8 bits, signed. */
export function toI8(v: number): number {
  return (v << 24) >> 24;
}

/** Read a little-endian int16 from bytes. */
export function i16At(b: Uint8Array, o: number): number {
  return ((b[o] | (b[o + 1] << 8)) << 16) >> 16;
}

/** Read a little-endian half from bytes as a float. */
export function f16At(b: Uint8Array, o: number): number {
  return F16[b[o] | (b[o + 1] << 8)];
}

/** Write a float as a little-endian half (rounded to nearest even). */
export function putF16(b: Uint8Array, o: number, x: number): void {
  const h = f32ToF16(x);
  b[o] = h & 0xff;
  b[o + 1] = h >>> 8;
}

/** An Int8Array over the same bytes (cached per array: kernels ask for it once per row). */
const i8Views = new WeakMap<Uint8Array, Int8Array>();
export function asI8(b: Uint8Array): Int8Array {
  let v = i8Views.get(b);
  if (!v) {
    v = new Int8Array(b.buffer, b.byteOffset, b.byteLength);
    i8Views.set(b, v);
  }
  return v;
}

const f32Bytes = new Uint8Array(f32.buffer);

/** Read a little-endian float32 from bytes (any alignment). */
export function f32At(b: Uint8Array, o: number): number {
  f32Bytes[0] = b[o];
  f32Bytes[1] = b[o + 1];
  f32Bytes[2] = b[o + 2];
  f32Bytes[3] = b[o + 3];
  return f32[0];
}

/** Write a float as little-endian float32 bytes (any alignment). */
export function putF32(b: Uint8Array, o: number, x: number): void {
  f32[0] = x;
  b[o] = f32Bytes[0];
  b[o + 1] = f32Bytes[1];
  b[o + 2] = f32Bytes[2];
  b[o + 3] = f32Bytes[3];
}
