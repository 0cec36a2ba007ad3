// The matmul_* kernels (legacy.ts: blocks of 64 tokens, four rows per pass; kquants.ts: the one-token
// dot per token) form each token's sums exactly as the one-token matvec kernel, which kernels.test.ts
// checks against the scalar reference; so here, at the kernel level: matmul_* over batches of 4, 7
// and 70 tokens (crossing a token block) equals matvec_* token by token, bit for bit.
// (The backends take gemm_* for prompt batches of these types: tests/wasm/gemm.test.ts.)

import { describe, expect, it } from 'vitest';
import { GgmlType, ggmlTypeName, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { actBytes, kernelType } from '../../src/engine/wasm/layout.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { quantisedWeights, randomBlocks, randomFloats } from './gen.js';

const TILED = [GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q5_0, GgmlType.Q4_K, GgmlType.Q6_K];

describe('tiled matmul kernels equal matvec per token', () => {
  const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));
  for (const type of TILED) {
    it(ggmlTypeName(type), () => {
      const kt = kernelType(type)!;
      const rows = 5;
      const cols = 512;
      const rb = rowBytes(type, cols);
      const ab = actBytes(kt.act, cols);
      let seed = 100;
      for (const data of [randomBlocks(type, rows, cols, seed++), quantisedWeights(type, rows, cols, seed++)]) {
        for (const n of [4, 7, 70]) {
          const w = k.arena.alloc(rb * rows);
          const x = k.arena.alloc(n * cols * 4);
          const xq = k.arena.alloc(n * ab);
          const out = k.arena.alloc(n * rows * 4);
          const one = k.arena.alloc(rows * 4);
          k.arena.u8(w, rb * rows).set(data);
          k.arena.f32(x, n * cols).set(randomFloats(n * cols, seed++, 2));
          for (let t = 0; t < n; t++) k.quantize(kt.act, xq + t * ab, x + t * cols * 4, cols);
          k.matmul(kt, out, w, rb, 0, rows, xq, cols, n, ab, rows);
          for (let t = 0; t < n; t++) {
            k.matvec(kt, one, w, rb, 0, rows, xq + t * ab, cols);
            expect([...k.arena.f32(out + t * rows * 4, rows)], `n=${n} token ${t}`).toEqual([...k.arena.f32(one, rows)]);
          }
        }
      }
    });
  }
});
