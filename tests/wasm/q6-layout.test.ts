// Q6_K as the backends store it (assembly/q6k-group.ts: the relaxed build interleaves each group
// of four rows, the plain build keeps ggml's rows; the last rows % 4 rows stay ggml's in both).
// Laid out by layout_q6_K, the kernels must give, bit for bit, what the ggml-layout kernels give
// on the same tensor: matvec_q6_K (whole tensor, ranges that start inside a group, ranges that end
// before the ggml tail) and matmul_q6_K as matvec1_q6_K (dot_q6_K row by row on ggml's rows),
// dequant_row_q6_K as dequant_q6_K of the ggml row, and gemm_q6_K over the same ranges as
// matvec1_q6_K too in the relaxed build (q6k-gemm.ts reads the groups in place with the matvec's
// float steps), as the scalar reference in the plain one (gemm.test.ts holds the plain gemm to it). Rows 1 to 899, 1 to 65 blocks per row (over
// the 16384 columns of the prepared activation: the unprepared path). Then the backends:
// WasmBackend and PoolBackend on 1, 2 and 3 threads (slices, and their bands, on multiples of four
// rows: rows in workers' memories, tails inside a slice). And the layout's bytes against the
// layout as q6k-group.ts describes it, rebuilt here from ggml's block.
// Both builds: the plain one always, the relaxed one where this Node runs it (Node 24).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import type { MatBackend } from '../../src/engine/backend/types.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeRow, matmul } from '../../src/engine/quant/index.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { actBytes, gemmScratchBytes, kernelType, rowLayout, widenBytes } from '../../src/engine/wasm/layout.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { bits, firstBitMismatch } from './bits.js';
import { BUILDS, skipBuild } from './builds.js';
import { fillFrom, quantisedWeights, randomBlocks, randomFloats } from './gen.js';

const T = GgmlType.Q6_K;
const KT = kernelType(T)!;
const SENTINEL = -12345.5;

/** Row ranges: the whole tensor, starts inside the first group, ends before the ggml tail. */
function ranges(rows: number): [number, number][] {
  const out: [number, number][] = [[0, rows]];
  for (const r0 of [1, 3, 5, 6]) if (r0 < rows) out.push([r0, rows]);
  const g = rows & ~3;
  if (g > 0) out.push([0, g]);
  if (g > 4) out.push([2, g], [4, g - 4 > 4 ? g - 4 : g]);
  return out;
}

/** ggml's quants q (0..63) of a Q6_K row, in element order (dequantize_row_q6_K). */
function quants(data: Uint8Array, off: number, cols: number): number[] {
  const q: number[] = [];
  for (let b = 0; b < cols / 256; b++) {
    const o = off + b * 210;
    for (let e = 0; e < 256; e++) {
      const n = e >> 7, j = (e >> 5) & 3, l = e & 31;
      const ql = data[o + 64 * n + l + (j & 1) * 32];
      const lo = j < 2 ? ql & 15 : ql >> 4;
      const hi = (data[o + 128 + 32 * n + l] >> (2 * j)) & 3;
      q.push(lo | (hi << 4));
    }
  }
  return q;
}

/** The relaxed build's stored bytes of a group-aligned tensor, from q6k-group.ts's description. */
function grouped(data: Uint8Array, rows: number, cols: number): Uint8Array {
  const rb = rowBytes(T, cols), nb = cols / 256;
  const out = data.slice();
  for (let g = 0; g + 4 <= rows; g += 4) {
    const q = [0, 1, 2, 3].map((r) => quants(data, (g + r) * rb, cols));
    for (let b = 0; b < nb; b++) {
      const a = g * rb + b * 840;
      for (let p = 0; p < 8; p++) {
        for (let k = 0; k < 2; k++) {
          for (let r = 0; r < 4; r++) {
            // W_m lane r, m < 4: q_r[e], q_r[e+1], q_r[e+16], q_r[e+17], e = 32p + 4(2k + m/2) + 2(m % 2)
            const w = [0, 1, 2, 3].map((m) => {
              const e = b * 256 + 32 * p + 4 * (2 * k + (m >> 1)) + 2 * (m & 1);
              return [q[r][e], q[r][e + 1], q[r][e + 16], q[r][e + 17]];
            });
            for (let i = 0; i < 4; i++) {
              const at = a + 96 * p + 48 * k + 4 * r + i;
              out[at] = w[0][i] | ((w[3][i] & 3) << 6);
              out[at + 16] = w[1][i] | (((w[3][i] >> 2) & 3) << 6);
              out[at + 32] = w[2][i] | ((w[3][i] >> 4) << 6);
            }
          }
        }
      }
      for (let r = 0; r < 4; r++) {
        const s = (g + r) * rb + b * 210;
        for (let j = 0; j < 16; j++) out[a + 768 + 8 * (j >> 1) + 2 * r + (j & 1)] = data[s + 192 + j];
        out[a + 832 + 2 * r] = data[s + 208];
        out[a + 833 + 2 * r] = data[s + 209];
      }
    }
  }
  return out;
}

for (const simd of BUILDS) describe.skipIf(skipBuild(simd))(`Q6_K in the stored layout (${simd} build)`, () => {
  let k!: KernelInstance;
  beforeAll(() => {
    k = new KernelInstance(loadKernelModule({ simd }));
  });

  /** The tensor laid out as the backends do (rowLayout), and a ggml copy; runs fn, then frees. */
  function withTensor(data: Uint8Array, rows: number, cols: number, fn: (w: number, raw: number) => void): void {
    const rb = rowBytes(T, cols), lay = rowLayout(T, cols)!;
    const size = rows * rb + lay.slack;
    const w = k.arena.alloc(size), raw = k.arena.alloc(rows * rb);
    k.arena.u8(w + lay.slack, rows * rb).set(data);
    k.call(lay.fn, ...lay.args(w, w + lay.slack, rows, 0)); // (Q6_K takes no temp)
    k.arena.u8(raw, rows * rb).set(data);
    try {
      fn(w, raw);
    } finally {
      k.arena.free(raw, rows * rb);
      k.arena.free(w, size);
    }
  }

  const shapes: [number, number][] = [[1, 256], [3, 512], [4, 256], [5, 768], [8, 1024], [13, 4096], [37, 512], [899, 512], [6, 16640]];
  for (const [rows, cols] of shapes) {
    it(`${rows}×${cols}: matvec, matmul, gemm and dequant_row equal the ggml-layout kernels and the reference`, () => {
      const rb = rowBytes(T, cols), ab = actBytes('q8_K', cols);
      const n = rows > 100 || cols > 8192 ? 3 : 9; // 9: gemm takes whole and partial groups of four tokens
      for (const data of [randomBlocks(T, rows, cols, rows * 7 + cols), quantisedWeights(T, rows, cols, rows + cols)]) {
        const x = randomFloats(n * cols, rows + 3 * cols, 2);
        withTensor(data, rows, cols, (w, raw) => {
          const sizes = [n * cols * 4, n * ab, n * rows * 4, rows * 4, widenBytes('q8_K', n, cols), gemmScratchBytes(cols), cols * 4, cols * 4];
          const [xp, xq, out, one, xw, scratch, deq, deqRef] = sizes.map((s) => k.arena.alloc(s));
          k.arena.f32(xp, n * cols).set(x);
          for (let t = 0; t < n; t++) k.quantize('q8_K', xq + t * ab, xp + t * cols * 4, cols);
          for (const [r0, r1] of ranges(rows)) {
            k.arena.f32(out, rows).fill(SENTINEL);
            k.arena.f32(one, rows).fill(SENTINEL);
            k.matvec(KT, out, w, rb, r0, r1, xq, cols);
            k.call('matvec1_q6_K', one, raw, rb, r0, r1, xq, cols);
            const at = firstBitMismatch(k.arena.f32(out, rows), k.arena.f32(one, rows));
            expect(at, `matvec rows ${r0}..${r1}: row ${at}`).toBe(-1);
          }
          k.matmul(KT, out, w, rb, 0, rows, xq, cols, n, ab, rows);
          for (let t = 0; t < n; t++) {
            k.call('matvec1_q6_K', one, raw, rb, 0, rows, xq + t * ab, cols);
            expect(firstBitMismatch(k.arena.f32(out + t * rows * 4, rows), k.arena.f32(one, rows)), `matmul token ${t}`).toBe(-1);
          }
          // gemm: rows [r0, r1) of the relaxed build's matvec (q6k-gemm.ts reads the groups in
          // place with its float steps: matvec1_q6_K per token), of the scalar reference in the plain build
          const want = new Float32Array(n * rows);
          if (simd === 'relaxed') {
            for (let t = 0; t < n; t++) {
              k.call('matvec1_q6_K', one, raw, rb, 0, rows, xq + t * ab, cols);
              want.set(k.arena.f32(one, rows), t * rows);
            }
          } else matmul(want, { type: T, rows, cols, rowBytes: rb, data }, x, n);
          k.widen('q8_K', xw, xq, n, cols, ab);
          for (const [r0, r1] of ranges(rows)) {
            k.arena.f32(out, n * rows).fill(SENTINEL);
            k.gemm(KT, out, w, rb, r0, r1, xw, cols, n, rows, scratch);
            const got = k.arena.f32(out, n * rows);
            const ref = want.map((v, i) => (i % rows >= r0 && i % rows < r1 ? v : SENTINEL));
            const at = firstBitMismatch(got, ref);
            expect(at, `gemm rows ${r0}..${r1}: output ${at}: ${got[at]} vs ${ref[at]}`).toBe(-1);
          }
          for (let r = 0; r < rows; r++) {
            k.dequantRow(KT, deq, w, rb, rows, r, cols);
            k.dequant(KT, deqRef, raw + r * rb, cols);
            if (firstBitMismatch(k.arena.f32(deq, cols), k.arena.f32(deqRef, cols)) >= 0) expect.fail(`dequant_row ${r}`);
          }
          [xp, xq, out, one, xw, scratch, deq, deqRef].forEach((p, i) => k.arena.free(p, sizes[i]));
        });
      }
    });
  }

  it(simd === 'relaxed' ? 'layout_q6_K writes the groups as q6k-group.ts describes them, the tail rows as ggml\'s' : 'layout_q6_K moves the rows unchanged', () => {
    for (const [rows, cols] of [[6, 512], [8, 256], [3, 256]]) {
      const data = randomBlocks(T, rows, cols, 40 + rows);
      withTensor(data, rows, cols, (w) => {
        const want = simd === 'relaxed' ? grouped(data, rows, cols) : data;
        expect([...k.arena.u8(w, rows * rowBytes(T, cols))], `${rows}×${cols}`).toEqual([...want]);
      });
    }
  });
});

for (const simd of BUILDS) describe.skipIf(skipBuild(simd))(`Q6_K through the backends (${simd} build)`, () => {
  const backends: [string, MatBackend][] = [];
  let k!: KernelInstance;
  beforeAll(() => {
    k = new KernelInstance(loadKernelModule({ simd }));
    backends.push(['wasm', new WasmBackend({ simd })], ...[1, 2, 3].map((t): [string, MatBackend] => [`pool ×${t}`, new PoolBackend({ simd, threads: t })]));
  });
  afterAll(() => backends.forEach(([, b]) => b.dispose?.()));

  /** matvec1_q6_K (ggml's rows, this build) of each token. */
  function rowDots(data: Uint8Array, rows: number, cols: number, x: Float32Array, n: number): Float32Array {
    const rb = rowBytes(T, cols), ab = actBytes('q8_K', cols);
    const w = k.arena.alloc(rows * rb), xp = k.arena.alloc(cols * 4), xq = k.arena.alloc(ab), o = k.arena.alloc(rows * 4);
    k.arena.u8(w, rows * rb).set(data);
    const got = new Float32Array(n * rows);
    for (let t = 0; t < n; t++) {
      k.arena.f32(xp, cols).set(x.subarray(t * cols, (t + 1) * cols));
      k.quantize('q8_K', xq, xp, cols);
      k.call('matvec1_q6_K', o, w, rb, 0, rows, xq, cols);
      got.set(k.arena.f32(o, rows), t * rows);
    }
    k.arena.free(o, rows * 4);
    k.arena.free(xq, ab);
    k.arena.free(xp, cols * 4);
    k.arena.free(w, rows * rb);
    return got;
  }

  // one group and a tail; groups only; 43 (slices of 16, 16, 11 on 3 threads); 899 (300, 300, 299)
  for (const [rows, cols] of [[5, 256], [8, 512], [43, 256], [899, 512]]) {
    it(`${rows}×${cols}: matvec and matmul (n = 5) as matvec1_q6_K, gemm (n = 9: relaxed as matvec1_q6_K, plain as the scalar reference) and every row's getRow as the scalar reference`, () => {
      for (const data of [randomBlocks(T, rows, cols, rows + cols), quantisedWeights(T, rows, cols, rows * cols)]) {
        const rb = rowBytes(T, cols);
        const q = { type: T, rows, cols, rowBytes: rb, data };
        const xs = [1, 5, 9].map((n) => randomFloats(n * cols, n + rows, 2));
        const wants = [rowDots(data, rows, cols, xs[0], 1), rowDots(data, rows, cols, xs[1], 5), new Float32Array(9 * rows)];
        // gemm: the relaxed build gives its matvec's bits (q6k-gemm.ts), the plain one the scalar reference's
        if (simd === 'relaxed') wants[2] = rowDots(data, rows, cols, xs[2], 9);
        else matmul(wants[2], q, xs[2], 9);
        for (const [name, be] of backends) {
          const h = be.addWeight({ name: 'w', type: T, rows, cols }, fillFrom(data));
          [1, 5, 9].forEach((n, i) => {
            const got = new Float32Array(n * rows);
            if (n === 1) be.matvec(got, h, xs[i]);
            else be.matmul(got, h, xs[i], n);
            expect(bits(got), `${name} n=${n}`).toEqual(bits(wants[i]));
          });
          const row = new Float32Array(cols), ref = new Float32Array(cols);
          for (let r = 0; r < rows; r++) {
            be.getRow(row, h, r);
            dequantizeRow(T, data, r * rb, ref, cols);
            if (firstBitMismatch(row, ref) >= 0) expect.fail(`${name} getRow ${r}`);
          }
        }
      }
    });
  }
});
