// The prompt matmul kernels work on tiles of tokens and blocks of 64 tokens (legacy.ts, kquants.ts
// tile_*). Each token's sums are formed exactly as by the one-token matvec kernel, which
// kernels.test.ts checks against the scalar reference; so here: matmul over batches that fill
// tiles, leave partial tiles and cross token blocks equals matvec token by token, bit for bit.

import { describe, expect, it } from 'vitest';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType, ggmlTypeName } from '../../src/engine/gguf/ggml-types.js';
import { fillFrom, quantisedWeights, randomBlocks, randomFloats } from './gen.js';

const TILED = [GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q5_0, GgmlType.Q4_K, GgmlType.Q6_K];

describe('tiled matmul equals matvec per token', () => {
  const be = new WasmBackend({ simd: 'simd' });
  for (const type of TILED) {
    it(ggmlTypeName(type), () => {
      const rows = 5;
      const cols = 512;
      let seed = 100;
      for (const data of [randomBlocks(type, rows, cols, seed++), quantisedWeights(type, rows, cols, seed++)]) {
        const h = be.addWeight({ name: `t${type}`, type, rows, cols }, fillFrom(data));
        for (const n of [4, 7, 70]) {
          const xs = randomFloats(n * cols, seed++, 2);
          const outs = new Float32Array(n * rows);
          be.matmul(outs, h, xs, n);
          const one = new Float32Array(rows);
          for (let t = 0; t < n; t++) {
            be.matvec(one, h, xs.subarray(t * cols, (t + 1) * cols));
            expect([...outs.subarray(t * rows, (t + 1) * rows)], `n=${n} token ${t}`).toEqual([...one]);
          }
        }
      }
    });
  }
});
