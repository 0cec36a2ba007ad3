// PoolBackend.matmulShared with biases: for one token each thread adds the biases to its own rows
// (copies in its memory); for a batch they are added after the gather. Either way the outputs must
// be the single-thread backend's products plus the biases (ops.ts addInto), bit for bit: the same
// f32 additions. Shapes as qwen2's q, k, v (rows 896/128/128 scaled down, odd counts included).
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

describe('PoolBackend.matmulShared with biases', () => {
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
});
