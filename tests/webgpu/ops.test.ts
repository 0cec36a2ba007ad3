// The whole-token step's WGSL kernels (src/engine/backend/webgpu/ops-wgsl.ts, and matvec's
// accumulating variant) against the engine's TypeScript reference of each op on random inputs:
// model/ops.ts rmsnorm, rope (with ropeCache's angles), gatedAct(silu), addInto; kv-cache.ts
// kvStore's f16 rounding (bit for bit, ties and subnormals included); attention.ts (its f32 mode,
// over the same f16 cache values); the embedding row as quant's dequantizeRow. Runs on any adapter
// (llvmpipe in CI); skipped with a notice without one.
//
// Tolerances: f32 on both sides but other orders of summation (and the GPU's exp/sqrt):
// |gpu − ref| ≤ 1e-5·|ref| + an absolute 1e-6 of the values' scale; exact where both sides do one
// rounded f32 operation per value (residual add, the f16 rounding of the cache).
process.env.EGL_PLATFORM ??= 'surfaceless';
import { afterAll, describe, expect, it } from 'vitest';
import { gpuFormat, matvecShader, PARAMS_BYTES } from '../../src/engine/backend/webgpu/kernels.js';
import { addShader, attentionShader, embedShader, kvStoreShader, OP_PARAMS_BYTES, ropeShader, rmsnormShader, stepBytes, swigluShader } from '../../src/engine/backend/webgpu/ops-wgsl.js';
import { GgmlType, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { attention, createAttentionScratch } from '../../src/engine/model/attention.js';
import { createKvCache, kvStore } from '../../src/engine/model/kv-cache.js';
import { addInto, gatedAct, rmsnorm, rope, ropeCache, silu } from '../../src/engine/model/ops.js';
import { F16, f32ToF16Bits } from '../../src/engine/quant/half.js';
import { dequantizeRow } from '../../src/engine/quant/index.js';
import { quantisedWeights, randomBlocks, randomFloats } from '../wasm/gen.js';

let dev: GPUDevice | null = null;
let adapterName = 'no adapter';
// kept reachable while the device is used (dawn.node frees its instance when collected; docs/webgpu.md)
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

function storage(data: ArrayBufferView): GPUBuffer {
  const size = Math.max(16, (data.byteLength + 3) & ~3);
  const b = dev!.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
  const bytes = new Uint8Array(size);
  bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  dev!.queue.writeBuffer(b, 0, bytes);
  return b;
}

function uniform(words: ArrayBufferView, size: number): GPUBuffer {
  const b = dev!.createBuffer({ size, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const bytes = new Uint8Array(size);
  bytes.set(new Uint8Array(words.buffer, words.byteOffset, words.byteLength));
  dev!.queue.writeBuffer(b, 0, bytes);
  return b;
}

/** The 8-word block P: numbers as u32, `f` marks a field to pass as f32 bits. */
function params(...v: (number | { f: number })[]): Uint32Array {
  const u = new Uint32Array(OP_PARAMS_BYTES / 4);
  v.forEach((x, i) => (u[i] = typeof x === 'number' ? x : new Uint32Array(new Float32Array([x.f]).buffer)[0]));
  return u;
}

/** The step block: token, position, RoPE cos/sin. */
function step(token: number, pos: number, rc: Float32Array, nRot: number): GPUBuffer {
  const b = new ArrayBuffer(stepBytes(nRot));
  new Uint32Array(b, 0, 2).set([token, pos]);
  new Float32Array(b, 16, rc.length).set(rc);
  return uniform(new Uint8Array(b), b.byteLength);
}

/** One dispatch; returns `floats` of `out` read back. */
async function run(code: string, binds: GPUBuffer[], wg: number, out: GPUBuffer, floats: number): Promise<Float32Array> {
  const p = dev!.createComputePipeline({ layout: 'auto', compute: { module: dev!.createShaderModule({ code }), entryPoint: 'main' } });
  const e = dev!.createCommandEncoder();
  const pass = e.beginComputePass();
  pass.setPipeline(p);
  pass.setBindGroup(0, dev!.createBindGroup({ layout: p.getBindGroupLayout(0), entries: binds.map((buffer, binding) => ({ binding, resource: { buffer } })) }));
  pass.dispatchWorkgroups(wg);
  pass.end();
  const rb = dev!.createBuffer({ size: Math.max(16, floats * 4), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  e.copyBufferToBuffer(out, 0, rb, 0, floats * 4);
  dev!.queue.submit([e.finish()]);
  await rb.mapAsync(GPUMapMode.READ);
  const got = new Float32Array(rb.getMappedRange(0, floats * 4).slice(0));
  rb.unmap();
  rb.destroy();
  return got;
}

function close(got: Float32Array, want: Float32Array, what: string, rel = 1e-5, abs = 1e-6): void {
  let scale = 0;
  for (const v of want) scale = Math.max(scale, Math.abs(v));
  for (let i = 0; i < want.length; i++) {
    expect(Math.abs(got[i] - want[i]), `${what}[${i}]: ${got[i]} vs ${want[i]}`).toBeLessThanOrEqual(rel * Math.abs(want[i]) + abs * scale);
  }
}

const EPS = 1e-5;

describe.skipIf(!dev)(`whole-token WGSL ops against the TypeScript reference (${adapterName})`, () => {
  it('RMSNorm with weight: per row (out of place) and per head (in place)', async () => {
    for (const [rows, n] of [[1, 64], [1, 37], [3, 200], [8, 16]]) {
      const x = randomFloats(rows * n, rows * 100 + n, 3);
      const w = randomFloats(n, n + 7, 1.5);
      const want = new Float32Array(rows * n);
      for (let r = 0; r < rows; r++) rmsnorm(want, x, w, EPS, n, r * n, r * n);
      const xb = storage(x), wb = storage(w), ob = storage(new Float32Array(rows * n)), pb = uniform(params(n, { f: EPS }), OP_PARAMS_BYTES);
      close(await run(rmsnormShader(false), [xb, wb, ob, pb], rows, ob, rows * n), want, `rmsnorm ${rows}x${n}`);
      close(await run(rmsnormShader(true), [xb, wb, pb], rows, xb, rows * n), want, `rmsnorm in place ${rows}x${n}`);
    }
  });

  it('RoPE, normal and NEOX pairs, whole and partial rotary, at the cos/sin ropeCache gives', async () => {
    for (const mode of ['norm', 'neox'] as const) {
      for (const [nHeads, hd, nRot, pos, base] of [[3, 16, 16, 37, 10000], [2, 32, 8, 1000, 1e6], [5, 8, 8, 4095, 500000]]) {
        const rc = new Float32Array(nRot);
        ropeCache(rc, pos, nRot, base, 1, null);
        const x = randomFloats(nHeads * hd, pos + hd, 2);
        const want = x.slice();
        for (let h = 0; h < nHeads; h++) rope(want, h * hd, rc, nRot, mode);
        const xb = storage(x), pb = uniform(params(nHeads, hd, nRot / 2), OP_PARAMS_BYTES), sb = step(0, pos, rc, nRot);
        const got = await run(ropeShader(mode, nRot), [xb, pb, sb], Math.ceil((nHeads * nRot) / 2 / 64), xb, nHeads * hd);
        close(got, want, `rope ${mode} ${nHeads}x${hd} nRot ${nRot}`, 1e-6, 1e-6);
        // the dims past nRot untouched
        for (let h = 0; h < nHeads; h++) for (let i = nRot; i < hd; i++) expect(got[h * hd + i]).toBe(x[h * hd + i]);
      }
    }
  });

  it('KV store: row pos of the cache, each value the f16 kvStore keeps (ties to even, subnormals, overflow), or f32 unrounded; f16 pairs: its bits', async () => {
    const kvDimK = 96, kvDimV = 80, size = 6, pos = 4;
    const k = randomFloats(kvDimK, 5, 4);
    const v = randomFloats(kvDimV, 6, 1e-4); // some in f16's subnormal range
    // exact halfway cases: 1 + 2^-11 (→ 1), 1 + 3·2^-11 (→ 1 + 2^-9), 2^-25 (→ 0), 3·2^-25 (→ 2^-23),
    // the largest half and the first value that rounds to infinity, and large values of both signs
    k.set([1 + 2 ** -11, 1 + 3 * 2 ** -11, -(1 + 2 ** -11), 2 ** -25, 3 * 2 ** -25, 65504, 65519, 65520, -70000, 1e-9, 0, -0]);
    const cache = createKvCache(1, size, kvDimK, kvDimV);
    kvStore(cache, 0, pos, k, 0, v, 0);
    const kb = storage(k), vb = storage(v);
    for (const round of [1, 0]) {
      const kc = storage(new Float32Array(size * kvDimK)), vc = storage(new Float32Array(size * kvDimV));
      const pb = uniform(params(kvDimK, kvDimV, round), OP_PARAMS_BYTES), sb = step(0, pos, new Float32Array(4), 4);
      const gotK = await run(kvStoreShader(4), [kb, vb, kc, vc, pb, sb], Math.ceil(kvDimK / 64), kc, size * kvDimK);
      const gotV = await run(kvStoreShader(4), [kb, vb, kc, vc, pb, sb], Math.ceil(kvDimK / 64), vc, size * kvDimV);
      for (let i = 0; i < kvDimK; i++) expect(Object.is(gotK[pos * kvDimK + i], round ? F16[cache.k[0][pos * kvDimK + i]] : k[i]), `k[${i}] = ${k[i]}: ${gotK[pos * kvDimK + i]}`).toBe(true);
      for (let i = 0; i < kvDimV; i++) expect(Object.is(gotV[pos * kvDimV + i], round ? F16[cache.v[0][pos * kvDimV + i]] : v[i]), `v[${i}] = ${v[i]}`).toBe(true);
      // the other rows untouched
      for (let i = 0; i < pos * kvDimK; i++) expect(gotK[i]).toBe(0);
    }
    // packed: two halves per word, the f16 bits kvStore keeps (the infinities left out: undefined there)
    const fin = k.map((x) => (Math.abs(x) >= 65520 ? 1 : x));
    kvStore(cache, 0, pos, fin, 0, v, 0);
    const kc = storage(new Uint32Array((size * kvDimK) / 2)), vc = storage(new Uint32Array((size * kvDimV) / 2));
    const pb = uniform(params(kvDimK, kvDimV, 1), OP_PARAMS_BYTES), sb = step(0, pos, new Float32Array(4), 4);
    const words = async (out: GPUBuffer, n: number) => new Uint16Array((await run(kvStoreShader(4, true), [storage(fin), vb, kc, vc, pb, sb], Math.ceil(kvDimK / 64), out, n / 2)).buffer);
    expect([...(await words(kc, size * kvDimK)).subarray(pos * kvDimK, (pos + 1) * kvDimK)]).toEqual([...cache.k[0].subarray(pos * kvDimK, (pos + 1) * kvDimK)]);
    expect([...(await words(vc, size * kvDimV)).subarray(pos * kvDimV, (pos + 1) * kvDimV)]).toEqual([...cache.v[0].subarray(pos * kvDimV, (pos + 1) * kvDimV)]);
  });

  it('attention: one query, GQA, causal, with and without a sliding window, over several tiles, as attention.ts (f32 mode), over an f32 or f16-pair cache', async () => {
    for (const [nHead, nHeadKv, hdK, hdV, size, pos, window] of [[4, 2, 16, 16, 150, 130, 0], [4, 2, 16, 16, 150, 130, 50], [6, 1, 32, 80, 70, 3, 0], [2, 2, 8, 8, 64, 0, 0], [8, 2, 64, 64, 200, 199, 0]]) {
      const kvDimK = nHeadKv * hdK, kvDimV = nHeadKv * hdV;
      const cache = createKvCache(1, size, kvDimK, kvDimV);
      const kr = randomFloats(size * kvDimK, size + hdK, 2), vr = randomFloats(size * kvDimV, size + hdV + 1, 2);
      for (let i = 0; i < kr.length; i++) cache.k[0][i] = f32ToF16Bits(kr[i]);
      for (let i = 0; i < vr.length; i++) cache.v[0][i] = f32ToF16Bits(vr[i]);
      const q = randomFloats(nHead * hdK, nHead * 3 + pos, 2);
      const scale = 1 / Math.sqrt(hdK);
      const want = new Float32Array(nHead * hdV);
      const d = { nHead, nHeadKv, headDimK: hdK, headDimV: hdV };
      attention(want, 0, q, 0, cache, 0, window > 0 ? Math.max(0, pos - window + 1) : 0, pos, d, scale, 'f32', createAttentionScratch(d, size));
      const kc = storage(Float32Array.from(cache.k[0], (h) => F16[h])), vc = storage(Float32Array.from(cache.v[0], (h) => F16[h]));
      const qb = storage(q), ob = storage(new Float32Array(nHead * hdV));
      const pb = uniform(params(nHead / nHeadKv, window, { f: scale }, kvDimK, kvDimV), OP_PARAMS_BYTES), sb = step(0, pos, new Float32Array(4), 4);
      close(await run(attentionShader(hdK, hdV, 4), [qb, kc, vc, ob, pb, sb], nHead, ob, nHead * hdV), want, `attention ${nHead}/${nHeadKv} heads ${hdK}/${hdV} pos ${pos} window ${window}`);
      // the same over the packed f16 cache (the f16 bits themselves, two per word)
      const kp = storage(cache.k[0]), vp = storage(cache.v[0]);
      close(await run(attentionShader(hdK, hdV, 4, true), [qb, kp, vp, ob, pb, sb], nHead, ob, nHead * hdV), want, `attention over f16 pairs ${nHead}/${nHeadKv} heads pos ${pos}`);
    }
  });

  it('SwiGLU in place on the gate, and the residual add (exact)', async () => {
    const n = 333;
    const g = randomFloats(n, 11, 8), u = randomFloats(n, 12, 2);
    const want = new Float32Array(n);
    gatedAct(want, g, u, silu, n);
    const gb = storage(g), ub = storage(u), pb = uniform(params(n), OP_PARAMS_BYTES);
    close(await run(swigluShader(), [gb, ub, pb], Math.ceil(n / 64), gb, n), want, 'swiglu', 1e-6, 1e-7);
    const y = randomFloats(n, 13, 3), b = randomFloats(n, 14, 1);
    const sum = y.slice();
    addInto(sum, b, n);
    const yb = storage(y), bb = storage(b);
    expect(await run(addShader(), [yb, bb, pb], Math.ceil(n / 64), yb, n)).toEqual(sum);
  });

  it('embedding: the token row of a matrix split over two buffers, dequantised as dequantizeRow (1 ulp); the other buffer leaves y alone', async () => {
    for (const type of [GgmlType.F32, GgmlType.F16, GgmlType.Q4_0, GgmlType.Q8_0, GgmlType.Q6_K]) {
      const f = gpuFormat(type)!;
      const cols = 256, rows = 10, split = 6, token = 7;
      const data = type === GgmlType.F32 || type === GgmlType.F16 ? randomBlocks(type, rows, cols, type + 40) : quantisedWeights(type, rows, cols, type + 40);
      const rb = rowBytes(type, cols);
      const want = new Float32Array(cols);
      dequantizeRow(type, data, token * rb, want, cols);
      const y = storage(new Float32Array(cols).fill(-1));
      const units = cols / f.unit;
      const sb = step(token, 0, new Float32Array(4), 4);
      // rows 0..5 in the first buffer (token 7 not there: nothing written), 6..9 in the second
      const first = await run(embedShader(f, 4), [storage(data.subarray(0, split * rb)), y, uniform(params(units, rb, 0, split), OP_PARAMS_BYTES), sb], Math.ceil(units / 64), y, cols);
      expect(first.every((v) => v === -1)).toBe(true);
      const got = await run(embedShader(f, 4), [storage(data.subarray(split * rb)), y, uniform(params(units, rb, split, rows - split), OP_PARAMS_BYTES), sb], Math.ceil(units / 64), y, cols);
      for (let i = 0; i < cols; i++) expect(Math.abs(got[i] - want[i]), `type ${type} col ${i}: ${got[i]} vs ${want[i]}`).toBeLessThanOrEqual(Math.abs(want[i]) * 2 ** -23);
    }
  });

  it('matvec accumulating into y (the residual stream): y₀ + W·x', async () => {
    const type = GgmlType.Q4_K;
    const f = gpuFormat(type)!;
    const rows = 5, cols = 512;
    const data = quantisedWeights(type, rows, cols, 77);
    const x = randomFloats(cols, 78, 1), y0 = randomFloats(rows, 79, 10);
    const rb = rowBytes(type, cols);
    const wr = new Float32Array(cols);
    const want = new Float32Array(rows);
    const absSum: number[] = [];
    for (let r = 0; r < rows; r++) {
      dequantizeRow(type, data, r * rb, wr, cols);
      let s = 0, a = 0;
      for (let i = 0; i < cols; i++) {
        s += wr[i] * x[i];
        a += Math.abs(wr[i] * x[i]);
      }
      want[r] = y0[r] + s;
      absSum.push(a + Math.abs(y0[r]));
    }
    const yb = storage(y0);
    const pb = uniform(new Uint32Array([rows, cols / f.unit, rb, cols, rows, 0, rows, 0]), PARAMS_BYTES);
    const got = await run(matvecShader(f, true), [storage(data), storage(x), yb, pb], rows, yb, rows);
    for (let r = 0; r < rows; r++) expect(Math.abs(got[r] - want[r]), `row ${r}`).toBeLessThanOrEqual(2e-5 * absSum[r]);
  });
});
