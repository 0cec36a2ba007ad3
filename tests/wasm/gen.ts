// Test inputs for the WebAssembly kernels: deterministic random weights (ggml-quantised floats, and
// raw random block bytes that reach every bit pattern) and activations.
import { ggmlTypeInfo, GgmlType, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeRow, f32ToF16, quantizeRows } from '../../src/engine/quant/index.js';
import type { FillFn } from '../../src/engine/backend/types.js';
import { rowLayout } from '../../src/engine/wasm/layout.js';

/** A small LCG: the same numbers on every run. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Roughly normal values with a few outliers, like trained weights or hidden states. */
export function randomFloats(n: number, seed: number, scale = 1): Float32Array {
  const r = rng(seed);
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const g = (r() + r() + r() + r() - 2) * 1.7;
    x[i] = (r() < 0.01 ? g * 8 : g) * scale;
  }
  return x;
}

/** Byte offsets of the f16 scale fields in one block (ggml-common.h block_*). */
const HALF_FIELDS: Partial<Record<number, number[]>> = {
  [GgmlType.Q4_0]: [0], [GgmlType.Q4_1]: [0, 2], [GgmlType.Q5_0]: [0], [GgmlType.Q5_1]: [0, 2], [GgmlType.Q8_0]: [0],
  [GgmlType.Q2_K]: [80, 82], [GgmlType.Q3_K]: [108], [GgmlType.Q4_K]: [0, 2], [GgmlType.Q5_K]: [0, 2], [GgmlType.Q6_K]: [208],
  [GgmlType.IQ4_NL]: [0], [GgmlType.IQ4_XS]: [0], [GgmlType.TQ1_0]: [52], [GgmlType.TQ2_0]: [64],
  [GgmlType.IQ2_XXS]: [0], [GgmlType.IQ2_XS]: [0], [GgmlType.IQ2_S]: [0], [GgmlType.IQ3_XXS]: [0], [GgmlType.IQ3_S]: [0],
  [GgmlType.IQ1_S]: [0],
};

/**
 * rows × cols of random block bytes: every quant bit pattern is reachable (Q8_0's −128, Q3_K's
 * sign-carrying scales, TQ2_0's unused code 3 …); only the f16 scales are set to finite values
 * so the sums stay finite. Float types get random finite values.
 */
export function randomBlocks(type: number, rows: number, cols: number, seed: number): Uint8Array {
  const r = rng(seed);
  const info = ggmlTypeInfo(type)!;
  if (info.blockSize === 1) {
    const f = randomFloats(rows * cols, seed);
    if (type === GgmlType.F32) return new Uint8Array(f.buffer);
    const out = new Uint16Array(rows * cols);
    for (let i = 0; i < out.length; i++) out[i] = type === GgmlType.F16 ? f32ToF16(f[i]) : new Uint32Array(new Float32Array([f[i]]).buffer)[0] >>> 16;
    return new Uint8Array(out.buffer);
  }
  const bytes = new Uint8Array(rows * rowBytes(type, cols));
  for (let i = 0; i < bytes.length; i++) bytes[i] = (r() * 256) | 0;
  const dv = new DataView(bytes.buffer);
  for (let b = 0; b < bytes.length; b += info.typeSize) {
    for (const off of HALF_FIELDS[type] ?? []) dv.setUint16(b + off, f32ToF16((r() * 2 - 1) * 0.05), true);
    if (type === GgmlType.MXFP4) bytes[b] = 112 + ((r() * 16) | 0); // E8M0 scale 2^-16 … 2^-1
    if (type === GgmlType.IQ1_M) {
      // IQ1_M's f16 d is the top nibbles of its four u16 scale words (bytes 48..55)
      const h = f32ToF16((r() * 2 - 1) * 0.05);
      for (let k = 0; k < 4; k++) bytes[b + 49 + 2 * k] = (bytes[b + 49 + 2 * k] & 0x0f) | (((h >> (4 * k)) & 0xf) << 4);
    }
  }
  return bytes;
}

/** rows × cols quantised from random floats by ggml's reference quantiser (the scalar module). */
export function quantisedWeights(type: number, rows: number, cols: number, seed: number): Uint8Array {
  return quantizeRows(type, randomFloats(rows * cols, seed), rows, cols);
}

/** A FillFn over a byte array holding the whole tensor. */
export function fillFrom(data: Uint8Array): FillFn {
  return (dst, from) => dst.set(data.subarray(from, from + dst.length));
}

/** Σ|w_i·x_i| for one row: the scale the rounding error is measured against. */
export function absDot(type: number, data: Uint8Array, off: number, x: Float32Array, cols: number): number {
  const w = new Float32Array(cols);
  dequantizeRow(type, data, off, w, cols);
  let s = 0;
  for (let i = 0; i < cols; i++) s += Math.abs(w[i] * x[i]);
  return s;
}

/**
 * The export that moves a type's rows into the build's stored layout from a copy elsewhere
 * (layout.ts rowLayout): layout_*(dst, src, rows, cols) for Q4_0 and Q6_K, layout_q4_K(dst, src,
 * temp, rows, cols) with four rows of temp; '' where the stored rows are ggml's (F16's in-place
 * layout is not one of these).
 */
export function movedLayout(type: number, cols: number): string {
  const lay = rowLayout(type, cols);
  return lay && (lay.slack > 0 || lay.temp > 0) ? lay.fn : '';
}
