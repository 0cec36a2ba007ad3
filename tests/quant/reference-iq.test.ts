// quant-reference-iq.gguf: ggml's blocks (q.*) and ggml's own dequantisation of them (deq.*) for all
// 24 types llama.cpp's CPU backend quantises, the i-quants made with an importance matrix. Every
// deq.* must be reproduced bit for bit; and the fused dots of the i-quants must match dequantise-
// then-dot against the same Q8_K activation up to float rounding (the block sums are exact integers).
import { describe, expect, it } from 'vitest';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeRow, quantizeActivation, vecDot } from '../../src/engine/quant/index.js';
import { COLS, fixtureBytes, fixtureF32, fixtureTypes, QUANT_REFERENCE_IQ, ROWS } from './fixture.js';

const N = ROWS * COLS;
const F = QUANT_REFERENCE_IQ;
const IQ_TYPES = ['iq1_s', 'iq1_m', 'iq2_xxs', 'iq2_xs', 'iq2_s', 'iq3_xxs', 'iq3_s'];

function bitDiffs(a: Float32Array, b: Float32Array): number[] {
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  const out: number[] = [];
  for (let i = 0; i < a.length; i++) if (ua[i] !== ub[i]) out.push(i);
  return out;
}

describe('quant-reference-iq.gguf (ggml, 24 types)', () => {
  const types = fixtureTypes(F);

  it('holds the 24 types, the seven i-quants among them', () => {
    expect(types.length).toBe(24);
    for (const t of IQ_TYPES) expect(types.map(([n]) => n)).toContain(t);
  });

  for (const [name, type] of types) {
    it(`${name}: dequantisation equals ggml's deq.${name} bit for bit`, () => {
      const out = new Float32Array(N);
      dequantizeRow(type, fixtureBytes(`q.${name}`, F), 0, out, N);
      expect(bitDiffs(out, fixtureF32(`deq.${name}`, F))).toEqual([]);
    });
  }

  // (Not IQ3_S: ggml's IQ3_S blocks in this fixture sit further from the source than its IQ1_S ones,
  // 3394 against 1572 summed squares; the test above shows they are ggml's blocks all the same.)
  it('the i-quants\' error against the source falls with their bits', () => {
    const src = fixtureF32('source', F);
    const err = (name: string) => {
      const d = fixtureF32(`deq.${name}`, F);
      let s = 0;
      for (let i = 0; i < N; i++) s += (d[i] - src[i]) ** 2;
      return s;
    };
    expect(err('iq3_xxs')).toBeLessThan(err('iq2_s'));
    expect(err('iq2_s')).toBeLessThan(err('iq2_xs'));
    expect(err('iq2_xs')).toBeLessThan(err('iq2_xxs'));
    expect(err('iq2_xxs')).toBeLessThan(err('iq1_m'));
    expect(err('iq1_m')).toBeLessThan(err('iq1_s'));
  });

  for (const name of IQ_TYPES) {
    it(`${name}: the fused Q8_K dot equals ggml's dequantised weights · the Q8_K activation`, () => {
      const type = types.find(([n]) => n === name)![1];
      const w = fixtureBytes(`q.${name}`, F);
      const deq = fixtureF32(`deq.${name}`, F);
      const rowBytes = w.length / ROWS;
      const x = new Float32Array(COLS);
      for (let i = 0; i < COLS; i++) x[i] = Math.sin(i * 0.37) * (1 + (i % 5));
      const act = quantizeActivation(type, x);
      expect(act.type).toBe(GgmlType.Q8_K);
      const xHat = new Float32Array(COLS);
      dequantizeRow(GgmlType.Q8_K, act.data, 0, xHat, COLS);
      for (let r = 0; r < ROWS; r++) {
        let ref = 0;
        let mag = 0;
        for (let i = 0; i < COLS; i++) {
          ref += deq[r * COLS + i] * xHat[i];
          mag += Math.abs(deq[r * COLS + i] * xHat[i]);
        }
        const got = vecDot(type, w, r * rowBytes, act.data, 0, COLS);
        expect(Math.abs(got - ref)).toBeLessThanOrEqual(mag * 2 ** -20);
      }
    });
  }
});
