// The WebAssembly attention (src/engine/wasm/assembly/attention.ts) against the scalar reference
// (src/engine/model/attention.ts, which follows ggml's two flash-attention paths), and its f16
// helpers against fp16.ts (IEEE binary16, itself checked against hand-worked values in ops.test.ts).

import { describe, expect, it } from 'vitest';
import { attention, createAttentionScratch, type AttentionDims, type AttentionMode } from '../../src/engine/model/attention.js';
import { F16_TO_F32, f16Round, f32ToF16Bits } from '../../src/engine/model/fp16.js';
import { createKvCache, kvStore } from '../../src/engine/model/kv-cache.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { randomFloats, rng } from '../wasm/gen.js';

const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));
const a = k.arena;

/** Float32 values from raw bit patterns: every exponent, with the f16 edge cases spelled out. */
function edgeFloats(n: number, seed: number): Float32Array {
  const r = rng(seed);
  const u = new Uint32Array(n);
  for (let i = 0; i < n; i++) u[i] = (r() * 2 ** 32) >>> 0;
  const f = new Float32Array(u.buffer);
  const edges = [0, -0, 65504, 65519.99, 65520, -65520, 1e9, Infinity, -Infinity, NaN, 2 ** -14, 2 ** -24, 2 ** -25, 3 * 2 ** -25, 2 ** -14 - 2 ** -26, 6e-8, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 1e-40];
  f.set(edges);
  // plenty of values in the half range, where rounding ties can occur
  for (let i = edges.length; i < n; i += 3) f[i] = (r() - 0.5) * 2 ** Math.floor(r() * 40 - 26);
  return f;
}

const same = (x: number, y: number) => x === y || (Number.isNaN(x) && Number.isNaN(y));

describe('f16 helpers in SIMD', () => {
  it('half → f32 is exact for all 65536 halves', () => {
    const src = a.alloc(65536 * 2);
    const out = a.alloc(65536 * 4);
    const h = new Uint16Array(a.memory.buffer, src, 65536);
    for (let i = 0; i < 65536; i++) h[i] = i;
    k.call('half_to_f32', out, src, 65536);
    const f = a.f32(out, 65536);
    for (let i = 0; i < 65536; i++) if (!same(f[i], F16_TO_F32[i])) expect([i, f[i]]).toEqual([i, F16_TO_F32[i]]);
  });

  it('rounding to the nearest half and f32 → half bits match fp16.ts, including ties, subnormals, overflow, NaN', () => {
    const n = 1 << 16;
    const x = edgeFloats(n, 7);
    const xp = a.alloc(n * 4);
    const rp = a.alloc(n * 4);
    const hp = a.alloc(n * 2);
    a.f32(xp, n).set(x);
    k.call('round_half', rp, xp, n);
    k.kvStore(hp, xp, n);
    const r = a.f32(rp, n);
    const h = new Uint16Array(a.memory.buffer, hp, n);
    let bad = 0;
    for (let i = 0; i < n; i++) {
      if (!same(r[i], f16Round(x[i])) || h[i] !== f32ToF16Bits(x[i])) bad++;
      if (bad === 1 && (!same(r[i], f16Round(x[i])) || h[i] !== f32ToF16Bits(x[i]))) expect([x[i], r[i], h[i]]).toEqual([x[i], f16Round(x[i]), f32ToF16Bits(x[i])]);
    }
    expect(bad).toBe(0);
  });
});

describe('attention matches the scalar reference', () => {
  const cases: (AttentionDims & { name: string })[] = [
    { name: 'MHA, head 64', nHead: 4, nHeadKv: 4, headDimK: 64, headDimV: 64 },
    { name: 'GQA 2 → 1, head 8', nHead: 2, nHeadKv: 1, headDimK: 8, headDimV: 8 },
    { name: 'GQA 14 → 2 (qwen2 0.5B shape), head 64', nHead: 14, nHeadKv: 2, headDimK: 64, headDimV: 64 },
    { name: 'head 80 (phi2)', nHead: 2, nHeadKv: 2, headDimK: 80, headDimV: 80 },
  ];
  const size = 96;
  for (const mode of ['f16', 'f32'] as AttentionMode[]) {
    for (const d of cases) {
      it(`${mode}: ${d.name}`, () => {
        const kvDimK = d.nHeadKv * d.headDimK;
        const kvDimV = d.nHeadKv * d.headDimV;
        const qDim = d.nHead * d.headDimK;
        const oDim = d.nHead * d.headDimV;
        // one buffer in kernel memory for the cache (the reference reads the same views)
        const kc = a.alloc(size * kvDimK * 2);
        const vc = a.alloc(size * kvDimV * 2);
        const cache = { ...createKvCache(1, size, kvDimK, kvDimV), k: [new Uint16Array(a.memory.buffer, kc, size * kvDimK)], v: [new Uint16Array(a.memory.buffer, vc, size * kvDimV)] };
        const keys = randomFloats(size * kvDimK, 11, 2);
        const vals = randomFloats(size * kvDimV, 12, 3);
        for (let t = 0; t < size; t++) kvStore(cache, 0, t, keys, t * kvDimK, vals, t * kvDimV);
        const q = randomFloats(qDim, 13, 1.5);
        const qp = a.alloc(qDim * 4);
        a.f32(qp, qDim).set(q);
        const op = a.alloc(oDim * 4);
        const scratch = a.alloc(k.attnScratchBytes(d.nHead, d.nHeadKv, d.headDimK, d.headDimV, size));
        const ref = new Float32Array(oDim);
        const s = createAttentionScratch(d, size);
        const scale = 1 / Math.sqrt(d.headDimK);
        for (const [from, to] of [[0, 0], [0, size - 1], [17, 60]]) {
          attention(ref, 0, q, 0, cache, 0, from, to, d, scale, mode, s);
          k.attention(mode, op, qp, kc, vc, kvDimK, kvDimV, from, to, d.nHead, d.nHeadKv, d.headDimK, d.headDimV, scale, scratch);
          const got = a.f32(op, oDim);
          // Sums in a different order: scores differ in the last bits (f32: ~1e-6 of |v| ≤ 20).
          // In 'f16' mode the accumulator is a half, so now and then an element lands one
          // half-ulp away (2^-11 relative, ~1e-3 here).
          const tol = mode === 'f16' ? 4e-3 : 1e-4;
          let worst = 0;
          for (let i = 0; i < oDim; i++) worst = Math.max(worst, Math.abs(got[i] - ref[i]));
          expect(worst).toBeLessThan(tol);
          // ... and most elements agree much more closely than that
          let close = 0;
          for (let i = 0; i < oDim; i++) if (Math.abs(got[i] - ref[i]) <= 1e-5 * Math.max(1, Math.abs(ref[i]))) close++;
          expect(close / oDim).toBeGreaterThan(mode === 'f16' ? 0.9 : 0.999);
        }
      });
    }
  }
});
