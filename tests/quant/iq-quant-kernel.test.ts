// The IQ3_S, IQ3_XXS, IQ2_XS, IQ2_S and IQ2_XXS row kernels (wasm/assembly/quantize-iq3.ts,
// quantize-iq2.ts) against their TypeScript references (quant/iq3-quant.ts, iq2-quant.ts *Ref),
// byte for byte, on many random blocks and the edge cases: all-zero groups and super-blocks,
// tiny and subnormal values (the trial scales overflow to infinity), huge values (x² overflows),
// one outlier, ±0, exact level ties, an infinity and a NaN; with no importance matrix (not
// IQ2_XS and IQ2_XXS, which need one), a log-normal one, one with zeros. ggml is the truth for
// the references (imatrix-quant.test.ts, quantize.test.ts check their bytes against ggml's).
import { afterAll, describe, expect, it } from 'vitest';
import { quantizeIq2SRef, quantizeIq2SRow, quantizeIq2XsRef, quantizeIq2XsRow, quantizeIq2XxsRef, quantizeIq2XxsRow } from '../../src/engine/quant/iq2-quant.js';
import { quantizeIq3SRef, quantizeIq3SRow, quantizeIq3XxsRef, quantizeIq3XxsRow } from '../../src/engine/quant/iq3-quant.js';
import { scaleKernel, useScaleKernel } from '../../src/engine/quant/quant-kernel.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const COLS = 4096;

/** The first few byte offsets where a and b differ. */
function differences(a: Uint8Array, b: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < a.length && out.length < 8; i++) if (a[i] !== b[i]) out.push(i);
  return out;
}

/** Rows of COLS, each group of 32 one kind: random at scales 1e-6..1e2 (mostly), or an edge case. */
function rows(seed: number, count: number): Float32Array[] {
  const r = rng(seed);
  const normal = () => r() + r() + r() - 1.5;
  const out: Float32Array[] = [];
  for (let t = 0; t < count; t++) {
    const x = new Float32Array(COLS);
    for (let g = 0; g < COLS / 32; g++) {
      const scale = 10 ** (-6 + 8 * r());
      const kind = r() < 0.7 ? 0 : Math.floor(r() * 12);
      for (let j = 0; j < 32; j++) {
        const i = 32 * g + j;
        switch (kind) {
          case 1: x[i] = 0; break;
          case 2: x[i] = j % 3 ? 1e-20 : -1e-20; break;
          case 3: x[i] = j % 5 ? 1e-43 * (j % 4) : -1.4e-45; break; // subnormal: 15 / max is infinite
          case 4: x[i] = normal() * 1e30; break; // x² and sums overflow
          case 5: x[i] = j === 7 ? 3e38 : normal(); break;
          case 6: x[i] = normal() * scale * (j === 11 ? 1000 : 1); break;
          case 7: x[i] = -Math.abs(normal() * scale); break;
          case 8: x[i] = j % 2 ? -0 : 0; break;
          case 9: x[i] = (Math.floor(r() * 16) - 7.5) * scale; break; // odd multiples of scale/2: rounding ties
          case 10: x[i] = j === 3 ? -1 : j === 17 ? 1 : 1e-30 * normal(); break;
          case 11: x[i] = j === 0 ? 1 : 0; break;
          default: x[i] = normal() * scale;
        }
      }
    }
    out.push(x);
  }
  return out;
}

/** Importances: none, log-normal over six decades, and one with zero (and tiny) columns. */
function importances(seed: number): (Float32Array | null)[] {
  const r = rng(seed);
  const logNormal = new Float32Array(COLS).map(() => Math.exp(7 * (r() - 0.5)));
  const zeros = new Float32Array(COLS).map((_, i) => (i % 5 === 0 || (i >= 64 && i < 96) ? 0 : i % 7 === 0 ? 1e-30 : r()));
  return [null, logNormal, zeros];
}

describe('IQ3_S / IQ3_XXS / IQ2_XS / IQ2_S / IQ2_XXS row kernels = TypeScript references', () => {
  afterAll(() => useScaleKernel(true));

  it('the kernel module is here (so the comparisons below are of two implementations)', () => {
    useScaleKernel(true);
    expect(scaleKernel()).not.toBeNull();
  });

  const special = (() => {
    const x = rows(3, 1)[0];
    x[5] = Infinity;
    x[300] = NaN;
    x[700] = -Infinity;
    x.fill(0, 1024, 1280); // a zero super-block
    return x;
  })();

  type Quantize = (x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null) => void;
  const cases: [string, Quantize, Quantize, number, boolean][] = [
    ['IQ3_S', quantizeIq3SRow, quantizeIq3SRef, 110, false],
    ['IQ3_XXS', quantizeIq3XxsRow, quantizeIq3XxsRef, 98, false],
    ['IQ2_XS', (x, d, o, n, qw) => quantizeIq2XsRow(x, d, o, n, qw!), (x, d, o, n, qw) => quantizeIq2XsRef(x, d, o, n, qw!), 74, true],
    ['IQ2_S', quantizeIq2SRow, quantizeIq2SRef, 82, false],
    ['IQ2_XXS', (x, d, o, n, qw) => quantizeIq2XxsRow(x, d, o, n, qw!), (x, d, o, n, qw) => quantizeIq2XxsRef(x, d, o, n, qw!), 66, true],
  ];
  for (const [name, kernel, ref, bytes, needsImportance] of cases) {
    it(`${name}: the same bytes on 6 rows of 128 random and edge-case groups (and one with infinities and NaN) per importance kind`, () => {
      useScaleKernel(true);
      const size = (COLS / 256) * bytes;
      for (const [kind, qw] of importances(17).entries()) {
        if (!qw && needsImportance) continue;
        for (const x of [...rows(bytes + kind, 6), special]) {
          const a = new Uint8Array(size + 3);
          const b = new Uint8Array(size + 3);
          kernel(x, a, 3, COLS, qw);
          ref(x, b, 3, COLS, qw);
          expect(differences(a, b), `importance kind ${kind}`).toEqual([]);
        }
      }
    });
  }
});
