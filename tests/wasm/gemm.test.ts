// The prompt kernels of assembly/gemm.ts (widened activations, four tokens per weight block) against
// the scalar reference in src/engine/quant (ggml's *_generic dots with f32 rounding): every output
// must have the reference's exact bits (compared as Uint32; the relaxed build's Q4_K and Q6_K: their
// matvec's bits, matvec1_* per token, as q4k-gemm.ts and q6k-gemm.ts read the grouped rows in
// place), for every token count 2..17 (partial
// groups of four), row ranges that start inside a matrix and do not fill a row block, several
// blocks per row, random block bytes (every bit pattern), ggml-quantised weights and rows of real
// GGUF files when bench/models has them. Outputs outside the row range stay untouched. Runs the
// plain SIMD build, and the relaxed build too where the engine has relaxed SIMD (Node 24, Electron;
// skipped elsewhere, builds.ts);
// and the relaxed build inside Chromium (the V8 Electron ships) when one is installed.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM, inChromium } from '../chromium.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { readGgufHeaderSync, readTensorBytes } from '../../src/engine/gguf/file.js';
import { GgmlType, ggmlTypeName, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeRow, matmul } from '../../src/engine/quant/index.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { actBytes, gemmScratchBytes, kernelType, rowLayout, widenBytes } from '../../src/engine/wasm/layout.js';
import { loadKernelModule, relaxedDotModule, relaxedProbe } from '../../src/engine/wasm/loader.js';
import { BUILDS, skipBuild } from './builds.js';
import { ROOT } from '../helpers.js';
import { fillFrom, movedLayout, quantisedWeights, randomBlocks, randomFloats } from './gen.js';

const GEMM = [GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q5_0, GgmlType.Q4_1, GgmlType.Q5_1, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K];
const BENCH_MODELS = join(ROOT, 'bench', 'models');

/** Real rows: the first `rows` rows of a tensor of this type in one of bench/models' llama110m files. */
const REAL: Partial<Record<number, { file: string; tensor: string }>> = {
  [GgmlType.Q4_K]: { file: 'llama110m-Q4_K_M.gguf', tensor: 'blk.0.attn_q.weight' },
  [GgmlType.Q6_K]: { file: 'llama110m-Q6_K.gguf', tensor: 'blk.0.ffn_down.weight' },
  [GgmlType.Q4_0]: { file: 'llama110m-Q4_0.gguf', tensor: 'blk.0.attn_q.weight' },
  [GgmlType.Q8_0]: { file: 'llama110m-Q8_0.gguf', tensor: 'blk.0.ffn_down.weight' },
};

function realRows(type: number, rows: number): { data: Uint8Array; cols: number } | undefined {
  const r = REAL[type];
  const path = r && join(BENCH_MODELS, r.file);
  if (!r || !path || !existsSync(path)) return undefined;
  const header = readGgufHeaderSync(path);
  const t = header.tensors.find((x) => x.name === r.tensor)!;
  expect(t.type, `${r.file} ${r.tensor}`).toBe(type);
  const cols = Number(t.dims[0]);
  return { data: readTensorBytes(path, header, r.tensor).slice(0, rows * rowBytes(type, cols)), cols };
}

/**
 * n activations: odd tokens random, even tokens a weight row plus noise, so that their block sums
 * run up to the largest integers the formats reach and products like sumi·d_w need every bit
 * (with small random sums, different float orders often round alike).
 */
function activations(type: number, data: Uint8Array, rows: number, cols: number, n: number, seed: number): Float32Array {
  const x = randomFloats(n * cols, seed, 2);
  const w = new Float32Array(cols);
  for (let t = 0; t < n; t += 2) {
    dequantizeRow(type, data, (t % rows) * rowBytes(type, cols), w, cols);
    for (let i = 0; i < cols; i++) x[t * cols + i] = w[i] + 0.01 * x[t * cols + i];
  }
  return x;
}

/** The reference's out[n, rows] as bits. */
function reference(type: number, data: Uint8Array, rows: number, cols: number, x: Float32Array, n: number): Uint32Array {
  const out = new Float32Array(n * rows);
  matmul(out, { type, rows, cols, rowBytes: rowBytes(type, cols), data }, x, n);
  return new Uint32Array(out.buffer);
}

for (const simd of BUILDS) describe.skipIf(skipBuild(simd))(`gemm kernels (${simd} build) against the scalar reference (relaxed Q4_K, Q6_K: their matvec), bit for bit`, () => {
  let k!: KernelInstance;
  beforeAll(() => {
    k = new KernelInstance(loadKernelModule({ simd }));
  });

  /**
   * The bits gemm must give: the scalar reference's, except the relaxed build's Q4_K and Q6_K, whose
   * gemm reads the grouped rows in place with its matvec's float steps (q4k-gemm.ts, q6k-gemm.ts):
   * matvec1_* per token on ggml's rows (the decode kernel's definition, held to the reference within
   * rounding by kquants-rows.test.ts), so prompt and generation agree bit for bit.
   */
  function truth(type: number, data: Uint8Array, rows: number, cols: number, x: Float32Array, n: number): Uint32Array {
    if (simd !== 'relaxed' || (type !== GgmlType.Q4_K && type !== GgmlType.Q6_K)) return reference(type, data, rows, cols, x, n);
    const mv = type === GgmlType.Q4_K ? 'matvec1_q4_K' : 'matvec1_q6_K';
    const rb = rowBytes(type, cols), ab = actBytes('q8_K', cols);
    const sizes = [rb * rows, n * cols * 4, n * ab, n * rows * 4];
    const [g, xp, xq, out] = sizes.map((b) => k.arena.alloc(b));
    k.arena.u8(g, rb * rows).set(data);
    k.arena.f32(xp, n * cols).set(x.subarray(0, n * cols));
    for (let t = 0; t < n; t++) {
      k.call('quantize_q8_K', xq + t * ab, xp + t * cols * 4, cols);
      k.call(mv, out + t * rows * 4, g, rb, 0, rows, xq + t * ab, cols);
    }
    const want = new Uint32Array(k.arena.f32(out, n * rows).slice().buffer);
    [g, xp, xq, out].forEach((p, i) => k.arena.free(p, sizes[i]));
    return want;
  }

  /** Rows [r0, r1) of out[n, rows] from the kernels; the other rows' outputs must stay NaN. */
  function gemm(type: number, data: Uint8Array, rows: number, cols: number, x: Float32Array, n: number, r0: number, r1: number): Float32Array {
    const kt = kernelType(type)!;
    const rb = rowBytes(type, cols);
    const ab = actBytes(kt.act, cols);
    // the backends' stored layout (layout.ts rowLayout: Q4_0, Q4_K) of rows [0, r1), the tensor as far as the kernel reads it
    const lay = rowLayout(type, cols);
    const sizes = [rb * rows, n * cols * 4, n * ab, widenBytes(kt.act, n, cols), n * rows * 4, gemmScratchBytes(cols), rb * rows, Math.max(64, lay?.temp ?? 0)];
    const [w, xp, xq, xw, out, scratch, stage, temp] = sizes.map((b) => k.arena.alloc(b));
    k.arena.u8(lay ? stage : w, rb * rows).set(data);
    if (lay) k.call(lay.fn, ...lay.args(w, stage, r1, temp));
    k.arena.f32(xp, n * cols).set(x);
    k.arena.f32(out, n * rows).fill(NaN);
    for (let t = 0; t < n; t++) k.quantize(kt.act, xq + t * ab, xp + t * cols * 4, cols);
    k.widen(kt.act, xw, xq, n, cols, ab);
    k.gemm(kt, out, w, rb, r0, r1, xw, cols, n, rows, scratch);
    const got = k.arena.f32(out, n * rows).slice();
    [w, xp, xq, xw, out, scratch, stage, temp].forEach((p, i) => k.arena.free(p, sizes[i]));
    return got;
  }

  it('widen_bytes and gemm_scratch_bytes in the module equal widenBytes and gemmScratchBytes in layout.ts', () => {
    for (const [n, cols] of [[1, 256], [5, 768], [128, 2048]]) {
      expect(k.call('gemm_scratch_bytes', cols)).toBe(gemmScratchBytes(cols));
      expect(k.call('widen_bytes', 0, n, cols)).toBe(widenBytes('q8_0', n, cols));
      expect(k.call('widen_bytes', 0, n, cols)).toBe(widenBytes('q8_1', n, cols));
      expect(k.call('widen_bytes', 1, n, cols)).toBe(widenBytes('q8_K', n, cols));
    }
  });

  for (const type of GEMM) {
    it(`${ggmlTypeName(type)}: n = 2..17 tokens, every output equals the reference's bits; rows outside [r0, r1) untouched`, () => {
      expect(kernelType(type)!.gemm).toBe(true);
      const rows = 9;
      let seed = 300 + type * 100;
      const sources: [string, Uint8Array, number][] = [];
      for (const cols of [256, 768]) {
        sources.push([`random blocks ${cols}`, randomBlocks(type, rows, cols, seed++), cols]);
        sources.push([`ggml-quantised ${cols}`, quantisedWeights(type, rows, cols, seed++), cols]);
      }
      const real = realRows(type, rows);
      if (real) sources.push([`${REAL[type]!.file} ${REAL[type]!.tensor}`, real.data, real.cols]);
      for (const [what, data, cols] of sources) {
        for (let n = 2; n <= 17; n++) {
          const r0 = n % 3;
          const r1 = rows - (n % 2);
          const x = activations(type, data, rows, cols, n, seed++);
          const want = truth(type, data, rows, cols, x, n);
          const got = gemm(type, data, rows, cols, x, n, r0, r1);
          const bits = new Uint32Array(got.buffer);
          for (let t = 0; t < n; t++) {
            for (let r = 0; r < rows; r++) {
              const i = t * rows + r;
              if (r < r0 || r >= r1) expect(got[i], `${what} n=${n}: row ${r} is outside [${r0}, ${r1})`).toBeNaN();
              else if (bits[i] !== want[i]) expect.fail(`${what} n=${n} token ${t} row ${r}: ${got[i]} vs reference ${new Float32Array(want.buffer)[i]}`);
            }
          }
        }
      }
    });
  }

  // The relaxed build's register tile for the 32-element formats takes two groups of four tokens
  // (widened side by side) by four rows (Q8_0: two), then the odd group and the rows left alone:
  // token counts that fill whole tiles, leave one group or a part of one, and row ranges that start
  // and end inside a tile of rows, or hold fewer rows than one.
  it('32-element formats: tile-sized and ragged token counts and row ranges equal the reference', () => {
    const rows = 13;
    const cols = 320;
    let seed = 5000;
    for (const type of GEMM.filter((t) => t < GgmlType.Q2_K)) {
      const data = quantisedWeights(type, rows, cols, seed++);
      for (const n of [8, 9, 12, 24, 31, 40]) {
        const x = activations(type, data, rows, cols, n, seed++);
        const want = truth(type, data, rows, cols, x, n);
        for (const [r0, r1] of [[0, 13], [1, 12], [3, 8], [5, 6], [2, 5]]) {
          const bits = new Uint32Array(gemm(type, data, rows, cols, x, n, r0, r1).buffer);
          for (let t = 0; t < n; t++) {
            for (let r = 0; r < rows; r++) {
              const i = t * rows + r;
              const ok = r < r0 || r >= r1 ? Number.isNaN(new Float32Array(bits.buffer)[i]) : bits[i] === want[i];
              if (!ok) expect.fail(`${ggmlTypeName(type)} n=${n} rows [${r0}, ${r1}): token ${t} row ${r}`);
            }
          }
        }
      }
    }
  });

  // The K-quants in the relaxed build pass one prepared row against two groups of four tokens at a
  // time (Q4_K, Q5_K), then the odd group alone: token counts 1-9 (no pair, a pair with a partial
  // second group, a pair and a lone group) and 128 (32 groups), one block per row (256) and 19
  // (4864, qwen2-0.5b's ffn_down), row ranges that start and end inside a block of GEMM_ROWS rows.
  it('K-quants: token counts 1-9 and 128, 256 and 4864 columns, ragged row ranges equal the reference', () => {
    let seed = 6000;
    for (const type of [GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K]) {
      for (const [cols, rows, ns] of [[256, 11, [1, 2, 3, 4, 5, 6, 7, 8, 9, 128]], [4864, 6, [1, 5, 8, 9, 128]]] as [number, number, number[]][]) {
        const data = quantisedWeights(type, rows, cols, seed++);
        for (const n of ns) {
          const x = activations(type, data, rows, cols, n, seed++);
          const want = truth(type, data, rows, cols, x, n);
          for (const [r0, r1] of [[0, rows], [1, rows - 2], [3, 4]]) {
            const got = gemm(type, data, rows, cols, x, n, r0, r1);
            const bits = new Uint32Array(got.buffer);
            for (let t = 0; t < n; t++) {
              for (let r = 0; r < rows; r++) {
                const i = t * rows + r;
                const ok = r < r0 || r >= r1 ? Number.isNaN(got[i]) : bits[i] === want[i];
                if (!ok) expect.fail(`${ggmlTypeName(type)} cols=${cols} n=${n} rows [${r0}, ${r1}): token ${t} row ${r}: ${got[i]} vs reference ${new Float32Array(want.buffer)[i]}`);
              }
            }
          }
        }
      }
    }
  });

  // Q8_0 in the relaxed build dots w ^ (x < 0 ? 0xFF : 0) with |x| and adds Σ_{x<0} |x| per token
  // and block (from the widening): tokens whose quants are all negative (that term is the whole
  // Σ|x|), all positive (zero), all zero, ±127 in every element, a lone −127 among zeros, and
  // random, against weight bytes of every value (−128 included), in tiles, odd groups and odd rows.
  // Where the dot takes an unsigned second operand exactly (x64 with AVX-VNNI), gemm_q8_0 runs the
  // unsigned-weight loop (w + 128 against x); gemm_q8u_allow(0) forces the sign-flip loop: both run.
  it.each([1, 0])('Q8_0 (unsigned-weight loop allowed: %i): adversarial activations (all negative, all positive, zeros, ±127) equal the reference', (allow) => {
    if (simd === 'relaxed') k.call('gemm_q8u_allow', allow);
    const type = GgmlType.Q8_0;
    const [rows, cols] = [7, 192];
    const patterns: ((i: number, r: number) => number)[] = [
      (_i, r) => -0.1 - Math.abs(r), // all negative
      (_i, r) => 0.1 + Math.abs(r), // all positive
      () => 0, // zeros: d = 0, every quant 0
      (i) => (i % 2 ? 1 : -1), // ±127 everywhere
      (i) => (i % 3 ? -1 : 1), // ±127, mostly negative
      (i) => (i % 32 === 5 ? -3 : 1e-4), // one −127 per block among zeros
      (_i, r) => r, // random signs
    ];
    let seed = 7000;
    for (const data of [randomBlocks(type, rows, cols, seed++), quantisedWeights(type, rows, cols, seed++)]) {
      for (const n of [5, 7, 11, 13, 19]) {
        const noise = randomFloats(n * cols, seed++, 2);
        const x = new Float32Array(n * cols);
        for (let t = 0; t < n; t++) {
          // token t: pattern t + the data's seed, so each pattern lands on every lane of a group
          const f = patterns[(t + seed) % patterns.length];
          for (let i = 0; i < cols; i++) x[t * cols + i] = f(i, noise[t * cols + i]);
        }
        const want = truth(type, data, rows, cols, x, n);
        for (const [r0, r1] of [[0, 7], [1, 6], [3, 4]]) {
          const got = gemm(type, data, rows, cols, x, n, r0, r1);
          const bits = new Uint32Array(got.buffer);
          for (let t = 0; t < n; t++) {
            for (let r = 0; r < rows; r++) {
              const i = t * rows + r;
              if (r < r0 || r >= r1) expect(got[i]).toBeNaN();
              else if (bits[i] !== want[i]) expect.fail(`n=${n} rows [${r0}, ${r1}) token ${t} row ${r}: ${got[i]} vs reference ${new Float32Array(want.buffer)[i]}`);
            }
          }
        }
      }
    }
    if (simd === 'relaxed') {
      if (!allow) expect(k.call('gemm_q8u_active')).toBe(0);
      k.call('gemm_q8u_allow', 1);
    }
  });

  it.runIf(simd === 'relaxed')('Q8_0: the unsigned-weight check agrees with the dot instruction as a separate module runs it', () => {
    // the same inputs as gemm.ts U8_CHECK, in a module of one function: the engine's relaxed dot on
    // (−127 ×4 | 127 ×4 | 1, −1, 2, −2 | 3, 4, 5, 6) and (255 ×8 | 128, 129, 200, 7 | 1, 2, 3, 4)
    const a = [-127, -127, -127, -127, 127, 127, 127, 127, 1, -1, 2, -2, 3, 4, 5, 6];
    const b = [255, 255, 255, 255, 255, 255, 255, 255, 128, 129, 200, 7, 1, 2, 3, 4];
    const lanes = [0, 1, 2, 3].map((lane) => (new WebAssembly.Instance(new WebAssembly.Module(relaxedDotModule(a, b, lane))).exports.f as () => number)());
    // exact unsigned bytes: −127·255·4, 127·255·4, 128 − 129 + 400 − 14, 3 + 8 + 15 + 24
    const exact = lanes.join() === [-129540, 129540, 385, 50].join();
    expect(k.call('gemm_q8u_active'), `the dot gave ${lanes.join(', ')}`).toBe(exact ? 1 : 0);
  });

  it('WasmBackend.matmul (widen + gemm) equals the truth bit for bit', () => {
    const be = new WasmBackend({ simd });
    for (const type of [GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.Q6_K]) {
      const [rows, cols, n] = [37, 512, 13];
      const data = quantisedWeights(type, rows, cols, 77 + type);
      const h = be.addWeight({ name: ggmlTypeName(type), type, rows, cols }, fillFrom(data));
      const x = randomFloats(n * cols, 78 + type);
      const out = new Float32Array(n * rows);
      be.matmul(out, h, x, n);
      expect(new Uint32Array(out.buffer)).toEqual(truth(type, data, rows, cols, x, n));
    }
  });
});

interface PageCase { suffix: string; act: string; rows: number; cols: number; rb: number; ab: number; wb: number; sb: number; n: number; w: number[]; x: number[]; q8u: number; lay: string }

/** In the page: quantise, widen and gemm each case with one kernel build; the outputs (Q4_K, Q6_K: and matvec1_*'s, their truth). */
function gemmInPage({ wasm, cases }: { wasm: number[]; cases: PageCase[] }): number[][][] {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  return cases.map((c) => {
    const w = up(ex.heap_base());
    const x = up(w + c.w.length);
    const xq = up(x + c.x.length * 4);
    const xw = up(xq + c.n * c.ab);
    const out = up(xw + c.wb);
    const scratch = up(out + c.n * c.rows * 4);
    // Q4_0, Q4_K, Q6_K: the build's stored layout, laid out by layout_* (Q4_K through four rows of temp) from a copy past the end
    const lay = c.lay ? ex[c.lay] : undefined;
    const stage = up(scratch + c.sb);
    const temp = up(stage + c.w.length);
    const end = lay ? temp + 4 * c.rb : stage;
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    new Uint8Array(memory.buffer).set(c.w, lay ? stage : w);
    if (lay && c.suffix === 'q4_K') lay(w, stage, temp, c.rows, c.cols);
    else if (lay) lay(w, stage, c.rows, c.cols);
    new Float32Array(memory.buffer, x, c.x.length).set(c.x);
    for (let t = 0; t < c.n; t++) ex[`quantize_${c.act}`](xq + t * c.ab, x + t * c.cols * 4, c.cols);
    ex[`widen_${c.act}`](xw, xq, c.n, c.cols, c.ab);
    ex.gemm_q8u_allow(c.q8u);
    ex[`gemm_${c.suffix}`](out, w, c.rb, 0, c.rows, xw, c.cols, c.n, c.rows, scratch);
    const got = [...new Float32Array(memory.buffer, out, c.n * c.rows)];
    if (c.suffix !== 'q4_K' && c.suffix !== 'q6_K') return [got];
    // Q4_K's and Q6_K's truth in this build: matvec1_* per token on ggml's rows (still at stage)
    for (let t = 0; t < c.n; t++) ex[`matvec1_${c.suffix}`](out + t * c.rows * 4, stage, c.rb, 0, c.rows, xq + t * c.ab, c.cols);
    return [got, [...new Float32Array(memory.buffer, out, c.n * c.rows)]];
  });
}

it.skipIf(!existsSync(CHROMIUM))('in Chromium: the relaxed build\'s gemm kernels equal the scalar reference (Q4_K, Q6_K: their matvec) bit for bit', async () => {
  const cases: PageCase[] = [];
  const want: Uint32Array[] = [];
  let seed = 9000;
  for (const type of GEMM) {
    const kt = kernelType(type)!;
    const [rows, cols] = [9, type >= GgmlType.Q2_K ? 768 : 352];
    for (const data of [randomBlocks(type, rows, cols, seed++), quantisedWeights(type, rows, cols, seed++)]) {
      for (const n of [5, 12]) {
        const x = activations(type, data, rows, cols, n, seed++);
        const ab = actBytes(kt.act, cols);
        // Q8_0 through both of its loops (unsigned weights where the dot allows, and the sign flip)
        for (const q8u of type === GgmlType.Q8_0 ? [1, 0] : [1]) {
          cases.push({ suffix: kt.suffix, act: kt.act, rows, cols, rb: rowBytes(type, cols), ab, wb: widenBytes(kt.act, n, cols), sb: gemmScratchBytes(cols), n, w: [...data], x: [...x], q8u, lay: movedLayout(type, cols) });
          want.push(reference(type, data, rows, cols, x, n));
        }
      }
    }
  }
  await inChromium(async (page) => {
    const probe = await page.evaluate((b) => (new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(b))).exports.f as () => number)(), [...relaxedProbe()]);
    expect(probe).toBe(22);
    const dir = join(loadKernelModule({ simd: 'simd' }).path, '..');
    const got = await page.evaluate(gemmInPage, { wasm: [...readFileSync(join(dir, 'kernels-relaxed.wasm'))], cases });
    cases.forEach((c, i) => expect(new Uint32Array(new Float32Array(got[i][0]).buffer), `${c.suffix} n=${c.n} q8u=${c.q8u} case ${i}`).toEqual(got[i][1] ? new Uint32Array(new Float32Array(got[i][1]).buffer) : want[i]));
  });
});
