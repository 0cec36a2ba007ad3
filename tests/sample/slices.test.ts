// Sampling's pass over the logits split by rows (sample/slices.ts, assembly/sample.ts
// sample_slice_top, PoolBackend.matvecTop): each slice's stats against the TypeScript reference,
// merged slices against one pass over the whole row (sorting everything, one Math.exp per value),
// and the Sampler given them against the Sampler making its own passes.
import { beforeAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import type { LogitStats } from '../../src/engine/backend/logit-stats.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../../src/engine/quant/index.js';
import { createRng, DEFAULT_SAMPLING, expSumBelowMaxReference, FUSED_TOP_MAX, mergeSliceTops, Sampler, scrubMax, selectTopKReference, sharedWasmPasses, sliceTop, type SamplingParams, type SliceTop } from '../../src/engine/sample/index.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { BUILDS, skipBuild } from '../wasm/builds.js';

function randomLogits(n: number, seed: number, spread: number, nanShare = 0): Float32Array {
  const rnd = createRng(seed);
  return Float32Array.from({ length: n }, () => (rnd() < nanShare ? NaN : (rnd() + rnd() + rnd() - 1.5) * spread));
}

/** Rounded to 1/4: ties everywhere, also across slices. */
const tied = (l: Float32Array) => l.map((x) => Math.round(x * 4) / 4);

const stats = (want: number): LogitStats => ({ want, valid: false, max: 0, sum: 0, count: 0, ids: new Int32Array(FUSED_TOP_MAX) });

/** The whole row's stats by sorting and one Math.exp per value. */
function reference(row: Float32Array, k: number) {
  const x = new Float32Array(row);
  const max = scrubMax(x, x.length);
  return { x, max, sum: expSumBelowMaxReference(x, x.length, max), ids: selectTopKReference(x, x.length, k) };
}

/** The row split at `cuts` into slices, each by sliceTop, merged. */
function merged(row: Float32Array, cuts: number[], want: number): { st: LogitStats; x: Float32Array } {
  const x = new Float32Array(row);
  const bounds = [0, ...cuts, x.length];
  const slices: SliceTop[] = [];
  for (let j = 0; j + 1 < bounds.length; j++) {
    const [r0, r1] = [bounds[j], bounds[j + 1]];
    const ids = new Int32Array(FUSED_TOP_MAX);
    const { max, sum } = sliceTop(ids, x.subarray(r0, r1), r1 - r0, want);
    slices.push({ r0, n: r1 - r0, max, sum, ids });
  }
  const st = stats(want);
  mergeSliceTops(st, x, slices);
  return { st, x };
}

for (const simd of BUILDS) {
  describe.skipIf(skipBuild(simd))(`sample_slice_top (${simd})`, () => {
    let k!: KernelInstance;
    beforeAll(() => {
      k = new KernelInstance(loadKernelModule({ simd }));
    });
    it('the same scrubbed slice, max and indices as sliceTop, the sum within 1e-9 of Math.exp per value', () => {
      const cases = [new Float32Array([2, 1, 0, -1, -2]), new Float32Array(7).fill(-3), tied(randomLogits(1001, 1, 6)), randomLogits(4099, 2, 10, 0.05), new Float32Array([NaN, NaN, 1, NaN])];
      for (const l of cases) {
        for (const want of [0, 1, 5, 40, FUSED_TOP_MAX]) {
          const at = k.arena.scratch(16 + 4 * FUSED_TOP_MAX + 4 * l.length + 64);
          const xp = at + 16 + 4 * FUSED_TOP_MAX;
          k.arena.f32(xp, l.length).set(l);
          k.call('sample_slice_top', at, xp, l.length, want);
          const ids = new Int32Array(FUSED_TOP_MAX);
          const t = new Float32Array(l);
          const r = sliceTop(ids, t, l.length, want);
          const got = k.arena.f32(xp, l.length);
          expect(new Uint32Array(got.slice().buffer)).toEqual(new Uint32Array(t.buffer));
          expect(k.arena.f32(at, 1)[0]).toBe(r.max);
          const kept = Math.min(want, l.length);
          expect([...new Int32Array(k.arena.memory.buffer, at + 16, kept)]).toEqual([...ids.slice(0, kept)]);
          const sum = new Float64Array(k.arena.memory.buffer, at, 2)[1];
          const exact = expSumBelowMaxReference(t, l.length, r.max);
          expect(Math.abs(sum - exact) / exact).toBeLessThan(1e-9);
        }
      }
    });
  });
}

describe('mergeSliceTops', () => {
  it('hand example: [0, 2] and [1, 2] → max 2, the first 2 first, Σ = e^-2 + 1 + e^-1 + 1', () => {
    const { st } = merged(new Float32Array([0, 2, 1, 2]), [2], 3);
    expect(st.valid).toBe(true);
    expect(st.max).toBe(2);
    expect([...st.ids.slice(0, st.count)]).toEqual([1, 3, 2]);
    expect(st.sum).toBeCloseTo(Math.exp(-2) + 1 + Math.exp(-1) + 1, 9);
  });

  it('any split: the indices of sorting the whole row, its max, its normaliser within 1e-9', () => {
    for (const [seed, n, spread] of [[1, 1000, 3], [2, 5003, 20], [3, 777, 0.01]] as const) {
      for (const l of [randomLogits(n, seed, spread, 0.01), tied(randomLogits(n, seed, spread))]) {
        const want = reference(l, FUSED_TOP_MAX);
        const rnd = createRng(seed);
        for (const parts of [1, 2, 3, 7]) {
          const cuts = Array.from({ length: parts - 1 }, () => Math.floor(rnd() * n)).sort((a, b) => a - b);
          for (const kk of [1, 5, 40, FUSED_TOP_MAX]) {
            const { st, x } = merged(l, cuts, kk);
            expect(st.valid).toBe(true);
            expect(st.max).toBe(want.max);
            expect(st.count).toBe(kk);
            expect([...st.ids.slice(0, kk)]).toEqual(want.ids.slice(0, kk));
            expect(Math.abs(st.sum - want.sum) / want.sum).toBeLessThan(1e-9);
            expect(new Uint32Array(x.buffer)).toEqual(new Uint32Array(want.x.buffer)); // scrubbed alike
          }
        }
      }
    }
  });

  it('slices shorter than want: as many as the row has; a slice of only −inf leaves the stats invalid', () => {
    const { st } = merged(new Float32Array([3, 1, 2]), [1], 5);
    expect(st.count).toBe(3);
    expect([...st.ids.slice(0, 3)]).toEqual([0, 2, 1]);
    expect(merged(new Float32Array([3, -Infinity, NaN]), [1], 2).st.valid).toBe(false);
  });
});

describe('PoolBackend.matvecTop', () => {
  // Q8_0 rows with repeats (equal logits in different threads' slices), 1003 rows of 64
  const rows = 1003, cols = 64;
  const rnd = createRng(9);
  const base = Array.from({ length: 37 }, () => Float32Array.from({ length: cols }, () => rnd() - 0.5));
  const f = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) f.set(base[(r * 11) % 37], r * cols);
  const q = quantizeRows(GgmlType.Q8_0, f, rows, cols);
  const spec = { name: 'output', type: GgmlType.Q8_0, rows, cols };
  const fill = (d: Uint8Array, off: number) => d.set(q.subarray(off, off + d.length));
  const x = Float32Array.from({ length: cols }, (_, i) => Math.sin(i * 0.7) * 3);

  it('the logits bit for bit as the single-thread matvec, with the stats of one pass over them', () => {
    const one = new WasmBackend();
    const want = new Float32Array(rows);
    one.matvec(want, one.addWeight(spec, fill), x);
    one.dispose();
    const ref = reference(want, FUSED_TOP_MAX);
    for (const threads of [1, 2, 3]) {
      const pool = new PoolBackend({ threads });
      try {
        const w = pool.addWeight(spec, fill);
        for (const kk of [5, 40, 0, 5]) {
          const out = new Float32Array(rows);
          const st = stats(kk);
          pool.matvecTop(out, w, x, st);
          expect(new Uint32Array(out.buffer)).toEqual(new Uint32Array(want.buffer));
          expect(st.valid).toBe(kk > 0);
          if (kk === 0) continue;
          expect(st.max).toBe(ref.max);
          expect([...st.ids.slice(0, st.count)]).toEqual(ref.ids.slice(0, kk));
          expect(Math.abs(st.sum - ref.sum) / ref.sum).toBeLessThan(1e-9);
          // and the plain product after it still plain
          const plain = new Float32Array(rows);
          pool.matvec(plain, w, x);
          expect(new Uint32Array(plain.buffer)).toEqual(new Uint32Array(want.buffer));
        }
      } finally {
        pool.dispose();
      }
    }
  });
});

describe('Sampler given the stats', () => {
  const settings: [string, Partial<SamplingParams>][] = [
    ['greedy', { temperature: 0 }],
    ['greedy, top-k off', { temperature: 0, topK: 0 }],
    ['defaults (top-k 40, top-p 0.95, min-p 0.05)', {}],
    ['top-k 64, top-p 1, min-p 0', { topK: 64, topP: 1, minP: 0 }],
    ['top-k 3, temperature 2', { topK: 3, temperature: 2 }],
  ];
  const passes = [undefined, sharedWasmPasses()];

  it.each(settings)('%s: the same tokens and top 5 as its own passes, probabilities within 1e-9', (_, over) => {
    const params = { ...DEFAULT_SAMPLING, seed: 11, ...over };
    for (const v of passes) {
      const a = new Sampler(params, v), b = new Sampler(params, v);
      expect(a.statsWanted).toBeGreaterThan(0);
      for (let t = 0; t < 30; t++) {
        const l = t % 2 ? tied(randomLogits(3001, t, 8)) : randomLogits(3001, t, 8, 0.01);
        const { st, x } = merged(l, [1000, 2001], a.statsWanted);
        const got = a.sample(x, [1, 2, 3], st);
        const want = b.sample(l, [1, 2, 3]);
        expect(got.id).toBe(want.id);
        expect(got.top.map((c) => c.id)).toEqual(want.top.map((c) => c.id));
        for (let i = 0; i < want.top.length; i++) expect(Math.abs(got.top[i].p - want.top[i].p)).toBeLessThan(1e-9 * want.top[i].p + 1e-300);
      }
    }
  });

  it('wants none when penalties change logits, top-p runs over the whole vocabulary, or every token is a candidate', () => {
    expect(new Sampler({ ...DEFAULT_SAMPLING, repeatPenalty: 1.1 }).statsWanted).toBe(0);
    expect(new Sampler({ ...DEFAULT_SAMPLING, temperature: 0, presencePenalty: 0.5 }).statsWanted).toBe(0);
    expect(new Sampler({ ...DEFAULT_SAMPLING, topK: 0 }).statsWanted).toBe(0);
    expect(new Sampler({ ...DEFAULT_SAMPLING, topK: 0, topP: 1 }).statsWanted).toBe(0);
    expect(new Sampler({ ...DEFAULT_SAMPLING, topK: 200 }).statsWanted).toBe(0);
    expect(new Sampler({ ...DEFAULT_SAMPLING, temperature: 0, topK: 200 }).statsWanted).toBe(5);
    expect(new Sampler({ ...DEFAULT_SAMPLING, repeatPenalty: 1.1, penaltyLastN: 0 }).statsWanted).toBe(40);
  });

  it('ignores stats that are not valid or too short', () => {
    const params = { ...DEFAULT_SAMPLING, temperature: 0 };
    const l = randomLogits(500, 3, 5);
    const want = new Sampler(params).sample(l, []);
    const bogus: LogitStats = { want: 5, valid: false, max: 99, sum: 1, count: 5, ids: new Int32Array(FUSED_TOP_MAX) };
    expect(new Sampler(params).sample(l, [], bogus)).toEqual(want);
    expect(new Sampler(params).sample(l, [], { ...bogus, valid: true, count: 2 })).toEqual(want);
  });
});
