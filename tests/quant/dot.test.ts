// The fused dot products against dequantise-then-dot on ggml's reference weights. The fused path
// quantises the activation, so it may differ from the f32 dot by at most Σ|w|·|x̂ - x| (x̂ the
// dequantised activation) plus float rounding; and it must equal the dot of the dequantised weights
// with x̂ up to float rounding alone (the integer block arithmetic is exact). Q8_1 carries one more
// rounded quantity: s = d·Σq stored as half, which Q4_1/Q5_1 multiply by their block min m.
import { describe, expect, it } from 'vitest';
import { ModelError } from '../../src/shared/errors.js';
import { GgmlType, ggmlTypeName } from '../../src/engine/gguf/ggml-types.js';
import {
  dequantizeRow, f16ToF32, isSupportedType, matmul, matvec, quantizeActivation, vecDot, vecDotType, type QWeight,
} from '../../src/engine/quant/index.js';
import { COLS, fixtureBytes, fixtureF32, fixtureTypes, ROWS } from './fixture.js';

/** A deterministic activation with a spread of magnitudes and an outlier, like a hidden state. */
function activation(seed: number): Float32Array {
  const x = new Float32Array(COLS);
  let s = seed >>> 0;
  for (let i = 0; i < COLS; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    x[i] = ((s / 2 ** 32) * 2 - 1) * (1 + (i % 7));
  }
  x[37] = 40;
  return x;
}

// ggml-cpu.c type_traits_cpu, except F16/BF16: Pantheon keeps their activation in f32 (quant/float.ts).
const EXPECTED_VEC_DOT_TYPE: Record<string, number> = {
  f16: GgmlType.F32, bf16: GgmlType.F32, q4_0: GgmlType.Q8_0, q5_0: GgmlType.Q8_0, q8_0: GgmlType.Q8_0, iq4_nl: GgmlType.Q8_0,
  q4_1: GgmlType.Q8_1, q5_1: GgmlType.Q8_1, q2_K: GgmlType.Q8_K, q3_K: GgmlType.Q8_K, q4_K: GgmlType.Q8_K, q5_K: GgmlType.Q8_K,
  q6_K: GgmlType.Q8_K, iq4_xs: GgmlType.Q8_K, tq1_0: GgmlType.Q8_K, tq2_0: GgmlType.Q8_K,
};

describe('fused vecDot against dequantise-then-dot', () => {
  for (const [name, type] of fixtureTypes()) {
    it(`${name}: activation in ${ggmlTypeName(EXPECTED_VEC_DOT_TYPE[name])}, error within the activation's quantisation error`, () => {
      expect(vecDotType(type)).toBe(EXPECTED_VEC_DOT_TYPE[name]);
      const wBytes = fixtureBytes(`q.${name}`);
      const wDeq = fixtureF32(`deq.${name}`); // ggml's own dequantisation
      const rowBytes = wBytes.length / ROWS;
      for (const seed of [1, 2, 3]) {
        const x = activation(seed);
        const act = quantizeActivation(type, x);
        expect(act.type).toBe(vecDotType(type));
        const xHat = new Float32Array(COLS);
        dequantizeRow(act.type, act.data, 0, xHat, COLS);
        for (let r = 0; r < ROWS; r++) {
          const w = wDeq.subarray(r * COLS, (r + 1) * COLS);
          let exact = 0;
          let withXHat = 0;
          let actErr = 0;
          let mag = 0;
          for (let i = 0; i < COLS; i++) {
            exact += w[i] * x[i];
            withXHat += w[i] * xHat[i];
            actErr += Math.abs(w[i]) * Math.abs(xHat[i] - x[i]);
            mag += Math.abs(w[i] * xHat[i]);
          }
          if (act.type === GgmlType.Q8_1) {
            // Block b: weights' min m_b (f16 at byte 2 of each 20/24-byte block) meets the
            // activation's stored s_b (f16 at byte 2 of each 36-byte block) instead of Σx̂_b.
            for (let b = 0; b < COLS / 32; b++) {
              const at = r * rowBytes + b * (rowBytes / (COLS / 32)) + 2;
              const m = f16ToF32(wBytes[at] | (wBytes[at + 1] << 8));
              const sB = f16ToF32(act.data[36 * b + 2] | (act.data[36 * b + 3] << 8));
              let sum = 0;
              for (let i = 32 * b; i < 32 * b + 32; i++) sum += xHat[i];
              withXHat += m * (sB - sum);
              actErr += Math.abs(m) * Math.abs(sB - sum);
            }
          }
          const fused = vecDot(type, wBytes, r * rowBytes, act.data, 0, COLS);
          const rounding = 1e-5 * mag; // float32 accumulation over 512 terms, with margin
          expect(Math.abs(fused - withXHat)).toBeLessThanOrEqual(rounding);
          expect(Math.abs(fused - exact)).toBeLessThanOrEqual(actErr + rounding);
        }
      }
    });
  }

  it('the Q8_K activation keeps ggml\'s invariants: max ↦ -127, bsums are the group sums', () => {
    const x = activation(9);
    const act = quantizeActivation(GgmlType.Q4_K, x).data;
    const dv = new DataView(act.buffer, act.byteOffset);
    const q = new Int8Array(act.buffer, act.byteOffset + 4, 256);
    // Largest magnitude is x[37] = 40: d = 40/-127, so q[37] = -127 and d·q reproduces 40.
    expect(q[37]).toBe(-127);
    expect(dv.getFloat32(0, true)).toBe(Math.fround(1 / Math.fround(-127 / 40)));
    for (let g = 0; g < 16; g++) {
      let s = 0;
      for (let l = 0; l < 16; l++) s += q[16 * g + l];
      expect(dv.getInt16(260 + 2 * g, true)).toBe(s);
    }
  });
});

describe('matvec and matmul', () => {
  for (const name of ['q4_0', 'q4_K', 'q6_K', 'f16', 'iq4_xs']) {
    it(`${name}: matvec row r equals vecDot of row r, and matmul equals matvec per activation`, () => {
      const type = fixtureTypes().find(([n]) => n === name)![1];
      const data = fixtureBytes(`q.${name}`);
      const w: QWeight = { data, type, rows: ROWS, cols: COLS, rowBytes: data.length / ROWS };
      const xs = [activation(4), activation(5), activation(6)];
      const single = xs.map((x) => {
        const out = new Float32Array(ROWS);
        matvec(out, w, x);
        const act = quantizeActivation(type, x);
        for (let r = 0; r < ROWS; r++) expect(out[r]).toBe(vecDot(type, data, r * w.rowBytes, act.data, 0, COLS));
        return out;
      });
      const batch = new Float32Array(3 * COLS);
      xs.forEach((x, t) => batch.set(x, t * COLS));
      const out = new Float32Array(3 * ROWS);
      matmul(out, w, batch, 3);
      for (let t = 0; t < 3; t++) expect(Array.from(out.subarray(t * ROWS, (t + 1) * ROWS))).toEqual(Array.from(single[t]));
    });
  }

  it('F16 and BF16 weights meet the activation unrounded (worked by hand)', () => {
    // x = 1 + 2^-12 is not a half (10-bit mantissa) nor a bfloat16 (7 bits): rounded first, it
    // would be 1 and the dot 16. Kept in f32, each product is exact and 16 of them sum to 16 + 2^-8.
    const x = new Float32Array(16).fill(1 + 2 ** -12);
    for (const [type, one] of [[GgmlType.F16, 0x3c00], [GgmlType.BF16, 0x3f80]] as const) {
      const data = new Uint8Array(2 * 16 * 2);
      for (let i = 0; i < 32; i++) [data[2 * i], data[2 * i + 1]] = [one & 0xff, one >> 8]; // W = all ones
      const w: QWeight = { data, type, rows: 2, cols: 16, rowBytes: 32 };
      const out = new Float32Array(2);
      matvec(out, w, x);
      expect(Array.from(out)).toEqual([16 + 2 ** -8, 16 + 2 ** -8]);
    }
  });

  it('F32 weights: the scalar ggml dot (float products summed in double)', () => {
    const src = fixtureF32('source');
    const w: QWeight = { data: new Uint8Array(src.buffer), type: GgmlType.F32, rows: ROWS, cols: COLS, rowBytes: COLS * 4 };
    const x = activation(7);
    const out = new Float32Array(ROWS);
    matvec(out, w, x);
    for (let r = 0; r < ROWS; r++) {
      let s = 0;
      for (let i = 0; i < COLS; i++) s += Math.fround(src[r * COLS + i] * x[i]);
      expect(out[r]).toBe(Math.fround(s));
    }
  });
});

describe('types the engine cannot compute', () => {
  for (const type of [GgmlType.I8, GgmlType.I16, GgmlType.I32]) {
    it(`${ggmlTypeName(type)}: dequantizeRow and matvec throw a ModelError naming the type`, () => {
      expect(isSupportedType(type)).toBe(false);
      const call = () => dequantizeRow(type, new Uint8Array(256), 0, new Float32Array(256), 256);
      expect(call).toThrow(ModelError);
      expect(call).toThrow(ggmlTypeName(type));
      const w: QWeight = { data: new Uint8Array(1024), type, rows: 1, cols: 256, rowBytes: 1024 };
      expect(() => matvec(new Float32Array(1), w, new Float32Array(256))).toThrow(ggmlTypeName(type));
    });
  }

  it('MXFP4 dequantises: e = 128 gives the half scale 2^0 = 1, so x is the (doubled E2M1) table value', () => {
    // e8m0 128 → 2^(128-128) = 1; codes 0..15 → kvalues_mxfp4 = 0,1,2,3,4,6,8,12,0,-1,…,-12.
    const block = new Uint8Array(17);
    block[0] = 128;
    for (let j = 0; j < 16; j++) block[1 + j] = j | ((15 - j) << 4);
    const out = new Float32Array(32);
    dequantizeRow(GgmlType.MXFP4, block, 0, out, 32);
    const table = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];
    expect(Array.from(out)).toEqual([...table, ...table.slice().reverse()]);
  });
});
