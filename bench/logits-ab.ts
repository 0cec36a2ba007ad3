// A generated token's logits and sampling on the pool, the two ways session.ts can run them:
//   own    matvec of the output matrix, then the sampler's own passes (copy, scrub and max,
//          normaliser and top-k over the whole vocabulary on the calling thread);
//   stats  matvecTop: every thread finds its rows' max, normaliser and largest while computing
//          them, and the sampler takes the merged stats.
// qwen2-0.5b's output matrix shape (151936 × 896, Q8_0, random weights), greedy defaults. The
// variants alternate; best and median wall ms of N rounds of 10 tokens each.
//   node bin/run-ts.mjs bench/logits-ab.ts [threads] [rounds]
import { PoolBackend } from '../src/engine/backend/pool.js';
import type { LogitStats } from '../src/engine/backend/logit-stats.js';
import { GgmlType } from '../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../src/engine/quant/index.js';
import { DEFAULT_SAMPLING, FUSED_TOP_MAX, Sampler, sharedWasmPasses } from '../src/engine/sample/index.js';

const threads = Number(process.argv[2] ?? 2), rounds = Number(process.argv[3] ?? 15);
const rows = 151936, cols = 896, type = GgmlType.Q8_0;
const be = new PoolBackend({ threads });
// quantise one block of 4096 rows and repeat it (quantising 136M values would take a minute)
const blockRows = 4096;
let s = 3;
const f = new Float32Array(blockRows * cols).map(() => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.1);
const q = quantizeRows(type, f, blockRows, cols);
const w = be.addWeight({ name: 'output', type, rows, cols }, (d, off) => {
  for (let i = 0; i < d.length; ) {
    const at = (off + i) % q.length;
    const n = Math.min(d.length - i, q.length - at);
    d.set(q.subarray(at, at + n), i);
    i += n;
  }
});
const a = be.kernels.arena;
const x = a.f32(a.alloc(cols * 4), cols);
const logits = new Float32Array(rows);
const stats: LogitStats = { want: 0, valid: false, max: 0, sum: 0, count: 0, ids: new Int32Array(FUSED_TOP_MAX) };
const sampler = new Sampler({ ...DEFAULT_SAMPLING, temperature: 0 }, sharedWasmPasses());
stats.want = sampler.statsWanted;
const history = [1, 2, 3];
let check = 0;
const variants: [string, () => void][] = [
  ['own', () => { be.matvec(logits, w, x); check += sampler.sample(logits, history).id; }],
  ['stats', () => { be.matvecTop(logits, w, x, stats); check += sampler.sample(logits, history, stats).id; }],
];
const times = variants.map(() => [] as number[]);
be.hold(true);
for (let r = 0; r < rounds; r++) {
  variants.forEach(([, fn], j) => {
    for (let i = 0; i < cols; i++) x[i] = Math.sin(i * 0.37 + r + j);
    fn();
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) fn();
    times[j].push((performance.now() - t0) / 10);
  });
}
be.hold(false);
for (const [j, [name]] of variants.entries()) {
  const t = [...times[j]].sort((p, q2) => p - q2);
  console.log(`${name.padEnd(6)} ${t[0].toFixed(3)} / ${t[t.length >> 1].toFixed(3)} ms per token (best / median of ${rounds}), ${threads} threads`);
}
be.dispose();
void check;
