// The sampler chain on hand-worked examples. Reference logits L = [2, 1, 0, -1, -2]:
//   exp(L - 2) = [1, 0.367879, 0.135335, 0.049787, 0.018316], sum 1.571317
//   softmax    = [0.636409, 0.234122, 0.086129, 0.031685, 0.011656]
//   cumulative = [0.636409, 0.870530, 0.956659, 0.988344, 1]
import { describe, expect, it } from 'vitest';
import { applyPenalties, createRng, DEFAULT_SAMPLING, Sampler, type SamplingParams } from '../../src/engine/sample/index.js';
import { samplingSettings } from '../../src/shared/requests.js';

const L = new Float32Array([2, 1, 0, -1, -2]);
const SOFTMAX = [0.636409, 0.234122, 0.086129, 0.031685, 0.011656];
const OFF: SamplingParams = { ...DEFAULT_SAMPLING, topK: 0, topP: 1, minP: 0, temperature: 1, seed: 1 };

function dist(params: Partial<SamplingParams>, logits = L, history: number[] = []): [number, number][] {
  return new Sampler({ ...OFF, ...params }).candidates(logits, history).map((c) => [c.id, c.p]);
}

function expectDist(got: [number, number][], want: [number, number][]): void {
  expect(got.map((g) => g[0])).toEqual(want.map((w) => w[0]));
  got.forEach((g, i) => expect(g[1]).toBeCloseTo(want[i][1], 5));
}

describe('defaults', () => {
  it("are llama.cpp's (common.h common_params_sampling)", () => {
    expect(DEFAULT_SAMPLING).toMatchObject({ temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1, presencePenalty: 0, frequencyPenalty: 0, penaltyLastN: 64, seed: -1 });
  });
});

describe('truncation, by hand', () => {
  it('nothing on: the full softmax, in id order', () => {
    expectDist(dist({}), SOFTMAX.map((p, i) => [i, p]));
  });

  it('top-k 3: ids 0,1,2 renormalised = [1, 0.367879, 0.135335] / 1.503214', () => {
    expectDist(dist({ topK: 3 }), [[0, 0.665241], [1, 0.244728], [2, 0.090031]]);
  });

  it('top-p 0.9: cumulative 0.6364, 0.8705 < 0.9, 0.9567 ≥ 0.9 → 3 survive', () => {
    expectDist(dist({ topP: 0.9 }), [[0, 0.665241], [1, 0.244728], [2, 0.090031]]);
  });

  it('top-p 0.8: 0.8705 ≥ 0.8 after two → ids 0,1 = [1, 0.367879] / 1.367879', () => {
    expectDist(dist({ topP: 0.8 }), [[0, 0.731059], [1, 0.268941]]);
  });

  it('top-p with top-k renormalises over the k first: k=2, p=0.7 → 0.731 ≥ 0.7 keeps only id 0', () => {
    expectDist(dist({ topK: 2, topP: 0.7 }), [[0, 1]]);
  });

  it('min-p 0.1: keep p ≥ 0.0636 (logit ≥ 2 + ln 0.1 = -0.3026) → ids 0,1,2', () => {
    expectDist(dist({ minP: 0.1 }), [[0, 0.665241], [1, 0.244728], [2, 0.090031]]);
  });

  it('min-p 0.2 after top-k 4: logit ≥ 2 + ln 0.2 = 0.3906 → ids 0,1', () => {
    expectDist(dist({ topK: 4, minP: 0.2 }), [[0, 0.731059], [1, 0.268941]]);
  });

  it('min-p 1 keeps every token tied with the max (p_i >= p_max, not >)', () => {
    expectDist(dist({ topK: 3, minP: 1 }, new Float32Array([3, 1, 3])), [[0, 0.5], [2, 0.5]]);
    expectDist(dist({ minP: 1 }, new Float32Array([3, 1, 3])), [[0, 0.5], [2, 0.5]]);
  });

  it('min-p over the whole vocabulary uses the max after penalties', () => {
    // history [0, 3], repeat 2: id 0: 2 → 1, id 3: −1 → −2; logits [1, 1, 0, −2, −2], max 1.
    // min-p 0.3: keep logit ≥ 1 + ln 0.3 = −0.204 → ids 0,1,2 = [1, 1, e^-1] / 2.367879
    expectDist(dist({ minP: 0.3, repeatPenalty: 2 }, L, [0, 3]), [[0, 0.422319], [1, 0.422319], [2, 0.155362]]);
  });

  it('temperature 0.5 after top-k 3: logits/T = [4, 2, 0] → [1, e^-2, e^-4] / 1.153651', () => {
    expectDist(dist({ topK: 3, temperature: 0.5 }), [[0, 0.866813], [1, 0.117310], [2, 0.015876]]);
  });

  it('temperature applies after top-p (top-p sees the T=1 distribution)', () => {
    // At T=1 top-p 0.8 keeps two; at T=2 the same two survive: [1, e^-0.5] / 1.606531.
    expectDist(dist({ topP: 0.8, temperature: 2 }), [[0, 0.622459], [1, 0.377541]]);
  });

  it('top-p without top-k widens past its first guess of 256 sorted tokens', () => {
    // 1024 equal logits: each p = 1/1024 (exact in float), so p = 0.5 needs exactly 512;
    // ties go to the lower ids.
    const c = new Sampler({ ...OFF, topP: 0.5 }).candidates(new Float32Array(1024), []);
    expect(c).toHaveLength(512);
    expect(c.map((x) => x.id)).toEqual(Array.from({ length: 512 }, (_, i) => i));
    expect(c[0].p).toBeCloseTo(1 / 512, 9);
  });
});

describe('penalties, by hand', () => {
  // history [4, 0, 0, 3], last_n 3 → window [0, 0, 3], counts {0: 2, 3: 1}; repeat 2, freq 0.5, presence 0.25
  //   id 0:  2 > 0 → 2 / 2 = 1;    1 − (2·0.5 + 0.25) = −0.25
  //   id 3: −1 ≤ 0 → −1 · 2 = −2; −2 − (1·0.5 + 0.25) = −2.75
  //   id 4: outside the window, unchanged
  const pen = { repeatPenalty: 2, frequencyPenalty: 0.5, presencePenalty: 0.25, penaltyLastN: 3 };

  it('applyPenalties', () => {
    const l = new Float32Array(L);
    applyPenalties(l, [4, 0, 0, 3], 3, 2, 0.5, 0.25);
    expect([...l]).toEqual([-0.25, 1, 0, -2.75, -2]);
  });

  it('penaltyLastN -1 looks at the whole history, 0 disables', () => {
    const a = new Float32Array(L);
    applyPenalties(a, [4], -1, 2, 0, 0);
    expect(a[4]).toBe(-4);
    const b = new Float32Array(L);
    applyPenalties(b, [0, 1, 2], 0, 2, 1, 1);
    expect([...b]).toEqual([...L]);
  });

  it('the UI top-5 is the softmax after penalties: exp(l − 1) / 1.727689', () => {
    const r = new Sampler({ ...OFF, ...pen, temperature: 0 }).sample(L, [4, 0, 0, 3]);
    expect(r.id).toBe(1);
    expect(r.top.map((t) => t.id)).toEqual([1, 2, 0, 4, 3]);
    [0.578808, 0.212932, 0.165831, 0.028817, 0.013612].forEach((p, i) => expect(r.top[i].p).toBeCloseTo(p, 5));
  });

  it('the UI top-5 ignores truncation and temperature', () => {
    const r = new Sampler({ ...OFF, topK: 1, temperature: 0.3 }).sample(L, []);
    expect(r.top.map((t) => t.id)).toEqual([0, 1, 2, 3, 4]);
    SOFTMAX.forEach((p, i) => expect(r.top[i].p).toBeCloseTo(p, 5));
  });
});

describe('greedy and drawing', () => {
  it('temperature 0: argmax, lowest id on ties', () => {
    const s = new Sampler({ ...DEFAULT_SAMPLING, temperature: 0 });
    expect(s.sample(new Float32Array([1, 3, 3, 0]), []).id).toBe(1);
    expect(s.sample(new Float32Array([NaN, -Infinity, 0.5]), []).id).toBe(2);
  });

  it('the draw picks the bucket the RNG value falls in', () => {
    // top-k 3 at T=1: buckets [0, 0.665241) → 0, [0.665241, 0.909969) → 1, [0.909969, 1) → 2.
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const u = createRng(seed)();
      const want = u <= 0.665241 ? 0 : u <= 0.909969 ? 1 : 2;
      expect(new Sampler({ ...OFF, topK: 3, seed }).sample(L, []).id).toBe(want);
    }
  });

  it('frequencies over many draws match the distribution', () => {
    const s = new Sampler({ ...OFF, topK: 3, seed: 7 });
    const n = 20000;
    const counts = [0, 0, 0, 0, 0];
    for (let i = 0; i < n; i++) counts[s.sample(L, []).id]++;
    [0.665241, 0.244728, 0.090031, 0, 0].forEach((p, i) => expect(Math.abs(counts[i] / n - p)).toBeLessThan(0.015));
  });

  it('same seed → same tokens; reset(seed) replays', () => {
    const rnd = createRng(99);
    const steps = Array.from({ length: 30 }, () => Float32Array.from({ length: 1000 }, () => (rnd() - 0.5) * 8));
    const run = (s: Sampler): number[] => steps.map((l, i) => s.sample(l, [i]).id);
    const a = new Sampler({ ...DEFAULT_SAMPLING, seed: 1234 });
    const first = run(a);
    expect(run(new Sampler({ ...DEFAULT_SAMPLING, seed: 1234 }))).toEqual(first);
    a.reset(1234);
    expect(run(a)).toEqual(first);
    expect(new Set(first).size).toBeGreaterThan(1);
  });

  it('seed -1 picks a random seed and reports it', () => {
    const s = new Sampler({ ...DEFAULT_SAMPLING, seed: -1 });
    expect(Number.isInteger(s.seed) && s.seed >= 0 && s.seed <= 0xffffffff).toBe(true);
  });

  it('rejects parameters out of range, by the rule a request from the page gets (shared/requests.ts)', () => {
    expect(() => new Sampler({ ...DEFAULT_SAMPLING, topP: 1.5 })).toThrow('sampling.topP must be between 0 and 1 (got 1.5).');
    expect(() => new Sampler({ ...DEFAULT_SAMPLING, repeatPenalty: 0 })).toThrow('sampling.repeatPenalty must be greater than 0.');
    expect(() => samplingSettings({ ...DEFAULT_SAMPLING, repeatPenalty: 0 })).toThrow('sampling.repeatPenalty must be greater than 0.');
    expect(new Sampler({ ...DEFAULT_SAMPLING, topK: -1 }).params.topK).toBe(-1); // 0 or less: off, as llama.cpp
    expect(() => new Sampler({ ...DEFAULT_SAMPLING, temperature: NaN })).toThrow(/temperature/);
  });
});
