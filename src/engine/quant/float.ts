// Plain element types: F32 (4 bytes), F16 (IEEE half, 2 bytes), BF16 (bfloat16, 2 bytes), all
// little-endian. The dot products follow the scalar branch of ggml-cpu vec.cpp (ggml_vec_dot_f32 /
// _f16 / _bf16): each product rounded to float, summed in double (ggml_float), the sum rounded.
//
// Decision: F16 and BF16 weights meet the activation in f32, unrounded (vecDotType F32). ggml's
// type_traits_cpu makes F16 (BF16) its own vec_dot_type, so ggml's generic mul_mat first rounds x
// to half (bfloat16). What llama.cpp runs depends on the CPU (read in ggml-cpu of llama.cpp
// 80fb11a, the source node-llama-cpp 3.21.1 builds):
//  - x86 with AMX (amx/amx.cpp supports_op, amx/mmq.cpp tinygemm_kernel_avx): F16 weights with
//    rows % 32 == 0 and cols % 16 == 0 are multiplied with x in f32, unrounded, for any batch size.
//    This is the machine that recorded tests/golden/llama.cpp.
//  - x86 without AMX: llamafile_sgemm (llamafile/sgemm.cpp) takes F16 only as F16×F16 and BF16
//    only as BF16×BF16, i.e. after x was rounded; single tokens go through ggml_vec_dot_f16. So x
//    is rounded to half on every path there.
//  - ARM NEON without FP16 arithmetic: llamafile_sgemm takes F16×F32 (unrounded) for batches ≥ 2.
// Pantheon does not copy these per-CPU rules: f32 is the more accurate choice, costs nothing (the
// weights are widened to f32 anyway), and is what llama.cpp computes where it does not round.

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { bf16ToF32, F16, f32ToBf16, f32ToF16, fr } from './half.js';

// ---------------------------------------------------------------------------------------------
// F32

function dequantizeF32(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  const at = src.byteOffset + off;
  if (at % 4 === 0) {
    dst.set(new Float32Array(src.buffer, at, n));
    return;
  }
  const dv = new DataView(src.buffer, at, n * 4);
  for (let i = 0; i < n; i++) dst[i] = dv.getFloat32(i * 4, true);
}

function quantizeF32(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  dst.set(new Uint8Array(x.buffer, x.byteOffset, n * 4), off);
}

/** A Float32Array view of n floats at byte `off` of `b` (copied when not 4-byte aligned). */
function f32View(b: Uint8Array, off: number, n: number): Float32Array {
  const at = b.byteOffset + off;
  if (at % 4 === 0) return new Float32Array(b.buffer, at, n);
  const out = new Float32Array(n);
  dequantizeF32(b, off, out, n);
  return out;
}

function vecDotF32(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const x = f32View(w, wOff, n);
  const y = f32View(a, aOff, n);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += fr(x[i] * y[i]);
  return fr(sum);
}

export const F32_FORMAT: BlockFormat = {
  type: GgmlType.F32, dequantize: dequantizeF32, quantize: quantizeF32, vecDotType: GgmlType.F32, vecDot: vecDotF32,
};

// ---------------------------------------------------------------------------------------------
// F16

function dequantizeF16(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i++, o += 2) dst[i] = F16[src[o] | (src[o + 1] << 8)];
}

function quantizeF16(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i++, o += 2) {
    const h = f32ToF16(x[i]);
    dst[o] = h & 0xff;
    dst[o + 1] = h >>> 8;
  }
}

/** F16 weights · f32 activation: each product rounded to float, summed in double, the sum rounded. */
function vecDotF16(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const x = f32View(a, aOff, n);
  let sum = 0;
  for (let i = 0, p = wOff; i < n; i++, p += 2) sum += fr(F16[w[p] | (w[p + 1] << 8)] * x[i]);
  return fr(sum);
}

export const F16_FORMAT: BlockFormat = {
  type: GgmlType.F16, dequantize: dequantizeF16, quantize: quantizeF16, vecDotType: GgmlType.F32, vecDot: vecDotF16,
};

// ---------------------------------------------------------------------------------------------
// BF16

function dequantizeBf16(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i++, o += 2) dst[i] = bf16ToF32(src[o] | (src[o + 1] << 8));
}

function quantizeBf16(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i++, o += 2) {
    const h = f32ToBf16(x[i]);
    dst[o] = h & 0xff;
    dst[o + 1] = h >>> 8;
  }
}

/** BF16 weights · f32 activation, summed like vecDotF16. */
function vecDotBf16(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const x = f32View(a, aOff, n);
  let sum = 0;
  for (let i = 0, p = wOff; i < n; i++, p += 2) sum += fr(bf16ToF32(w[p] | (w[p + 1] << 8)) * x[i]);
  return fr(sum);
}

export const BF16_FORMAT: BlockFormat = {
  type: GgmlType.BF16, dequantize: dequantizeBf16, quantize: quantizeBf16, vecDotType: GgmlType.F32, vecDot: vecDotBf16,
};
