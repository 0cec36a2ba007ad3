// The IQ2 quantisers' WebAssembly kernel (wasm/assembly/quantize-iq2.ts) against the TypeScript
// reference (quant/iq2-quant.ts *Ref, run as PANTHEON_QUANT_WASM=0 runs it: no kernel at all, so
// IQ2_XXS's make_qp_quants too), byte for byte on rows of 2048 built per group of 16 (a second set of
// inputs beside iq-quant-kernel.test.ts's groups of 32): random blocks, and the edge cases: all-zero and tiny groups, huge values (sums of
// squares that overflow to infinity), subnormals, ±0, ±infinity, outliers, constant groups, NaN, and importances that are
// zero, tiny or huge. ggml is the truth for the reference (imatrix-quant.test.ts, reference-iq.test.ts).
import { afterAll, describe, expect, it } from 'vitest';
import {
  quantizeIq2SRef, quantizeIq2SRow, quantizeIq2XsRef, quantizeIq2XsRow, quantizeIq2XxsRef, quantizeIq2XxsRow,
} from '../../src/engine/quant/iq2-quant.js';
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
const TYPES: [string, string, number, RowFn, RowFn][] = [
  ['IQ2_XXS', 'quantize_row_iq2_xxs', 66, quantizeIq2XxsRow, quantizeIq2XxsRef],
  ['IQ2_XS', 'quantize_row_iq2_xs', 74, quantizeIq2XsRow, quantizeIq2XsRef],
  ['IQ2_S', 'quantize_row_iq2_s', 82, quantizeIq2SRow, quantizeIq2SRef],
];

/** The kernel's bytes and the reference's for one row (the reference with no kernel anywhere, make_qp_quants included). */
function both(kernel: RowFn, ref: RowFn, bpb: number, x: Float32Array, qw: Float32Array | null): [Uint8Array, Uint8Array] {
  const bytes = (N / 256) * bpb;
  const a = new Uint8Array(bytes + 3).fill(0xa5);
  const b = new Uint8Array(bytes + 3).fill(0xa5);
  useScaleKernel(true);
  kernel(x, a, 3, N, qw!);
  useScaleKernel(false);
  ref(x, b, 3, N, qw!);
  useScaleKernel(true);
  return [a, b];
}

describe('IQ2 row kernels = TypeScript reference', () => {
  afterAll(() => useScaleKernel(true));

  it('the kernel module is here, with the IQ2 exports (so the comparisons below are of two implementations)', () => {
    const k = scaleKernel();
    expect(k).not.toBeNull();
    for (const [, fn] of TYPES) expect(() => k!.inst.kernel(fn)).not.toThrow();
  });

  for (const [name, , bpb, kernel, ref] of TYPES) {
    for (const edge of [false, true]) {
      it(`${name}: ${edge ? 'edge cases' : 'random blocks'}, byte for byte`, () => {
        const r = rng(name.length * 100 + (edge ? 1 : 0));
        let blocks = 0;
        for (let t = 0; t < (edge ? 16 : 8); t++) {
          const x = row(r, edge);
          const qws: (Float32Array | null)[] = [importances(r, edge)];
          if (name === 'IQ2_S') qws.push(null);
          for (const qw of qws) {
            const [a, b] = both(kernel, ref, bpb, x, qw);
            expect(Buffer.compare(a, b), `row ${t}${qw ? '' : ', no importances'}`).toBe(0);
            blocks += N / 256;
          }
        }
        expect(blocks).toBeGreaterThanOrEqual(64);
      });
    }
  }
});
