// Q4_0 through the backends, which store it in the build's layout (layout.ts rowLayout; the relaxed
// build interleaves groups of four rows): WasmBackend and PoolBackend (2 and 3 threads, slices on
// multiples of four rows) give the scalar reference's matvec, matmul (gemm) and getRow bit for bit,
// tail rows and rows in a worker's memory included; and getRow reproduces ggml's own dequantisation
// (deq.q4_0 in quant-reference.gguf). The plain build always; the relaxed build where this Node
// runs it (Node 24: .ci/run's second part), counted as skipped elsewhere (builds.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import type { MatBackend } from '../../src/engine/backend/types.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeRow, matmul } from '../../src/engine/quant/index.js';
import { COLS, fixtureBytes, fixtureF32, ROWS } from '../quant/fixture.js';
import { bits } from './bits.js';
import { BUILDS, skipBuild } from './builds.js';
import { fillFrom, quantisedWeights, randomBlocks, randomFloats } from './gen.js';

const T = GgmlType.Q4_0;

for (const simd of BUILDS) describe.skipIf(skipBuild(simd))(`Q4_0 through the backends (${simd} build)`, () => {
  const backends: [string, MatBackend][] = [];
  beforeAll(() => {
    backends.push(['wasm', new WasmBackend({ simd })], ...[2, 3].map((t): [string, MatBackend] => [`pool ×${t}`, new PoolBackend({ simd, threads: t })]));
  });
  afterAll(() => backends.forEach(([, b]) => b.dispose?.()));

  // rows: one group and a tail; groups only; 899 = 224 groups + 3 (slices of 300, 300, 299 rows on 3 threads)
  for (const [rows, cols] of [[5, 96], [8, 352], [43, 96], [899, 896]]) {
    it(`${rows}×${cols}: matvec, matmul (n = 5) and every row's getRow equal the scalar reference`, () => {
      for (const data of [randomBlocks(T, rows, cols, rows + cols), quantisedWeights(T, rows, cols, rows * cols)]) {
        const rb = rowBytes(T, cols);
        const q = { type: T, rows, cols, rowBytes: rb, data };
        for (const [name, be] of backends) {
          const h = be.addWeight({ name: 'w', type: T, rows, cols }, fillFrom(data));
          for (const n of [1, 5]) {
            const x = randomFloats(n * cols, n + rows, 2);
            const want = new Float32Array(n * rows);
            matmul(want, q, x, n);
            const got = new Float32Array(n * rows);
            if (n === 1) be.matvec(got, h, x);
            else be.matmul(got, h, x, n);
            expect(bits(got), `${name} n=${n}`).toEqual(bits(want));
          }
          const row = new Float32Array(cols), ref = new Float32Array(cols);
          for (let r = 0; r < rows; r++) {
            be.getRow(row, h, r);
            dequantizeRow(T, data, r * rb, ref, cols);
            const [a, b] = [bits(row), bits(ref)];
            if (a.some((v, i) => v !== b[i])) expect.fail(`${name} getRow ${r}`);
          }
        }
      }
    });
  }

  it('getRow reproduces ggml\'s deq.q4_0 (quant-reference.gguf), on one thread and from workers', () => {
    const q = fixtureBytes('q.q4_0');
    const deq = fixtureF32('deq.q4_0');
    const out = new Float32Array(COLS);
    for (const [name, be] of backends) {
      const h = be.addWeight({ name: 'fixture', type: T, rows: ROWS, cols: COLS }, fillFrom(q));
      for (let r = 0; r < ROWS; r++) {
        be.getRow(out, h, r);
        expect(out, `${name} row ${r}`).toEqual(deq.subarray(r * COLS, (r + 1) * COLS));
      }
    }
  });
});
