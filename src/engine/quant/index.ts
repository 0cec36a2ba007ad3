// The quantisation formats' public API: dequantise a row, quantise with ggml's reference
// quantisers, and the fused matvec/matmul that works like ggml's CPU path: the activation is
// quantised ONCE into the weight type's vec_dot_type, then each row is an integer block dot.
//
// Lower-level pieces for other kernels to mirror (the WebAssembly SIMD engineer uses these as the
// reference): quantizeActivation(wType, x) and vecDot(wType, w, wOff, act, actOff, n).

import { ModelError } from '../../shared/errors.js';
import { GgmlType, ggmlTypeInfo, ggmlTypeName } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { FORMATS } from './formats.js';
import { WEIGHTED_QUANTIZERS } from './imatrix-quant.js';
import { quantizeActQ8_0, quantizeActQ8_1 } from './legacy.js';
import { quantizeQ8K } from './q8k.js';
import type { QWeight } from './qweight.js';

export type { QWeight } from './qweight.js';
export type { BlockFormat } from './format.js';
export { f16ToF32, f32ToF16, bf16ToF32, f32ToBf16 } from './half.js';

const SUPPORTED = 'F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K-Q6_K, IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4';

/** The format for a ggml type, or a ModelError naming the type (the caller adds the tensor name). */
export function blockFormat(type: number): BlockFormat {
  const f = FORMATS[type];
  if (!f) throw new ModelError('UNSUPPORTED_TYPE', `tensor type ${ggmlTypeName(type)} cannot be computed yet (supported: ${SUPPORTED})`);
  return f;
}

/** True when rows of this type can be dequantised and multiplied. */
export function isSupportedType(type: number): boolean {
  return FORMATS[type] !== undefined;
}

function blockSizeOf(type: number): { blockSize: number; typeSize: number } {
  const info = ggmlTypeInfo(type)!;
  return { blockSize: info.blockSize, typeSize: info.typeSize };
}

function checkSpan(type: number, n: number, bytes: number, off: number, what: string): void {
  const { blockSize, typeSize } = blockSizeOf(type);
  if (n % blockSize !== 0) throw new RangeError(`${ggmlTypeName(type)}: ${n} elements is not a whole number of ${blockSize}-element blocks`);
  if (off < 0 || off + (n / blockSize) * typeSize > bytes) throw new RangeError(`${ggmlTypeName(type)}: ${what} of ${bytes} bytes is too short for ${n} elements at byte ${off}`);
}

// ---------------------------------------------------------------------------------------------
// Dequantise / quantise

/** Dequantise `n` elements starting at byte `off` of `src` into dst[0..n). */
export function dequantizeRow(type: number, src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  const f = blockFormat(type);
  checkSpan(type, n, src.length, off, 'source');
  f.dequantize(src, off, dst, n);
}

/**
 * Dequantise a whole tensor to float32 in stored order. Works for "flat block" tensors too (rows
 * not a whole number of blocks, e.g. stories260K q8_0's ffn_down with rows of 172): ggml's blocks
 * run straight through the data, so the tensor is decoded as one long row.
 */
export function dequantizeTensor(info: { type: number; elements: number; name?: string }, bytes: Uint8Array): Float32Array {
  const out = new Float32Array(info.elements);
  try {
    dequantizeRow(info.type, bytes, 0, out, info.elements);
  } catch (err) {
    if (err instanceof ModelError && info.name) throw new ModelError(err.code, `tensor "${info.name}": ${err.message}`);
    throw err;
  }
  return out;
}

/** True when Pantheon has ggml's reference quantiser for this type. */
export function canQuantize(type: number): boolean {
  return FORMATS[type]?.quantize !== undefined;
}

/** Quantise x[0..n) into blocks at byte `off` of dst with ggml's reference quantiser. */
export function quantizeRow(type: number, x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  const f = blockFormat(type);
  if (!f.quantize) {
    if (WEIGHTED_QUANTIZERS[type]) throw new ModelError('IMATRIX_REQUIRED', `${ggmlTypeName(type)} can only be quantised with an importance matrix (as in ggml)`);
    throw new ModelError('UNSUPPORTED_TYPE', `Pantheon cannot quantise to ${ggmlTypeName(type)}`);
  }
  checkSpan(type, n, dst.length, off, 'destination');
  f.quantize(x, dst, off, n);
}

/** Bytes for n elements of a type (n a whole number of blocks). */
export function bytesFor(type: number, n: number): number {
  const { blockSize, typeSize } = blockSizeOf(type);
  return Math.ceil(n / blockSize) * typeSize;
}

/** True when ggml's quantiser for this type reads an importance matrix (the others ignore one). */
export function usesImportance(type: number): boolean {
  return WEIGHTED_QUANTIZERS[type] !== undefined;
}

/**
 * Quantise a [rows, cols] float matrix row by row; returns rows × rowBytes bytes. With `imatrix`
 * (one importance per column, llama-imatrix's mean squared activations) the types that read one
 * use ggml's weighted quantisers (ggml_quantize_chunk with quant_weights); the others ignore it.
 */
export function quantizeRows(type: number, x: Float32Array, rows: number, cols: number, imatrix?: Float32Array): Uint8Array {
  const rb = bytesFor(type, cols);
  const out = new Uint8Array(rb * rows);
  const weighted = imatrix ? WEIGHTED_QUANTIZERS[type] : undefined;
  if (weighted && imatrix) {
    if (imatrix.length !== cols) throw new RangeError(`an importance matrix of ${imatrix.length} values cannot weight rows of ${cols}`);
    checkSpan(type, cols, out.length, 0, 'destination');
    for (let r = 0; r < rows; r++) weighted(x.subarray(r * cols, (r + 1) * cols), out, r * rb, cols, imatrix);
    return out;
  }
  for (let r = 0; r < rows; r++) quantizeRow(type, x.subarray(r * cols, (r + 1) * cols), out, r * rb, cols);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fused dot products

/** The type a weight type's activations are quantised to (ggml-cpu.c type_traits_cpu vec_dot_type). */
export function vecDotType(wType: number): number {
  return blockFormat(wType).vecDotType;
}

/** An activation vector quantised for one weight type. */
export interface QuantizedActivation {
  /** The vec_dot_type the bytes are in. */
  type: number;
  data: Uint8Array;
}

/**
 * Activation quantisers per vec_dot_type: llama.cpp's x86 from_float (ggml-cpu/arch/x86/quants.c),
 * which for Q8_0 and Q8_1 rounds differently from the reference weight quantisers (legacy.ts).
 */
const ACTIVATION_QUANTIZERS: Record<number, (x: Float32Array, dst: Uint8Array, off: number, n: number) => void> = {
  [GgmlType.Q8_0]: quantizeActQ8_0,
  [GgmlType.Q8_1]: quantizeActQ8_1,
  [GgmlType.Q8_K]: quantizeQ8K,
};

/** Quantise activations x (a whole number of blocks) into the weight type's vec_dot_type, once. */
export function quantizeActivation(wType: number, x: Float32Array): QuantizedActivation {
  const type = vecDotType(wType);
  if (type === GgmlType.F32) return { type, data: new Uint8Array(x.buffer, x.byteOffset, x.byteLength) };
  const quantize = ACTIVATION_QUANTIZERS[type];
  if (!quantize) throw new ModelError('UNSUPPORTED_TYPE', `no activation quantiser for ${ggmlTypeName(type)} (the vec_dot_type of ${ggmlTypeName(wType)})`);
  const data = new Uint8Array(bytesFor(type, x.length));
  quantize(x, data, 0, x.length);
  return { type, data };
}

/**
 * Dot product of n weights (blocks of wType at byte wOff of w) with n activations quantised by
 * quantizeActivation (at byte actOff of act): ggml_vec_dot_<wType>_<vec_dot_type>_generic.
 */
export function vecDot(wType: number, w: Uint8Array, wOff: number, act: Uint8Array, actOff: number, n: number): number {
  return blockFormat(wType).vecDot(n, w, wOff, act, actOff);
}

function checkWeight(w: QWeight): BlockFormat {
  const f = blockFormat(w.type);
  const { blockSize } = blockSizeOf(w.type);
  if (w.cols % blockSize !== 0) {
    throw new ModelError('BAD_TENSOR', `a ${ggmlTypeName(w.type)} matrix needs rows that are a whole number of ${blockSize}-element blocks (rows have ${w.cols})`);
  }
  if (w.data.length < w.rows * w.rowBytes) throw new RangeError(`weight data is ${w.data.length} bytes, ${w.rows} rows need ${w.rows * w.rowBytes}`);
  return f;
}

/** out[r] = W[r,:] · x for r in 0..rows: x quantised once, then one block dot per row. */
export function matvec(out: Float32Array, w: QWeight, x: Float32Array): void {
  const f = checkWeight(w);
  const act = quantizeActivation(w.type, x.length === w.cols ? x : x.subarray(0, w.cols));
  for (let r = 0; r < w.rows; r++) out[r] = f.vecDot(w.cols, w.data, r * w.rowBytes, act.data, 0);
}

/**
 * out[t, r] = W[r,:] · x[t,:] for a batch of n activations (x: [n, cols], out: [n, rows]). Each
 * activation is quantised once; each weight row is walked once across the whole batch.
 */
export function matmul(out: Float32Array, w: QWeight, x: Float32Array, n: number): void {
  const f = checkWeight(w);
  const actType = f.vecDotType;
  const actBytes = bytesFor(actType, w.cols);
  const acts = new Uint8Array(actBytes * n);
  for (let t = 0; t < n; t++) {
    const a = quantizeActivation(w.type, x.subarray(t * w.cols, (t + 1) * w.cols));
    acts.set(a.data, t * actBytes);
  }
  for (let r = 0; r < w.rows; r++) {
    const wOff = r * w.rowBytes;
    for (let t = 0; t < n; t++) out[t * w.rows + r] = f.vecDot(w.cols, w.data, wOff, acts, t * actBytes);
  }
}
