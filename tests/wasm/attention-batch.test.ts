// attn_f32_batch (a prompt batch's queries in one call, cache rows widened once per tile of queries)
// against attn_f32 called once per query, itself checked against the scalar reference in
// tests/model/ops-attention.test.ts: the same operations in the same order per query, so every bit
// equal; with and without a sliding window, batches that do not fill the last tile, MHA and GQA.
import { describe, expect, it } from 'vitest';
import { f32ToF16Bits } from '../../src/engine/model/fp16.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { randomFloats } from './gen.js';

const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));
const a = k.arena;

describe('attn_f32_batch = attn_f32 per query', () => {
  const shapes = [
    { name: 'MHA 4 heads × 64', nHead: 4, nHeadKv: 4, hd: 64 },
    { name: 'GQA 14 → 2 × 64', nHead: 14, nHeadKv: 2, hd: 64 },
    { name: 'GQA 4 → 2 × 16', nHead: 4, nHeadKv: 2, hd: 16 },
  ];
  // [positions already cached, batch size, sliding window (0: none)]
  const runs = [[0, 70, 0], [5, 19, 0], [0, 64, 24], [30, 13, 7], [3, 1, 0]];
  for (const { name, nHead, nHeadKv, hd } of shapes) {
    it(name, () => {
      const size = 120;
      const kv = nHeadKv * hd;
      const kc = a.alloc(size * kv * 2);
      const vc = a.alloc(size * kv * 2);
      new Uint16Array(a.memory.buffer, kc, size * kv).set(Array.from(randomFloats(size * kv, 21, 2), f32ToF16Bits));
      new Uint16Array(a.memory.buffer, vc, size * kv).set(Array.from(randomFloats(size * kv, 22, 3), f32ToF16Bits));
      const rows = 80;
      const qp = a.alloc(rows * nHead * hd * 4);
      a.f32(qp, rows * nHead * hd).set(randomFloats(rows * nHead * hd, 23, 1.5));
      const ob = a.alloc(rows * nHead * hd * 4);
      const o1 = a.alloc(nHead * hd * 4);
      const scratch = a.alloc(k.attnScratchBytes(nHead, nHeadKv, hd, hd, size));
      const scale = 1 / Math.sqrt(hd);
      for (const [pos, n, window] of runs) {
        a.f32(ob, rows * nHead * hd).fill(NaN);
        k.attentionBatchF32(ob, qp, kc, vc, kv, kv, pos, n, window, nHead, nHeadKv, hd, hd, scale, scratch);
        const batch = a.f32(ob, n * nHead * hd).slice();
        for (let i = 0; i < n; i++) {
          const p = pos + i;
          const from = window > 0 ? Math.max(0, p - window + 1) : 0;
          k.attention('f32', o1, qp + i * nHead * hd * 4, kc, vc, kv, kv, from, p, nHead, nHeadKv, hd, hd, scale, scratch);
          const one = a.f32(o1, nHead * hd);
          const got = batch.subarray(i * nHead * hd, (i + 1) * nHead * hd);
          let differ = 0;
          for (let e = 0; e < nHead * hd; e++) if (!Object.is(got[e], one[e])) differ++;
          if (differ) expect({ pos, n, window, i, differ }).toEqual({ pos, n, window, i, differ: 0 });
        }
      }
    });
  }
});
