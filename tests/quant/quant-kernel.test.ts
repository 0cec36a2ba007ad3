// The quantisers' WebAssembly kernels against their TypeScript references, bit for bit: the scale
// searches (wasm/assembly/kscales.ts; quant/kscales.ts, kscales-weighted.ts: the same levels, scale
// and min on random groups and the edge cases: all zero, constant, one outlier, tiny, negative, zero
// weights) and the Q8_0/Q4_0 rows (assembly/quantize-legacy.ts; quant/legacy.ts: ties, ±0, outliers).
// ggml itself is the truth for the references (reference.test.ts, imatrix-quant.test.ts run the
// quantisers, and so these kernels, against ggml's bytes).
import { afterAll, describe, expect, it } from 'vitest';
import {
  makeQ3Quants, makeQ3QuantsRef, makeQkx2Quants, makeQkx2QuantsRef, makeQxQuants, makeQxQuantsRef,
} from '../../src/engine/quant/kscales.js';
import { makeQpQuants, makeQpQuantsRef } from '../../src/engine/quant/kscales-weighted.js';
import { quantizeQ4_0Ref, quantizeQ8_0Ref } from '../../src/engine/quant/legacy.js';
import { quantizeQ3KRef } from '../../src/engine/quant/q3k.js';
import { quantizeRowByKernel, scaleKernel, useScaleKernel } from '../../src/engine/quant/quant-kernel.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** Groups of n values: random normal-ish, then the edge cases. */
function groups(n: number, seed: number, nonNegative = false): Float32Array[] {
  const r = rng(seed);
  const out: Float32Array[] = [];
  for (let g = 0; g < 300; g++) {
    const scale = 10 ** (-4 + 5 * r());
    const x = new Float32Array(n).map(() => (r() + r() + r() - 1.5) * scale);
    if (g % 7 === 0) x[Math.floor(r() * n)] *= 30;
    out.push(nonNegative ? x.map(Math.abs) : x);
  }
  out.push(new Float32Array(n), new Float32Array(n).fill(0.25), new Float32Array(n).fill(-3), new Float32Array(n).fill(1e-20));
  const one = new Float32Array(n);
  one[n - 1] = 1;
  out.push(one);
  return out;
}

function weightsFor(x: Float32Array, r: () => number, kind: number): Float32Array {
  if (kind === 0) return x.map((v) => Math.fround(0.01 + Math.abs(v)));
  if (kind === 1) return x.map(() => Math.fround(Math.exp(3 * r() - 1.5)));
  const w = x.map(() => Math.fround(r()));
  w[0] = 0;
  return w;
}

const bits = (v: number) => new Uint32Array(new Float32Array([v]).buffer)[0];

describe('scale-search kernels = TypeScript references', () => {
  afterAll(() => useScaleKernel(true));

  it('the kernel module is here (so the comparisons below are of two implementations)', () => {
    expect(scaleKernel()).not.toBeNull();
  });

  it('make_qkx2/qkx3 (Q2_K, Q4_K, Q5_K settings, unweighted and weighted)', () => {
    const settings: [number, number, number, number, number, boolean][] = [
      [16, 3, -0.5, Math.fround(0.1), 15, true], [32, 15, -1, Math.fround(0.1), 20, false], [32, 31, -0.5, Math.fround(0.1), 15, false],
      [32, 15, Math.fround(-0.9), Math.fround(0.05), 36, false], [16, 3, Math.fround(-0.9), Math.fround(0.05), 36, false], [32, 15, -1, Math.fround(0.1), 0, false],
    ];
    let checked = 0;
    for (const [n, nmax, rmin, rdelta, nstep, mad] of settings) {
      const r = rng(n * 1000 + nmax);
      for (const x of groups(n, nmax)) {
        for (let kind = 0; kind < 3; kind++) {
          const w = weightsFor(x, r, kind);
          const La = new Uint8Array(n + 3);
          const Lb = new Uint8Array(n + 3);
          const mins = new Float32Array(2);
          const sa = makeQkx2Quants(n, nmax, x, 0, w, La, 3, mins, 0, new Uint8Array(n), rmin, rdelta, nstep, mad);
          const sb = makeQkx2QuantsRef(n, nmax, x, 0, w, Lb, 3, mins, 1, new Uint8Array(n), rmin, rdelta, nstep, mad);
          expect([bits(sa), bits(mins[0]), [...La]]).toEqual([bits(sb), bits(mins[1]), [...Lb]]);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(5000);
  });

  it('make_qx_quants (Q6_K, IQ-weighted Q3_K/Q6_K scales; every rmse type)', () => {
    for (const [n, nmax] of [[16, 32], [16, 4], [32, 8], [32, 16]]) {
      const r = rng(n + nmax);
      for (const x of groups(n, 7 * nmax)) {
        for (const rmse of [0, 1, 2, 3, 4, -1]) {
          for (const qw of [null, weightsFor(x, r, 1)]) {
            const La = new Uint8Array(n + 1);
            const Lb = new Uint8Array(n + 1);
            const sa = makeQxQuants(n, nmax, x, 0, La, 1, rmse, qw);
            const sb = makeQxQuantsRef(n, nmax, x, 0, Lb, 1, rmse, qw);
            expect([bits(sa), [...La]]).toEqual([bits(sb), [...Lb]]);
          }
        }
      }
    }
  });

  it('make_q3_quants (Q3_K), with and without the refinement', () => {
    for (const x of groups(16, 3)) {
      for (const rmse of [true, false]) {
        const La = new Int8Array(18);
        const Lb = new Int8Array(18);
        const sa = makeQ3Quants(16, 4, x, 0, La, 2, rmse);
        const sb = makeQ3QuantsRef(16, 4, x, 0, Lb, 2, rmse);
        expect([bits(sa), [...La]]).toEqual([bits(sb), [...Lb]]);
      }
    }
  });

  it('make_qp_quants (the weighted K-quant super-block scales, non-negative input)', () => {
    for (const [n, nmax] of [[8, 63], [16, 15]]) {
      const r = rng(n);
      for (const x of groups(n, 11 * n, true)) {
        const w = weightsFor(x, r, 1);
        const La = new Uint8Array(n);
        const Lb = new Uint8Array(n);
        const sa = makeQpQuants(n, nmax, x, La, w);
        const sb = makeQpQuantsRef(n, nmax, x, Lb, w);
        expect([bits(sa), [...La]]).toEqual([bits(sb), [...Lb]]);
      }
    }
  });

  it('make_qp_quants with one negative element, as IQ2_XXS gives it (ggml wraps it through its uint8 L)', () => {
    const n = 32;
    const r = rng(5);
    for (const x of groups(n, 200, true)) {
      x[Math.floor(r() * n)] *= -1;
      const w = weightsFor(x, r, 1);
      const La = new Uint8Array(n);
      const Lb = new Uint8Array(n);
      const sa = makeQpQuants(n, 16, x, La, w);
      const sb = makeQpQuantsRef(n, 16, x, Lb, w);
      expect([bits(sa), [...La]]).toEqual([bits(sb), [...Lb]]);
    }
  });
});

describe('Q8_0 / Q4_0 / Q3_K row kernels = TypeScript references', () => {
  /** Rows of 4096: random blocks at many scales, exact ties (k/2 steps of d), ±0, outliers, ±max ties. */
  function rows(): Float32Array[] {
    const r = rng(99);
    const out: Float32Array[] = [];
    for (let t = 0; t < 6; t++) {
      const x = new Float32Array(4096);
      for (let b = 0; b < 128; b++) {
        const scale = 10 ** (-6 + 8 * r());
        for (let j = 0; j < 32; j++) {
          const i = 32 * b + j;
          if (b % 8 === 1) x[i] = j === 0 ? 127 : (Math.round(r() * 508) - 254) / 2; // d = 1: x·id on Q8_0's roundf ties
          else if (b % 8 === 2) x[i] = j === 0 ? -8 : Math.round(r() * 15) - 7.5; // d = 1: x·id + 8.5 whole, Q4_0's trunc edges
          else if (b % 8 === 3) x[i] = j % 2 ? -0 : 0;
          else if (b % 8 === 4) x[i] = j === 5 ? -1 : j === 9 ? 1 : r() - 0.5; // first of equal magnitudes wins
          else x[i] = (r() + r() - 1) * scale * (j === 7 && b % 3 === 0 ? 50 : 1);
        }
      }
      if (t === 0) x.fill(0, 0, 256); // a zero super-block (Q3_K's d = 0 branch)
      out.push(x);
    }
    return out;
  }

  it('quantize_row_q8_0_ref, quantize_row_q4_0_ref and quantize_row_q3_K_ref', () => {
    expect(scaleKernel()).not.toBeNull();
    for (const x of rows()) {
      for (const [which, bytes, per, ref] of [['rowQ8_0', 34, 32, quantizeQ8_0Ref], ['rowQ4_0', 18, 32, quantizeQ4_0Ref], ['rowQ3_K', 110, 256, quantizeQ3KRef]] as const) {
        const a = new Uint8Array((4096 / per) * bytes + 5);
        const b = new Uint8Array((4096 / per) * bytes + 5);
        expect(quantizeRowByKernel(which, x, a, 5, 4096, bytes, per)).toBe(true);
        ref(x, b, 5, 4096);
        expect(Buffer.compare(a, b)).toBe(0);
      }
    }
  });
});
