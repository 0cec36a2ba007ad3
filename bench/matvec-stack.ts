// Matvec over a stack of layer-sized matrices, as a model's generated token meets them: L matrices
// of rows × cols (realistic quantised weights), each product in turn, on one thread (WasmBackend) and
// on the pool (2 threads); best of 20 passes, µs per product and GB/s of weight bytes. Unlike
// bench:kernels (one large matrix), this shows the per-call cost and short rows.
//
//   node bin/run-ts.mjs bench/matvec-stack.ts TYPE ROWS COLS L [SHARED] [--amp=A]
// Weights uniform in ±A/2 (default ±0.02, a trained model's size: Q6_K's f16 d subnormal).
//   e.g. Q4_0 4864 896 48 (qwen2-0.5b's FFN), Q4_0 768 768 36 3 (110M q/k/v in one round trip)
import { PoolBackend } from '../src/engine/backend/pool.js';
import { WasmBackend } from '../src/engine/backend/wasm.js';
import type { MatBackend } from '../src/engine/backend/types.js';
import { ggmlTypeByName, rowBytes } from '../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../src/engine/quant/index.js';

const pos = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const type = ggmlTypeByName(pos[0] ?? 'Q4_0')!;
const rows = Number(pos[1] ?? 2048), cols = Number(pos[2] ?? 768), L = Number(pos[3] ?? 24);
const shared = Number(pos[4] ?? 1);
const AMP = Number(process.argv.find((a) => a.startsWith('--amp='))?.slice(6) ?? 0.04);
const rb = rowBytes(type, cols);
const cache = new Map<number, Uint8Array>();
function fill(seed: number) {
  let q = cache.get(seed % 4);
  if (!q) {
    const f = new Float32Array(rows * cols);
    let s = seed + 1;
    for (let i = 0; i < f.length; i++) { s = (s * 1103515245 + 12345) >>> 0; f[i] = ((s >>> 8) / 2 ** 24 - 0.5) * AMP; }
    q = quantizeRows(type, f, rows, cols);
    cache.set(seed % 4, q);
  }
  const src = q;
  return (d: Uint8Array, off: number) => d.set(src.subarray(off, off + d.length));
}
const x = new Float32Array(cols).map((_, i) => Math.sin(i));
for (const threads of [1, 2, 1, 2]) {
  const be: MatBackend = threads === 1 ? new WasmBackend({}) : new PoolBackend({ threads });
  const ws = Array.from({ length: L }, (_, i) => be.addWeight({ name: 'w' + i, type, rows, cols }, fill(i)));
  const out = new Float32Array(rows);
  const outs = Array.from({ length: shared }, () => new Float32Array(rows));
  be.hold?.(true);
  for (let i = 0; i < 3 * L; i++) be.matvec(out, ws[i % L], x);
  let best = Infinity;
  for (let rep = 0; rep < 20; rep++) {
    const t0 = performance.now();
    if (shared > 1 && be.matmulShared) for (let i = 0; i + shared <= L; i += shared) be.matmulShared(outs, ws.slice(i, i + shared), x, 1);
    else for (let i = 0; i < L; i++) be.matvec(out, ws[i], x);
    best = Math.min(best, (performance.now() - t0) / L);
  }
  be.hold?.(false);
  const gbs = (rows * rb) / (best * 1e6);
  console.log(`${be.name} threads ${threads}: ${(best * 1000).toFixed(1)} us/matvec, ${gbs.toFixed(1)} GB/s (${((rows * rb * L) / 2 ** 20).toFixed(1)} MiB stack)`);
  be.dispose?.();
}
