// Attention sinks (gpt-oss attn_sinks: a per-head logit in the softmax's denominator with no value)
// in every attention: the scalar reference (model/attention.ts) against a softmax written out
// from the definition, attn_f16 = the reference bit for bit, attn_f32 and attn_f32_batch = the
// reference's f32 mode (each query as attn_f32), and the pool's split attention = the single-thread
// kernels, with sinks below and above the scores' maximum (which rescales the accumulator).
import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { attention, createAttentionScratch, type AttentionDims } from '../../src/engine/model/attention.js';
import { F16, f32ToF16Bits } from '../../src/engine/quant/half.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { randomFloats } from './gen.js';

const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));
const a = k.arena;
const d: AttentionDims = { nHead: 4, nHeadKv: 2, headDimK: 32, headDimV: 32 };
const size = 80;
const kvDim = d.nHeadKv * d.headDimK;
const kc16 = Uint16Array.from(randomFloats(size * kvDim, 41, 1), f32ToF16Bits);
const vc16 = Uint16Array.from(randomFloats(size * kvDim, 42, 2), f32ToF16Bits);
const cache = { size, kvDimK: kvDim, kvDimV: kvDim, k: [kc16], v: [vc16], nonFinite: new Uint8Array(1) };
const scale = 1 / Math.sqrt(d.headDimK);
// per head: far below the scores (no effect beyond rounding), near them, above them all
const SINKS = [new Float32Array([-30, -30, -30, -30]), new Float32Array([0.3, -1.2, 2.5, 0]), new Float32Array([9, 12, 7.5, 20])];

function ref(q: Float32Array, from: number, to: number, mode: 'f16' | 'f32', sinks: Float32Array | null): Float32Array {
  const out = new Float32Array(d.nHead * d.headDimV);
  attention(out, 0, q, 0, cache, 0, from, to, d, scale, mode, createAttentionScratch(d, size), sinks);
  return out;
}

const kp = a.alloc(kc16.length * 2), vp = a.alloc(vc16.length * 2);
new Uint16Array(a.memory.buffer, kp, kc16.length).set(kc16);
new Uint16Array(a.memory.buffer, vp, vc16.length).set(vc16);
const scratch = a.alloc(k.attnScratchBytes(d.nHead, d.nHeadKv, d.headDimK, d.headDimV, size));
const sp = a.alloc(16);

function kernel(q: Float32Array, from: number, to: number, mode: 'f16' | 'f32', sinks: Float32Array | null): Float32Array {
  const qp = a.alloc(q.length * 4);
  a.f32(qp, q.length).set(q);
  const op = a.alloc(d.nHead * d.headDimV * 4);
  if (sinks) a.f32(sp, 4).set(sinks);
  k.attention(mode, { out: op, q: qp, kc: kp, vc: vp, strideK: kvDim, strideV: kvDim, nHead: d.nHead, nHeadKv: d.nHeadKv, hdK: d.headDimK, hdV: d.headDimV, scale, scratch, sinks: sinks ? sp : 0 }, from, to);
  return a.f32(op, d.nHead * d.headDimV).slice();
}

describe('attention sinks', () => {
  it('the reference is softmax over [scores, sink] with the sink\'s value 0 (within f16 rounding)', () => {
    const q = randomFloats(d.nHead * d.headDimK, 7, 3);
    for (const sinks of SINKS) {
      const got = ref(q, 3, 40, 'f16', sinks);
      for (let h = 0; h < d.nHead; h++) {
        const g = Math.floor(h / 2);
        const sc: number[] = [];
        for (let t = 3; t <= 40; t++) {
          let s = 0;
          for (let i = 0; i < d.headDimK; i++) s += q[h * d.headDimK + i] * F16[kc16[t * kvDim + g * d.headDimK + i]];
          sc.push(s * scale);
        }
        const M = Math.max(...sc, sinks[h]);
        const S = sc.reduce((acc, s) => acc + Math.exp(s - M), 0) + Math.exp(sinks[h] - M);
        for (let i = 0; i < d.headDimV; i++) {
          let o = 0;
          sc.forEach((s, j) => (o += Math.exp(s - M) * F16[vc16[(3 + j) * kvDim + g * d.headDimV + i]]));
          expect(Math.abs(got[h * d.headDimV + i] - o / S)).toBeLessThan(1e-2 * (Math.abs(o / S) + 0.05));
        }
      }
      // without a sink the output is larger in total weight: the sink takes its share
      if (sinks === SINKS[2]) expect(Math.abs(got[0])).toBeLessThan(Math.abs(ref(q, 3, 40, 'f16', null)[0]) + 1e-6);
    }
  });

  it('attn_f16 equals the reference bit for bit; no sinks unchanged', () => {
    for (const [seed, from, to] of [[1, 0, 0], [2, 0, 17], [3, 9, 70]]) {
      const q = randomFloats(d.nHead * d.headDimK, seed, 3);
      for (const sinks of [null, ...SINKS]) expect(kernel(q, from, to, 'f16', sinks), `${from}..${to} ${sinks?.join(',')}`).toEqual(ref(q, from, to, 'f16', sinks));
    }
  });

  it('attn_f32 equals the reference\'s f32 mode within 1e-4 (as without sinks: its sums in another order), and attn_f32_batch = attn_f32 per query bit for bit', () => {
    const n = 70;
    const qs = randomFloats(n * d.nHead * d.headDimK, 9, 3);
    const qb = a.alloc(qs.length * 4);
    a.f32(qb, qs.length).set(qs);
    const ob = a.alloc(n * d.nHead * d.headDimV * 4);
    for (const sinks of SINKS) {
      for (const window of [0, 8]) {
        a.f32(sp, 4).set(sinks);
        k.attentionBatchF32({ out: ob, q: qb, kc: kp, vc: vp, strideK: kvDim, strideV: kvDim, nHead: d.nHead, nHeadKv: d.nHeadKv, hdK: d.headDimK, hdV: d.headDimV, scale, scratch, sinks: sp }, 5, n, window);
        const batch = a.f32(ob, n * d.nHead * d.headDimV).slice();
        for (const i of [0, 1, 33, n - 1]) {
          const p = 5 + i;
          const from = window > 0 ? Math.max(0, p - window + 1) : 0;
          const q = qs.subarray(i * d.nHead * d.headDimK, (i + 1) * d.nHead * d.headDimK);
          const one = kernel(q, from, p, 'f32', sinks);
          expect(batch.subarray(i * d.nHead * d.headDimV, (i + 1) * d.nHead * d.headDimV)).toEqual(one);
          const r = ref(q, from, p, 'f32', sinks);
          for (let e = 0; e < r.length; e++) expect(Math.abs(one[e] - r[e])).toBeLessThanOrEqual(1e-4 * (Math.abs(r[e]) + 1e-2));
        }
      }
    }
  });
});

describe('pool split attention with sinks = the single-thread kernels', () => {
  const pool = new PoolBackend({ simd: 'simd', threads: 2 });
  afterAll(() => pool.dispose());
  it('a 6-token prompt, then one token at a time, window 5', () => {
    const shape = { nLayer: 1, ...d };
    const split = pool.splitAttention(shape, 20)!;
    expect(split.parts).toBe(2);
    const qDim = d.nHead * d.headDimK, oDim = d.nHead * d.headDimV;
    const kc = a.alloc(20 * kvDim * 2), vc = a.alloc(20 * kvDim * 2);
    const rq = a.alloc(qDim * 4), rk = a.alloc(kvDim * 4), rv = a.alloc(kvDim * 4), ro = a.alloc(oDim * 4);
    const sinks = SINKS[1];
    a.f32(sp, 4).set(sinks);
    const want = (q: Float32Array, kn: Float32Array, vn: Float32Array, pos: number) => {
      a.f32(rq, qDim).set(q);
      a.f32(rk, kvDim).set(kn);
      a.f32(rv, kvDim).set(vn);
      k.kvStore(kc + pos * kvDim * 2, rk, kvDim);
      k.kvStore(vc + pos * kvDim * 2, rv, kvDim);
      k.attention('f16', { out: ro, q: rq, kc, vc, strideK: kvDim, strideV: kvDim, nHead: d.nHead, nHeadKv: d.nHeadKv, hdK: d.headDimK, hdV: d.headDimV, scale, scratch, sinks: sp }, Math.max(0, pos - 4), pos);
      return a.f32(ro, oDim).slice();
    };
    const n0 = 6;
    const q = randomFloats(n0 * qDim, 51), kn = randomFloats(n0 * kvDim, 52), vn = randomFloats(n0 * kvDim, 53);
    const out = new Float32Array(n0 * oDim);
    split.run(0, out, q, kn, vn, 0, n0, 'f16', 5, scale, sinks);
    for (let t = 0; t < n0; t++) expect(out.subarray(t * oDim, (t + 1) * oDim)).toEqual(want(q.subarray(t * qDim, (t + 1) * qDim), kn.subarray(t * kvDim, (t + 1) * kvDim), vn.subarray(t * kvDim, (t + 1) * kvDim), t));
    for (let pos = n0; pos < 20; pos++) {
      const q1 = randomFloats(qDim, pos), k1 = randomFloats(kvDim, pos + 100), v1 = randomFloats(kvDim, pos + 200);
      const o1 = new Float32Array(oDim);
      split.run(0, o1, q1, k1, v1, pos, 1, 'f16', 5, scale, sinks);
      expect(o1, `position ${pos}`).toEqual(want(q1, k1, v1, pos));
    }
    split.dispose();
  });

  it('a 70-token prompt in the f32 (tiled) mode = attn_f32_batch, window 5', () => {
    const n = 70;
    const shape = { nLayer: 1, ...d };
    const split = pool.splitAttention(shape, n)!;
    const qDim = d.nHead * d.headDimK, oDim = d.nHead * d.headDimV;
    const q = randomFloats(n * qDim, 61), kn = randomFloats(n * kvDim, 62), vn = randomFloats(n * kvDim, 63);
    const out = new Float32Array(n * oDim);
    split.run(0, out, q, kn, vn, 0, n, 'f32', 5, scale, SINKS[2]);
    // the same on one thread: the cache stored, then the batch kernel
    const kc = a.alloc(n * kvDim * 2), vc = a.alloc(n * kvDim * 2), kp1 = a.alloc(kvDim * 4), vp1 = a.alloc(kvDim * 4);
    for (let t = 0; t < n; t++) {
      a.f32(kp1, kvDim).set(kn.subarray(t * kvDim, (t + 1) * kvDim));
      a.f32(vp1, kvDim).set(vn.subarray(t * kvDim, (t + 1) * kvDim));
      k.kvStore(kc + t * kvDim * 2, kp1, kvDim);
      k.kvStore(vc + t * kvDim * 2, vp1, kvDim);
    }
    const qb = a.alloc(q.length * 4), ob = a.alloc(n * oDim * 4), sc = a.alloc(k.attnScratchBytes(d.nHead, d.nHeadKv, d.headDimK, d.headDimV, n));
    a.f32(qb, q.length).set(q);
    a.f32(sp, 4).set(SINKS[2]);
    k.attentionBatchF32({ out: ob, q: qb, kc, vc, strideK: kvDim, strideV: kvDim, nHead: d.nHead, nHeadKv: d.nHeadKv, hdK: d.headDimK, hdV: d.headDimV, scale, scratch: sc, sinks: sp }, 0, n, 5);
    expect(out).toEqual(a.f32(ob, n * oDim));
    split.dispose();
  });
});
