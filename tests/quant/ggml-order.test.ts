// The K-quant dot products must round exactly like ggml's scalar code (the WebAssembly kernels are
// checked against them). Here ggml-cpu/quants.c ggml_vec_dot_q{3,4,5,6}_K_q8_K_generic is
// transcribed line by line (aux8 → aux16 → aux32 lanes → sums[8]) with Math.fround for each float
// operation, and compared bit for bit with the kernels, which are restructured for speed.
import { describe, expect, it } from 'vitest';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { f16ToF32, quantizeActivation, vecDot } from '../../src/engine/quant/index.js';
import { COLS, fixtureBytes, ROWS } from './fixture.js';

const fr = Math.fround;
const h = (b: Uint8Array, o: number) => f16ToF32(b[o] | (b[o + 1] << 8));
const i8 = (v: number) => (v << 24) >> 24;

/** Q8_K block accessors (block_q8_K: f32 d, i8 qs[256], i16 bsums[16]). */
function q8k(a: Uint8Array, q: number) {
  const dv = new DataView(a.buffer, a.byteOffset + q, 292);
  return { d: dv.getFloat32(0, true), qs: (j: number) => dv.getInt8(4 + j), bsums: (j: number) => dv.getInt16(260 + 2 * j, true) };
}

/** Scales/mins of Q4_K/Q5_K through the utmp/kmask shuffle, as the generic C does it. */
function kScales(w: Uint8Array, at: number): { scales: number[]; mins: number[] } {
  const u = new Uint32Array(4);
  const dv = new DataView(w.buffer, w.byteOffset + at, 12);
  u[0] = dv.getUint32(0, true);
  u[1] = dv.getUint32(4, true);
  u[2] = dv.getUint32(8, true);
  const kmask1 = 0x3f3f3f3f, kmask2 = 0x0f0f0f0f, kmask3 = 0x03030303;
  u[3] = ((u[2] >>> 4) & kmask2) | (((u[1] >>> 6) & kmask3) << 4);
  const uaux = u[1] & kmask1;
  u[1] = (u[2] & kmask2) | (((u[0] >>> 6) & kmask3) << 4);
  u[2] = uaux;
  u[0] &= kmask1;
  const b = new Uint8Array(u.buffer);
  return { scales: Array.from(b.subarray(0, 8)), mins: Array.from(b.subarray(8, 16)) };
}

function genericQ4Q5(five: boolean, n: number, w: Uint8Array, wo: number, a: Uint8Array): number {
  const bytes = five ? 176 : 144;
  const sums = new Array<number>(8).fill(0);
  let sumf = 0;
  for (let i = 0; i < n / 256; i++) {
    const x = wo + i * bytes;
    const y = q8k(a, i * 292);
    const aux8 = new Int8Array(256);
    let q4 = x + (five ? 48 : 16);
    let m = 1;
    let ai = 0;
    for (let j = 0; j < 4; j++) {
      for (let l = 0; l < 32; l++) aux8[ai + l] = w[q4 + l] & 0xf;
      if (five) for (let l = 0; l < 32; l++) aux8[ai + l] += w[x + 16 + l] & m ? 16 : 0;
      ai += 32; m <<= 1;
      for (let l = 0; l < 32; l++) aux8[ai + l] = w[q4 + l] >> 4;
      if (five) for (let l = 0; l < 32; l++) aux8[ai + l] += w[x + 16 + l] & m ? 16 : 0;
      ai += 32; m <<= 1; q4 += 32;
    }
    const { scales, mins } = kScales(w, x + 4);
    let sumi = 0;
    for (let j = 0; j < 16; j++) sumi += y.bsums(j) * mins[j >> 1];
    const aux32 = new Int32Array(8);
    const aux16 = new Int16Array(8);
    let q8 = 0;
    ai = 0;
    for (let j = 0; j < 8; j++) {
      const scale = scales[j];
      for (let g = 0; g < 4; g++) {
        for (let l = 0; l < 8; l++) aux16[l] = y.qs(q8 + l) * aux8[ai + l];
        for (let l = 0; l < 8; l++) aux32[l] += scale * aux16[l];
        q8 += 8; ai += 8;
      }
    }
    const d = fr(h(w, x) * y.d);
    for (let l = 0; l < 8; l++) sums[l] = fr(sums[l] + fr(d * aux32[l]));
    const dmin = fr(h(w, x + 2) * y.d);
    sumf = fr(sumf - fr(dmin * sumi));
  }
  for (let l = 0; l < 8; l++) sumf = fr(sumf + sums[l]);
  return sumf;
}

function genericQ6(n: number, w: Uint8Array, wo: number, a: Uint8Array): number {
  const sums = new Array<number>(8).fill(0);
  for (let i = 0; i < n / 256; i++) {
    const x = wo + i * 210;
    const y = q8k(a, i * 292);
    const aux8 = new Int8Array(256);
    let q4 = x, qh = x + 128, ai = 0;
    for (let j = 0; j < 256; j += 128) {
      for (let l = 0; l < 32; l++) {
        aux8[ai + l] = ((w[q4 + l] & 0xf) | (((w[qh + l] >> 0) & 3) << 4)) - 32;
        aux8[ai + l + 32] = ((w[q4 + l + 32] & 0xf) | (((w[qh + l] >> 2) & 3) << 4)) - 32;
        aux8[ai + l + 64] = ((w[q4 + l] >> 4) | (((w[qh + l] >> 4) & 3) << 4)) - 32;
        aux8[ai + l + 96] = ((w[q4 + l + 32] >> 4) | (((w[qh + l] >> 6) & 3) << 4)) - 32;
      }
      ai += 128; q4 += 64; qh += 32;
    }
    const aux32 = new Int32Array(8);
    const aux16 = new Int16Array(8);
    let q8 = 0;
    ai = 0;
    for (let j = 0; j < 16; j++) {
      const scale = i8(w[x + 192 + j]);
      for (let g = 0; g < 2; g++) {
        for (let l = 0; l < 8; l++) aux16[l] = y.qs(q8 + l) * aux8[ai + l];
        for (let l = 0; l < 8; l++) aux32[l] += scale * aux16[l];
        q8 += 8; ai += 8;
      }
    }
    const d = fr(h(w, x + 208) * y.d);
    for (let l = 0; l < 8; l++) sums[l] = fr(sums[l] + fr(d * aux32[l]));
  }
  let sumf = 0;
  for (let l = 0; l < 8; l++) sumf = fr(sumf + sums[l]);
  return sumf;
}

function genericQ3(n: number, w: Uint8Array, wo: number, a: Uint8Array): number {
  const sums = new Array<number>(8).fill(0);
  for (let i = 0; i < n / 256; i++) {
    const x = wo + i * 110;
    const y = q8k(a, i * 292);
    const aux8 = new Int8Array(256);
    let q3 = x + 32, ai = 0, m = 1;
    for (let j = 0; j < 256; j += 128) {
      for (let s = 0; s < 8; s += 2) {
        for (let l = 0; l < 32; l++) aux8[ai + l] = (w[q3 + l] >> s) & 3;
        for (let l = 0; l < 32; l++) aux8[ai + l] -= w[x + l] & m ? 0 : 4;
        ai += 32; m <<= 1;
      }
      q3 += 32;
    }
    const u = new Uint32Array(4);
    const dv = new DataView(w.buffer, w.byteOffset + x + 96, 12);
    u[0] = dv.getUint32(0, true); u[1] = dv.getUint32(4, true); u[2] = dv.getUint32(8, true);
    const kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f, tmp = u[2];
    u[2] = ((u[0] >>> 4) & kmask2) | (((tmp >>> 4) & kmask1) << 4);
    u[3] = ((u[1] >>> 4) & kmask2) | (((tmp >>> 6) & kmask1) << 4);
    u[0] = (u[0] & kmask2) | (((tmp >>> 0) & kmask1) << 4);
    u[1] = (u[1] & kmask2) | (((tmp >>> 2) & kmask1) << 4);
    const scales = new Int8Array(u.buffer);
    const aux32 = new Int32Array(8);
    const aux16 = new Int16Array(8);
    let q8 = 0;
    ai = 0;
    for (let j = 0; j < 16; j++) {
      for (let g = 0; g < 2; g++) {
        for (let l = 0; l < 8; l++) aux16[l] = y.qs(q8 + l) * aux8[ai + l];
        for (let l = 0; l < 8; l++) aux32[l] += (scales[j] - 32) * aux16[l];
        q8 += 8; ai += 8;
      }
    }
    const d = fr(h(w, x + 108) * y.d);
    for (let l = 0; l < 8; l++) sums[l] = fr(sums[l] + fr(d * aux32[l]));
  }
  let sumf = 0;
  for (let l = 0; l < 8; l++) sumf = fr(sumf + sums[l]);
  return sumf;
}

function activation(seed: number): Float32Array {
  const x = new Float32Array(COLS);
  let s = seed;
  for (let i = 0; i < COLS; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    x[i] = (s / 2 ** 32 - 0.5) * (i % 5 === 0 ? 30 : 2);
  }
  return x;
}

const CASES: [string, number, (n: number, w: Uint8Array, wo: number, a: Uint8Array) => number][] = [
  ['q3_K', GgmlType.Q3_K, genericQ3],
  ['q4_K', GgmlType.Q4_K, (n, w, wo, a) => genericQ4Q5(false, n, w, wo, a)],
  ['q5_K', GgmlType.Q5_K, (n, w, wo, a) => genericQ4Q5(true, n, w, wo, a)],
  ['q6_K', GgmlType.Q6_K, genericQ6],
];

describe('K-quant dots round exactly as ggml\'s generic C', () => {
  for (const [name, type, generic] of CASES) {
    it(`${name}: bit-identical to the line-by-line transcription`, () => {
      const w = fixtureBytes(`q.${name}`);
      const rowBytes = w.length / ROWS;
      for (const seed of [1, 2, 3, 4]) {
        const act = quantizeActivation(type, activation(seed)).data;
        for (let r = 0; r < ROWS; r++) {
          expect(Object.is(vecDot(type, w, r * rowBytes, act, 0, COLS), generic(COLS, w, r * rowBytes, act))).toBe(true);
        }
      }
    });
  }
});
