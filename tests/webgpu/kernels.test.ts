// Every WGSL kernel (src/engine/backend/webgpu/kernels.ts) against the scalar TypeScript reference
// dequantisation (src/engine/quant, itself checked against ggml's numbers in tests/quant), on
// random block bytes that reach every bit pattern and on ggml-quantised random floats. Runs on any
// adapter: a GPU, or Mesa's llvmpipe through OpenGL ES (CI); skipped, with a notice, without one.
//
// Tolerance, the rule of tests/wasm/kernels.test.ts: |gpu − ref| ≤ tol · Σ_i |w_i·x_i|, ref in f64.
// The GPU takes x in f32 (no activation quantisation) and sums f32 products in another order
// than the reference: one rounding per product and per addition, as the wasm float kernels, so
// tol = 2e-5 for every format. getRow: the dequantised row, within 1 ulp (the shader may fuse s·q + m).
process.env.EGL_PLATFORM ??= 'surfaceless';
import { afterAll, describe, expect, it } from 'vitest';
import { dequantShader, gpuFormat, gpuTypes, matvecShader, PARAMS_BYTES } from '../../src/engine/backend/webgpu/kernels.js';
import { ggmlTypeInfo, ggmlTypeName, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeRow } from '../../src/engine/quant/index.js';
import { quantisedWeights, randomBlocks, randomFloats } from '../wasm/gen.js';

// The kernels run here on this thread's event loop (await mapAsync), not through the backend's
// GPU thread (tests/webgpu/backend.test.ts covers that).
type Dev = GPUDevice;
let dev: Dev | null = null;
let adapterName = 'no adapter';
// The object create() returns must stay reachable while the device is used: dawn.node frees its
// instance when it is collected and the next mapAsync aborts the process (docs/webgpu.md).
let instance: GPU | null = null;
const webgpu = await import('webgpu').catch(() => null);
if (webgpu) {
  Object.assign(globalThis, webgpu.globals);
  instance = webgpu.create(['backend=opengles']);
  const a = await instance.requestAdapter({ featureLevel: 'compatibility' }).catch(() => null);
  dev = a ? await a.requestDevice() : null;
  adapterName = a ? a.info.device || a.info.description : adapterName;
}
if (!dev) console.warn('tests/webgpu: SKIPPED, no WebGPU adapter here (Mesa llvmpipe through OpenGL ES needs libegl-mesa0 libgles2 libgl1-mesa-dri, see .ci/run)');
afterAll(() => {
  dev?.destroy();
  instance = null;
});

const pipes = new Map<string, GPUComputePipeline>();
function pipe(code: string): GPUComputePipeline {
  let p = pipes.get(code);
  if (!p) pipes.set(code, (p = dev!.createComputePipeline({ layout: 'auto', compute: { module: dev!.createShaderModule({ code }), entryPoint: 'main' } })));
  return p;
}

function storage(data: ArrayBufferView, extra = 0): GPUBuffer {
  const size = (data.byteLength + 3) & ~3;
  const b = dev!.createBuffer({ size: Math.max(16, size), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC | extra });
  const bytes = new Uint8Array(size);
  bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  dev!.queue.writeBuffer(b, 0, bytes);
  return b;
}

/** Run one pass of a kernel and read back `floats` of y. */
async function runPass(code: string, bufs: GPUBuffer[], params: number[], wg: [number, number, number], y: GPUBuffer, floats: number): Promise<Float32Array> {
  const u = dev!.createBuffer({ size: PARAMS_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  dev!.queue.writeBuffer(u, 0, new Uint32Array(params));
  const p = pipe(code);
  const e = dev!.createCommandEncoder();
  const pass = e.beginComputePass();
  pass.setPipeline(p);
  pass.setBindGroup(0, dev!.createBindGroup({ layout: p.getBindGroupLayout(0), entries: [...bufs, u].map((buffer, binding) => ({ binding, resource: { buffer } })) }));
  pass.dispatchWorkgroups(...wg);
  pass.end();
  const rb = dev!.createBuffer({ size: floats * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  e.copyBufferToBuffer(y, 0, rb, 0, floats * 4);
  dev!.queue.submit([e.finish()]);
  await rb.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(rb.getMappedRange().slice(0));
  rb.unmap();
  rb.destroy();
  u.destroy();
  return out;
}

function shapesFor(type: number): { rows: number; cols: number }[] {
  const bs = ggmlTypeInfo(type)!.blockSize;
  if (bs === 1) return [{ rows: 3, cols: 1 }, { rows: 5, cols: 15 }, { rows: 7, cols: 37 }, { rows: 4, cols: 1029 }];
  if (bs === 32) return [{ rows: 1, cols: 32 }, { rows: 7, cols: 96 }, { rows: 5, cols: 352 }];
  return [{ rows: 1, cols: 256 }, { rows: 6, cols: 768 }, { rows: 3, cols: 2816 }];
}

/** The reference product of each row, in f64, and Σ|w·x| (the error scale). */
function reference(type: number, data: Uint8Array, rows: number, cols: number, x: Float32Array): { dot: number[]; abs: number[] } {
  const rb = rowBytes(type, cols);
  const w = new Float32Array(cols);
  const dot: number[] = [];
  const abs: number[] = [];
  for (let r = 0; r < rows; r++) {
    dequantizeRow(type, data, r * rb, w, cols);
    let s = 0;
    let a = 0;
    for (let i = 0; i < cols; i++) {
      s += w[i] * x[i];
      a += Math.abs(w[i] * x[i]);
    }
    dot.push(s);
    abs.push(a);
  }
  return { dot, abs };
}

const TOL = 2e-5;

describe.skipIf(!dev)(`WGSL kernels against the scalar reference (${adapterName})`, () => {
  for (const type of gpuTypes()) {
    const name = ggmlTypeName(type);
    const f = gpuFormat(type)!;
    it(`${name}: matvec over a batch within ${TOL} of Σ|w·x|, dequantised rows within 1 ulp`, async () => {
      let seed = 100 + type * 10;
      for (const { rows, cols } of shapesFor(type)) {
        for (const data of [randomBlocks(type, rows, cols, seed++), ggmlTypeInfo(type)!.blockSize > 1 ? quantisedWeights(type, rows, cols, seed++) : undefined]) {
          if (!data) continue;
          const rb = rowBytes(type, cols);
          const n = 3;
          const xs = randomFloats(n * cols, seed++, 2);
          const wBuf = storage(data);
          const xBuf = storage(xs);
          const yBuf = storage(new Float32Array(n * rows));
          // two rows per workgroup row of the grid (nwx = 2): the y dimension of the dispatch is used too
          const nwx = Math.min(2, rows);
          const out = await runPass(matvecShader(f), [wBuf, xBuf, yBuf], [rows, cols / f.unit, rb, cols, rows, 0, nwx, 0], [nwx, Math.ceil(rows / nwx), n], yBuf, n * rows);
          for (let t = 0; t < n; t++) {
            const ref = reference(type, data, rows, cols, xs.subarray(t * cols, (t + 1) * cols));
            for (let r = 0; r < rows; r++) {
              const got = out[t * rows + r];
              expect(Math.abs(got - ref.dot[r]), `${name} ${rows}x${cols} token ${t} row ${r}: ${got} vs ${ref.dot[r]}`).toBeLessThanOrEqual(TOL * ref.abs[r] + 1e-30);
            }
          }
          const want = new Float32Array(cols);
          for (const r of [0, rows - 1]) {
            const dBuf = storage(new Float32Array(cols));
            const got = await runPass(dequantShader(f), [wBuf, dBuf], [r, cols / f.unit, rb, 0, 0, 0, 0, 0], [Math.ceil(cols / f.unit / 64), 1, 1], dBuf, cols);
            dequantizeRow(type, data, r * rb, want, cols);
            for (let i = 0; i < cols; i++) expect(Math.abs(got[i] - want[i]), `${name} row ${r} col ${i}: ${got[i]} vs ${want[i]}`).toBeLessThanOrEqual(Math.abs(want[i]) * 2 ** -23);
            dBuf.destroy();
          }
          for (const b of [wBuf, xBuf, yBuf]) b.destroy();
        }
      }
    });
  }
});
