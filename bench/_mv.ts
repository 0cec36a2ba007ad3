// one-thread matvec GB/s of two builds, alternating, CPU time best of N
import { WasmBackend } from '/work/main/src/engine/backend/wasm.js';
import { ggmlTypeByName, rowBytes } from '/work/main/src/engine/gguf/ggml-types.js';
import { quantizeRows } from '/work/main/src/engine/quant/index.js';
import { cpuMs } from '/work/main/bench/cpu-ms.js';
const [a, b, tn] = process.argv.slice(2);
const type = ggmlTypeByName(tn ?? 'q6_K')!;
const rows = Number(process.env.ROWS ?? 4096), cols = Number(process.env.COLS ?? 768);
const tile = quantizeRows(type, new Float32Array(16 * cols).map((_, i) => Math.sin(i * 0.37) * Math.cos(i * 0.011)), 16, cols);
const x = new Float32Array(cols).map((_, i) => Math.sin(i * 0.013));
const runs = [a, b].map((dir) => {
  const be = new WasmBackend({ dir });
  const h = be.addWeight({ name: 'w', type, rows, cols }, (d, from) => { for (let o = 0; o < d.length; o++) d[o] = tile[(from + o) % tile.length]; });
  const out = new Float32Array(rows);
  const run = () => { for (let i = 0; i < 20; i++) be.matvec(out, h, x); };
  run();
  return { run, best: Infinity };
});
for (let i = 0; i < 9; i++) for (const r of runs) r.best = Math.min(r.best, cpuMs(r.run));
const gb = (ms: number) => ((rows * rowBytes(type, cols) * 20) / (ms / 1000) / 1e9).toFixed(2);
console.log(`${tn} A ${gb(runs[0].best)} GB/s  B ${gb(runs[1].best)} GB/s  B/A ${(runs[0].best / runs[1].best).toFixed(3)}`);
