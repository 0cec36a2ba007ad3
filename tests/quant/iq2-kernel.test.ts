// The IQ2 quantisers' WebAssembly kernel (wasm/assembly/quantize-iq2.ts) against the TypeScript
// reference (quant/iq2-quant.ts, run with PANTHEON_QUANT_WASM=0's path: no kernel at all), byte for
// byte on many random blocks and the edge cases: all-zero and tiny groups, huge values (sums of
// squares that overflow to infinity), subnormals, ±0, ±infinity, outliers, constant groups, NaN, and importances that are
// zero, tiny or huge. ggml is the truth for the reference (imatrix-quant.test.ts, reference-iq.test.ts).
import { afterAll, describe, expect, it } from 'vitest';
import { iq2sGrid, iq2xsGrid, iq2xxsGrid, type Grid8 } from '../../src/engine/quant/iq2-grid8.js';
import { quantizeIq2ByKernel, type Iq2Kind } from '../../src/engine/quant/iq2-kernel.js';
import { quantizeIq2SRowRef, quantizeIq2XsRowRef, quantizeIq2XxsRowRef } from '../../src/engine/quant/iq2-quant.js';
import { scaleKernel, useScaleKernel } from '../../src/engine/quant/quant-kernel.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const N = 2048;

/** A row of N: each group of 16 drawn from one of the cases (random at a random scale most often). */
function row(r: () => number, edge: boolean): Float32Array {
  const x = new Float32Array(N);
  for (let g = 0; g < N / 16; g++) {
    const kind = edge ? Math.floor(r() * 13) : 0;
    const scale = 10 ** (-6 + 7 * r());
    for (let i = 0; i < 16; i++) {
      const v = (r() + r() + r() - 1.5) * scale;
      x[16 * g + i] = kind === 1 ? 0 // all-zero group
        : kind === 2 ? v * 1e-14 // below the groups' eps
        : kind === 3 ? (i === 5 ? 30 * scale : v) // one outlier
        : kind === 4 ? scale // constant
        : kind === 5 ? v * 1e15 // huge, finite sums
        : kind === 6 && g % 5 === 0 ? v * 1e25 // a block whose sum of squares overflows
        : kind === 7 ? -Math.abs(v) // all negative (odd sign counts flip one element)
        : kind === 8 && (i === 3 || i === 15) && g % 3 === 0 ? NaN // (last in a group: the group's max is NaN)
        : kind === 9 ? Math.round(v / scale * 4) * scale / 4 // few distinct values, near ties
        : kind === 10 ? (i % 5 ? 1e-43 * (i % 4) : -1.4e-45) // subnormal: the trial scales' 1/max is infinite
        : kind === 11 ? (i % 2 ? -0 : 0)
        : kind === 12 && g % 9 === 0 ? (i === 2 ? Infinity : i === 9 ? -Infinity : v)
        : v;
    }
  }
  return x;
}

/** Importances: log-normal, with zero, tiny and huge entries when `edge`. */
function importances(r: () => number, edge: boolean): Float32Array {
  return new Float32Array(N).map(() => {
    const u = r();
    if (edge && u < 0.08) return 0;
    if (edge && u < 0.1) return 1e-30;
    if (edge && u < 0.11) return 1e30;
    return Math.exp(6 * r() - 3);
  });
}

type RowFn = (x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array) => void;
const TYPES: [string, Iq2Kind, () => Grid8, number, RowFn][] = [
  ['IQ2_XXS', 'xxs', iq2xxsGrid, 66, quantizeIq2XxsRowRef],
  ['IQ2_XS', 'xs', iq2xsGrid, 74, quantizeIq2XsRowRef],
  ['IQ2_S', 's', iq2sGrid, 82, quantizeIq2SRowRef],
];

/** The kernel's bytes and the reference's for one row (the reference with no kernel anywhere, make_qp_quants included). */
function both(kind: Iq2Kind, grid: () => Grid8, ref: RowFn, bpb: number, x: Float32Array, qw: Float32Array | null): [Uint8Array, Uint8Array] {
  const bytes = (N / 256) * bpb;
  const a = new Uint8Array(bytes + 3).fill(0xa5);
  const b = new Uint8Array(bytes + 3).fill(0xa5);
  useScaleKernel(true);
  expect(quantizeIq2ByKernel(kind, grid, x, a, 3, N, qw)).toBe(true);
  useScaleKernel(false);
  ref(x, b, 3, N, qw!);
  useScaleKernel(true);
  return [a, b];
}

describe('IQ2 row kernels = TypeScript reference', () => {
  afterAll(() => useScaleKernel(true));

  it('the kernel module is here (so the comparisons below are of two implementations)', () => {
    expect(scaleKernel()).not.toBeNull();
  });

  for (const [name, kind, grid, bpb, ref] of TYPES) {
    for (const edge of [false, true]) {
      it(`${name}: ${edge ? 'edge cases' : 'random blocks'}, byte for byte`, () => {
        const r = rng(name.length * 100 + (edge ? 1 : 0));
        let blocks = 0;
        for (let t = 0; t < (edge ? 16 : 8); t++) {
          const x = row(r, edge);
          const qws: (Float32Array | null)[] = [importances(r, edge)];
          if (name === 'IQ2_S') qws.push(null);
          for (const qw of qws) {
            const [a, b] = both(kind, grid, ref, bpb, x, qw);
            expect(Buffer.compare(a, b), `row ${t}${qw ? '' : ', no importances'}`).toBe(0);
            blocks += N / 256;
          }
        }
        expect(blocks).toBeGreaterThanOrEqual(64);
      });
    }
  }
});
