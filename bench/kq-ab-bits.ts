// Two kernel builds give the same bits: matvec_* (four rows a pass) and matvec1_* of the K-quants on
// random blocks, A against B (one-off check for kernel rewrites that must keep every output).
//   node bin/run-ts.mjs bench/kq-ab-bits.ts A.wasm B.wasm
import { readFileSync } from 'node:fs';
import { GgmlType, rowBytes } from '../src/engine/gguf/ggml-types.js';
import { actBytes, kernelType } from '../src/engine/wasm/layout.js';
import { randomBlocks, randomFloats } from '../tests/wasm/gen.js';

const [fa, fb] = process.argv.slice(2);
function run(file: string, type: number, rows: number, cols: number, w: Uint8Array, x: Float32Array): Uint32Array {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  const wp = up(ex.heap_base()), xp = up(wp + w.length), xq = up(xp + x.length * 4), out = up(xq + actBytes('q8_K', cols)), end = out + rows * 8;
  if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
  new Uint8Array(memory.buffer).set(w, wp);
  new Float32Array(memory.buffer, xp, x.length).set(x);
  ex.quantize_q8_K(xq, xp, cols);
  const s = kernelType(type)!.suffix;
  ex[`matvec_${s}`](out, wp, rowBytes(type, cols), 0, rows, xq, cols);
  ex[`matvec1_${s}`](out + rows * 4, wp, rowBytes(type, cols), 0, rows, xq, cols);
  return new Uint32Array(memory.buffer.slice(out, out + rows * 8));
}
let bad = 0, n = 0;
for (const type of [GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K, GgmlType.Q3_K, GgmlType.Q2_K]) {
  for (const [rows, cols, seed] of [[7, 256, 1], [13, 4096, 2], [6, 7168, 3], [5, 14336, 4]]) {
    const w = randomBlocks(type, rows, cols, seed * 31 + type);
    for (const scale of [1, 1e-3, 60]) {
      const x = randomFloats(cols, seed * 7 + type, scale);
      const a = run(fa, type, rows, cols, w, x), b = run(fb, type, rows, cols, w, x);
      n += a.length;
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) bad++;
    }
  }
}
console.log(`${fa} vs ${fb}: ${n} outputs, ${bad} differ`);
process.exit(bad ? 1 : 0);
