// What the pool adds on its threads instead of in a pass of its own, which must be the same f32
// additions, bit for bit: matmulShared's biases (for one token each thread adds them to its own
// rows, from copies in its memory; for a batch after the gather) against the single-thread
// backend's products plus ops.ts addInto; matvecAdd (the residual) against matvec then addInto.
// Shapes as qwen2's q, k, v scaled down (odd row counts included).
import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import type { WeightHandle } from '../../src/engine/backend/types.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { addInto } from '../../src/engine/model/ops.js';
import { quantizeRows } from '../../src/engine/quant/index.js';
import { createRng } from '../../src/engine/sample/index.js';

const cols = 96;
const shapes = [67, 9, 9, 2]; // the fourth only in the four-weight case (no fold: more than three jobs)
const rnd = createRng(21);
const data = shapes.map((rows) => quantizeRows(GgmlType.Q8_0, Float32Array.from({ length: rows * cols }, () => rnd() - 0.5), rows, cols));
// biases with −0 and values that cancel products exactly somewhere
const biases = shapes.map((rows) => Float32Array.from({ length: rows }, (_, i) => (i % 5 === 0 ? -0 : Math.fround(rnd() * 4 - 2))));
const load = (be: WasmBackend | PoolBackend) => shapes.map((rows, i) => be.addWeight({ name: `w${i}`, type: GgmlType.Q8_0, rows, cols }, (d, off) => d.set(data[i].subarray(off, off + d.length))));

describe("the pool's additions on its threads: matmulShared's biases, matvecAdd", () => {
  const pools: PoolBackend[] = [];
  afterAll(() => pools.forEach((p) => p.dispose()));

  it.each([1, 2, 3])('%i threads: products plus biases bit for bit, one token and a batch, three and four weights', (threads) => {
    const one = new WasmBackend();
    const ws1 = load(one);
    const pool = new PoolBackend({ threads });
    pools.push(pool);
    const wsP = load(pool);
    const a = pool.kernels.arena;
    for (const n of [1, 3, 1]) {
      for (const count of [3, 4, 3]) {
        const x = Float32Array.from({ length: n * cols }, () => rnd() * 2 - 1);
        const want = shapes.slice(0, count).map((rows, i) => {
          const o = new Float32Array(n * rows);
          one.matmul(o, ws1[i], x, n);
          for (let t = 0; t < n; t++) addInto(o, biases[i], rows, t * rows);
          return o;
        });
        // outputs in the pool's memory (as the forward pass has them) and outside it
        for (const inKernel of [true, false]) {
          const outs = shapes.slice(0, count).map((rows) => (inKernel ? a.f32(a.alloc(n * rows * 4), n * rows) : new Float32Array(n * rows)));
          pool.matmulShared(outs, wsP.slice(0, count) as WeightHandle[], x, n, biases.slice(0, count));
          for (let i = 0; i < count; i++) expect(new Uint32Array(outs[i].slice().buffer), `n ${n}, weight ${i}`).toEqual(new Uint32Array(want[i].buffer));
        }
      }
    }
    one.dispose();
  });

  it.each([1, 2, 3])('%i threads: matvecAdd adds the product into out as matvec then addInto would', (threads) => {
    const one = new WasmBackend();
    const w1 = load(one)[0];
    const pool = new PoolBackend({ threads });
    pools.push(pool);
    const wP = load(pool)[0];
    const a = pool.kernels.arena;
    const rows = shapes[0];
    for (const inKernel of [true, false]) {
      const x = Float32Array.from({ length: cols }, () => rnd() * 2 - 1);
      const base = Float32Array.from({ length: rows }, (_, i) => (i % 7 === 0 ? -0 : rnd() * 8 - 4));
      const got = inKernel ? a.f32(a.alloc(rows * 4), rows) : new Float32Array(rows);
      got.set(base);
      pool.matvecAdd(got, wP, x);
      const ref = base.slice(); // the residual: x += the product
      const prod = new Float32Array(rows);
      one.matvec(prod, w1, x);
      addInto(ref, prod, rows);
      expect(new Uint32Array(got.slice().buffer), `in kernel memory: ${inKernel}`).toEqual(new Uint32Array(ref.buffer));
    }
    one.dispose();
  });
});
