// MXFP4 (gpt-oss experts, ggml type 39) on every backend: the scalar reference against ggml's own
// numbers (deq.mxfp4 and q.mxfp4 in ../shared/fixtures/quant-reference-iq.gguf, made by ggml), the
// fused dot (ggml_vec_dot_mxfp4_q8_0_generic) against a dot of the dequantised operands, and the
// WebAssembly kernels (single thread and pool) against the scalar reference bit for bit.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { ScalarBackend } from '../../src/engine/backend/scalar.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { readGgufHeaderSync, readTensorBytes } from '../../src/engine/gguf/file.js';
import { GgmlType, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeRow, quantizeActivation, quantizeRows, vecDot } from '../../src/engine/quant/index.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { kernelType } from '../../src/engine/wasm/layout.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { FIXTURES } from '../helpers.js';
import { fillFrom, quantisedWeights, randomBlocks, randomFloats } from '../wasm/gen.js';

const IQ_REFERENCE = join(FIXTURES, 'quant-reference-iq.gguf');
const ROWS = 8;
const COLS = 512;
const T = GgmlType.MXFP4;

function fixture(name: string): Uint8Array {
  return readTensorBytes(IQ_REFERENCE, readGgufHeaderSync(IQ_REFERENCE), name);
}
const asF32 = (b: Uint8Array) => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));

describe.skipIf(!existsSync(IQ_REFERENCE))('MXFP4 against ggml (quant-reference-iq.gguf)', () => {
  it('the scalar dequantisation equals deq.mxfp4 bit for bit', () => {
    const q = fixture('q.mxfp4');
    const out = new Float32Array(ROWS * COLS);
    dequantizeRow(T, q, 0, out, ROWS * COLS);
    expect(out).toEqual(asF32(fixture('deq.mxfp4')));
  });

  it('the reference quantiser reproduces q.mxfp4 byte for byte', () => {
    expect(quantizeRows(T, asF32(fixture('source')), ROWS, COLS)).toEqual(fixture('q.mxfp4'));
  });

  it('dequant_mxfp4 (WebAssembly) equals deq.mxfp4 bit for bit', () => {
    const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));
    const q = fixture('q.mxfp4');
    const deq = asF32(fixture('deq.mxfp4'));
    const rb = q.length / ROWS;
    const w = k.arena.alloc(q.length);
    k.arena.u8(w, q.length).set(q);
    const o = k.arena.scratch(COLS * 4);
    for (let r = 0; r < ROWS; r++) {
      k.dequant(kernelType(T)!, o, w + r * rb, COLS);
      expect(k.arena.f32(o, COLS)).toEqual(deq.subarray(r * COLS, (r + 1) * COLS));
    }
  });

  it('the fused MXFP4 × Q8_0 dot is the dot of the dequantised operands, within f32 rounding', () => {
    const q = fixture('q.mxfp4');
    const rb = rowBytes(T, COLS);
    const deq = asF32(fixture('deq.mxfp4'));
    const x = randomFloats(COLS, 3, 2);
    const act = quantizeActivation(T, x).data;
    const xq = new Float32Array(COLS);
    dequantizeRow(GgmlType.Q8_0, act, 0, xq, COLS);
    for (let r = 0; r < ROWS; r++) {
      let exact = 0;
      let mag = 0;
      for (let i = 0; i < COLS; i++) {
        exact += deq[r * COLS + i] * xq[i];
        mag += Math.abs(deq[r * COLS + i] * xq[i]);
      }
      expect(Math.abs(vecDot(T, q, r * rb, act, 0, COLS) - exact)).toBeLessThanOrEqual(1e-6 * mag);
    }
  });
});

describe('MXFP4 on the WebAssembly backends equals the scalar reference bit for bit', () => {
  const scalar = new ScalarBackend();
  const single = new WasmBackend({ simd: 'simd' });
  const pool = new PoolBackend({ simd: 'simd', threads: 3 });
  afterAll(() => pool.dispose());

  it('every backend supports MXFP4 and keeps it at 17 bytes per 32 weights', () => {
    for (const be of [scalar, single, pool]) expect(be.supports(T)).toBe(true);
    const before = single.weightBytes();
    single.addWeight({ name: 'w', type: T, rows: 4, cols: 64 }, () => {});
    expect(single.weightBytes() - before).toBe(4 * 2 * 17);
  });

  for (const [rows, cols] of [[1, 32], [7, 96], [37, 352], [64, 2880]]) {
    it(`[${cols}, ${rows}]: matvec, matmul (= matvec per token) and getRow`, () => {
      for (const data of [randomBlocks(T, rows, cols, rows), quantisedWeights(T, rows, cols, cols)]) {
        const spec = { name: 'w', type: T, rows, cols };
        const hs = [scalar, single, pool].map((be) => be.addWeight(spec, fillFrom(data)));
        for (const n of [1, 5]) {
          const x = randomFloats(n * cols, rows + n, 2);
          const outs = [scalar, single, pool].map((be, i) => {
            const o = new Float32Array(n * rows).fill(NaN);
            if (n === 1) be.matvec(o, hs[i], x);
            else be.matmul(o, hs[i], x, n);
            return o;
          });
          expect(outs[0].some(Number.isNaN)).toBe(false);
          expect(outs[1]).toEqual(outs[0]);
          expect(outs[2]).toEqual(outs[0]);
          if (n > 1) {
            for (let t = 0; t < n; t++) {
              const o = new Float32Array(rows);
              single.matvec(o, hs[1], x.subarray(t * cols, (t + 1) * cols));
              expect(o).toEqual(outs[1].subarray(t * rows, (t + 1) * rows));
            }
          }
        }
        const want = new Float32Array(cols);
        const got = new Float32Array(cols);
        for (const r of [0, rows - 1]) {
          scalar.getRow(want, hs[0], r);
          for (const i of [1, 2]) {
            [single, pool][i - 1].getRow(got, hs[i], r);
            expect(got).toEqual(want);
          }
        }
      }
    });
  }
});
