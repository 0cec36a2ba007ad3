// Q4_K as the backends store it (assembly/q4k-group.ts: the relaxed build interleaves each group of
// four rows by u32 word, the plain build keeps ggml's rows; the last rows % 4 rows stay ggml's in
// both): laid out by layout_q4_K, then matvec_q4_K (the whole tensor, ranges that start inside a
// group, ranges that end before the ggml tail), matmul_q4_K and dequant_row_q4_K must equal the
// ggml-layout kernels on ggml's rows (matvec1_q4_K: kquants.ts dot_q4_K per row, the per-row
// definition; dequant_q4_K) bit for bit, and gemm_q4_K over the same ranges too in the relaxed build
// (q4k-gemm.ts reads the grouped rows in place with the matvec's float steps), the scalar reference
// (src/engine/quant, which the plain gemm kernels equal bit for bit: gemm.test.ts) in the plain one. Row counts 1 to 899 (every number of tail rows,
// one to many groups, full and partial sets of the matvec's eight streams), 1 to 129 blocks per row
// (129: past QX_COLS, where the activation's terms are made per block), random block bytes,
// ggml-quantised rows, f16 scales from the extremes of f16 and all-zero blocks, activations from
// tiny to huge. Then the backends: WasmBackend and PoolBackend (1, 2 and 3 threads, slices and bands
// on multiples of four rows, tail rows in a worker's memory) against the same truths. Both builds:
// the plain one everywhere, the relaxed one where this Node runs it (Node 24: .ci/run's second
// part), counted as skipped elsewhere (builds.ts); the relaxed kernels both with the i32 dots (where
// the machine has them in one instruction: q4k_dot32_active) and with the i16 dots.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import type { MatBackend } from '../../src/engine/backend/types.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { f32ToF16, matmul } from '../../src/engine/quant/index.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { actBytes, gemmScratchBytes, rowGroup, rowLayout, widenBytes } from '../../src/engine/wasm/layout.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { firstBitMismatch } from './bits.js';
import { BUILDS, skipBuild } from './builds.js';
import { fillFrom, quantisedWeights, randomBlocks, randomFloats, rng } from './gen.js';

const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');
const T = GgmlType.Q4_K;
const SENTINEL = -12345.5;
/** Tokens of the matmul (< GEMM_MIN_TOKENS: matvec per token) and of the gemm. */
const N_MATMUL = 3;
const N_GEMM = 9;

/** Random blocks with f16 d and dmin from the extremes of f16 (max, subnormals, ±0) and ~15% all-zero blocks (kquants-rows.test.ts). */
function extremeBlocks(rows: number, cols: number, seed: number): Uint8Array {
  const r = rng(seed);
  const pool = [65504, -65504, 6e-8, -6e-8, 3e-5, 0, -0, 1, -2, 0.5];
  const data = randomBlocks(T, rows, cols, seed);
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let b = 0; b < data.length; b += 144) {
    for (const o of [0, 2]) dv.setUint16(b + o, f32ToF16(pool[Math.floor(r() * pool.length)]), true);
    if (r() < 0.15) data.fill(0, b, b + 144);
  }
  return data;
}

/** Activations: ordinary, with an all-zero block, tiny, huge, and magnitudes mixed across blocks. */
function activations(n: number, cols: number, seed: number, kind: number): Float32Array {
  const x = randomFloats(n * cols, seed, [2, 2, 1e-3, 50, 1][kind % 5]);
  if (kind % 5 === 1) x.fill(0, 0, 256);
  if (kind % 5 === 4) for (let i = 0; i < x.length; i++) x[i] *= 10 ** (((i >> 8) % 7) - 3);
  return x;
}

interface Case { name: string; rows: number; cols: number; ranges: [number, number][]; w: Uint8Array; x: Float32Array }

/** Row ranges: the whole tensor, starts inside the first group, ends before the ggml tail, a short range. */
function ranges(rows: number): [number, number][] {
  const out: [number, number][] = [[0, rows]];
  for (const r0 of [1, 3, 5, 6]) if (r0 < rows) out.push([r0, rows]);
  const g = rows & ~3;
  if (g > 0) out.push([0, g]);
  if (g > 4) out.push([2, g], [4, g - 4 > 4 ? g - 4 : g], [g - 3, g]);
  return out;
}

function cases(): Case[] {
  const out: Case[] = [];
  let seed = 4100;
  const shapes: [number, number][] = [[1, 256], [3, 512], [4, 256], [5, 768], [7, 256], [8, 512], [13, 2816], [37, 256], [67, 512], [101, 256], [899, 256], [9, 33024]];
  shapes.forEach(([rows, cols], i) => {
    const weights: [string, Uint8Array][] = [
      ['random blocks', randomBlocks(T, rows, cols, seed++)],
      ['ggml-quantised', quantisedWeights(T, rows, cols, seed++)],
      ['extreme scales, zero blocks', extremeBlocks(rows, cols, seed++)],
    ];
    for (const [what, w] of weights) out.push({ name: `${what} ${rows}×${cols}`, rows, cols, ranges: ranges(rows), w, x: activations(N_GEMM, cols, seed++, i) });
  });
  return out;
}

/**
 * The stored tensor's outputs and the truths, in one instance of a build: ggml's rows at g (the
 * truths' copy) and, laid out by layout_q4_K in place as the backends do (rowLayout), at w. Per matvec range: the
 * range of matvec_q4_K (SENTINEL elsewhere), then matvec1_q4_K's on ggml's rows; then matmul_q4_K
 * and matvec1 token by token; gemm_q4_K per range (relaxed: matvec1 token by token; plain: the
 * scalar reference); dequant_row_q4_K of every row and dequant_q4_K of ggml's.
 */
function runStored(k: KernelInstance, c: Case, relaxed: boolean): { got: Float32Array[]; want: Float32Array[]; what: string[] } {
  const { rows, cols, n } = { ...c, n: N_GEMM };
  const rb = rowBytes(T, cols), ab = actBytes('q8_K', cols), lay = rowLayout(T, cols)!;
  const sizes = [rows * rb + lay.slack, rows * rb, n * cols * 4, n * ab, widenBytes('q8_K', n, cols), gemmScratchBytes(cols), n * rows * 4, Math.max(n * rows, cols) * 4, lay.temp];
  const [w, g, xp, xq, xw, scratch, out, one, temp] = sizes.map((b) => k.arena.alloc(b, 64));
  k.arena.u8(w + lay.slack, rows * rb).set(c.w);
  k.arena.u8(g, rows * rb).set(c.w);
  k.call(lay.fn, ...lay.args(w, w + lay.slack, rows, temp));
  k.arena.f32(xp, n * cols).set(c.x);
  for (let t = 0; t < n; t++) k.call('quantize_q8_K', xq + t * ab, xp + t * cols * 4, cols);
  const f32 = (p: number, len: number) => k.arena.f32(p, len).slice();
  const got: Float32Array[] = [], want: Float32Array[] = [], what: string[] = [];
  for (const [r0, r1] of c.ranges) {
    k.arena.f32(out, rows).fill(SENTINEL);
    k.call('matvec_q4_K', out, w, rb, r0, r1, xq, cols);
    got.push(f32(out, rows));
    k.arena.f32(one, rows).fill(SENTINEL);
    k.call('matvec1_q4_K', one, g, rb, r0, r1, xq, cols);
    want.push(f32(one, rows));
    what.push(`matvec rows ${r0}..${r1}`);
  }
  k.call('matmul_q4_K', out, w, rb, 0, rows, xq, cols, N_MATMUL, ab, rows);
  got.push(f32(out, N_MATMUL * rows));
  for (let t = 0; t < N_MATMUL; t++) k.call('matvec1_q4_K', one + t * rows * 4, g, rb, 0, rows, xq + t * ab, cols);
  want.push(f32(one, N_MATMUL * rows));
  what.push('matmul');
  // gemm: the relaxed build gives its matvec's bits (q4k-gemm.ts), the plain build the scalar reference's
  const ref = new Float32Array(n * rows);
  if (relaxed) {
    for (let t = 0; t < n; t++) k.call('matvec1_q4_K', one + t * rows * 4, g, rb, 0, rows, xq + t * ab, cols);
    ref.set(k.arena.f32(one, n * rows));
  } else matmul(ref, { type: T, rows, cols, rowBytes: rb, data: c.w }, c.x, n);
  k.call('widen_q8_K', xw, xq, n, cols, ab);
  for (const [r0, r1] of c.ranges) {
    k.arena.f32(out, n * rows).fill(SENTINEL);
    k.call('gemm_q4_K', out, w, rb, r0, r1, xw, cols, n, rows, scratch);
    got.push(f32(out, n * rows));
    want.push(ref.map((v, i) => (i % rows >= r0 && i % rows < r1 ? v : SENTINEL)));
    what.push(`gemm rows ${r0}..${r1}`);
  }
  const deq = new Float32Array(rows * cols), deqRef = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    k.call('dequant_row_q4_K', one, w, rb, rows, r, cols);
    deq.set(k.arena.f32(one, cols), r * cols);
    k.call('dequant_q4_K', one, g + r * rb, cols);
    deqRef.set(k.arena.f32(one, cols), r * cols);
  }
  got.push(deq);
  want.push(deqRef);
  what.push('dequant_row');
  [w, g, xp, xq, xw, scratch, out, one, temp].forEach((p, i) => k.arena.free(p, sizes[i]));
  return { got, want, what };
}

for (const simd of BUILDS) describe.skipIf(skipBuild(simd))(`Q4_K in the stored layout (${simd} build)`, () => {
  let k!: KernelInstance;
  beforeAll(() => {
    k = new KernelInstance(loadKernelModule({ simd }));
  });

  // relaxed: with the i32 dots where this machine has them in one instruction (q4k_dot32_active),
  // and with the i16 dots (forced)
  for (const dot32 of simd === 'relaxed' ? [1, 0] : [1]) {
    it(`matvec over row ranges, matmul, gemm over row ranges and dequant_row equal the ggml-layout kernels (plain gemm: the scalar reference) bit for bit${simd === 'relaxed' ? (dot32 ? ', default dots' : ', i16 dots') : ''}`, () => {
      k.call('q4k_dot32_allow', dot32);
      try {
        if (!dot32) expect(k.call('q4k_dot32_active')).toBe(0);
        for (const c of cases()) {
          const { got, want, what } = runStored(k, c, simd === 'relaxed');
          want.forEach((ref, j) => {
            const at = firstBitMismatch(got[j], ref);
            if (at >= 0) expect.fail(`${c.name}, ${what[j]}: output ${at}: ${got[j][at]} vs ${ref[at]}`);
          });
        }
      } finally {
        k.call('q4k_dot32_allow', 1);
      }
    });
  }

  it(simd === 'relaxed' ? 'the relaxed build interleaves whole groups by u32 word and leaves the tail rows in ggml\'s order' : 'the plain build moves the rows unchanged', () => {
    // 6 rows × 512 columns of distinct bytes: group 0 interleaved per block, rows 4 and 5 ggml's.
    // Word j of row k's block goes to lane k of a vector: the header's words j < 4 to vector j; quant
    // word j = 4 + 8c + i (chunk c, i < 8) to 64 + 256·(c & 1) + 64·⌊i/2⌋ + 16·(2·⌊c/2⌋ + i & 1)
    const rows = 6, cols = 512, rb = rowBytes(T, cols);
    const src = Uint8Array.from({ length: rows * rb }, (_, i) => (i * 7 + 3) & 255);
    const want = src.slice();
    const vector = (j: number) => {
      if (j < 4) return 16 * j;
      const c = (j - 4) >> 3, i = (j - 4) & 7;
      return 64 + 256 * (c & 1) + 64 * (i >> 1) + 16 * (2 * (c >> 1) + (i & 1));
    };
    expect(new Set(Array.from({ length: 36 }, (_, j) => vector(j))).size).toBe(36);
    for (let b = 0; b < 2; b++) {
      for (let kk = 0; kk < 4; kk++) {
        for (let j = 0; j < 36; j++) want.set(src.subarray(kk * rb + b * 144 + 4 * j, kk * rb + b * 144 + 4 * j + 4), b * 576 + vector(j) + 4 * kk);
      }
    }
    const bytes = readFileSync(join(WASM_DIR, simd === 'relaxed' ? 'kernels-relaxed.wasm' : 'kernels.wasm'));
    const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
    const ex = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
    const w = Math.ceil(ex.heap_base() / 64) * 64;
    new Uint8Array(memory.buffer).set(src, w);
    ex.layout_q4_K(w, w, w + rows * rb, rows, cols); // in place, as the backends lay it out
    expect([...new Uint8Array(memory.buffer, w, rows * rb)]).toEqual([...(simd === 'relaxed' ? want : src)]);
  });
});

for (const simd of BUILDS) describe.skipIf(skipBuild(simd))(`Q4_K through the backends (${simd} build)`, () => {
  const backends: [string, MatBackend][] = [];
  let k!: KernelInstance;
  beforeAll(() => {
    k = new KernelInstance(loadKernelModule({ simd }));
    backends.push(['wasm', new WasmBackend({ simd })], ...[1, 2, 3].map((t): [string, MatBackend] => [`pool ×${t}`, new PoolBackend({ simd, threads: t })]));
  });
  afterAll(() => backends.forEach(([, b]) => b.dispose?.()));

  /** matvec1_q4_K of every row for each of n tokens on ggml's rows, and dequant_q4_K of each row. */
  function truths(data: Uint8Array, rows: number, cols: number, x: Float32Array, n: number): { mv: Float32Array; deq: Float32Array } {
    const rb = rowBytes(T, cols), ab = actBytes('q8_K', cols);
    const sizes = [rows * rb, n * cols * 4, n * ab, Math.max(n * rows, cols) * 4];
    const [g, xp, xq, out] = sizes.map((b) => k.arena.alloc(b, 64));
    k.arena.u8(g, rows * rb).set(data);
    k.arena.f32(xp, n * cols).set(x.subarray(0, n * cols));
    for (let t = 0; t < n; t++) {
      k.call('quantize_q8_K', xq + t * ab, xp + t * cols * 4, cols);
      k.call('matvec1_q4_K', out + t * rows * 4, g, rb, 0, rows, xq + t * ab, cols);
    }
    const mv = k.arena.f32(out, n * rows).slice();
    const deq = new Float32Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      k.call('dequant_q4_K', out, g + r * rb, cols);
      deq.set(k.arena.f32(out, cols), r * cols);
    }
    sizes.forEach((b, i) => k.arena.free([g, xp, xq, out][i], b));
    return { mv, deq };
  }

  it('the stored layout keeps groups of four rows together', () => {
    expect(rowGroup(T)).toBe(4);
  });

  // one group and a tail; groups only; 43 = 10 groups + 3; 899 = 224 groups + 3 (3 threads: slices of
  // 300, 300, 299 rows, bands between them)
  for (const [rows, cols] of [[5, 256], [8, 512], [43, 256], [899, 256]]) {
    it(`${rows}×${cols}: matvec, matmul (n = ${N_MATMUL}), gemm (n = ${N_GEMM}) and every row's getRow equal the ggml-layout kernels`, () => {
      for (const data of [randomBlocks(T, rows, cols, rows + cols), quantisedWeights(T, rows, cols, rows * cols)]) {
        const rb = rowBytes(T, cols);
        const x = randomFloats(N_GEMM * cols, rows, 2);
        const { mv, deq } = truths(data, rows, cols, x, N_GEMM);
        const ref = new Float32Array(N_GEMM * rows);
        matmul(ref, { type: T, rows, cols, rowBytes: rb, data }, x, N_GEMM);
        for (const [name, be] of backends) {
          const h = be.addWeight({ name: 'w', type: T, rows, cols }, fillFrom(data));
          for (const n of [1, N_MATMUL, N_GEMM]) {
            const got = new Float32Array(n * rows);
            if (n === 1) be.matvec(got, h, x.subarray(0, cols));
            else be.matmul(got, h, x.subarray(0, n * cols), n);
            // gemm: the relaxed build gives its matvec's bits (q4k-gemm.ts), the plain one the scalar reference's
            const want = n === N_GEMM && simd !== 'relaxed' ? ref : mv.subarray(0, n * rows);
            const at = firstBitMismatch(got, want);
            if (at >= 0) expect.fail(`${name} n=${n}: output ${at}: ${got[at]} vs ${want[at]}`);
          }
          const row = new Float32Array(cols);
          for (let r = 0; r < rows; r++) {
            be.getRow(row, h, r);
            if (firstBitMismatch(row, deq.subarray(r * cols, (r + 1) * cols)) >= 0) expect.fail(`${name} getRow ${r}`);
          }
        }
      }
    });
  }
});
