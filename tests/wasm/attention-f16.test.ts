// attn_f16 (assembly/attention.ts) against the scalar reference (src/engine/model/attention.ts, which
// follows ggml's f16 flash-attention path bit for bit), on what the kernel's fast pass must get right
// or hand to its exact pass: chunk shapes (ranges that are not multiples of the 16-position chunk,
// head sizes that leave 16- and 4-lane remainders), caches holding infinities, NaNs, subnormal
// halves and zeros of both signs, accumulators that overflow f16 (or just do not), queries out of
// half range, and the sub-ranges of heads a worker is given (a head offset, the full row stride).
// Every output bit must equal the reference's (NaN: any NaN).
import { describe, expect, it } from 'vitest';
import { attention, createAttentionScratch, type AttentionDims } from '../../src/engine/model/attention.js';
import { F16, f32ToF16Bits } from '../../src/engine/quant/half.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { randomFloats, rng } from './gen.js';

const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));
const a = k.arena;

interface Case { d: AttentionDims; size: number; k: Uint16Array; v: Uint16Array; q: Float32Array; scale: number }

/** The reference's output for positions [from, to], all heads. */
function reference(c: Case, from: number, to: number): Float32Array {
  const { nHeadKv, headDimK, headDimV } = c.d;
  const cache = { size: c.size, kvDimK: nHeadKv * headDimK, kvDimV: nHeadKv * headDimV, k: [c.k], v: [c.v], nonFinite: new Uint8Array(1) };
  const out = new Float32Array(c.d.nHead * headDimV);
  attention(out, 0, c.q, 0, cache, 0, from, to, c.d, c.scale, 'f16', createAttentionScratch(c.d, c.size));
  return out;
}

/** The kernel's output for query heads [h0, h0 + nHead) (KV heads [g0, g0 + nHead / group)), positions [from, to]. */
function kernel(c: Case, from: number, to: number, g0 = 0, nHeadKv = c.d.nHeadKv): Float32Array {
  const { headDimK: hdK, headDimV: hdV } = c.d;
  const group = c.d.nHead / c.d.nHeadKv;
  const nHead = nHeadKv * group;
  const kc = a.alloc(c.k.length * 2);
  const vc = a.alloc(c.v.length * 2);
  new Uint16Array(a.memory.buffer, kc, c.k.length).set(c.k);
  new Uint16Array(a.memory.buffer, vc, c.v.length).set(c.v);
  const qp = a.alloc(c.q.length * 4);
  a.f32(qp, c.q.length).set(c.q);
  const op = a.alloc(nHead * hdV * 4);
  const scratch = a.alloc(k.attnScratchBytes(nHead, nHeadKv, hdK, hdV, c.size));
  const kvDimK = c.d.nHeadKv * hdK;
  const kvDimV = c.d.nHeadKv * hdV;
  k.attention('f16', { out: op, q: qp + g0 * group * hdK * 4, kc: kc + g0 * hdK * 2, vc: vc + g0 * hdV * 2, strideK: kvDimK, strideV: kvDimV, nHead, nHeadKv, hdK, hdV, scale: c.scale, scratch }, from, to);
  return a.f32(op, nHead * hdV).slice();
}

/** Indices where got and want differ (Object.is, but any NaN equals any NaN), at most 5. */
function differ(got: Float32Array, want: Float32Array): number[] {
  const bad: number[] = [];
  for (let i = 0; i < want.length && bad.length < 5; i++) {
    if (!(Object.is(got[i], want[i]) || (Number.isNaN(got[i]) && Number.isNaN(want[i])))) bad.push(i);
  }
  return bad;
}

function expectSame(c: Case, from: number, to: number, what: string): Float32Array {
  const want = reference(c, from, to);
  const got = kernel(c, from, to);
  const bad = differ(got, want);
  expect(bad.map((i) => [i, got[i], want[i]]), `${what}, positions ${from}..${to}`).toEqual([]);
  return want;
}

/** A case with random halves: keys spread kScale (how often the running maximum moves), values 3. */
function randomCase(d: AttentionDims, size: number, seed: number, kScale: number): Case {
  const kv = (n: number, s: number, scale: number) => Uint16Array.from(randomFloats(n, s, scale), f32ToF16Bits);
  return {
    d, size, scale: 1 / Math.sqrt(d.headDimK),
    k: kv(size * d.nHeadKv * d.headDimK, seed, kScale),
    v: kv(size * d.nHeadKv * d.headDimV, seed + 1, 3),
    q: randomFloats(d.nHead * d.headDimK, seed + 2, 1.5),
  };
}

/** Halves at the edges of the format: zeros, subnormals, the normal boundary, the largest, ±1. */
const EDGE_HALVES = [0x0000, 0x8000, 0x0001, 0x8001, 0x0003, 0x83ff, 0x03ff, 0x0400, 0x8400, 0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x3555, 0x2e66];

describe('attn_f16 = the scalar reference, bit for bit', () => {
  const shapes: [string, AttentionDims][] = [
    ['MHA 3 × 64', { nHead: 3, nHeadKv: 3, headDimK: 64, headDimV: 64 }],
    ['GQA 6 → 2 × 52 (32 + 16 + 4 lanes)', { nHead: 6, nHeadKv: 2, headDimK: 52, headDimV: 52 }],
    ['GQA 4 → 1 × 36', { nHead: 4, nHeadKv: 1, headDimK: 36, headDimV: 36 }],
    ['one head × 4', { nHead: 1, nHeadKv: 1, headDimK: 4, headDimV: 4 }],
    ['MHA 2 × 80', { nHead: 2, nHeadKv: 2, headDimK: 80, headDimV: 80 }],
    ['GQA 2 → 1 × 128', { nHead: 2, nHeadKv: 1, headDimK: 128, headDimV: 128 }],
  ];
  const ranges = [[0, 0], [0, 15], [0, 16], [5, 37], [3, 99]];
  let seed = 100;
  for (const [name, d] of shapes) {
    it(`${name}: ranges across chunk boundaries`, () => {
      for (const kScale of [1, 6]) {
        const c = randomCase(d, 100, (seed += 3), kScale);
        for (const [from, to] of ranges) expectSame(c, from, to, `keys ×${kScale}`);
      }
    });
  }

  it('halves at the edges of the format in K and V (subnormals, zeros of both signs, 65504)', () => {
    const d: AttentionDims = { nHead: 4, nHeadKv: 2, headDimK: 64, headDimV: 64 };
    const r = rng(7);
    for (const share of [0.3, 1]) {
      const c = randomCase(d, 40, 200, 4);
      for (const cache of [c.k, c.v]) for (let i = 0; i < cache.length; i++) if (r() < share) cache[i] = EDGE_HALVES[Math.floor(r() * EDGE_HALVES.length)];
      expectSame(c, 0, 39, `${share * 100}% edge halves`);
      expectSame({ ...c, d: { ...d, nHeadKv: 4, nHead: 4, headDimK: 32, headDimV: 32 } }, 2, 33, `${share * 100}% edge halves, MHA × 32`);
    }
  });

  it('a cache holding infinities or NaNs (the exact pass), and queries beyond half range', () => {
    const d: AttentionDims = { nHead: 4, nHeadKv: 2, headDimK: 64, headDimV: 64 };
    const mha: AttentionDims = { nHead: 2, nHeadKv: 2, headDimK: 64, headDimV: 64 };
    for (const dd of [d, mha]) {
      for (const [which, at, bits] of [['k', 700, 0x7c00], ['k', 70, 0xfc00], ['v', 1500, 0x7e00], ['v', 3, 0xfc00], ['k', 2000, 0xfe01]] as const) {
        const c = randomCase(dd, 20, 300, 2);
        c[which][at % c[which].length] = bits;
        expectSame(c, 0, 19, `${which}[${at % c[which].length}] = ${bits.toString(16)}`);
      }
      const c = randomCase(dd, 20, 310, 2);
      c.q[5] = 70000; // rounds to infinity in q16
      c.q[70] = -1e9;
      expectSame(c, 0, 19, 'q out of half range');
      c.q[9] = NaN;
      expectSame(c, 0, 19, 'q with a NaN');
    }
  });

  it('an accumulator that reaches f16 infinity, and one that stays just below it', () => {
    // equal scores (K = 0): each position adds v·1, and the reference rounds the V accumulator to
    // f16 after each: 32752 + 32752 = 65504 stays, 32752 + 32768 = 65520 overflows (the tie goes to
    // 65536); the output is the accumulator / 2
    const d: AttentionDims = { nHead: 1, nHeadKv: 1, headDimK: 8, headDimV: 8 };
    for (const [v0, v1, want] of [[32752, 32752, 32752], [32752, 32768, Infinity]]) {
      const v = new Uint16Array(16).fill(f32ToF16Bits(v0));
      v.fill(f32ToF16Bits(v1), 8);
      const c: Case = { d, size: 2, scale: 1, k: new Uint16Array(16), v, q: new Float32Array(8).fill(1) };
      const out = expectSame(c, 0, 1, `V = ${v0}, ${v1}`);
      expect(out[0]).toBe(want);
    }
    // sums that overflow partway through a long range, and later positions that would pull a
    // finite accumulator back below the limit
    const c = randomCase({ nHead: 2, nHeadKv: 2, headDimK: 64, headDimV: 64 }, 60, 400, 0.01);
    for (let t = 10; t < 14; t++) c.v.fill(f32ToF16Bits(30000), t * 128, t * 128 + 70);
    for (let t = 14; t < 60; t++) c.v.fill(f32ToF16Bits(-30000), t * 128 + 3, t * 128 + 5);
    expectSame(c, 0, 59, 'overflow midway');
  });

  it('a zero accumulator keeps the sign of the sum it rounds from (hand-worked)', () => {
    // position 0: score 0 (the maximum), v = +0; position 1: score −1, v = −2^-24, so the sum is
    // −2^-24·e^-1 (above −2^-25), which rounds to −0; positions 2..: score −1, v = −0 (−0 + −0 = −0).
    // Output −0·(1/S) = −0 in every lane.
    const d: AttentionDims = { nHead: 1, nHeadKv: 1, headDimK: 4, headDimV: 4 };
    const size = 20;
    const kk = new Uint16Array(size * 4);
    for (let t = 1; t < size; t++) kk[t * 4] = f32ToF16Bits(-1);
    const v = new Uint16Array(size * 4).fill(0x8000);
    v.fill(0, 0, 4);
    v.fill(0x8001, 4, 8);
    const c: Case = { d, size, scale: 1, k: kk, v, q: Float32Array.from([1, 0, 0, 0]) };
    const out = expectSame(c, 0, size - 1, '−0');
    expect([...out].map((x) => Object.is(x, -0))).toEqual([true, true, true, true]);
    expect(F16[0x8001] * Math.exp(-1)).toBeGreaterThan(-(2 ** -25));
  });

  it('a worker\'s sub-range of heads (head offset, full row stride) = those heads of the whole call', () => {
    for (const d of [{ nHead: 8, nHeadKv: 4, headDimK: 64, headDimV: 64 }, { nHead: 5, nHeadKv: 5, headDimK: 32, headDimV: 32 }]) {
      const c = randomCase(d, 50, 500, 3);
      const group = d.nHead / d.nHeadKv;
      for (const [from, to] of [[0, 49], [7, 30]]) {
        const want = reference(c, from, to);
        for (const [g0, n] of [[0, 1], [1, 2], [d.nHeadKv - 1, 1]]) {
          const got = kernel(c, from, to, g0, n);
          const slice = want.subarray(g0 * group * d.headDimV, (g0 + n) * group * d.headDimV);
          const bad = differ(got, slice);
          expect(bad.map((i) => [i, got[i], slice[i]]), `${d.nHead} → ${d.nHeadKv}, KV heads ${g0}..${g0 + n - 1}, positions ${from}..${to}`).toEqual([]);
        }
      }
    }
  });
});
