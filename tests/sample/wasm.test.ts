// Sampling's whole-vocabulary passes in WebAssembly (wasm/assembly/sample.ts through WasmPasses)
// against the TypeScript ones (ScalarPasses: scrubMax, expSumAndTop, selectTopK) and against one
// Math.exp per value; then whole Samplers on either passes, which must pick the same tokens.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRng, DEFAULT_SAMPLING, expSumBelowMaxReference, FUSED_TOP_MAX, NUCLEUS_BINS, nucleusBoundary, Sampler, ScalarPasses, scrubMax, selectTopKReference, WasmPasses, type SamplingParams } from '../../src/engine/sample/index.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { BUILDS, skipBuild } from '../wasm/builds.js';

/** Values that break sampling code: NaN, ±inf, ±0, ties, huge and tiny magnitudes. */
const nasty = [NaN, Infinity, -Infinity, 0, -0, 1, 1, -1, 3.5, 3.5, 1e30, -1e30, 1e-30, 88, -88, 1000, -1000];

function randomLogits(n: number, seed: number, spread: number, nastyShare = 0): Float32Array {
  const rnd = createRng(seed);
  return Float32Array.from({ length: n }, () => (rnd() < nastyShare ? nasty[Math.floor(rnd() * nasty.length)] : (rnd() + rnd() + rnd() - 1.5) * spread));
}

/** Inputs over the kernels' edge cases: sizes around multiples of 4 and 8, all equal, ties, NaN, ±inf. */
function adversarial(): Float32Array[] {
  const out: Float32Array[] = [];
  for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 67, 1001]) {
    out.push(new Float32Array(n)); // all equal (zero)
    out.push(new Float32Array(n).fill(-2.5));
    out.push(Float32Array.from({ length: n }, (_, i) => i % 3)); // ties everywhere
    out.push(Float32Array.from({ length: n }, (_, i) => -i)); // descending: every value beats nothing
    out.push(Float32Array.from({ length: n }, (_, i) => i)); // ascending: every value is inserted
    out.push(randomLogits(n, n, 4, 0.3));
  }
  return out;
}

for (const simd of BUILDS) describe.skipIf(skipBuild(simd))(`${simd} build`, () => {
  let k!: KernelInstance;
  let wasm!: WasmPasses;
  const ts = new ScalarPasses();
  beforeAll(() => {
    k = new KernelInstance(loadKernelModule({ simd }));
    wasm = new WasmPasses(k);
  });

  describe(`wasm sampling passes (${simd})`, () => {
    it('load: the same scrubbed copy (NaN → −inf) and max as scrubMax, bit for bit', () => {
      const cases = [...adversarial(), new Float32Array([NaN, NaN, NaN]), new Float32Array([-0, 0, -0]), randomLogits(4099, 3, 10, 0.1)];
      for (const l of cases) {
        const want = scrubMax(new Float32Array(l), l.length);
        const maxW = wasm.load(l);
        const maxT = ts.load(l);
        expect(maxT).toBe(want);
        expect(maxW === maxT).toBe(true); // −0 and +0 may differ: they are the same max
        for (let i = 0; i < l.length; i++) expect(Object.is(wasm.work[i], ts.work[i])).toBe(true);
        expect(wasm.max(l.length) === maxT).toBe(true);
      }
    });

    it('each term exp(l − top) within 1e-9 of Math.exp, in both the four-lane loop and the scalar tail', () => {
      // One value (tail) and four equal values (loop) below top = 0: the sum is 1 or 4 terms.
      const x = k.arena.scratch(64);
      const v = k.arena.f32(x, 4);
      let worst = 0;
      for (let j = 0; j <= 40000; j++) {
        const l = Math.fround(-j / 1000 - j * 1e-7);
        const want = Math.exp(l);
        v.fill(l);
        worst = Math.max(worst, Math.abs(k.expSumTop(x + 16, x, 1, 0, 0) - want) / want);
        worst = Math.max(worst, Math.abs(k.expSumTop(x + 16, x, 4, 0, 0) / 4 - want) / want);
      }
      expect(worst).toBeLessThan(1e-9);
      v.fill(-Infinity);
      expect(k.expSumTop(x + 16, x, 4, 0, 0)).toBeLessThan(1e-300); // 2^-1000 per −inf: nothing next to a max's 1
    });

    it('hand example: [2, 1, 0, −1, −2] → 1 + e^-1 + e^-2 + e^-3 + e^-4 = 1.5713174', () => {
      const l = new Float32Array([2, 1, 0, -1, -2]);
      expect(wasm.expSum(5, wasm.load(l))).toBeCloseTo(1.5713174, 7);
    });

    it('expSum agrees with one Math.exp per value within 1e-8 relative (NaN and −inf among the values)', () => {
      for (const [seed, spread] of [[1, 0.01], [2, 1], [3, 6], [4, 20], [5, 60], [6, 600]]) {
        const l = randomLogits(20003, seed, spread, 0.01).map((x) => (x === Infinity ? -x : x));
        const max = wasm.load(l);
        const want = expSumBelowMaxReference(wasm.work, l.length, max);
        expect(Math.abs(wasm.expSum(l.length, max) - want) / want).toBeLessThan(1e-8);
      }
    });

    it('expSumAndTop: the same indices as the TypeScript list, the sum within 1e-8 (fast-check)', () => {
      const value = fc.oneof(fc.integer({ min: -4, max: 4 }).map((x) => x / 2), fc.constantFrom(-Infinity, Infinity, NaN), fc.float({ min: -50, max: 50, noNaN: true }));
      fc.assert(fc.property(fc.array(value, { minLength: 1, maxLength: 300 }), fc.integer({ min: 0, max: FUSED_TOP_MAX + 8 }), (arr, kk) => {
        const l = new Float32Array(arr);
        const max = ts.load(l);
        wasm.load(l);
        fc.pre(max > -Infinity);
        const sumT = ts.expSumAndTop(l.length, max, kk);
        const sumW = wasm.expSumAndTop(l.length, max, kk);
        const kept = Math.min(kk, l.length, FUSED_TOP_MAX);
        expect([...wasm.ids.slice(0, kept)]).toEqual([...ts.ids.slice(0, kept)]);
        expect([...wasm.ids.slice(0, kept)]).toEqual(selectTopKReference(ts.work, l.length, kept));
        if (max === Infinity) expect(sumW).toBeNaN();
        else expect(Math.abs(sumW - sumT) / sumT).toBeLessThan(2e-8);
      }), { numRuns: 400 });
    });

    it('expSumAndTop and selectTopK on adversarial inputs: the same indices as the TypeScript passes', () => {
      for (const l of adversarial()) {
        const max = ts.load(l);
        wasm.load(l);
        if (max === -Infinity) continue;
        for (const kk of [0, 1, 2, 5, 40, FUSED_TOP_MAX, l.length]) {
          ts.expSumAndTop(l.length, max, kk);
          wasm.expSumAndTop(l.length, max, kk);
          const kept = Math.min(kk, l.length, FUSED_TOP_MAX);
          expect([...wasm.ids.slice(0, kept)]).toEqual([...ts.ids.slice(0, kept)]);
          const a = ts.selectTopK(l.length, kk);
          const want = [...ts.ids.slice(0, a)];
          expect(wasm.selectTopK(l.length, kk)).toBe(a);
          expect([...wasm.ids.slice(0, a)]).toEqual(want);
        }
      }
    });

    it('selectTopK on large vocabularies with many ties: the same indices as sorting everything', () => {
      for (const [n, kk, spread] of [[32000, 100, 1], [151936, 300, 0.5], [4099, 4099, 2]]) {
        // Values rounded to 1/8: thousands of ties around the k-th.
        const l = randomLogits(n, n + kk, spread, 0.01).map((x) => Math.round(x * 8) / 8);
        ts.load(l);
        wasm.load(l);
        expect(wasm.selectTopK(n, kk)).toBe(kk);
        expect([...wasm.ids.slice(0, kk)]).toEqual(selectTopKReference(ts.work, n, kk));
      }
    });
  });

  describe(`wasm top-p passes (${simd})`, () => {
    /** Values whose distance below the max sits on fdlibm exp's branch points (0.5 ln2, 1.5 ln2, 2^-28, 708.4, 709.8, 745.1) and around. */
    function edges(max: number): Float32Array {
      const out: number[] = [max, -Infinity];
      for (const d of [0.34657359, 1.03972077, 3.7252903e-9, 1e-12, 708.39641, 709.78271, 745.13322, 745.2, 1000, 1e30, 0.5, 1, 2, 31.999, 32, 32.001]) {
        for (let u = -3; u <= 3; u++) out.push(Math.fround(max - d * (1 + u * 6e-8)));
      }
      return new Float32Array(out);
    }

    function bitsEqual(a: Float64Array, b: Float64Array): boolean {
      for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
      return true;
    }

    it('nucleusMass: the same bin masses and total as TypeScript, bit for bit (its Math.exp is fdlibm)', () => {
      const cases = [edges(0), edges(3.7), edges(-1.25), edges(100), ...adversarial(), randomLogits(20003, 1, 2, 0.01), randomLogits(20003, 2, 60, 0.01), randomLogits(151936, 3, 6)];
      // Every f32 distance from 0 to 800 below the max, spaced to reach every exponent and many mantissas.
      const r = createRng(9);
      cases.push(Float32Array.from({ length: 200003 }, (_, i) => (i === 0 ? 0 : -(2 ** (r() * 40 - 30)))));
      for (const l of cases) {
        const max = ts.load(l);
        wasm.load(l);
        if (max === -Infinity) continue;
        const a = new Float64Array(NUCLEUS_BINS), b = new Float64Array(NUCLEUS_BINS);
        const totalT = ts.nucleusMass(a, l.length, max);
        const totalW = wasm.nucleusMass(b, l.length, max);
        expect(Object.is(totalW, totalT)).toBe(true);
        expect(bitsEqual(a, b)).toBe(true);
      }
    });

    it('nucleusSplit: the same ids before and in the boundary bin, for every boundary', () => {
      for (const l of [edges(2), randomLogits(1003, 4, 3, 0.05), randomLogits(30001, 5, 8)]) {
        const max = ts.load(l);
        wasm.load(l);
        const mass = new Float64Array(NUCLEUS_BINS);
        const total = ts.nucleusMass(mass, l.length, max);
        const boundaries = new Set([0, 1, 15, 16, 17, 100, 511, 512, nucleusBoundary(mass, total, 0.9).boundary]);
        for (const b of boundaries) {
          const t = ts.nucleusSplit(l.length, max, b);
          const w = wasm.nucleusSplit(l.length, max, b);
          expect(w).toEqual(t);
          expect([...wasm.ids.slice(0, w.size)]).toEqual([...ts.ids.slice(0, t.size)]);
          expect([...wasm.scratch.slice(0, w.inBoundary)]).toEqual([...ts.scratch.slice(0, t.inBoundary)]);
        }
      }
    });
  });

  describe(`Sampler on wasm passes (${simd}) picks what it picks on TypeScript ones`, () => {
    const paramSets: Partial<SamplingParams>[] = [
      { temperature: 0 },
      { temperature: 0, topK: 200 },
      {},
      { repeatPenalty: 1.3, frequencyPenalty: 0.2, presencePenalty: 0.1 },
      { topK: 5, topP: 0.5, temperature: 1.5 },
      { topK: 100, minP: 0.1 },
      { topK: 0, topP: 0.9 },
      { topK: 0, topP: 1, minP: 0.2, temperature: 0.7 },
      { topK: 1 },
      { topK: 65, topP: 1, minP: 0 },
    ];

    function compare(logits: Float32Array, history: number[], params: Partial<SamplingParams>, seed: number, steps: number): void {
      const p = { ...DEFAULT_SAMPLING, seed, ...params };
      const a = new Sampler(p, ts);
      const b = new Sampler(p, wasm);
      for (let s = 0; s < steps; s++) {
        let ra;
        try {
          ra = a.sample(logits, history);
        } catch (err) {
          expect(() => b.sample(logits, history)).toThrow((err as Error).message);
          return;
        }
        const rb = b.sample(logits, history);
        expect(rb.id).toBe(ra.id);
        expect(rb.top.map((t) => t.id)).toEqual(ra.top.map((t) => t.id));
        rb.top.forEach((t, i) => (Number.isNaN(ra.top[i].p) ? expect(t.p).toBeNaN() : expect(t.p).toBeCloseTo(ra.top[i].p, 7)));
      }
      expect(b.candidates(logits, history).map((c) => c.id)).toEqual(a.candidates(logits, history).map((c) => c.id));
    }

    it('random logits at vocabulary sizes 32000 and 32003, every parameter set, 8 draws each', () => {
      for (const n of [32000, 32003]) {
        for (const [i, params] of paramSets.entries()) {
          const logits = randomLogits(n, n + i, 3 + i, 0.001);
          const history = Array.from({ length: 80 }, (_, j) => (j * 7919 + i) % n);
          compare(logits, history, params, i + 1, 8);
        }
      }
    });

    it('adversarial logits (NaN, ±inf, ties, all equal, odd sizes), every parameter set', () => {
      const cases = [...adversarial(), new Float32Array([NaN, NaN, -Infinity]), new Float32Array([Infinity, 1, Infinity, NaN, 2]), new Float32Array([1, NaN, Infinity])];
      for (const [c, logits] of cases.entries()) {
        for (const [i, params] of paramSets.entries()) {
          // The max in the history: the penalty lowers it, so the max is found again.
          const history = [0, logits.length - 1, c % logits.length];
          compare(logits, history, { ...params, repeatPenalty: 1.5 }, c * 31 + i, 3);
        }
      }
    });
  });
});
