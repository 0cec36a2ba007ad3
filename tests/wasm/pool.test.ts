// PoolBackend splits rows across worker threads; every result must equal the single-thread
// WasmBackend's bit for bit (same kernels on the same rows), for matvec, matmul and getRow, with
// rows that do not divide evenly and with fewer rows than threads.
import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { canQuantize } from '../../src/engine/quant/index.js';
import { fillFrom, quantisedWeights, randomBlocks, randomFloats } from './gen.js';

describe('PoolBackend', () => {
  const single = new WasmBackend({ simd: 'simd' });
  const pool = new PoolBackend({ simd: 'simd', threads: 3 });
  afterAll(() => pool.dispose());

  it('reports its threads and name', () => {
    expect(pool.threads).toBe(3);
    expect(pool.name).toBe('wasm-simd-pool');
  });

  const cases: [string, number, number, number][] = [
    ['Q8_0', GgmlType.Q8_0, 37, 352],
    ['Q4_0', GgmlType.Q4_0, 43, 96], // slices of 16, 16, 11 rows (whole groups of four, then the tail)
    ['Q4_K', GgmlType.Q4_K, 64, 512],
    ['Q6_K', GgmlType.Q6_K, 2, 256], // fewer rows than threads
    ['IQ3_S', GgmlType.IQ3_S, 9, 512], // the i-quants: random blocks (no quantiser yet)
    ['IQ1_M', GgmlType.IQ1_M, 6, 256],
    ['F16', GgmlType.F16, 11, 37],
    ['F32', GgmlType.F32, 5, 100],
  ];
  for (const [name, type, rows, cols] of cases) {
    it(`${name} [${cols}, ${rows}]: matvec, matmul and getRow equal WasmBackend exactly`, () => {
      const data = type === GgmlType.F16 || type === GgmlType.F32 || !canQuantize(type) ? randomBlocks(type, rows, cols, 5) : quantisedWeights(type, rows, cols, 5);
      const spec = { name, type, rows, cols };
      const a = single.addWeight(spec, fillFrom(data));
      const b = pool.addWeight(spec, fillFrom(data));
      for (const n of [1, 4]) {
        const x = randomFloats(n * cols, 7 + n);
        const o1 = new Float32Array(n * rows).fill(NaN);
        const o2 = new Float32Array(n * rows).fill(NaN);
        if (n === 1) {
          single.matvec(o1, a, x);
          pool.matvec(o2, b, x);
        } else {
          single.matmul(o1, a, x, n);
          pool.matmul(o2, b, x, n);
        }
        expect(o2.some(Number.isNaN)).toBe(false);
        expect(o2).toEqual(o1);
      }
      const r1 = new Float32Array(cols);
      const r2 = new Float32Array(cols);
      for (let r = 0; r < rows; r++) {
        single.getRow(r1, a, r);
        pool.getRow(r2, b, r);
        expect(r2).toEqual(r1);
      }
    });
  }

  it('counts the weight bytes it holds: the single-thread backend\'s, plus the rows two threads share', () => {
    // (only Q4_K [512, 64] has enough rows for bands at 3 threads: 16 blocks of 4 rows, an eighth
    // over two boundaries rounds to one block per band, two bands of 4 rows of 2 × 144 bytes; the
    // others split as they would without bands)
    expect(pool.weightBytes()).toBe(single.weightBytes() + 2 * 4 * 288);
  });

  it('a disposed pool refuses work with a clear error', () => {
    const p = new PoolBackend({ simd: 'simd', threads: 2 });
    const h = p.addWeight({ name: 'w', type: GgmlType.F32, rows: 4, cols: 8 }, (d) => d.fill(0));
    p.dispose();
    expect(() => p.matvec(new Float32Array(4), h, new Float32Array(8))).toThrow(/disposed/);
  });

  it('one thread runs everything on the calling thread', () => {
    const p = new PoolBackend({ simd: 'simd', threads: 1 });
    const data = quantisedWeights(GgmlType.Q8_0, 3, 64, 9);
    const h = p.addWeight({ name: 'w', type: GgmlType.Q8_0, rows: 3, cols: 64 }, fillFrom(data));
    const a = single.addWeight({ name: 'w', type: GgmlType.Q8_0, rows: 3, cols: 64 }, fillFrom(data));
    const x = randomFloats(64, 3);
    const o1 = new Float32Array(3);
    const o2 = new Float32Array(3);
    single.matvec(o1, a, x);
    p.matvec(o2, h, x);
    expect(o2).toEqual(o1);
    p.dispose();
  });
});
