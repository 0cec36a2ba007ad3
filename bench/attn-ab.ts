// A/B of the prompt attention (attn_f32_batch) between two kernel builds on one thread: one layer of a
// P-token prompt (every query over its causal prefix), the two builds alternating, best of N by
// thread CPU time (process.cpuUsage). Reports ms per layer and Mpos/s (query-position pairs · heads).
//   node bin/run-ts.mjs bench/attn-ab.ts DIR_A DIR_B [--tokens=P --heads=H --kvheads=G --hd=D --runs=K]
import { f32ToF16Bits } from '../src/engine/quant/half.js';
import { KernelInstance } from '../src/engine/wasm/instance.js';
import { loadKernelModule } from '../src/engine/wasm/loader.js';
import { cpuMs } from './cpu-ms.js';

const args = process.argv.slice(2);
const opt = (k: string, d: number) => Number(args.find((a) => a.startsWith(`--${k}=`))?.split('=')[1] ?? d);
const [dirA, dirB] = args.filter((a) => !a.startsWith('--'));
const P = opt('tokens', 300), H = opt('heads', 12), G = opt('kvheads', H), D = opt('hd', 64), RUNS = opt('runs', 7);

/** Deterministic values in [−s, s). */
function values(n: number, seed: number, s: number): Float32Array {
  let x = seed >>> 0;
  return new Float32Array(n).map(() => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return (x / 2 ** 31 - 1) * s;
  });
}

const runs = [dirA, dirB].map((dir) => {
  const k = new KernelInstance(loadKernelModule({ dir }));
  const a = k.arena;
  const kv = G * D;
  const kc = a.alloc(P * kv * 2), vc = a.alloc(P * kv * 2);
  new Uint16Array(a.memory.buffer, kc, P * kv).set(Array.from(values(P * kv, 1, 2), f32ToF16Bits));
  new Uint16Array(a.memory.buffer, vc, P * kv).set(Array.from(values(P * kv, 2, 2), f32ToF16Bits));
  const q = a.alloc(P * H * D * 4);
  a.f32(q, P * H * D).set(values(P * H * D, 3, 1.5));
  const out = a.alloc(P * H * D * 4);
  const scratch = a.alloc(k.attnScratchBytes(H, G, D, D, P));
  const run = () => k.attentionBatchF32({ out, q, kc, vc, strideK: kv, strideV: kv, nHead: H, nHeadKv: G, hdK: D, hdV: D, scale: 1 / Math.sqrt(D), scratch }, 0, P, 0);
  run();
  return { run, best: Infinity };
});
for (let i = 0; i < RUNS; i++) for (const r of runs) r.best = Math.min(r.best, cpuMs(r.run));
const pairs = (P * (P + 1)) / 2 * H;
console.log(`attn_f32_batch, ${P} tokens, ${H} heads (${G} KV) × ${D}, one layer; best of ${RUNS} alternating, CPU time`);
console.log(`A ${runs[0].best.toFixed(2)} ms (${(pairs / runs[0].best / 1e3).toFixed(1)} Mpos/s)  B ${runs[1].best.toFixed(2)} ms (${(pairs / runs[1].best / 1e3).toFixed(1)} Mpos/s)  B/A ${(runs[0].best / runs[1].best).toFixed(3)}`);
