// WebGpuBackend (the device on its worker thread, driven synchronously) against the f64 reference
// product of the scalar dequantisation (src/engine/quant, checked against ggml in tests/quant):
// matvec, prompt batches, matmulShared with biases, matmulGated, tensors split across bindings, getRow,
// a type without a WGSL kernel left on the CPU, and thousands of round trips with garbage
// collections between them (the dawn.node abort of docs/webgpu.md came from a collected instance).
// Tolerance as tests/webgpu/kernels.test.ts: |gpu − ref| ≤ 2e-5 · Σ|w·x|.
import { afterAll, describe, expect, it } from 'vitest';
import { WebGpuBackend } from '../../src/engine/backend/webgpu/backend.js';
import { GgmlType, ggmlTypeName, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeRow } from '../../src/engine/quant/index.js';
import { fillFrom, quantisedWeights, randomBlocks, randomFloats } from '../wasm/gen.js';

const gpu = WebGpuBackend.create({ fallback: 'allow', maxChunkBytes: 4096 });
if (!gpu) console.warn('tests/webgpu: SKIPPED, no WebGPU adapter here (Mesa llvmpipe through OpenGL ES needs libegl-mesa0 libgles2 libgl1-mesa-dri, see .ci/run)');
afterAll(() => gpu?.dispose());

const TOL = 2e-5;

/** y[t·rows + r] and Σ|w·x| of the reference, in f64. */
function reference(type: number, data: Uint8Array, rows: number, cols: number, x: Float32Array, n: number): { y: number[]; abs: number[] } {
  const rb = rowBytes(type, cols);
  const w = new Float32Array(cols);
  const y: number[] = [];
  const abs: number[] = [];
  for (let t = 0; t < n; t++) {
    for (let r = 0; r < rows; r++) {
      dequantizeRow(type, data, r * rb, w, cols);
      let s = 0;
      let a = 0;
      for (let i = 0; i < cols; i++) {
        s += w[i] * x[t * cols + i];
        a += Math.abs(w[i] * x[t * cols + i]);
      }
      y.push(s);
      abs.push(a);
    }
  }
  return { y, abs };
}

function expectClose(got: Float32Array, ref: { y: number[]; abs: number[] }, what: string): void {
  for (let i = 0; i < ref.y.length; i++) expect(Math.abs(got[i] - ref.y[i]), `${what} [${i}]: ${got[i]} vs ${ref.y[i]}`).toBeLessThanOrEqual(TOL * ref.abs[i] + 1e-30);
}

describe.skipIf(!gpu)(`WebGpuBackend (${gpu?.name ?? 'no adapter'})`, () => {
  const b = gpu!;
  it('matvec and a prompt batch, tensors split by rows across bindings (4 KiB chunks)', () => {
    for (const [type, rows, cols] of [[GgmlType.Q4_K, 37, 512], [GgmlType.Q8_0, 50, 160], [GgmlType.F16, 9, 300]] as const) {
      const data = quantisedWeights(type, rows, cols, type + 1);
      const w = b.addWeight({ name: `w.${ggmlTypeName(type)}`, type, rows, cols }, fillFrom(data));
      const n = 5;
      const x = randomFloats(n * cols, type + 2, 1);
      const one = new Float32Array(rows);
      b.matvec(one, w, x);
      expectClose(one, reference(type, data, rows, cols, x, 1), `${ggmlTypeName(type)} matvec`);
      const batch = new Float32Array(n * rows);
      b.matmul(batch, w, x, n);
      expectClose(batch, reference(type, data, rows, cols, x, n), `${ggmlTypeName(type)} batch`);
      const row = new Float32Array(cols);
      const want = new Float32Array(cols);
      b.getRow(row, w, rows - 1);
      dequantizeRow(type, data, (rows - 1) * rowBytes(type, cols), want, cols);
      for (let i = 0; i < cols; i++) expect(Math.abs(row[i] - want[i])).toBeLessThanOrEqual(Math.abs(want[i]) * 2 ** -23);
    }
  });

  it('matmulShared: q/k/v of different formats in one command buffer, with biases', () => {
    const cols = 256;
    const types = [GgmlType.Q6_K, GgmlType.Q4_0, GgmlType.IQ4_NL];
    const rows = [24, 8, 8];
    const data = types.map((t, i) => quantisedWeights(t, rows[i], cols, 40 + i));
    const ws = types.map((type, i) => b.addWeight({ name: `qkv${i}`, type, rows: rows[i], cols }, fillFrom(data[i])));
    const n = 3;
    const x = randomFloats(n * cols, 50, 1);
    const biases = [randomFloats(rows[0], 51), null, randomFloats(rows[2], 52)];
    const outs = rows.map((r) => new Float32Array(n * r));
    b.matmulShared(outs, ws, x, n, biases);
    for (let i = 0; i < 3; i++) {
      const ref = reference(types[i], data[i], rows[i], cols, x, n);
      const bias = biases[i];
      if (bias) ref.y = ref.y.map((v, k) => v + bias[k % rows[i]]);
      expectClose(outs[i], ref, `qkv${i} ${ggmlTypeName(types[i])}`);
    }
  });

  it('matmulGated: silu(x·gateᵀ) ⊙ (x·upᵀ) from one command buffer', () => {
    const cols = 96, rows = 40, n = 2;
    const dg = quantisedWeights(GgmlType.Q5_1, rows, cols, 80);
    const du = quantisedWeights(GgmlType.Q4_1, rows, cols, 81);
    const gate = b.addWeight({ name: 'gate', type: GgmlType.Q5_1, rows, cols }, fillFrom(dg));
    const up = b.addWeight({ name: 'up', type: GgmlType.Q4_1, rows, cols }, fillFrom(du));
    const x = randomFloats(n * cols, 82, 1);
    const out = new Float32Array(n * rows);
    b.matmulGated(out, gate, up, x, n);
    const g = reference(GgmlType.Q5_1, dg, rows, cols, x, n);
    const u = reference(GgmlType.Q4_1, du, rows, cols, x, n);
    for (let i = 0; i < n * rows; i++) {
      const s = g.y[i] / (1 + Math.exp(-g.y[i]));
      // each product within TOL of its scale; silu's slope is at most 1.1
      const bound = 1.1 * TOL * g.abs[i] * Math.abs(u.y[i]) + Math.abs(s) * TOL * u.abs[i] + 1e-6 * Math.abs(s * u.y[i]);
      expect(Math.abs(out[i] - s * u.y[i]), `[${i}]`).toBeLessThanOrEqual(bound + 1e-30);
    }
  });

  it('a type without a WGSL kernel stays on the CPU, and the name says so', () => {
    const type = GgmlType.IQ2_XXS;
    expect(b.onGpu(type)).toBe(false);
    if (!b.supports(type)) return;
    const rows = 4, cols = 256;
    const data = randomBlocks(type, rows, cols, 60);
    const w = b.addWeight({ name: 'cpu', type, rows, cols }, fillFrom(data));
    expect(b.name).toMatch(/^webgpu \(.+\) \+ .+ for IQ2_XXS$/);
    const x = randomFloats(cols, 61, 1);
    const y = new Float32Array(rows);
    b.matvec(y, w, x);
    const ref = reference(type, data, rows, cols, x, 1);
    // the CPU backend quantises x to Q8_K (ggml's vec_dot), so the bound is looser here
    for (let r = 0; r < rows; r++) expect(Math.abs(y[r] - ref.y[r])).toBeLessThanOrEqual(2e-2 * ref.abs[r]);
  });

  it('survives 3000 round trips with a garbage collection on the GPU thread every 100', () => {
    const type = GgmlType.Q4_0, rows = 32, cols = 128;
    const data = quantisedWeights(type, rows, cols, 70);
    const w = b.addWeight({ name: 'loop', type, rows, cols }, fillFrom(data));
    const x = randomFloats(cols, 71, 1);
    const ref = reference(type, data, rows, cols, x, 1);
    const y = new Float32Array(rows);
    let worst = 0;
    for (let i = 0; i < 3000; i++) {
      if (i % 100 === 0) b.collectGarbage();
      y.fill(NaN);
      b.matvec(y, w, x);
      for (let r = 0; r < rows; r++) worst = Math.max(worst, Math.abs(y[r] - ref.y[r]) / ref.abs[r]);
    }
    expect(worst).toBeLessThanOrEqual(TOL);
  });
});
