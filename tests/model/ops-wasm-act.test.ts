// The WebAssembly SwiGLU (src/engine/wasm/assembly/ffn.ts) against the TypeScript reference
// gatedAct(silu) in src/engine/model/ops.ts: the same f64 silu rounded to f32 times up, so the two
// agree to the last bit except where the engines' exp differ in the last f64 bit (at most one f32
// ulp after rounding); in place (out = gate) as the forward pass calls it. (swiglu's SIMD path gives
// the scalar loop swiglu_ref's bits for every input: tests/wasm/swiglu.test.ts.)

import { describe, expect, it } from 'vitest';
import { gatedAct, silu } from '../../src/engine/model/ops.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { rng } from '../wasm/gen.js';

const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));

/** Distance in f32 units in the last place (same-sign finite values). */
function ulps(a: number, b: number): number {
  const f = new Float32Array([a, b]);
  const i = new Int32Array(f.buffer);
  return Math.abs(i[0] - i[1]);
}

describe('wasm swiglu', () => {
  it('equals gatedAct(silu) within one f32 ulp, in place, over gate values from 1e-30 to 1e4 of both signs', () => {
    const n = 20000;
    const r = rng(11);
    const gate = new Float32Array(n);
    const up = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      gate[i] = (r() < 0.5 ? -1 : 1) * 10 ** (r() * 34 - 30);
      up[i] = (r() - 0.5) * 8;
    }
    gate.set([0, -0, 1, -1, 88.7, -88.7, 100, -100, 1e4, -1e4]);
    const want = new Float32Array(n);
    gatedAct(want, gate, up, silu, n);
    const g = k.arena.alloc(n * 4);
    const u = k.arena.alloc(n * 4);
    k.arena.f32(g, n).set(gate);
    k.arena.f32(u, n).set(up);
    k.swiglu(g, g, u, n);
    const got = k.arena.f32(g, n);
    let exact = 0;
    for (let i = 0; i < n; i++) {
      if (Object.is(got[i], want[i])) exact++;
      else expect(ulps(got[i], want[i]), `gate ${gate[i]} up ${up[i]}: ${got[i]} vs ${want[i]}`).toBeLessThanOrEqual(1);
    }
    expect(exact / n).toBeGreaterThan(0.99);
  });
});
