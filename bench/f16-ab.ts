// matvec_f16 of two kernel builds, A/B, against a bare read of the same bytes (mem_sum): GB/s of
// stored weight bytes on 1 and 2 threads, from L2, L3 and DRAM. Each thread has its own memory and
// its own matrices (rows of the 0.5B F16 model's blk.0.ffn_up, tiled, in the backends' stored layout
// by each build's own layout_f16: one copy per build, as the builds may store halves differently)
// and they run at the same moment; best of ROUNDS rounds, A and B alternating. A's and B's outputs
// must agree bit for bit (checked once per matrix).
//
//   node bin/run-ts.mjs bench/f16-ab.ts DIR_A DIR_B [COLS] [ROUNDS] [L2,L3,DRAM] [1,2]
//   (DIR_A/B: build dirs holding kernels.wasm / kernels-relaxed.wasm; Node 24 picks the relaxed one;
//   COLS 896 or 4864, the 0.5B model's two row lengths; pass 'none' as the places for only the last
//   table: one thread in this process, timed by CPU time, which a busy machine disturbs less)
//   F16_FLUSH=1 ...  the same with subnormal halves set to ±0: no marked groups (their cost)
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readGgufHeaderSync, readTensorBytesSync } from '../src/engine/gguf/file.js';
import { hasRelaxedSimd } from '../src/engine/wasm/loader.js';
import { cpuMs } from './cpu-ms.js';
import { rigLoop, startRig } from './worker-rig.js';

const [dirA, dirB] = [process.argv[2], process.argv[3]];
const COLS = Number(process.argv[4] ?? 896);
const ROUNDS = Number(process.argv[5] ?? 7);
const WHERE = (process.argv[6] ?? 'L2,L3,DRAM').split(',');
const THREADS = (process.argv[7] ?? '1,2').split(',').map(Number);
const file = hasRelaxedSimd() ? 'kernels-relaxed.wasm' : 'kernels.wasm';
const modules = [dirA, dirB].map((d) => new WebAssembly.Module(readFileSync(join(d, file))));

// real trained halves: ~4% of the groups of 16 hold a subnormal
const model = join(import.meta.dirname, 'models', 'qwen2-0.5b-F16.gguf');
const h = readGgufHeaderSync(model);
const t = h.tensors.find((v) => v.name === (COLS === 896 ? 'blk.0.ffn_up.weight' : 'blk.0.ffn_down.weight'))!;
if (t.dims[0] !== COLS) throw new Error(`no tensor with ${COLS} columns`);
const fd = openSync(model, 'r');
const tile = new Uint16Array(readTensorBytesSync(fd, h, t).slice().buffer);
closeSync(fd);
// F16_FLUSH=1: subnormal halves → ±0 (no marked groups), to see what the marked groups cost
if (process.env.F16_FLUSH) tile.forEach((v, i) => { if ((v & 0x7c00) === 0) tile[i] = v & 0x8000; });
let marked = 0;
for (let g = 0; g + 16 <= tile.length; g += 16) if (tile.subarray(g, g + 16).some((v) => (v & 0x7c00) === 0 && (v & 0x3ff) !== 0)) marked++;
let big = 0;
for (let g = 0; g + 16 <= tile.length; g += 16) if (tile.subarray(g, g + 16).some((v) => (v & 0x7fff) >= 0x5400)) big++;
console.log(`groups of 16 with a subnormal: ${((marked / (tile.length / 16)) * 100).toFixed(1)}%, with |h| ≥ 64 or Inf/NaN: ${((big / (tile.length / 16)) * 100).toFixed(1)}%`);

const src = `
  const { workerData } = require('node:worker_threads');
  const { modules, bytes, cols, tile, go } = workerData;
  const memory = new WebAssembly.Memory({ initial: Math.ceil((bytes * 2.1 + 2 ** 22) / 65536), maximum: 65536, shared: true });
  const exs = modules.map((m) => new WebAssembly.Instance(m, { env: { memory } }).exports);
  const ex = exs[0];
  const rb = ex.f16_row_bytes(cols);
  if (exs[1].f16_row_bytes(cols) !== rb) throw new Error('the builds store rows of different sizes');
  const rows = Math.max(2, Math.floor(bytes / rb));
  const up = (a) => Math.ceil(a / 64) * 64;
  const ps = [up(Math.max(...exs.map((e) => e.heap_base())))]; // past both builds' static data
  ps.push(up(ps[0] + rows * rb));
  ps.forEach((p, k) => {
    const hv = new Uint16Array(memory.buffer, p, rows * cols);
    for (let o = 0; o < hv.length; o += tile.length) hv.set(tile.subarray(0, Math.min(tile.length, hv.length - o)), o);
    exs[k].layout_f16(p, rows, cols);
  });
  const p = ps[0]; // mem_sum reads A's copy
  const ws = ps.map((q) => q + rb - cols * 2);
  const x = up(ps[1] + rows * rb);
  const out = x + cols * 4 + 64;
  const xs = new Float32Array(memory.buffer, x, cols);
  for (let i = 0; i < cols; i++) xs[i] = Math.sin(i * 0.7) * 3;
  const res = [0, 1].map((k) => { exs[k].matvec_f16(out, ws[k], rb, 0, rows, x, cols); return new Uint32Array(memory.buffer, out, rows).slice(); });
  if (res[0].some((v, i) => v !== res[1][i])) throw new Error('A and B differ');
  ${rigLoop(`
    const what = Atomics.load(g, 2);
    const reps = Atomics.load(g, 3);
    for (let r = 0; r < reps; r++) {
      if (what === 2) ex.mem_sum(p, Math.floor(rows * rb / 64) * 64);
      else exs[what].matvec_f16(out, ws[what], rb, 0, rows, x, cols);
    }`)}`;

/** Workers of one size; once(what, reps) → seconds per pass of one round (what: 0 A, 1 B, 2 mem_sum). */
function rig(threads: number, bytes: number) {
  const r = startRig(src, threads, { modules, bytes, cols: COLS, tile });
  const once = (what: number, reps: number) => {
    Atomics.store(r.go, 2, what);
    Atomics.store(r.go, 3, reps);
    return r.round() / 1000 / reps;
  };
  return { once, close: () => r.close() };
}

console.log(`matvec_f16 A=${dirA} B=${dirB}, ${file}, Node ${process.versions.node}, cols ${COLS}, best of ${ROUNDS} alternating rounds; GB/s of stored weight bytes, all threads`);
console.log(`${'where'.padEnd(6)} ${'thr'.padStart(3)} ${'MiB'.padStart(6)} ${'read'.padStart(7)} ${'A'.padStart(7)} ${'B'.padStart(7)}  B/A`);
for (const [where, mibPerThread] of ([['L2', 1], ['L3', 24], ['DRAM', 400]] as const).filter(([w]) => WHERE.includes(w))) {
  for (const threads of THREADS) {
    const per = (where === 'DRAM' ? mibPerThread / threads : mibPerThread) * 2 ** 20;
    const r = rig(threads, per);
    const reps = Math.max(1, Math.round((64 * 2 ** 20) / per));
    const best = [Infinity, Infinity, Infinity];
    for (let k = 0; k < 3; k++) r.once(k, 1);
    for (let i = 0; i < ROUNDS; i++) for (const k of [2, 0, 1]) best[k] = Math.min(best[k], r.once(k, reps));
    await r.close();
    const gb = (s: number) => ((per * threads) / s / 1e9).toFixed(2).padStart(7);
    console.log(`${where.padEnd(6)} ${String(threads).padStart(3)} ${(per / 2 ** 20).toFixed(0).padStart(6)} ${gb(best[2])} ${gb(best[0])} ${gb(best[1])}  ${(best[0] / best[1]).toFixed(3)}`);
  }
}

// one thread in this process, CPU time (robust to descheduling on a busy machine): L2- and
// L3-sized matrices, best of 4·ROUNDS alternating runs
{
  const memory = new WebAssembly.Memory({ initial: Math.ceil((52 * 2 ** 20) / 65536), maximum: 65536, shared: true });
  const exs = modules.map((m) => new WebAssembly.Instance(m, { env: { memory } }).exports as Record<string, (...a: number[]) => number>);
  const ex = exs[0];
  const rb = ex.f16_row_bytes(COLS);
  const up = (a: number) => Math.ceil(a / 64) * 64;
  console.log(`\none thread, CPU time, best of ${4 * ROUNDS}: GB/s`);
  for (const mib of [1, 24]) {
    const rows = Math.floor((mib * 2 ** 20) / rb);
    const ps = [up(Math.max(...exs.map((e) => e.heap_base())))]; // past both builds' static data
    ps.push(up(ps[0] + rows * rb));
    ps.forEach((p, k) => {
      const hv = new Uint16Array(memory.buffer, p, rows * COLS);
      for (let o = 0; o < hv.length; o += tile.length) hv.set(tile.subarray(0, Math.min(tile.length, hv.length - o)), o);
      exs[k].layout_f16(p, rows, COLS);
    });
    const ws = ps.map((q) => q + rb - COLS * 2);
    const x = up(ps[1] + rows * rb);
    const out = x + COLS * 4 + 64;
    new Float32Array(memory.buffer, x, COLS).forEach((_, i, a) => (a[i] = Math.sin(i * 0.7) * 3));
    const res = [0, 1].map((k) => { exs[k].matvec_f16(out, ws[k], rb, 0, rows, x, COLS); return new Uint32Array(memory.buffer, out, rows).slice(); });
    if (res[0].some((v, i) => v !== res[1][i])) throw new Error('A and B differ');
    const reps = Math.max(1, Math.round((32 * 2 ** 20) / (rows * rb)));
    const best = [Infinity, Infinity];
    for (let i = 0; i < 4 * ROUNDS; i++) {
      for (const k of [0, 1]) best[k] = Math.min(best[k], cpuMs(() => { for (let r = 0; r < reps; r++) exs[k].matvec_f16(out, ws[k], rb, 0, rows, x, COLS); }) / reps);
    }
    const gb = (ms: number) => ((rows * rb) / ms / 1e6).toFixed(2);
    console.log(`${mib} MiB: A ${gb(best[0])}, B ${gb(best[1])}, B/A ${(best[0] / best[1]).toFixed(3)}`);
  }
}
