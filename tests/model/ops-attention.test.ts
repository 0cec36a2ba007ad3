// The WebAssembly attention (src/engine/wasm/assembly/attention.ts) against the scalar reference
// (src/engine/model/attention.ts, which follows ggml's two flash-attention paths), and its f16
// helpers against fp16.ts (IEEE binary16, itself checked against hand-worked values in ops.test.ts).

import { describe, expect, it } from 'vitest';
import { attention, createAttentionScratch, type AttentionDims, type AttentionMode } from '../../src/engine/model/attention.js';
import { F16, f32ToF16Bits, roundF16 } from '../../src/engine/quant/half.js';
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
    for (let i = 0; i < 65536; i++) if (!same(f[i], F16[i])) expect([i, f[i]]).toEqual([i, F16[i]]);
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
      if (!same(r[i], roundF16(x[i])) || h[i] !== f32ToF16Bits(x[i])) bad++;
      if (bad === 1 && (!same(r[i], roundF16(x[i])) || h[i] !== f32ToF16Bits(x[i]))) expect([x[i], r[i], h[i]]).toEqual([x[i], roundF16(x[i]), f32ToF16Bits(x[i])]);
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
    { name: 'head 16 (tiny-random models)', nHead: 4, nHeadKv: 2, headDimK: 16, headDimV: 16 },
    { name: 'head 128, GQA 4 → 1', nHead: 4, nHeadKv: 1, headDimK: 128, headDimV: 128 },
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
          k.attention(mode, { out: op, q: qp, kc, vc, strideK: kvDimK, strideV: kvDimV, nHead: d.nHead, nHeadKv: d.nHeadKv, hdK: d.headDimK, hdV: d.headDimV, scale, scratch }, from, to);
          const got = a.f32(op, oDim);
          if (mode === 'f16') {
            // the same operations in the same order (ggml's): every bit equal
            let differ = 0;
            for (let i = 0; i < oDim; i++) if (!Object.is(got[i], ref[i])) differ++;
            if (differ) expect({ from, to, differ, first: [...got.subarray(0, 4)] }).toEqual({ from, to, differ: 0, first: [...ref.subarray(0, 4)] });
            continue;
          }
          // f32: sums in a different order: scores differ in the last bits (~1e-6 of |v| ≤ 20)
          const tol = 1e-4;
          let worst = 0;
          for (let i = 0; i < oDim; i++) worst = Math.max(worst, Math.abs(got[i] - ref[i]));
          expect(worst).toBeLessThan(tol);
          // ... and most elements agree much more closely than that
          let close = 0;
          for (let i = 0; i < oDim; i++) if (Math.abs(got[i] - ref[i]) <= 1e-5 * Math.max(1, Math.abs(ref[i]))) close++;
          expect(close / oDim).toBeGreaterThan(0.999);
        }
      });
    }
  }
});

// Hand-worked: the K dot sums in ggml_vec_dot_f16's AVX-512 order (vec.cpp; simd-mappings.h
// GGML_F32Cx16_REDUCE, _mm512_reduce_add_ps), where 2^24 + 1 rounds back to 2^24 (ties to even).
// Position 0's key gives q·k = 2^24 (4096·4096), so score 1 at scale 2^-24; position 1's key adds
// products of 1 at the listed elements. V is all ones. If position 1 scores 1 as well, the output
// is (1 + 1)/2 = 1. If it scores 1 + 2^-23 (dot 2^24 + 2): ms = expf(-2^-23) = 1 - 2^-23, S = 2 - 2^-23,
// 1/S rounds to 0.5 + 2^-24, and the output is 2·(0.5 + 2^-24) = 1 + 2^-23.
describe('f16 attention sums the K dot in ggml\'s order', () => {
  const cases: [string, number, number[], number][] = [
    // lanes 0, 16, 32: (p0 + p32) + (p16 + p48) = (2^24 + 1 → 2^24) + 1 → 2^24; in order it is 2^24 + 2
    ['GGML_F32Cx16_REDUCE: element 32 meets element 0 first', 64, [16, 32], 1],
    ['… and element 48 meets element 16', 64, [16, 32, 48], 1 + 2 ** -23],
    // after the reduce, lanes 0, 4, 8: (l0 + l8) + (l4 + l12) → 2^24; (l0 + l4) + l8 would give 2^24 + 2
    ['_mm512_reduce_add_ps folds by 8 first, then 4', 64, [4, 8], 1],
    // second chunk: lane 0 accumulates 2^24 + 1 → 2^24 (fmadd), lane 1 carries 1 to the reduce
    ['chunks accumulate per lane (head 128)', 128, [64, 1], 1],
    // head 16 < 64: all leftovers, summed in double: 2^24 + 1 + 1 exactly
    ['under 64 elements: summed in double (head 16)', 16, [1, 2], 1 + 2 ** -23],
    ['head 80: the 16 after the first 64 in double', 80, [64, 65], 1 + 2 ** -23],
  ];
  for (const [name, hd, ones, want] of cases) {
    it(name, () => {
      const d: AttentionDims = { nHead: 1, nHeadKv: 1, headDimK: hd, headDimV: 4 };
      const kc = a.alloc(2 * hd * 2);
      const vc = a.alloc(2 * 4 * 2);
      const cache = { ...createKvCache(1, 2, hd, 4), k: [new Uint16Array(a.memory.buffer, kc, 2 * hd)], v: [new Uint16Array(a.memory.buffer, vc, 8)] };
      const keys = new Float32Array(2 * hd);
      keys[0] = 4096;
      keys[hd] = 4096;
      for (const i of ones) keys[hd + i] = 1;
      const vals = new Float32Array(8).fill(1);
      for (let t = 0; t < 2; t++) kvStore(cache, 0, t, keys, t * hd, vals, t * 4);
      const q = new Float32Array(hd);
      q[0] = 4096;
      for (const i of ones) q[i] = 1;
      const qp = a.alloc(hd * 4);
      a.f32(qp, hd).set(q);
      const op = a.alloc(16);
      const scratch = a.alloc(k.attnScratchBytes(1, 1, hd, 4, 2));
      const ref = new Float32Array(4);
      attention(ref, 0, q, 0, cache, 0, 0, 1, d, 2 ** -24, 'f16', createAttentionScratch(d, 2));
      k.attention('f16', { out: op, q: qp, kc, vc, strideK: hd, strideV: 4, nHead: 1, nHeadKv: 1, hdK: hd, hdV: 4, scale: 2 ** -24, scratch }, 0, 1);
      expect([...ref]).toEqual([want, want, want, want]);
      expect([...a.f32(op, 4)]).toEqual([want, want, want, want]);
    });
  }
});
