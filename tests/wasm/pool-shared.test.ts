// PoolBackend.matmulShared runs several weights on one input in one round trip (q/k/v, gate/up):
// each output must equal the single-thread WasmBackend's matvec / matmul of that weight exactly,
// with mixed activation kinds (q8_K and q8_0), a weight with fewer rows than threads, and more
// weights than one round trip takes (CTRL.MAXJOBS).

import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import type { WeightHandle } from '../../src/engine/backend/types.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { fillFrom, quantisedWeights, randomFloats } from './gen.js';

describe('PoolBackend.matmulShared', () => {
  const single = new WasmBackend({ simd: 'simd' });
  const pool = new PoolBackend({ simd: 'simd', threads: 3 });
  afterAll(() => pool.dispose());

  it('equals WasmBackend weight by weight, for one token and a batch', () => {
    const cols = 512;
    const shapes: [number, number][] = [[GgmlType.Q4_K, 37], [GgmlType.Q6_K, 2], [GgmlType.Q8_0, 64], [GgmlType.Q5_0, 9], [GgmlType.Q4_K, 70]];
    const a: WeightHandle[] = [];
    const b: WeightHandle[] = [];
    for (const [i, [type, rows]] of shapes.entries()) {
      const data = quantisedWeights(type, rows, cols, 20 + i);
      const spec = { name: `w${i}`, type, rows, cols };
      a.push(single.addWeight(spec, fillFrom(data)));
      b.push(pool.addWeight(spec, fillFrom(data)));
    }
    for (const n of [1, 5]) {
      const x = randomFloats(n * cols, 30 + n);
      const outs = shapes.map(([, rows]) => new Float32Array(n * rows).fill(NaN));
      pool.matmulShared(outs, b, x, n);
      shapes.forEach(([, rows], i) => {
        const want = new Float32Array(n * rows);
        single.matmul(want, a[i], x, n);
        expect(outs[i]).toEqual(want);
      });
    }
  });

  it('rejects weights that do not take the same input', () => {
    const w1 = pool.addWeight({ name: 'a', type: GgmlType.Q8_0, rows: 4, cols: 64 }, fillFrom(quantisedWeights(GgmlType.Q8_0, 4, 64, 1)));
    const w2 = pool.addWeight({ name: 'b', type: GgmlType.Q8_0, rows: 4, cols: 96 }, fillFrom(quantisedWeights(GgmlType.Q8_0, 4, 96, 2)));
    expect(() => pool.matmulShared([new Float32Array(4), new Float32Array(4)], [w1, w2], new Float32Array(96), 1)).toThrow(/same input/);
  });
});
