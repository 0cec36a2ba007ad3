// The table-based normaliser and the fused top-k against the straightforward computations:
// one Math.exp per logit, and sorting every index.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPenalties, createRng, DEFAULT_SAMPLING, expSumAndTop, expSumBelowMax, expSumBelowMaxReference, FUSED_TOP_MAX, Sampler, selectTopKReference } from '../../src/engine/sample/index.js';

function maxOf(v: Float32Array): number {
  let m = -Infinity;
  for (const x of v) if (x > m) m = x;
  return m;
}

function randomLogits(n: number, seed: number, spread: number): Float32Array {
  const rnd = createRng(seed);
  return Float32Array.from({ length: n }, () => (rnd() + rnd() + rnd() - 1.5) * spread);
}

describe('expSumBelowMax', () => {
  it('hand example: [2, 1, 0, −1, −2] → 1 + e^-1 + e^-2 + e^-3 + e^-4 = 1.5713174', () => {
    const l = new Float32Array([2, 1, 0, -1, -2]);
    expect(expSumBelowMax(l, 5, 2)).toBeCloseTo(1.5713174, 7);
  });

  it('−inf counts as 0, values more than 32 below the max are negligible', () => {
    expect(expSumBelowMax(new Float32Array([0, -Infinity, -40, -1e30]), 4, 0)).toBe(1);
  });

  it('agrees with one Math.exp per value within 1e-8 relative', () => {
    for (const [seed, spread] of [[1, 0.01], [2, 1], [3, 6], [4, 20], [5, 60]]) {
      const l = randomLogits(20000, seed, spread);
      const max = maxOf(l);
      const want = expSumBelowMaxReference(l, l.length, max);
      expect(Math.abs(expSumBelowMax(l, l.length, max) - want) / want).toBeLessThan(1e-8);
    }
  });

  it('agrees on arbitrary floats (fast-check)', () => {
    const value = fc.oneof(fc.float({ min: -100, max: 100, noNaN: true }), fc.constant(-Infinity));
    fc.assert(fc.property(fc.array(value, { minLength: 1, maxLength: 300 }), (arr) => {
      const l = new Float32Array(arr);
      const max = maxOf(l);
      fc.pre(max > -Infinity);
      const want = expSumBelowMaxReference(l, l.length, max);
      expect(Math.abs(expSumBelowMax(l, l.length, max) - want) / want).toBeLessThan(1e-8);
    }), { numRuns: 300 });
  });
});

describe('expSumAndTop', () => {
  it('hand example: ties go to the lower index', () => {
    const v = new Float32Array([1, 3, 3, -Infinity, 2, 3]);
    const out = new Int32Array(6);
    expSumAndTop(out, v, 6, 3, 4);
    expect([...out.slice(0, 4)]).toEqual([1, 2, 5, 4]);
  });

  it('same indices as sorting everything, same sum as Math.exp (fast-check)', () => {
    const value = fc.oneof(fc.integer({ min: -4, max: 4 }).map((x) => x / 2), fc.constant(-Infinity), fc.float({ min: -50, max: 50, noNaN: true }));
    fc.assert(fc.property(fc.array(value, { minLength: 1, maxLength: 300 }), fc.integer({ min: 0, max: FUSED_TOP_MAX + 8 }), (arr, k) => {
      const v = new Float32Array(arr);
      const max = maxOf(v);
      fc.pre(max > -Infinity);
      const out = new Int32Array(v.length);
      const sum = expSumAndTop(out, v, v.length, max, k);
      const kept = Math.min(k, v.length, FUSED_TOP_MAX);
      expect([...out.slice(0, kept)]).toEqual(selectTopKReference(v, v.length, kept));
      const want = expSumBelowMaxReference(v, v.length, max);
      expect(Math.abs(sum - want) / want).toBeLessThan(1e-8);
    }), { numRuns: 300 });
  });
});

describe('the UI top-5 on a large vocabulary', () => {
  // Straightforward computation: penalties on a copy, softmax with one Math.exp per token, sort.
  function straightforward(logits: Float32Array, history: number[], repeat: number): { id: number; p: number }[] {
    const l = new Float32Array(logits);
    applyPenalties(l, history, 64, repeat, 0, 0);
    const max = maxOf(l);
    let sum = 0;
    for (const x of l) sum += Math.exp(x - max);
    return selectTopKReference(l, l.length, 5).map((id) => ({ id, p: Math.exp(l[id] - max) / sum }));
  }

  for (const [label, params] of [
    ['greedy', { temperature: 0 }],
    ['defaults', {}],
    ['top-k 100', { topK: 100 }],
    ['top-k off', { topK: 0, topP: 0.9 }],
  ] as const) {
    it(`${label}: ids equal, probabilities within 1e-6 relative`, () => {
      for (const spread of [2, 8, 30]) {
        const logits = randomLogits(30000, spread, spread);
        const history = Array.from({ length: 40 }, (_, i) => (i * 7919) % 30000);
        const s = new Sampler({ ...DEFAULT_SAMPLING, seed: 1, repeatPenalty: 1.3, ...params });
        const got = s.sample(logits, history).top;
        const want = straightforward(logits, history, 1.3);
        expect(got.map((t) => t.id)).toEqual(want.map((t) => t.id));
        got.forEach((t, i) => expect(Math.abs(t.p - want[i].p) / want[i].p).toBeLessThan(1e-6));
      }
    });
  }
});
