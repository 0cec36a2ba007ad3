// Partial selection against the scalar reference (full sort), including ties and -inf.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { selectTopK, selectTopKReference } from '../../src/engine/sample/index.js';

describe('selectTopK', () => {
  it('hand example: ties go to the lower index', () => {
    const v = new Float32Array([1, 3, 3, -Infinity, 2, 3]);
    const out = new Int32Array(6);
    expect(selectTopK(out, v, 6, 4)).toBe(4);
    expect([...out.slice(0, 4)]).toEqual([1, 2, 5, 4]);
    expect(selectTopK(out, v, 6, 10)).toBe(6);
    expect([...out]).toEqual([1, 2, 5, 4, 0, 3]);
  });

  it('agrees with sorting everything', () => {
    const value = fc.oneof(fc.integer({ min: -4, max: 4 }).map((x) => x / 2), fc.constant(-Infinity), fc.float({ noNaN: true }));
    fc.assert(fc.property(fc.array(value, { minLength: 1, maxLength: 300 }), fc.integer({ min: 0, max: 320 }), (arr, k) => {
      const v = new Float32Array(arr);
      const out = new Int32Array(v.length);
      const got = selectTopK(out, v, v.length, k);
      expect([...out.slice(0, got)]).toEqual(selectTopKReference(v, v.length, k));
    }), { numRuns: 300 });
  });
});
