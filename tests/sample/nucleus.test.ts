// Whole-vocabulary top-p (binned) against the scalar reference: sort everything, cut the prefix.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NUCLEUS_BINS, nucleusCut, nucleusMass } from '../../src/engine/sample/index.js';

function reference(logits: Float32Array, topP: number): number[] {
  const n = logits.length;
  let max = -Infinity;
  for (const v of logits) max = Math.max(max, v);
  const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => (logits[b] - logits[a]) || (a - b));
  let total = 0;
  for (const v of logits) total += Math.exp(v - max);
  let cum = 0;
  for (let i = 0; i < n; i++) {
    cum += Math.exp(logits[idx[i]] - max);
    if (cum >= topP * total) return idx.slice(0, i + 1);
  }
  return idx;
}

function run(logits: Float32Array, topP: number): number[] {
  const n = logits.length;
  let max = -Infinity;
  for (const v of logits) max = Math.max(max, v);
  const mass = new Float64Array(NUCLEUS_BINS);
  const total = nucleusMass(mass, logits, n, max);
  const out = new Int32Array(n);
  const size = nucleusCut(out, new Int32Array(n), logits, n, max, mass, total, topP);
  return [...out.slice(0, size)];
}

describe('nucleusCut', () => {
  it('hand example: softmax [0.6364, 0.2341, 0.0861, 0.0317, 0.0117] of [2,1,0,-1,-2] shuffled', () => {
    const l = new Float32Array([0, -2, 2, -1, 1]); // ids by likelihood: 2, 4, 0, 3, 1
    expect(run(l, 0.9).sort()).toEqual([0, 2, 4]); // 0.6364 + 0.2341 + 0.0861 = 0.9567 ≥ 0.9
    expect(run(l, 0.8).sort()).toEqual([2, 4]); // 0.8705 ≥ 0.8
    expect(run(l, 0.5)).toEqual([2]);
  });

  it('a boundary in the last bin (deeper than 32 logits) sorts that bin; −inf is never needed', () => {
    // e^-33 ≈ 4.7e-15 and e^-33.5 ≈ 2.8e-15 still register next to 1 in a double sum.
    const l = new Float32Array([-33.5, 0, -Infinity, -33]);
    expect(run(l, 0.5)).toEqual([1]);
    expect(run(l, 1 - 5e-15)).toEqual([1, 3]); // 1 + 4.7e-15 reaches (1 + 7.5e-15)(1 − 5e-15)
    expect(run(l, 1 - 1e-15).sort()).toEqual([0, 1, 3]);
    expect(reference(l, 1 - 1e-15).sort()).toEqual([0, 1, 3]);
  });

  it('keeps the same set as sorting everything', () => {
    const value = fc.oneof(fc.integer({ min: -80, max: 40 }).map((x) => x / 4), fc.float({ min: -60, max: 10, noNaN: true }), fc.constant(-Infinity));
    fc.assert(fc.property(fc.array(value, { minLength: 1, maxLength: 400 }), fc.double({ min: 0.05, max: 0.999, noNaN: true }), (arr, topP) => {
      const l = new Float32Array(arr);
      fc.pre(l.some((v) => v > -Infinity));
      expect(run(l, topP).sort((a, b) => a - b)).toEqual(reference(l, topP).sort((a, b) => a - b));
    }), { numRuns: 400 });
  });
});
