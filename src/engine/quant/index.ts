// The quantisation formats' public API: dequantise a row, fused matvec/matmul dispatched per type.
// (Initial version: F32 and F16 only. The quant module grows this to every ggml block format.)

import { ModelError } from '../../shared/errors.js';
import { ggmlTypeName } from '../gguf/ggml-types.js';
import type { QWeight } from './qweight.js';

export type { QWeight } from './qweight.js';

const f16tmp = new Float32Array(1);
const u32tmp = new Uint32Array(f16tmp.buffer);

/** IEEE half → float (exact). */
export function f16ToF32(h: number): number {
  const s = (h & 0x8000) << 16;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) {
    if (m === 0) { u32tmp[0] = s; return f16tmp[0]; }
    const v = m * 5.960464477539063e-8; // 2^-24
    return s ? -v : v;
  }
  if (e === 31) u32tmp[0] = s | 0x7f800000 | (m << 13);
  else u32tmp[0] = s | ((e + 112) << 23) | (m << 13);
  return f16tmp[0];
}

/** Dequantise `n` elements starting at byte `off` of `src` into `dst`. */
export function dequantizeRow(type: number, src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  const dv = new DataView(src.buffer, src.byteOffset + off);
  switch (type) {
    case 0: for (let i = 0; i < n; i++) dst[i] = dv.getFloat32(i * 4, true); return;
    case 1: for (let i = 0; i < n; i++) dst[i] = f16ToF32(dv.getUint16(i * 2, true)); return;
    default: throw new ModelError('UNSUPPORTED_TYPE', `tensor type ${ggmlTypeName(type)} cannot be computed yet`);
  }
}

/** out[r] = W[r,:] · x for r in 0..rows. */
export function matvec(out: Float32Array, w: QWeight, x: Float32Array): void {
  const row = new Float32Array(w.cols);
  for (let r = 0; r < w.rows; r++) {
    dequantizeRow(w.type, w.data, r * w.rowBytes, row, w.cols);
    let s = 0;
    for (let i = 0; i < w.cols; i++) s += row[i] * x[i];
    out[r] = s;
  }
}

/** out[t, r] = W[r,:] · x[t,:] for a batch of `n` activations (x: [n, cols], out: [n, rows]). */
export function matmul(out: Float32Array, w: QWeight, x: Float32Array, n: number): void {
  for (let t = 0; t < n; t++) matvec(out.subarray(t * w.rows, (t + 1) * w.rows), w, x.subarray(t * w.cols, (t + 1) * w.cols));
}
