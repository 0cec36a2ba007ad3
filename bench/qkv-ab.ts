// q,k,v of a generated token on the pool: three weights in one round trip (matmulShared) with the
// biases added by each thread to its rows (as forward.ts runs them), the same with three bias adds
// in TypeScript after the round trip (as it did before), and one weight of their rows stacked
// ([q;k;v]) plus one bias add. qwen2-0.5b's shapes (896×896, 128×896, 128×896, Q8_0), 24 layers, inputs and
// outputs in the calling thread's kernel memory. The two variants alternate, best of N passes.
//   node bin/run-ts.mjs bench/qkv-ab.ts [threads] [passes]
import { PoolBackend } from '../src/engine/backend/pool.js';
import { GgmlType, rowBytes } from '../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../src/engine/quant/index.js';
import { addInto } from '../src/engine/model/ops.js';

const threads = Number(process.argv[2] ?? 2), passes = Number(process.argv[3] ?? 30);
const type = GgmlType.Q8_0, cols = 896, rowsOf = [896, 128, 128], L = 24;
const total = rowsOf.reduce((a, b) => a + b);
const rb = rowBytes(type, cols);
let s = 7;
const f = new Float32Array(total * cols).map(() => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.04);
const q = quantizeRows(type, f, total, cols);
const be = new PoolBackend({ threads });
const fill = (base: number) => (d: Uint8Array, off: number) => d.set(q.subarray(base + off, base + off + d.length));
const sep = Array.from({ length: L }, () => { let r0 = 0; return rowsOf.map((rows, i) => { const w = be.addWeight({ name: `w${i}`, type, rows, cols }, fill(r0 * rb)); r0 += rows; return w; }); });
const cat = Array.from({ length: L }, () => be.addWeight({ name: 'qkv', type, rows: total, cols }, fill(0)));
const a = be.kernels.arena;
const view = (n: number) => a.f32(a.alloc(n * 4), n);
const x = view(cols).map((_, i) => Math.sin(i));
const outs = rowsOf.map(view), out = view(total);
// every layer its own biases (a layer's are cold when its turn comes, as in a forward pass)
const biases = Array.from({ length: L }, () => rowsOf.map((n) => new Float32Array(n).fill(0.5)));
const bias = Array.from({ length: L }, () => new Float32Array(total).fill(0.5));
be.hold(true);
const best = { folded: Infinity, shared: Infinity, stacked: Infinity };
for (let p = 0; p < passes; p++) {
  let t = performance.now();
  for (let l = 0; l < L; l++) be.matmulShared(outs, sep[l], x, 1, biases[l]);
  best.folded = Math.min(best.folded, (performance.now() - t) / L);
  t = performance.now();
  for (let l = 0; l < L; l++) { be.matmulShared(outs, sep[l], x, 1); for (let i = 0; i < 3; i++) addInto(outs[i], biases[l][i], rowsOf[i]); }
  best.shared = Math.min(best.shared, (performance.now() - t) / L);
  t = performance.now();
  for (let l = 0; l < L; l++) { be.matvec(out, cat[l], x); addInto(out, bias[l], total); }
  best.stacked = Math.min(best.stacked, (performance.now() - t) / L);
}
be.hold(false);
const gbs = (ms: number) => ((total * rb) / (ms * 1e6)).toFixed(1);
console.log(`threads ${threads}, best of ${passes}: folded biases ${(best.folded * 1000).toFixed(1)} us (${gbs(best.folded)} GB/s)   TS biases ${(best.shared * 1000).toFixed(1)} us (${gbs(best.shared)} GB/s)   stacked ${(best.stacked * 1000).toFixed(1)} us (${gbs(best.stacked)} GB/s)`);
be.dispose();
