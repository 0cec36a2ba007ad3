// The capabilities a backend without threads gets from backend/serial.ts (matmulShared, matvecAdd,
// matmulGated, matvecTop, splitAttention) must give the pool's numbers bit for bit: the pool does
// the same f32 additions and SiLU on its threads (assembly/ffn.ts swiglu), the single-thread wasm
// backend in TypeScript after its plain products.
import { afterAll, describe, expect, it } from 'vitest';
import { createLogitStats } from '../../src/engine/backend/logit-stats.js';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { ScalarBackend } from '../../src/engine/backend/scalar.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../../src/engine/quant/index.js';
import { createRng } from '../../src/engine/sample/index.js';

const cols = 64;
const rowsOf = [48, 48, 5];
const rnd = createRng(7);
const data = rowsOf.map((rows) => quantizeRows(GgmlType.Q8_0, Float32Array.from({ length: rows * cols }, () => rnd() * 2 - 1), rows, cols));
const biases = rowsOf.map((rows) => Float32Array.from({ length: rows }, (_, i) => (i % 4 === 0 ? -0 : Math.fround(rnd() - 0.5))));
const load = (be: WasmBackend | PoolBackend) => rowsOf.map((rows, i) => be.addWeight({ name: `w${i}`, type: GgmlType.Q8_0, rows, cols }, (d, off) => d.set(data[i].subarray(off, off + d.length))));
const bits = (a: Float32Array) => new Uint32Array(a.slice().buffer);

describe("a serial backend's defaults give the pool's bits", () => {
  const one = new WasmBackend();
  const pool = new PoolBackend({ threads: 2 });
  afterAll(() => pool.dispose());
  const w1 = load(one), wP = load(pool);

  it.each([1, 3])('matmulShared with biases, matmulGated and matvecAdd, n = %i', (n) => {
    // gate·x from −6 to 6, where SiLU's rounding shows
    const x = Float32Array.from({ length: n * cols }, () => (rnd() * 2 - 1) * 1.5);
    const outs = (be: WasmBackend | PoolBackend, ws: typeof w1) => {
      const o = rowsOf.map((rows) => new Float32Array(n * rows));
      be.matmulShared(o, ws, x, n, biases);
      const g = new Float32Array(n * rowsOf[0]);
      be.matmulGated(g, ws[0], ws[1], x, n);
      return [...o, g];
    };
    const want = outs(pool, wP), got = outs(one, w1);
    for (let i = 0; i < want.length; i++) expect(bits(got[i]), `output ${i}`).toEqual(bits(want[i]));
    if (n === 1) {
      const base = Float32Array.from({ length: rowsOf[2] }, () => rnd() - 0.5);
      const a = base.slice(), b = base.slice();
      one.matvecAdd(a, w1[2], x);
      pool.matvecAdd(b, wP[2], x);
      expect(bits(a)).toEqual(bits(b));
    }
  });

  it('matvecTop computes the row and leaves the stats to the sampler; no split attention', () => {
    const x = Float32Array.from({ length: cols }, () => rnd() - 0.5);
    const stats = createLogitStats();
    stats.want = 5;
    stats.valid = true;
    const got = new Float32Array(rowsOf[0]), want = new Float32Array(rowsOf[0]);
    one.matvecTop(got, w1[0], x, stats);
    one.matvec(want, w1[0], x);
    expect(bits(got)).toEqual(bits(want));
    expect(stats.valid).toBe(false);
    const shape = { nLayer: 1, nHead: 4, nHeadKv: 4, headDimK: 16, headDimV: 16 };
    expect(one.splitAttention(shape, 64)).toBeNull();
    expect(new ScalarBackend().splitAttention(shape, 64)).toBeNull();
    expect(new ScalarBackend().kernels).toBeNull();
    expect(one.kernels).not.toBeNull();
  });
});
