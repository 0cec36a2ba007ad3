// TQ1_0 and TQ2_0: ternary weights {-1, 0, 1}·d for BitNet b1.58 / TriLM models
// (ggml-common.h block_tq1_0, block_tq2_0; ggml-quants.c quantize_row_tq*_ref, dequantize_row_tq*).
//   TQ1_0 54 B per 256: u8 qs[48] | u8 qh[4] | f16 d
//     Five trits per byte, stored as a fixed-point fraction: byte = ceil(t·256/243) where t is the
//     base-3 number of the five trits (first trit most significant). Trit n is read back as
//     ((u8)(byte·3^n)·3) >> 8. qs[0..32) cover elements 0..160 (element 32n + m in byte m, trit n),
//     qs[32..48) elements 160..240 (16n + m), qh[4] four trits each for 240..256 (4n + j, trit n).
//   TQ2_0 66 B per 256: u8 qs[64] | f16 d
//     Four 2-bit values (trit + 1) per byte: element 128c + 32n + m is bits 2n of qs[32c + m].

import { GgmlType } from '../gguf/ggml-types.js';
import type { BlockFormat } from './format.js';
import { asI8, f16At, f32At, fr, putF16, roundAway } from './half.js';
import { Q8K_BYTES, Q8K_QS, QK_K } from './q8k.js';

const TQ1_BYTES = 54;
const TQ1_QH = 48;
const TQ1_D = 52;
const TQ2_BYTES = 66;
const TQ2_D = 64;
const POW3 = [1, 3, 9, 27, 81, 243];

/** Trit n (0, 1, 2) of a packed TQ1_0 byte. */
function trit(byte: number, n: number): number {
  return (((byte * POW3[n]) & 0xff) * 3) >> 8;
}

/** The 256 trits (0..2) of the TQ1_0 block at byte o, in element order. */
function unpackTq1(b: Uint8Array, o: number, out: Int8Array): void {
  let y = 0;
  for (let n = 0; n < 5; n++) for (let m = 0; m < 32; m++) out[y++] = trit(b[o + m], n);
  for (let n = 0; n < 5; n++) for (let m = 0; m < 16; m++) out[y++] = trit(b[o + 32 + m], n);
  for (let n = 0; n < 4; n++) for (let j = 0; j < 4; j++) out[y++] = trit(b[o + TQ1_QH + j], n);
}

const trits = new Int8Array(QK_K);

function dequantizeTq1(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += TQ1_BYTES) {
    const d = f16At(src, o + TQ1_D);
    unpackTq1(src, o, trits);
    for (let j = 0; j < QK_K; j++) dst[i + j] = fr((trits[j] - 1) * d);
  }
}

function absMax(x: Float32Array, from: number, n: number): number {
  let amax = 0;
  for (let j = from; j < from + n; j++) amax = Math.max(amax, Math.abs(x[j]));
  return amax;
}

/** Pack `count` trits into a byte value (first most significant), times 3^pad, as a ceil fraction of 243. */
function packTrits(x: Float32Array, id: number, idx: (k: number) => number, count: number, pad: number): number {
  let q = 0;
  for (let k = 0; k < count; k++) q = q * 3 + roundAway(fr(x[idx(k)] * id)) + 1;
  for (let k = 0; k < pad; k++) q *= 3;
  return Math.floor(((q & 0xff) * 256 + 242) / 243) & 0xff;
}

function quantizeTq1(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += TQ1_BYTES) {
    const d = absMax(x, i, QK_K);
    const id = d ? fr(1 / d) : 0;
    putF16(dst, o + TQ1_D, d);
    for (let m = 0; m < 32; m++) dst[o + m] = packTrits(x, id, (k) => i + m + 32 * k, 5, 0);
    for (let m = 0; m < 16; m++) dst[o + 32 + m] = packTrits(x, id, (k) => i + 160 + m + 16 * k, 5, 0);
    for (let j = 0; j < 4; j++) dst[o + TQ1_QH + j] = packTrits(x, id, (k) => i + 240 + j + 4 * k, 4, 1);
  }
}

/** ggml_vec_dot_tq1_0_q8_K_generic: the trits in element order meet q8 in element order. */
function vecDotTq1(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK_K, p += TQ1_BYTES, q += Q8K_BYTES) {
    unpackTq1(w, p, trits);
    let sum = 0;
    for (let j = 0; j < QK_K; j++) sum += (trits[j] - 1) * a8[q + Q8K_QS + j];
    sumf = fr(sumf + fr(sum * fr(f16At(w, p + TQ1_D) * f32At(a, q))));
  }
  return sumf;
}

export const TQ1_0_FORMAT: BlockFormat = {
  type: GgmlType.TQ1_0, dequantize: dequantizeTq1, quantize: quantizeTq1, vecDotType: GgmlType.Q8_K, vecDot: vecDotTq1,
};

// ---------------------------------------------------------------------------------------------
// TQ2_0

function dequantizeTq2(src: Uint8Array, off: number, dst: Float32Array, n: number): void {
  let y = 0;
  for (let o = off; y < n; o += TQ2_BYTES) {
    const d = f16At(src, o + TQ2_D);
    for (let c = 0; c < 2; c++) {
      for (let l = 0; l < 4; l++) {
        for (let m = 0; m < 32; m++) dst[y++] = fr((((src[o + 32 * c + m] >> (2 * l)) & 3) - 1) * d);
      }
    }
  }
}

function quantizeTq2(x: Float32Array, dst: Uint8Array, off: number, n: number): void {
  for (let i = 0, o = off; i < n; i += QK_K, o += TQ2_BYTES) {
    const d = absMax(x, i, QK_K);
    const id = d ? fr(1 / d) : 0;
    putF16(dst, o + TQ2_D, d);
    for (let c = 0; c < 2; c++) {
      for (let m = 0; m < 32; m++) {
        let q = 0;
        for (let l = 0; l < 4; l++) q += ((roundAway(fr(x[i + 128 * c + 32 * l + m] * id)) + 1) & 3) << (2 * l);
        dst[o + 32 * c + m] = q;
      }
    }
  }
}

/** ggml_vec_dot_tq2_0_q8_K_generic. */
function vecDotTq2(n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number): number {
  const a8 = asI8(a);
  let sumf = 0;
  for (let i = 0, p = wOff, q = aOff; i < n; i += QK_K, p += TQ2_BYTES, q += Q8K_BYTES) {
    let sumi = 0;
    for (let c = 0; c < 2; c++) {
      for (let l = 0; l < 4; l++) {
        for (let m = 0; m < 32; m++) sumi += a8[q + Q8K_QS + 128 * c + 32 * l + m] * (((w[p + 32 * c + m] >> (2 * l)) & 3) - 1);
      }
    }
    const d = fr(f32At(a, q) * f16At(w, p + TQ2_D));
    sumf = fr(sumf + fr(sumi * d));
  }
  return sumf;
}

export const TQ2_0_FORMAT: BlockFormat = {
  type: GgmlType.TQ2_0, dequantize: dequantizeTq2, quantize: quantizeTq2, vecDotType: GgmlType.Q8_K, vecDot: vecDotTq2,
};
