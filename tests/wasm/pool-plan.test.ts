// PoolBackend keeps a plan per weight set for one-token products (job words, addresses, views) and
// reads x from, and writes its own rows into, arrays that live in its kernel memory. Every way
// round must give WasmBackend's numbers exactly: inputs and outputs in kernel memory or plain
// arrays, a plan reused with new inputs, and a plan whose scratch region moved because a prompt
// batch grew it in between.

import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import type { WeightHandle } from '../../src/engine/backend/types.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { fillFrom, quantisedWeights, randomFloats } from './gen.js';

// spin 0: every wait sleeps, so each round trip takes the notify paths (pool-worker.ts SLEEP, WAIT);
// shards: several memories per thread (pool.ts), the calling thread's too
describe.each([
  [2, undefined, 1],
  [3, undefined, 1],
  [2, 0, 1],
  [2, undefined, 3],
  [1, undefined, 2],
])('PoolBackend plans, %i threads, spin %s, %i shards', (threads, spin, shards) => {
  const single = new WasmBackend({ simd: 'simd' });
  const pool = new PoolBackend({ simd: 'simd', threads, spin, shards, timeoutMs: 10000 });
  afterAll(() => pool.dispose());
  const cols = 256;
  const add = (name: string, type: number, rows: number, seed: number): [WeightHandle, WeightHandle] => {
    const data = quantisedWeights(type, rows, cols, seed);
    const spec = { name, type, rows, cols };
    return [single.addWeight(spec, fillFrom(data)), pool.addWeight(spec, fillFrom(data))];
  };
  const [q1, q2] = add('q', GgmlType.Q4_0, 96, 1);
  const [k1, k2] = add('k', GgmlType.Q6_K, 33, 2);
  const [g1, g2] = add('gate', GgmlType.Q4_K, 70, 3);
  const [u1, u2] = add('up', GgmlType.Q4_K, 70, 4);
  /** n floats in the pool's calling-thread memory (as the forward pass's RunState arrays). */
  const inKernel = (n: number) => {
    const a = pool.kernels.arena;
    return a.f32(a.alloc(n * 4), n);
  };
  /** silu(x·gateᵀ) ⊙ (x·upᵀ) on the single-thread backend, with its wasm swiglu. */
  const gatedWant = (x: Float32Array, n: number) => {
    const g = new Float32Array(n * 70), u = new Float32Array(n * 70);
    single.matmul(g, g1, x, n);
    single.matmul(u, u1, x, n);
    const k = single.kernels;
    const gp = k.arena.alloc(n * 70 * 4), up = k.arena.alloc(n * 70 * 4);
    k.arena.f32(gp, n * 70).set(g);
    k.arena.f32(up, n * 70).set(u);
    k.swiglu(gp, gp, up, n * 70);
    return k.arena.f32(gp, n * 70).slice();
  };

  it('equals WasmBackend for one token, plain or kernel-memory arrays, before and after a batch grows the scratch', () => {
    const xk = inKernel(cols), qk = inKernel(96), kk = inKernel(33), hk = inKernel(70);
    for (const [step, seed] of [[0, 5], [1, 6], [2, 7], [3, 8]]) {
      if (step === 2) {
        // a prompt-sized batch: the scratch regions grow (and move) under the one-token plans
        const n = 300;
        const x = randomFloats(n * cols, 99);
        const out = new Float32Array(n * 96), want = new Float32Array(n * 96);
        pool.matmul(out, q2, x, n);
        single.matmul(want, q1, x, n);
        expect(out).toEqual(want);
        const h = new Float32Array(n * 70);
        pool.matmulGated(h, g2, u2, x, n);
        expect(h).toEqual(gatedWant(x, n));
      }
      const x = randomFloats(cols, seed);
      const wantQ = new Float32Array(96), wantK = new Float32Array(33);
      single.matvec(wantQ, q1, x);
      single.matvec(wantK, k1, x);
      const wantH = gatedWant(x, 1);
      for (const kernelMemory of [false, true]) {
        const xin = kernelMemory ? xk : x.slice();
        if (kernelMemory) xk.set(x);
        const q = kernelMemory ? qk.fill(NaN) : new Float32Array(96).fill(NaN);
        const k = kernelMemory ? kk.fill(NaN) : new Float32Array(33).fill(NaN);
        const h = kernelMemory ? hk.fill(NaN) : new Float32Array(70).fill(NaN);
        pool.matmulShared([q, k], [q2, k2], xin, 1);
        expect(q, `step ${step}, kernel memory ${kernelMemory}`).toEqual(wantQ);
        expect(k).toEqual(wantK);
        pool.matvec(q.fill(NaN), q2, xin);
        expect(q).toEqual(wantQ);
        pool.matmulGated(h, g2, u2, xin, 1);
        expect(h).toEqual(wantH);
        expect(Array.from(xin)).toEqual(Array.from(x)); // x is read in place, never written
      }
    }
  });

  it('keeps answering over many back-to-back round trips, held hot and not', () => {
    // a lost wake-up would stall a round trip until the pool's timeout (POOL_TIMEOUT)
    const x = randomFloats(cols, 42);
    const want = new Float32Array(96);
    single.matvec(want, q1, x);
    const out = new Float32Array(96);
    for (const hot of [true, false]) {
      pool.hold(hot);
      for (let i = 0; i < 3000; i++) {
        pool.matvec(out, q2, x);
        if (i % 500 === 0) expect(out).toEqual(want);
      }
      pool.hold(false);
    }
    expect(out).toEqual(want);
  }, 60000);
});
