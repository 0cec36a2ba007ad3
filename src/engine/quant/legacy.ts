// The original 32-element block formats (ggml-common.h block_q4_0 … block_q8_1; dequantize_row_*,
// quantize_row_*_ref in ggml-quants.c; ggml_vec_dot_*_generic in ggml-cpu/quants.c).
//
//   Q4_0  18 B: f16 d, u8 qs[16]             x = d·(q-8),    q = 4 bits
//   Q4_1  20 B: f16 d, f16 m, u8 qs[16]      x = d·q + m,    q = 4 bits
//   Q5_0  22 B: f16 d, u8 qh[4], u8 qs[16]   x = d·(q-16),   q = 4 bits + 1 high bit
//   Q5_1  24 B: f16 d, f16 m, u8 qh[4], qs[16]  x = d·q + m, q = 5 bits
//   Q8_0  34 B: f16 d, i8 qs[32]             x = d·q
//   Q8_1  36 B: f16 d, f16 s (= d·Σq), i8 qs[32]
//
// Nibble order: qs[j] holds element j in its low nibble and element j+16 in its high nibble.
// Q5's qh is a little-endian u32 whose bit j is the fifth bit of element j.

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, f16At, fr, nearestInt, putF16, roundAway } from './half.js';
import { signedMax } from './kscales.js';
import { quantizeRowByKernel } from './quant-kernel.js';

const QK = 32;

function qhAt(b: Uint8Array, o: number): number {
  return (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0;
}

function putQh(b: Uint8Array, o: number, qh: number): void {
  b[o] = qh & 0xff;
  b[o + 1] = (qh >>> 8) & 0xff;
  b[o + 2] = (qh >>> 16) & 0xff;
  b[o + 3] = qh >>> 24;
}

function minMax(x: Float32Array, from: number, n: number): { min: number; max: number } {
  let min = Infinity; // FLT_MAX in C; a block of finite floats never keeps it
  let max = -Infinity;
  for (let j = from; j < from + n; j++) {
    const v = x[j];
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { min, max };
}

// ---------------------------------------------------------------------------------------------
// Q4_0

function dequantizeQ4_0(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 18) {
    const d = f16At(src, o);
    for (let j = 0; j < 16; j++) {
      const q = src[o + 2 + j];
      dst[i + j] = fr(((q & 0x0f) - 8) * d);
      dst[i + j + 16] = fr(((q >> 4) - 8) * d);
    }
  }
}

/** ggml-quants.c quantize_row_q4_0_ref: d = max/-8 where max is the signed value of largest magnitude. */
function quantizeQ4_0(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  if (quantizeRowByKernel('rowQ4_0', x, dst, off, n, 18)) return;
  quantizeQ4_0Ref(x, dst, off, n);
}

/** quantizeQ4_0's scalar reference (the WebAssembly kernel's, quant-kernel.ts). */
export function quantizeQ4_0Ref(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 18) {
    const max = signedMax(x, i, QK);
    const d = fr(max / -8);
    const id = d ? fr(1 / d) : 0;
    putF16(dst, o, d);
    for (let j = 0; j < 16; j++) {
      const x0 = fr(x[i + j] * id);
      const x1 = fr(x[i + 16 + j] * id);
      const q0 = Math.min(15, Math.trunc(fr(x0 + 8.5)));
      const q1 = Math.min(15, Math.trunc(fr(x1 + 8.5)));
      dst[o + 2 + j] = q0 | (q1 << 4);
    }
  }
}

function vecDotQ4_0(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK, p += 18, q += 34) {
    let sumi0 = 0;
    let sumi1 = 0;
    for (let j = 0; j < 16; j++) {
      const b = w[p + 2 + j];
      sumi0 += ((b & 0x0f) - 8) * a8[q + 2 + j];
      sumi1 += ((b >> 4) - 8) * a8[q + 2 + 16 + j];
    }
    sumf = fr(sumf + fr(fr((sumi0 + sumi1) * f16At(w, p)) * f16At(a, q)));
  }
  return sumf;
}

export const Q4_0_FORMAT: BlockFormat = {
  type: GgmlType.Q4_0, dequantize: dequantizeQ4_0, quantize: quantizeQ4_0, vecDotType: GgmlType.Q8_0, vecDot: vecDotQ4_0,
};

// ---------------------------------------------------------------------------------------------
// Q4_1

function dequantizeQ4_1(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 20) {
    const d = f16At(src, o);
    const m = f16At(src, o + 2);
    for (let j = 0; j < 16; j++) {
      const q = src[o + 4 + j];
      dst[i + j] = fr(fr((q & 0x0f) * d) + m);
      dst[i + j + 16] = fr(fr((q >> 4) * d) + m);
    }
  }
}

/** quantize_row_q4_1_ref: d = (max-min)/15, m = min. */
function quantizeQ4_1(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 20) {
    const { min, max } = minMax(x, i, QK);
    const d = fr(fr(max - min) / 15);
    const id = d ? fr(1 / d) : 0;
    putF16(dst, o, d);
    putF16(dst, o + 2, min);
    for (let j = 0; j < 16; j++) {
      const x0 = fr(fr(x[i + j] - min) * id);
      const x1 = fr(fr(x[i + 16 + j] - min) * id);
      const q0 = Math.min(15, Math.trunc(fr(x0 + 0.5)));
      const q1 = Math.min(15, Math.trunc(fr(x1 + 0.5)));
      dst[o + 4 + j] = q0 | (q1 << 4);
    }
  }
}

function vecDotQ4_1(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK, p += 20, q += 36) {
    let sumi0 = 0;
    let sumi1 = 0;
    for (let j = 0; j < 16; j++) {
      const b = w[p + 4 + j];
      sumi0 += (b & 0x0f) * a8[q + 4 + j];
      sumi1 += (b >> 4) * a8[q + 4 + 16 + j];
    }
    const dd = fr(f16At(w, p) * f16At(a, q));
    sumf = fr(sumf + fr(fr(dd * (sumi0 + sumi1)) + fr(f16At(w, p + 2) * f16At(a, q + 2))));
  }
  return sumf;
}

export const Q4_1_FORMAT: BlockFormat = {
  type: GgmlType.Q4_1, dequantize: dequantizeQ4_1, quantize: quantizeQ4_1, vecDotType: GgmlType.Q8_1, vecDot: vecDotQ4_1,
};

// ---------------------------------------------------------------------------------------------
// Q5_0

function dequantizeQ5_0(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 22) {
    const d = f16At(src, o);
    const qh = qhAt(src, o + 2);
    for (let j = 0; j < 16; j++) {
      const q = src[o + 6 + j];
      const h0 = ((qh >>> j) << 4) & 0x10;
      const h1 = (qh >>> (j + 12)) & 0x10;
      dst[i + j] = fr((((q & 0x0f) | h0) - 16) * d);
      dst[i + j + 16] = fr((((q >> 4) | h1) - 16) * d);
    }
  }
}

/** quantize_row_q5_0_ref: d = max/-16. */
function quantizeQ5_0(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 22) {
    const max = signedMax(x, i, QK);
    const d = fr(max / -16);
    const id = d ? fr(1 / d) : 0;
    putF16(dst, o, d);
    let qh = 0;
    for (let j = 0; j < 16; j++) {
      const x0 = fr(x[i + j] * id);
      const x1 = fr(x[i + 16 + j] * id);
      const q0 = Math.min(31, Math.trunc(fr(x0 + 16.5)));
      const q1 = Math.min(31, Math.trunc(fr(x1 + 16.5)));
      dst[o + 6 + j] = (q0 & 0x0f) | ((q1 & 0x0f) << 4);
      qh |= ((q0 & 0x10) >>> 4) << j;
      qh |= ((q1 & 0x10) >>> 4) << (j + 16);
    }
    putQh(dst, o + 2, qh >>> 0);
  }
}

function vecDotQ5_0(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK, p += 22, q += 34) {
    const qh = qhAt(w, p + 2);
    let sumi0 = 0;
    let sumi1 = 0;
    for (let j = 0; j < 16; j++) {
      const b = w[p + 6 + j];
      const x0 = ((b & 0x0f) | (((qh >>> j) & 1) << 4)) - 16;
      const x1 = ((b >> 4) | (((qh >>> (j + 16)) & 1) << 4)) - 16;
      sumi0 += x0 * a8[q + 2 + j];
      sumi1 += x1 * a8[q + 2 + 16 + j];
    }
    sumf = fr(sumf + fr(fr(f16At(w, p) * f16At(a, q)) * (sumi0 + sumi1)));
  }
  return sumf;
}

export const Q5_0_FORMAT: BlockFormat = {
  type: GgmlType.Q5_0, dequantize: dequantizeQ5_0, quantize: quantizeQ5_0, vecDotType: GgmlType.Q8_0, vecDot: vecDotQ5_0,
};

// ---------------------------------------------------------------------------------------------
// Q5_1

function dequantizeQ5_1(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 24) {
    const d = f16At(src, o);
    const m = f16At(src, o + 2);
    const qh = qhAt(src, o + 4);
    for (let j = 0; j < 16; j++) {
      const q = src[o + 8 + j];
      const h0 = ((qh >>> j) << 4) & 0x10;
      const h1 = (qh >>> (j + 12)) & 0x10;
      dst[i + j] = fr(fr(((q & 0x0f) | h0) * d) + m);
      dst[i + j + 16] = fr(fr(((q >> 4) | h1) * d) + m);
    }
  }
}

/** quantize_row_q5_1_ref: d = (max-min)/31, m = min. */
function quantizeQ5_1(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 24) {
    const { min, max } = minMax(x, i, QK);
    const d = fr(fr(max - min) / 31);
    const id = d ? fr(1 / d) : 0;
    putF16(dst, o, d);
    putF16(dst, o + 2, min);
    let qh = 0;
    for (let j = 0; j < 16; j++) {
      const x0 = fr(fr(x[i + j] - min) * id);
      const x1 = fr(fr(x[i + 16 + j] - min) * id);
      const q0 = Math.trunc(fr(x0 + 0.5)) & 0xff;
      const q1 = Math.trunc(fr(x1 + 0.5)) & 0xff;
      dst[o + 8 + j] = (q0 & 0x0f) | ((q1 & 0x0f) << 4);
      qh |= ((q0 & 0x10) >>> 4) << j;
      qh |= ((q1 & 0x10) >>> 4) << (j + 16);
    }
    putQh(dst, o + 4, qh >>> 0);
  }
}

function vecDotQ5_1(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK, p += 24, q += 36) {
    const qh = qhAt(w, p + 4);
    let sumi0 = 0;
    let sumi1 = 0;
    for (let j = 0; j < 16; j++) {
      const b = w[p + 8 + j];
      sumi0 += ((b & 0x0f) | (((qh >>> j) & 1) << 4)) * a8[q + 4 + j];
      sumi1 += ((b >> 4) | (((qh >>> (j + 16)) & 1) << 4)) * a8[q + 4 + 16 + j];
    }
    const dd = fr(f16At(w, p) * f16At(a, q));
    sumf = fr(sumf + fr(fr(dd * (sumi0 + sumi1)) + fr(f16At(w, p + 2) * f16At(a, q + 2))));
  }
  return sumf;
}

export const Q5_1_FORMAT: BlockFormat = {
  type: GgmlType.Q5_1, dequantize: dequantizeQ5_1, quantize: quantizeQ5_1, vecDotType: GgmlType.Q8_1, vecDot: vecDotQ5_1,
};

// ---------------------------------------------------------------------------------------------
// Q8_0

function dequantizeQ8_0(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  const s8 = asI8(src);
  for (let i = 0, o = off; i < n; i += QK, o += 34) {
    const d = f16At(src, o);
    for (let j = 0; j < QK; j++) dst[i + j] = fr(s8[o + 2 + j] * d);
  }
}

/** quantize_row_q8_0_ref: d = amax/127, q = roundf(x/d). The weight quantiser; activations use quantizeActQ8_0. */
export function quantizeQ8_0(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  if (quantizeRowByKernel('rowQ8_0', x, dst, off, n, 34)) return;
  quantizeQ8_0Ref(x, dst, off, n);
}

/** quantizeQ8_0's scalar reference (the WebAssembly kernel's, quant-kernel.ts). */
export function quantizeQ8_0Ref(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 34) {
    const amax = Math.abs(signedMax(x, i, QK));
    const d = fr(amax / 127);
    const id = d ? fr(1 / d) : 0;
    putF16(dst, o, d);
    for (let j = 0; j < QK; j++) dst[o + 2 + j] = roundAway(fr(x[i + j] * id)) & 0xff;
  }
}

/**
 * Q8_0 for activations, as llama.cpp quantises them on x86 (ggml-cpu/arch/x86/quants.c
 * quantize_row_q8_0, the AVX/AVX2 branch every x86-64 build takes; the AMX kernels call the same
 * function, amx/mmq.cpp from_float<block_q8_0>). It differs from quantize_row_q8_0_ref in two
 * ways that each flip an element now and then: the multiplier is id = 127/amax (not 1/d with
 * d = amax/127), and x·id is rounded half to even (_mm256_round_ps with _MM_ROUND_NEAREST, then
 * _mm256_cvtps_epi32), not with roundf. d is stored as in the reference.
 */
export function quantizeActQ8_0(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 34) {
    const amax = Math.abs(signedMax(x, i, QK));
    const d = fr(amax / 127);
    const id = amax !== 0 ? fr(127 / amax) : 0;
    putF16(dst, o, d);
    for (let j = 0; j < QK; j++) dst[o + 2 + j] = nearestInt(fr(x[i + j] * id)) & 0xff;
  }
}

function vecDotQ8_0(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const w8 = asI8(w);
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK, p += 34, q += 34) {
    let sumi = 0;
    for (let j = 0; j < QK; j++) sumi += w8[p + 2 + j] * a8[q + 2 + j];
    sumf = fr(sumf + fr(sumi * fr(f16At(w, p) * f16At(a, q))));
  }
  return sumf;
}

export const Q8_0_FORMAT: BlockFormat = {
  type: GgmlType.Q8_0, dequantize: dequantizeQ8_0, quantize: quantizeQ8_0, vecDotType: GgmlType.Q8_0, vecDot: vecDotQ8_0,
};

// ---------------------------------------------------------------------------------------------
// Q8_1 (an activation format: ggml has no dot product with Q8_1 weights, so as a weight it goes
// through the dequantise-then-f32 fallback in index.ts)

export function dequantizeQ8_1(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  const s8 = asI8(src);
  for (let i = 0, o = off; i < n; i += QK, o += 36) {
    const d = f16At(src, o);
    for (let j = 0; j < QK; j++) dst[i + j] = fr(s8[o + 4 + j] * d);
  }
}

/** quantize_row_q8_1_ref: as Q8_0, plus s = d·Σq (stored as half). Activations use quantizeActQ8_1. */
export function quantizeQ8_1(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 36) {
    const amax = Math.abs(signedMax(x, i, QK));
    const d = fr(amax / 127);
    const id = d ? fr(1 / d) : 0;
    putF16(dst, o, d);
    let sum = 0;
    for (let j = 0; j < QK; j++) {
      const q = roundAway(fr(x[i + j] * id));
      dst[o + 4 + j] = q & 0xff;
      sum += q;
    }
    putF16(dst, o + 2, fr(sum * d));
  }
}

/**
 * Q8_1 for activations on x86 (ggml-cpu/arch/x86/quants.c quantize_row_q8_1, AVX/AVX2 branch): as
 * quantizeActQ8_0 (id = 127/amax, ties to even), plus s = f16(d·Σq) as in the reference.
 */
export function quantizeActQ8_1(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += QK, o += 36) {
    const amax = Math.abs(signedMax(x, i, QK));
    const d = fr(amax / 127);
    const id = amax !== 0 ? fr(127 / amax) : 0;
    putF16(dst, o, d);
    let sum = 0;
    for (let j = 0; j < QK; j++) {
      const q = nearestInt(fr(x[i + j] * id));
      dst[o + 4 + j] = q & 0xff;
      sum += q;
    }
    putF16(dst, o + 2, fr(sum * d));
  }
}
