// Two kernel builds give the same bits: matvec_* (four rows a pass), matvec1_* and the per-token
// matmul_* (three tokens) of the K-quants and TQ1_0/TQ2_0 on random blocks, A against B (one-off
// check for kernel rewrites that must keep every output). A build that stores the type in its own
// layout (an export layout_<suffix>: layout.ts rowLayout) runs matvec_ and matmul_ on a copy laid
// out by it, matvec1_ on ggml's rows.
//   node bin/run-ts.mjs bench/kq-ab-bits.ts A.wasm B.wasm
import { readFileSync } from 'node:fs';
import { GgmlType, rowBytes } from '../src/engine/gguf/ggml-types.js';
import { actBytes, kernelType } from '../src/engine/wasm/layout.js';
import { randomBlocks, randomFloats } from '../tests/wasm/gen.js';

const [fa, fb] = process.argv.slice(2);
const TOKENS = 3;
function run(file: string, type: number, rows: number, cols: number, w: Uint8Array, x: Float32Array[]): Uint32Array {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  const xs = up(actBytes('q8_K', cols));
  const s = kernelType(type)!.suffix, rb = rowBytes(type, cols);
  const lay = ex[`layout_${s}`] as ((...a: number[]) => number) | undefined;
  const wp = up(ex.heap_base()), wl = up(wp + w.length), xp = up(wl + w.length + 4 * rb), xq = up(xp + cols * 4), out = up(xq + xs * TOKENS), end = out + rows * 4 * (2 + TOKENS);
  if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
  new Uint8Array(memory.buffer).set(w, wp);
  new Uint8Array(memory.buffer).set(w, wl + 4 * rb);
  if (lay) lay(wl, wl + 4 * rb, rows, cols);
  const ws = lay ? wl : wp;
  for (let t = 0; t < TOKENS; t++) {
    new Float32Array(memory.buffer, xp, cols).set(x[t]);
    ex.quantize_q8_K(xq + t * xs, xp, cols);
  }
  ex[`matvec_${s}`](out, ws, rb, 0, rows, xq, cols);
  // types without a matvec1_* (one row a pass already) repeat matvec_ there
  (ex[`matvec1_${s}`] ?? ex[`matvec_${s}`])(out + rows * 4, wp, rb, 0, rows, xq, cols);
  ex[`matmul_${s}`](out + rows * 8, ws, rb, 0, rows, xq, cols, TOKENS, xs, rows);
  return new Uint32Array(memory.buffer.slice(out, end));
}
let bad = 0, n = 0;
for (const type of [GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K, GgmlType.Q3_K, GgmlType.Q2_K, GgmlType.TQ1_0, GgmlType.TQ2_0]) {
  for (const [rows, cols, seed] of [[7, 256, 1], [13, 4096, 2], [6, 7168, 3], [5, 14336, 4]]) {
    const w = randomBlocks(type, rows, cols, seed * 31 + type);
    for (const scale of [1, 1e-3, 60]) {
      const x = Array.from({ length: TOKENS }, (_, t) => randomFloats(cols, seed * 7 + type + 1000 * t, scale));
      const a = run(fa, type, rows, cols, w, x), b = run(fb, type, rows, cols, w, x);
      n += a.length;
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) bad++;
      // within a build, token 0 of matmul_ is matvec1_'s row dot (a run that computed nothing fails)
      for (let r = 0; r < rows; r++) if (a[2 * rows + r] !== a[rows + r] || a[r] === 0) bad++;
    }
  }
}
console.log(`${fa} vs ${fb}: ${n} outputs, ${bad} differ`);
process.exit(bad ? 1 : 0);
