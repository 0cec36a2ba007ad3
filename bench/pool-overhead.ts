// The pool's fixed cost per round trip: one-token products of small weights (64 rows × 768, Q4_0),
// so the kernels take little and the rest is the round trip itself (quantise, copies, job words,
// wake-up, wait, gather, JS). Inputs and outputs as the forward pass passes them: views on the
// calling thread's kernel memory. Best of 7 runs of 2000 calls each; threads 1 has no workers (the
// JS cost alone), threads 2 adds one worker's wake-up and wait.
//   node bin/run-ts.mjs bench/pool-overhead.ts [threads…]
import { PoolBackend } from '../src/engine/backend/pool.js';
import type { WeightHandle } from '../src/engine/backend/types.js';
import { GgmlType, rowBytes } from '../src/engine/gguf/ggml-types.js';

const rows = Number(process.env.ROWS ?? 64), cols = 768, type = GgmlType.Q4_0;
const data = new Uint8Array(rows * rowBytes(type, cols)).map((_, i) => (i * 37) & 0x7f);
for (const threads of process.argv.slice(2).map(Number).concat(process.argv.length > 2 ? [] : [1, 2])) {
  const be = new PoolBackend({ threads });
  const ws: WeightHandle[] = [0, 1, 2].map((i) => be.addWeight({ name: `w${i}`, type, rows, cols }, (d, off) => d.set(data.subarray(off, off + d.length))));
  const a = be.kernels.arena;
  const view = (n: number) => a.f32(a.alloc(n * 4), n);
  const x = view(cols).map((_, i) => Math.sin(i));
  const outs = [view(rows), view(rows), view(rows)];
  be.hold(true);
  const calls = 2000;
  const best = { one: Infinity, three: Infinity, gated: Infinity };
  for (let rep = 0; rep < 7; rep++) {
    let t = performance.now();
    for (let i = 0; i < calls; i++) be.matvec(outs[0], ws[i % 3], x);
    best.one = Math.min(best.one, (performance.now() - t) / calls);
    t = performance.now();
    for (let i = 0; i < calls; i++) be.matmulShared(outs, ws, x, 1);
    best.three = Math.min(best.three, (performance.now() - t) / calls);
    t = performance.now();
    for (let i = 0; i < calls; i++) be.matmulGated(outs[0], ws[0], ws[1], x, 1);
    best.gated = Math.min(best.gated, (performance.now() - t) / calls);
  }
  be.hold(false);
  const us = (ms: number) => `${(ms * 1000).toFixed(2)} µs`;
  console.log(`threads ${threads}: matvec ${us(best.one)}, shared ×3 ${us(best.three)}, gated ${us(best.gated)} per call`);
  be.dispose();
}
