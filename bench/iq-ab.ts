// A/B of two kernel builds on the i-quant matvecs (and Q4_K as a yardstick), one process, the two
// builds interleaved so that machine noise hits both alike: ms per 1024×4096 matvec, best of runs.
//   node bin/run-ts.mjs bench/iq-ab.ts DIR_A DIR_B [types]
import { WasmBackend } from '../src/engine/backend/wasm.js';
import { ggmlTypeByName, rowBytes } from '../src/engine/gguf/ggml-types.js';

const [dirA, dirB, list] = process.argv.slice(2);
const types = (list ?? 'q4_K,iq1_s,iq1_m,iq2_xxs,iq2_xs,iq2_s,iq3_xxs,iq3_s').split(',');
const ROWS = 1024, COLS = 4096;
const bes = [new WasmBackend({ dir: dirA, simd: 'simd' }), new WasmBackend({ dir: dirB, simd: 'simd' })];
const x = new Float32Array(COLS).map((_, i) => Math.sin(i * 0.1));
const out = new Float32Array(ROWS);
for (const name of types) {
  const type = ggmlTypeByName(name)!;
  const data = new Uint8Array(ROWS * rowBytes(type, COLS));
  let s = 7;
  for (let i = 0; i < data.length; i++) data[i] = (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) >>> 24;
  const hs = bes.map((be) => be.addWeight({ name, type, rows: ROWS, cols: COLS }, (dst, from) => dst.set(data.subarray(from, from + dst.length))));
  const best = [Infinity, Infinity];
  for (let rep = 0; rep < 30; rep++) {
    for (let k = 0; k < 2; k++) {
      const t0 = performance.now();
      for (let i = 0; i < 5; i++) bes[k].matvec(out, hs[k], x);
      best[k] = Math.min(best[k], (performance.now() - t0) / 5);
    }
  }
  console.log(`${name.padEnd(8)} A ${best[0].toFixed(2)} ms  B ${best[1].toFixed(2)} ms  B/A ${(best[1] / best[0]).toFixed(2)}  (B: ${((ROWS * COLS) / best[1] / 1e6).toFixed(0)} Melem/ms·1e-3)`);
}
