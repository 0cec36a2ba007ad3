// The WebAssembly RMSNorm, RoPE rotation and residual add (src/engine/wasm/assembly/norm.ts) against
// the TypeScript references in src/engine/model/ops.ts, bit for bit: the forward pass takes the
// wasm ops on the WebAssembly backends and the TypeScript ones on the scalar backend, and the pool
// test and the goldens rely on the two giving the same activations.

import { describe, expect, it } from 'vitest';
import { addInto, rmsnorm, rope, ropeCache, type RopeMode } from '../../src/engine/model/ops.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { rng } from '../wasm/gen.js';

const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));

/** n random floats of magnitudes 10^lo … 10^hi, both signs. */
function values(r: () => number, n: number, lo: number, hi: number): Float32Array {
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) v[i] = (r() < 0.5 ? -1 : 1) * 10 ** (lo + r() * (hi - lo));
  return v;
}

/** A copy of `a` in kernel memory; returns its byte address. */
function put(a: Float32Array): number {
  const p = k.arena.alloc(a.length * 4 + 16);
  k.arena.f32(p, a.length).set(a);
  return p;
}

const bits = (a: Float32Array) => new Uint32Array(a.slice().buffer);

describe('wasm rms_norm equals ops.ts rmsnorm', () => {
  it.each([
    [768, 1e-5, true],
    [896, 1e-6, true],
    [61, 1e-5, true],
    [64, 1e-6, false],
    [7, 1e-5, false],
  ])('n %i, eps %d, weight %s: random inputs over 12 decades, in place and not', (n, eps, weighted) => {
    const r = rng(n * 7 + (weighted ? 1 : 0));
    for (let trial = 0; trial < 20; trial++) {
      const x = values(r, n, -6, 6 - (trial % 8));
      const w = weighted ? values(r, n, -2, 1) : null;
      const want = new Float32Array(n);
      rmsnorm(want, x, w, Math.fround(eps), n);
      const xp = put(x), op = put(new Float32Array(n));
      const wp = w ? put(w) : 0;
      k.rmsnorm(op, xp, wp, Math.fround(eps), n);
      expect(bits(k.arena.f32(op, n))).toEqual(bits(want));
      k.rmsnorm(xp, xp, wp, Math.fround(eps), n); // in place, as for qwen3's per-head q/k norm
      expect(bits(k.arena.f32(xp, n))).toEqual(bits(want));
    }
  });
});

describe('wasm rope_heads equals ops.ts rope', () => {
  it.each([
    ['norm', 12, 64, 64],
    ['neox', 14, 64, 64],
    ['neox', 3, 80, 32], // partial rotary (phi2)
    ['norm', 2, 16, 8],
  ] as [RopeMode, number, number, number][])('%s: %i heads of %i, nRot %i, positions 0…2000', (mode, nHeads, hd, nRot) => {
    const r = rng(nHeads * hd + nRot);
    const cache = new Float32Array(nRot);
    for (const pos of [0, 1, 17, 511, 2000]) {
      ropeCache(cache, pos, nRot, 10000, 1, null);
      const x = values(r, nHeads * hd, -3, 2);
      const want = x.slice();
      for (let h = 0; h < nHeads; h++) rope(want, h * hd, cache, nRot, mode);
      const xp = put(x), cp = put(cache);
      k.ropeHeads(xp, nHeads, hd, cp, nRot, mode === 'neox');
      expect(bits(k.arena.f32(xp, nHeads * hd))).toEqual(bits(want));
    }
  });
});

describe('wasm add_f32 equals ops.ts addInto', () => {
  it.each([768, 4099, 3])('n %i', (n) => {
    const r = rng(n);
    const a = values(r, n, -8, 4), b = values(r, n, -8, 4);
    const want = a.slice();
    addInto(want, b, n);
    const ap = put(a), bp = put(b);
    k.addInto(ap, bp, n);
    expect(bits(k.arena.f32(ap, n))).toEqual(bits(want));
  });
});
