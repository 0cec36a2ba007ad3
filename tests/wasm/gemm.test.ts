// The prompt kernels of assembly/gemm.ts (widened activations, four tokens per weight block) against
// the scalar reference in src/engine/quant (ggml's generic C): the integer block sums are exact, only
// the order of float roundings differs, so |gemm − ref| ≤ 2e-6 · Σ|w·x| as for the one-token
// kernels (kernels.test.ts). Shapes: partial groups of four tokens, row ranges that start inside a
// matrix and do not fill a row block, several blocks per row; outputs outside the range stay untouched.

import { describe, expect, it } from 'vitest';
import { GgmlType, ggmlTypeName, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { quantizeActivation, vecDot } from '../../src/engine/quant/index.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { actBytes, gemmScratchBytes, kernelType, widenBytes } from '../../src/engine/wasm/layout.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { absDot, quantisedWeights, randomBlocks, randomFloats } from './gen.js';

const GEMM = [GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q5_0, GgmlType.Q4_K, GgmlType.Q6_K];
const TOL = 2e-6;

describe('gemm kernels against the scalar reference', () => {
  const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));

  it('widen_bytes and gemm_scratch_bytes in the module equal widenBytes and gemmScratchBytes in layout.ts', () => {
    for (const [n, cols] of [[1, 256], [5, 768], [128, 2048]]) {
      expect(k.call('gemm_scratch_bytes', cols)).toBe(gemmScratchBytes(cols));
      expect(k.call('widen_bytes', 0, n, cols)).toBe(widenBytes('q8_0', n, cols));
      expect(k.call('widen_bytes', 1, n, cols)).toBe(widenBytes('q8_K', n, cols));
    }
  });

  for (const type of GEMM) {
    it(`${ggmlTypeName(type)}: within ${TOL} of Σ|w·x| for every token and row; rows outside [r0, r1) untouched`, () => {
      const kt = kernelType(type)!;
      expect(kt.gemm).toBe(true);
      let seed = 300;
      for (const [rows, cols] of [[11, 256], [19, 768]]) {
        const rb = rowBytes(type, cols);
        const ab = actBytes(kt.act, cols);
        for (const data of [randomBlocks(type, rows, cols, seed++), quantisedWeights(type, rows, cols, seed++)]) {
          for (const [n, r0, r1] of [[2, 0, rows], [5, 3, rows - 1], [9, 1, 10]]) {
            const xs = randomFloats(n * cols, seed++, 2);
            const w = k.arena.alloc(rb * rows);
            const x = k.arena.alloc(n * cols * 4);
            const xq = k.arena.alloc(n * ab);
            const xw = k.arena.alloc(widenBytes(kt.act, n, cols));
            const out = k.arena.alloc(n * rows * 4);
            const scratch = k.arena.alloc(gemmScratchBytes(cols));
            k.arena.u8(w, rb * rows).set(data);
            k.arena.f32(x, n * cols).set(xs);
            k.arena.f32(out, n * rows).fill(NaN);
            for (let t = 0; t < n; t++) k.quantize(kt.act, xq + t * ab, x + t * cols * 4, cols);
            k.widen(kt.act, xw, xq, n, cols, ab);
            k.gemm(kt, out, w, rb, r0, r1, xw, cols, n, rows, scratch);
            const got = k.arena.f32(out, n * rows);
            for (let t = 0; t < n; t++) {
              const xt = xs.subarray(t * cols, (t + 1) * cols);
              const act = quantizeActivation(type, xt).data;
              for (let r = 0; r < rows; r++) {
                const v = got[t * rows + r];
                if (r < r0 || r >= r1) {
                  expect(v, `row ${r} is outside [${r0}, ${r1})`).toBeNaN();
                  continue;
                }
                const ref = vecDot(type, data, r * rb, act, 0, cols);
                const bound = TOL * absDot(type, data, r * rb, xt, cols) + 1e-30;
                expect(Math.abs(v - ref), `${rows}x${cols} n=${n} token ${t} row ${r}: ${v} vs ${ref}`).toBeLessThanOrEqual(bound);
              }
            }
          }
        }
      }
    });
  }
});
