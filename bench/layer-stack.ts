// qwen2-0.5b's per-layer products as a generated token meets them (q, k, v, o, gate, up, down × 24
// layers; `big` keeps gate, up, down only; `out` adds the 151936 × 896 Q8_0 output matrix after each
// pass), on one thread or the pool: ms per pass of the layers and GB/s of their weights, best of 15.
// Compare with the model's profile (`pantheon run … --profile`) to see what the model adds.
//
//   node bin/run-ts.mjs bench/layer-stack.ts [TYPE=Q4_0] [THREADS=1] [all|big] [out]
import type { MatBackend } from '../src/engine/backend/types.js';
import { WasmBackend } from '../src/engine/backend/wasm.js';
import { PoolBackend } from '../src/engine/backend/pool.js';
import { ggmlTypeByName, rowBytes } from '../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../src/engine/quant/index.js';
const type = ggmlTypeByName(process.argv[2] ?? 'Q4_0')!;
const threads = Number(process.argv[3] ?? 1);
const skipSmall = process.argv[4] === 'big';
const shapes: [number, number][] = skipSmall ? [[4864, 896], [4864, 896], [896, 4864]] : [[896, 896], [128, 896], [128, 896], [896, 896], [4864, 896], [4864, 896], [896, 4864]];
const data = new Map<string, Uint8Array>();
function q(rows: number, cols: number) {
  const k = `${rows}x${cols}`;
  let d = data.get(k);
  if (!d) { const f = new Float32Array(rows * cols); let s = 1; for (let i = 0; i < f.length; i++) { s = (s * 1103515245 + 12345) >>> 0; f[i] = ((s >>> 8) / 2 ** 24 - 0.5) * 0.04; } d = quantizeRows(type, f, rows, cols); data.set(k, d); }
  return d;
}
const be: MatBackend = threads === 1 ? new WasmBackend({}) : new PoolBackend({ threads });
const ws = [];
let bytes = 0;
for (let l = 0; l < 24; l++) for (const [r, c] of shapes) { const d = q(r, c); ws.push(be.addWeight({ name: `w${l}-${r}`, type, rows: r, cols: c }, (dst, off) => dst.set(d.subarray(off, off + dst.length)))); bytes += r * rowBytes(type, c); }
const withOut = process.argv[5] === 'out';
const q8 = ggmlTypeByName('Q8_0')!;
const outW = withOut ? be.addWeight({ name: 'output', type: q8, rows: 151936, cols: 896 }, (dst) => { let s = 7; for (let i = 0; i < dst.length; i++) { s = (s * 1103515245 + 12345) >>> 0; dst[i] = (i % 34) < 2 ? (i % 34 === 0 ? 0 : 0x20) : s >>> 24; } }) : null;
const logits = new Float32Array(151936);
const xs = new Map<number, Float32Array>([[896, new Float32Array(896).fill(0.1)], [4864, new Float32Array(4864).fill(0.1)]]);
const outs = new Map<number, Float32Array>([[896, new Float32Array(896)], [4864, new Float32Array(4864)], [128, new Float32Array(128)]]);
be.hold?.(true);
let best = Infinity;
for (let rep = 0; rep < 15; rep++) {
  const t0 = performance.now();
  for (const w of ws) be.matvec(outs.get(w.spec.rows)!, w, xs.get(w.spec.cols)!);
  best = Math.min(best, performance.now() - t0);
  if (outW) be.matvec(logits, outW, xs.get(896)!);
}
be.hold?.(false);
console.log(`${be.name} ${skipSmall ? 'big only' : 'all 7'}: ${best.toFixed(2)} ms per pass, ${(bytes / best / 1e6).toFixed(1)} GB/s (${(bytes / 2 ** 20).toFixed(0)} MiB)`);
be.dispose?.();
process.exit(0);
