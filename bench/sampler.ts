// Benchmark: sampling one token from 150k logits (not a test: prints timings).
// Usage: node bin/run-ts.mjs bench/sampler.ts
import { createRng, DEFAULT_SAMPLING, expSumBelowMax, expSumBelowMaxReference, Sampler } from '../src/engine/sample/index.js';

const rnd = createRng(5);
const n = 151_936;
const logits = Float32Array.from({ length: n }, () => (rnd() + rnd() + rnd() - 1.5) * 6);
const history = Array.from({ length: 64 }, (_, i) => i * 97);
for (const [label, params] of [
  ['defaults + repeat penalty 1.1', { ...DEFAULT_SAMPLING, seed: 3, repeatPenalty: 1.1 }],
  ['greedy', { ...DEFAULT_SAMPLING, temperature: 0 }],
  ['top-k off, top-p 0.95', { ...DEFAULT_SAMPLING, seed: 3, topK: 0 }],
] as const) {
  const s = new Sampler(params);
  for (let i = 0; i < 5; i++) s.sample(logits, history);
  const times: number[] = [];
  for (let i = 0; i < 101; i++) {
    const t0 = performance.now();
    s.sample(logits, history);
    times.push(performance.now() - t0);
  }
  report(label, times);
}

// The normaliser alone: the table-based sum against one Math.exp per logit.
let max = -Infinity;
for (const v of logits) max = Math.max(max, v);
for (const [label, f] of [['normaliser, table', expSumBelowMax], ['normaliser, Math.exp', expSumBelowMaxReference]] as const) {
  const times: number[] = [];
  for (let i = 0; i < 101; i++) {
    const t0 = performance.now();
    f(logits, n, max);
    times.push(performance.now() - t0);
  }
  report(label, times);
}

function report(label: string, times: number[]): void {
  times.sort((a, b) => a - b);
  console.log(`${label.padEnd(32)} best ${times[0].toFixed(2)} ms   median ${times[times.length >> 1].toFixed(2)} ms`);
}
