// Sampling's per-token cost on the calling thread, CPU time (robust to a busy machine), the two
// ways session.ts can run it on a 2-thread pool (151936 logits, greedy defaults):
//   own     the sampler's own passes: copy into its memory, scrub and max, normaliser and top 5;
//   split   what the calling thread does with matvecTop: sample_slice_top on its half of the rows
//           (the worker does the other half at the same time), the merge, the sampler on the stats.
// The variants alternate; best and median µs of N rounds of 200 tokens.
//   node bin/run-ts.mjs bench/sample-split-ab.ts [rounds]
import type { LogitStats } from '../src/engine/backend/logit-stats.js';
import { createRng, DEFAULT_SAMPLING, FUSED_TOP_MAX, mergeSliceTops, Sampler, sharedWasmPasses, type SliceTop } from '../src/engine/sample/index.js';
import { KernelInstance } from '../src/engine/wasm/instance.js';
import { loadKernelModule } from '../src/engine/wasm/loader.js';
import { cpuMs } from './cpu-ms.js';

const rounds = Number(process.argv[2] ?? 9);
const n = 151936, half = n >> 1;
const rnd = createRng(5);
const src = Float32Array.from({ length: n }, () => (rnd() + rnd() + rnd() - 1.5) * 6);
const k = new KernelInstance(loadKernelModule());
const a = k.arena;
const xp = a.alloc(n * 4), sp = a.alloc(16 + 4 * FUSED_TOP_MAX), sp2 = a.alloc(16 + 4 * FUSED_TOP_MAX);
const logits = a.f32(xp, n);
logits.set(src);
const sampler = new Sampler({ ...DEFAULT_SAMPLING, temperature: 0 }, sharedWasmPasses());
const want = sampler.statsWanted;
const stats: LogitStats = { want, valid: false, max: 0, sum: 0, count: 0, ids: new Int32Array(FUSED_TOP_MAX) };
const view = (p: number, r0: number, len: number): SliceTop => ({ r0, n: len, max: 0, sum: 0, ids: new Int32Array(a.memory.buffer, p + 16, FUSED_TOP_MAX) });
const slices = [view(sp, 0, half), view(sp2, half, n - half)];
const history = [1, 2, 3];
let check = 0;
const variants: [string, () => void][] = [
  ['own', () => { check += sampler.sample(logits, history).id; }],
  ['split', () => {
    k.call('sample_slice_top', sp, xp, half, want);
    // the worker's half, computed here beforehand (not timed): see below
    slices[0].max = a.f32(sp, 1)[0];
    slices[0].sum = new Float64Array(a.memory.buffer, sp, 2)[1];
    mergeSliceTops(stats, logits, slices);
    check += sampler.sample(logits, history, stats).id;
  }],
];
k.call('sample_slice_top', sp2, xp + half * 4, n - half, want);
slices[1].max = a.f32(sp2, 1)[0];
slices[1].sum = new Float64Array(a.memory.buffer, sp2, 2)[1];
const times = variants.map(() => [] as number[]);
for (let r = 0; r < rounds; r++) {
  variants.forEach(([, fn], j) => {
    fn();
    times[j].push((cpuMs(() => { for (let i = 0; i < 200; i++) fn(); }) * 1000) / 200);
  });
}
for (const [j, [name]] of variants.entries()) {
  const t = [...times[j]].sort((p, q) => p - q);
  console.log(`${name.padEnd(6)} ${t[0].toFixed(1)} / ${t[t.length >> 1].toFixed(1)} µs CPU per token on the calling thread (best / median of ${rounds} × 200)`);
}
void check;
