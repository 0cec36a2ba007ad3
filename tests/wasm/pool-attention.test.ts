// The pool's split attention (backend/pool-attention.ts) against the single-thread kernels
// (kv_store, then attn_f16 over the whole cache) bit for bit: a 5-token prompt, then one token
// at a time with q, k, v and out alternately plain arrays and views on the calling thread's kernel
// memory (the one-token path attends in place on the latter and keeps its buffers between tokens),
// over two layers with grouped KV heads and a sliding window.

import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { randomFloats } from './gen.js';

const shape = { nLayer: 2, nHead: 6, nHeadKv: 3, headDimK: 16, headDimV: 8 };
const positions = 24;
const window = 9;
const scale = 0.25;

describe.each([2, 3])('pool split attention, %i threads', (threads) => {
  const pool = new PoolBackend({ simd: 'simd', threads });
  afterAll(() => pool.dispose());

  it('equals kv_store + attn_f16 on one thread, plain arrays and kernel-memory views', () => {
    const { nLayer, nHead, nHeadKv, headDimK: hdK, headDimV: hdV } = shape;
    const qDim = nHead * hdK, kDim = nHeadKv * hdK, vDim = nHeadKv * hdV, oDim = nHead * hdV;
    // the reference: one kernel instance, the whole cache
    const k = new WasmBackend({ simd: 'simd' }).kernels;
    const ra = k.arena;
    const kc = Array.from({ length: nLayer }, () => ra.alloc(positions * kDim * 2));
    const vc = Array.from({ length: nLayer }, () => ra.alloc(positions * vDim * 2));
    const scratch = ra.alloc(k.attnScratchBytes(nHead, nHeadKv, hdK, hdV, positions));
    const rq = ra.alloc(qDim * 4), rk = ra.alloc(kDim * 4), rv = ra.alloc(vDim * 4), ro = ra.alloc(oDim * 4);
    const want = (l: number, q: Float32Array, kn: Float32Array, vn: Float32Array, pos: number) => {
      ra.f32(rq, qDim).set(q);
      ra.f32(rk, kDim).set(kn);
      ra.f32(rv, vDim).set(vn);
      k.kvStore(kc[l] + pos * kDim * 2, rk, kDim);
      k.kvStore(vc[l] + pos * vDim * 2, rv, vDim);
      k.attention('f16', { out: ro, q: rq, kc: kc[l], vc: vc[l], strideK: kDim, strideV: vDim, nHead, nHeadKv, hdK, hdV, scale, scratch }, Math.max(0, pos - window + 1), pos);
      return ra.f32(ro, oDim).slice();
    };
    const split = pool.splitAttention(shape, positions)!;
    expect(split.parts).toBe(Math.min(threads, nHeadKv));
    const pa = pool.kernels.arena;
    const view = (n: number) => pa.f32(pa.alloc(n * 4), n);
    const inKernel = { q: view(qDim), k: view(kDim), v: view(vDim), out: view(oDim) };
    // a 5-token prompt (the batch path), then single tokens
    const n0 = 5;
    for (let l = 0; l < nLayer; l++) {
      const q = randomFloats(n0 * qDim, 10 + l), kn = randomFloats(n0 * kDim, 20 + l), vn = randomFloats(n0 * vDim, 30 + l);
      const out = new Float32Array(n0 * oDim).fill(NaN);
      split.run(l, out, q, kn, vn, 0, n0, 'f16', window, scale);
      for (let t = 0; t < n0; t++) {
        const w = want(l, q.subarray(t * qDim, (t + 1) * qDim), kn.subarray(t * kDim, (t + 1) * kDim), vn.subarray(t * vDim, (t + 1) * vDim), t);
        expect(out.subarray(t * oDim, (t + 1) * oDim), `prompt token ${t}, layer ${l}`).toEqual(w);
      }
    }
    for (let pos = n0; pos < positions; pos++) {
      const kernelMemory = pos % 3 !== 0;
      for (let l = 0; l < nLayer; l++) {
        const seed = 100 * pos + l;
        const q = randomFloats(qDim, seed), kn = randomFloats(kDim, seed + 1), vn = randomFloats(vDim, seed + 2);
        const w = want(l, q, kn, vn, pos);
        const a = kernelMemory ? inKernel : { q: new Float32Array(qDim), k: new Float32Array(kDim), v: new Float32Array(vDim), out: new Float32Array(oDim) };
        a.q.set(q);
        a.k.set(kn);
        a.v.set(vn);
        a.out.fill(NaN);
        split.run(l, a.out, a.q, a.k, a.v, pos, 1, 'f16', window, scale);
        expect(a.out, `position ${pos}, layer ${l}, kernel memory ${kernelMemory}`).toEqual(w);
      }
    }
    split.dispose();
  });
});
