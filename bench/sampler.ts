// Benchmark: sampling one token, whole-vocabulary passes in TypeScript vs WebAssembly (not a test:
// prints timings). Two vocabulary sizes (llama 32000, qwen2 151936); the two variants alternate
// round by round (the machine is shared), each round 41 calls, best and median over all rounds.
// Usage: node bin/run-ts.mjs bench/sampler.ts [rounds]
import { createRng, DEFAULT_SAMPLING, expSumBelowMax, expSumBelowMaxReference, Sampler, ScalarPasses, sharedWasmPasses, type SamplingParams, type VocabPasses } from '../src/engine/sample/index.js';

const rounds = Number(process.argv[2] ?? 5);
const wasm = sharedWasmPasses();
if (!wasm) throw new Error('the WebAssembly kernels did not load (run node scripts/build-wasm.mjs)');
const variants: [string, VocabPasses][] = [['ts', new ScalarPasses()], ['wasm', wasm]];

const cases: [string, Partial<SamplingParams>][] = [
  ['defaults + repeat penalty 1.1', { seed: 3, repeatPenalty: 1.1 }],
  ['greedy', { temperature: 0 }],
  ['greedy, top-k 200', { temperature: 0, topK: 200 }],
  ['top-k off, top-p 0.95', { seed: 3, topK: 0 }],
];

for (const n of [32_000, 151_936]) {
  const rnd = createRng(5);
  const logits = Float32Array.from({ length: n }, () => (rnd() + rnd() + rnd() - 1.5) * 6);
  const history = Array.from({ length: 64 }, (_, i) => (i * 97) % n);
  console.log(`\nvocabulary ${n}: ms per token, best / median of ${rounds} alternating rounds × 41`);
  for (const [label, params] of cases) {
    const samplers = variants.map(([, v]) => new Sampler({ ...DEFAULT_SAMPLING, ...params }, v));
    const times: number[][] = variants.map(() => []);
    for (let r = 0; r < rounds; r++) {
      samplers.forEach((s, j) => {
        for (let i = 0; i < 3; i++) s.sample(logits, history);
        for (let i = 0; i < 41; i++) {
          const t0 = performance.now();
          s.sample(logits, history);
          times[j].push(performance.now() - t0);
        }
      });
    }
    console.log(`  ${label.padEnd(32)} ${variants.map(([name], j) => `${name} ${stats(times[j])}`).join('   ')}`);
  }

  // The pieces: the copy into kernel memory, and the normaliser alone.
  let max = -Infinity;
  for (const v of logits) max = Math.max(max, v);
  const work = wasm.work.subarray(0, n);
  const pieces: [string, () => void][] = [
    ['copy into kernel memory', () => work.set(logits)],
    ['normaliser, TS table', () => expSumBelowMax(logits, n, max)],
    ['normaliser, TS Math.exp', () => expSumBelowMaxReference(logits, n, max)],
    ['normaliser, wasm', () => wasm.expSum(n, max)],
  ];
  wasm.load(logits);
  for (const [label, f] of pieces) {
    const times: number[] = [];
    for (let i = 0; i < 41 * rounds; i++) {
      const t0 = performance.now();
      f();
      times.push(performance.now() - t0);
    }
    console.log(`  ${label.padEnd(32)} ${stats(times)}`);
  }
}

function stats(times: number[]): string {
  const t = [...times].sort((a, b) => a - b);
  return `${t[0].toFixed(3)} / ${t[t.length >> 1].toFixed(3)}`;
}
