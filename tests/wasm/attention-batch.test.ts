// attn_f32_batch (a prompt batch's queries in one call, cache rows widened once per tile of queries)
// against attn_f32 called once per query, itself checked against the scalar reference in
// tests/model/ops-attention.test.ts: the same operations in the same order per query, so every bit
// equal; with and without a sliding window, batches that do not fill the last tile, MHA and GQA.
import { describe, expect, it } from 'vitest';
import { f32ToF16Bits } from '../../src/engine/quant/half.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { skipBuild } from './builds.js';
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
        k.attentionBatchF32({ out: ob, q: qp, kc, vc, strideK: kv, strideV: kv, nHead, nHeadKv, hdK: hd, hdV: hd, scale, scratch }, pos, n, window);
        const batch = a.f32(ob, n * nHead * hd).slice();
        for (let i = 0; i < n; i++) {
          const p = pos + i;
          const from = window > 0 ? Math.max(0, p - window + 1) : 0;
          k.attention('f32', { out: o1, q: qp + i * nHead * hd * 4, kc, vc, strideK: kv, strideV: kv, nHead, nHeadKv, hdK: hd, hdV: hd, scale, scratch }, from, p);
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

// attn_f32_batch's softmax takes e^x four at a time (f64 polynomial, Math.exp for lanes near an f32
// rounding midpoint): against the reference's Math.fround(Math.exp(s − M)) and its f64 sum in order,
// over a million scores spread from 0 down past −87 (f32's normal range ends at e^−87.3) and n not
// a multiple of four.
describe('attn_softmax_exp = the reference softmax exponentials', () => {
  for (const [what, simd] of [['plain SIMD', 'simd'], ['relaxed SIMD', 'relaxed']] as const) it.skipIf(skipBuild(simd))(`${what} build`, () => {
    const kk = simd === 'simd' ? k : new KernelInstance(loadKernelModule({ simd }));
    const n = 1000003;
    const s = kk.arena.alloc(n * 4);
    // randomFloats: roughly normal, |x| < 3.4 but for one in a hundred (×8); every seventh spread to −100
    const x = randomFloats(n, 31, 3).map((r, i) => (i % 7 === 0 ? -Math.abs(r) * 10 : r));
    // and, at the start, scores whose e^(x − M) in f64 lies within 2^12 ulps of an f32 rounding
    // midpoint (the lanes the kernel hands to Math.exp), found by a scan
    const M0 = x.reduce((m, v) => Math.max(m, v), -Infinity);
    const f64 = new Float64Array(1);
    const lo32 = new Uint32Array(f64.buffer);
    let near = 0;
    for (let i = 1; near < 200 && i < 4e6; i++) {
      const d = Math.fround(-i * 3.1e-6);
      const v = Math.fround(M0 + d);
      f64[0] = Math.exp(Math.fround(v - M0));
      if (Math.abs((lo32[0] & 0x1fffffff) - 0x10000000) <= 4096) x[near++] = v;
    }
    expect(near).toBeGreaterThan(20);
    kk.arena.f32(s, n).set(x);
    const sum = kk.call('attn_softmax_exp', s, n);
    const got = new Uint32Array(kk.arena.f32(s, n).slice().buffer);
    const M = x.reduce((m, v) => Math.max(m, v), -Infinity);
    const want = new Float32Array(n);
    let S = 0;
    for (let t = 0; t < n; t++) {
      want[t] = Math.fround(Math.exp(Math.fround(x[t] - M)));
      S += want[t];
    }
    const wantBits = new Uint32Array(want.buffer);
    let differ = 0;
    for (let t = 0; t < n; t++) if (got[t] !== wantBits[t]) differ++;
    expect(differ).toBe(0);
    expect(sum).toBe(S);
    expect(want.filter((e) => e > 0 && e < 2 ** -126).length).toBeGreaterThan(0); // the subnormal range was reached
  });
});
