// Kernel throughput: GB/s of weight bytes streamed through matvec, per ggml type, for the scalar
// TypeScript reference, WebAssembly SIMD on one thread, and the worker pool on N threads; beside
// the machine's memory bandwidth measured in the same run with a wasm read loop (mem_sum) over a
// 512 MiB buffer, on 1 and N threads, and on one thread as 1-16 streams at once (the reason the
// matvecs read eight, assembly/common.ts STREAMS). Matrix: 4096 rows × 8192 columns.
//
//   npm run bench:kernels                      all types
//   npm run bench:kernels -- q8_0,q4_K         some types
//   npm run bench:kernels -- --no-scalar       skip the (slow) scalar column
//   npm run bench:kernels -- --mib=256         a matrix of about 256 MiB per type instead of 4096
//                                              rows (the default is L3-resident on large-L3 servers)
//   npm run bench:kernels -- --gemm            prompt matmul instead: GMAC/s of a GEMM_TOKENS-token
//                                              batch through a GEMM_ROWS × GEMM_COLS matrix (the
//                                              gemm_* types and F32/F16/BF16's matmul_*), then
//                                              the build's integer dot instruction alone (dot_peak):
//                                              the ceiling of any GEMM built on it
//   npm run bench:kernels -- --gemm --tokens=32  a batch of 32 tokens instead (with --shape, the matrix too)
//   npm run bench:kernels -- --wasm-dir=DIR    kernels from DIR (A/B against another build)
//   npm run bench:kernels -- --shape=4096x14336  a rows×cols matrix instead of 4096×8192 (the 8B's
//                                              FFN down projection; 14336x4096 is its up/gate)
//   npm run bench:kernels -- --threads=N       the pool column with N threads (default: all cores)
//   npm run bench:kernels -- --no-bw           skip the bandwidth lines
//   npm run bench:kernels -- --ab=DIR [--secs=4]  build A (build/wasm or --wasm-dir) against build B
//                                              in DIR, calls interleaved, best of each: ratio B/A
//   npm run bench:kernels -- --amp=0.02        weights of that magnitude instead of 1 (a trained
//                                              model's: Q6_K's f16 d is then a subnormal half)
//   npm run bench:kernels -- attn              attention only (also printed after a full run)
//
// Each figure is the best of several runs (the least disturbed by other processes). The scalar
// column times 128 rows only: it runs at well under 1 GB/s and the rate does not depend on rows.
import { availableParallelism } from 'node:os';
import { PoolBackend } from '../src/engine/backend/pool.js';
import { ScalarBackend } from '../src/engine/backend/scalar.js';
import type { MatBackend } from '../src/engine/backend/types.js';
import { WasmBackend } from '../src/engine/backend/wasm.js';
import { GgmlType, ggmlTypeByName, ggmlTypeInfo, ggmlTypeName, rowBytes } from '../src/engine/gguf/ggml-types.js';
import { canQuantize, quantizeRows } from '../src/engine/quant/index.js';
import { newSharedMemory } from '../src/engine/wasm/arena.js';
import { KernelInstance } from '../src/engine/wasm/instance.js';
import { KERNEL_TYPES } from '../src/engine/wasm/layout.js';
import { loadKernelModule } from '../src/engine/wasm/loader.js';
import { rigLoop, startRig } from './worker-rig.js';

const args = process.argv.slice(2);
const shape = args.find((a) => a.startsWith('--shape='))?.slice(8).split('x').map(Number);
const ROWS = shape?.[0] ?? 4096;
const COLS = shape?.[1] ?? 8192;
const SCALAR_ROWS = 128;
const THREADS = Number(args.find((a) => a.startsWith('--threads='))?.slice(10) ?? availableParallelism());
const BW_BYTES = 512 * 2 ** 20;
const EVICT_BYTES = 64 * 2 ** 20;

const noScalar = args.includes('--no-scalar');
const gemmMode = args.includes('--gemm');
const wasmDir = args.find((a) => a.startsWith('--wasm-dir='))?.slice(11);
const AMP = Number(args.find((a) => a.startsWith('--amp='))?.slice(6) ?? 1);
const matrixMiB = Number(args.find((a) => a.startsWith('--mib='))?.slice(6) ?? 0);
const picked = args.find((a) => !a.startsWith('--'));
const attnOnly = picked === 'attn';
const types = attnOnly ? [] : picked ? picked.split(',').map((n) => ggmlTypeByName(n)!) : [...KERNEL_TYPES.keys()];

/** Best seconds per call of fn over at least `minRuns` runs and `minSeconds`. */
function best(fn: () => void, minRuns = 5, minSeconds = 0.6): number {
  fn();
  let b = Infinity;
  const start = performance.now();
  for (let i = 0; i < minRuns || performance.now() - start < minSeconds * 1000; i++) {
    const t0 = performance.now();
    fn();
    b = Math.min(b, performance.now() - t0);
  }
  return b / 1000;
}

// ---- memory bandwidth ------------------------------------------------------------------------

const km = loadKernelModule({ dir: wasmDir });

function bandwidth1(): number {
  const k = new KernelInstance(km, newSharedMemory(BW_BYTES + 2 ** 20));
  const p = k.arena.alloc(BW_BYTES);
  k.arena.u8(p, BW_BYTES).fill(1);
  return BW_BYTES / best(() => k.call('mem_sum', p, BW_BYTES)) / 1e9;
}

/** One thread reading BW_BYTES in 1 MiB pieces, each as k sequential streams: GB/s per k (common.ts STREAMS). */
function streams1(ks: number[]): number[] {
  const k = new KernelInstance(km, newSharedMemory(BW_BYTES + 2 ** 20));
  const p = k.arena.alloc(BW_BYTES);
  k.arena.u8(p, BW_BYTES).fill(1);
  const piece = 2 ** 20;
  return ks.map((n) => BW_BYTES / best(() => { for (let o = 0; o < BW_BYTES; o += piece) k.call('mem_sum_streams', p + o, piece, n); }) / 1e9);
}

/** N threads each summing their own 512 MiB / N at the same moment; aggregate GB/s. */
async function bandwidthN(n: number): Promise<number> {
  const per = Math.floor(BW_BYTES / n / 64) * 64;
  const ms = await inParallel(n, per, 'new Uint8Array(memory.buffer, p, bytes).fill(1);', 'ex.mem_sum(p, bytes);');
  return (per * n) / (ms / 1000) / 1e9;
}

/**
 * Best wall time (ms) of n worker threads running `step` at the same moment, 6 rounds: each worker
 * has its own kernel instance (ex) over a memory with `bytes` bytes at p, prepared once by `prep`.
 */
async function inParallel(n: number, bytes: number, prep: string, step: string): Promise<number> {
  const src = `
    const { workerData } = require('node:worker_threads');
    const { module, bytes, go } = workerData;
    const memory = new WebAssembly.Memory({ initial: Math.ceil((bytes + 2 ** 20) / 65536), maximum: 65536, shared: true });
    const ex = new WebAssembly.Instance(module, { env: { memory } }).exports;
    const p = Math.ceil(ex.heap_base() / 64) * 64;
    ${prep}
    ${rigLoop(step)}`;
  const rig = startRig(src, n, { module: km.module, bytes });
  let b = Infinity;
  for (let round = 1; round <= 6; round++) b = Math.min(b, rig.round());
  await rig.close();
  return b;
}

// ---- the integer dot instruction's peak ---------------------------------------------------------

const PEAK_ITERS = 5e6;

/** GMAC/s of assembly/membench.ts dot_peak (12 independent chains of the build's i8 dot) on 1 and n threads. */
async function dotPeak(n: number): Promise<[number, number]> {
  const k = new KernelInstance(km);
  const macs = PEAK_ITERS * 12 * k.call('dot_peak_macs');
  k.call('dot_peak', 1000, 1);
  const one = macs / best(() => k.call('dot_peak', PEAK_ITERS, 1)) / 1e9;
  const ms = await inParallel(n, 0, '', `ex.dot_peak(${PEAK_ITERS}, 1);`);
  return [one, (macs * n) / (ms / 1000) / 1e9];
}

// ---- matvec per type -------------------------------------------------------------------------

/**
 * 16 rows of the type: quantised by ggml's reference quantiser where Pantheon has one, else (the
 * i-quants, which need an importance matrix) random block bytes with a small f16 d at byte 0.
 */
function tileOf(type: number): Uint8Array {
  if (canQuantize(type)) return quantizeRows(type, new Float32Array(16 * COLS).map((_, i) => AMP * Math.sin(i * 0.37) * Math.cos(i * 0.011)), 16, COLS);
  const tile = new Uint8Array(16 * rowBytes(type, COLS));
  let s = 1;
  for (let i = 0; i < tile.length; i++) tile[i] = (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) >>> 24;
  const bs = ggmlTypeInfo(type)!.typeSize;
  if (type !== GgmlType.IQ1_M) for (let b = 0; b < tile.length; b += bs) [tile[b], tile[b + 1]] = [0x1f, 0x21]; // d = 0.0101
  return tile;
}

/** A [rows, COLS] matrix of the type: 16 rows (tileOf), repeated. */
function matrix(type: number, rows: number): { fill: (dst: Uint8Array, from: number) => void; bytes: number } {
  const tile = tileOf(type);
  return {
    bytes: rowBytes(type, COLS) * rows,
    fill: (dst, from) => {
      for (let o = 0; o < dst.length; ) {
        const at = (from + o) % tile.length;
        const n = Math.min(tile.length - at, dst.length - o);
        dst.set(tile.subarray(at, at + n), o);
        o += n;
      }
    },
  };
}

function gbps(be: MatBackend, type: number, rows: number): number {
  const m = matrix(type, rows);
  const h = be.addWeight({ name: ggmlTypeName(type), type, rows, cols: COLS }, m.fill);
  const x = new Float32Array(COLS).map((_, i) => Math.sin(i));
  const out = new Float32Array(rows);
  return m.bytes / best(() => be.matvec(out, h, x), 3, be.name === 'scalar' ? 0.3 : 0.6) / 1e9;
}

const pad = (s: string | number, n: number) => String(s).padStart(n);
const f = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(2));

// ---- prompt matmul (gemm) per type -----------------------------------------------------------

// --shape and --tokens apply here too (a prompt of 32 tokens through the 8B's up/gate: --shape=14336x4096 --tokens=32)
const GEMM_ROWS = shape?.[0] ?? 2048;
const GEMM_COLS = shape?.[1] ?? 2048;
const GEMM_TOKENS = Number(args.find((a) => a.startsWith('--tokens='))?.slice(9) ?? 128);
if (!Number.isInteger(GEMM_TOKENS) || GEMM_TOKENS < 1) {
  console.error('--tokens=N needs a whole number of tokens, at least 1 (e.g. --tokens=32)');
  process.exit(2);
}

/** GMAC/s of be.matmul on a GEMM_TOKENS-token batch (quantise + widen + gemm, as in a prompt). */
function gmacs(be: MatBackend, type: number): number {
  const tile = quantizeRows(type, new Float32Array(16 * GEMM_COLS).map((_, i) => Math.sin(i * 0.37) * Math.cos(i * 0.011)), 16, GEMM_COLS);
  const h = be.addWeight({ name: ggmlTypeName(type), type, rows: GEMM_ROWS, cols: GEMM_COLS }, (dst, from) => {
    for (let o = 0; o < dst.length; o++) dst[o] = tile[(from + o) % tile.length];
  });
  const x = new Float32Array(GEMM_TOKENS * GEMM_COLS).map((_, i) => Math.sin(i * 0.013));
  const out = new Float32Array(GEMM_TOKENS * GEMM_ROWS);
  return (GEMM_ROWS * GEMM_COLS * GEMM_TOKENS) / best(() => be.matmul(out, h, x, GEMM_TOKENS), 5, 1) / 1e9;
}

if (gemmMode) {
  // the gemm kernels, and the float types, whose matmul_* kernels serve batches
  const gemmTypes = types.filter((t) => KERNEL_TYPES.get(t)!.gemm || KERNEL_TYPES.get(t)!.act === 'f32');
  console.log(`Pantheon prompt matmul: ${GEMM_TOKENS} tokens × [${GEMM_ROWS}, ${GEMM_COLS}], GMAC/s (best of several runs)`);
  console.log(`kernels ${km.simd === 'relaxed' ? 'relaxed SIMD' : 'SIMD128'} (${km.path}), ${THREADS} threads available, Node ${process.versions.node}\n`);
  console.log(`${'type'.padEnd(7)} ${pad('simd×1', 7)} ${pad(`pool×${THREADS}`, 7)}`);
  for (const type of gemmTypes) {
    const single = gmacs(new WasmBackend({ dir: wasmDir }), type);
    const pool = new PoolBackend({ threads: THREADS, dir: wasmDir });
    const multi = gmacs(pool, type);
    pool.dispose();
    console.log(`${ggmlTypeName(type).padEnd(7)} ${pad(f(single), 7)} ${pad(f(multi), 7)}`);
  }
  // what no GEMM on this instruction can exceed (a Q8_0 tile spends two dots per 16 products)
  const [one, many] = await dotPeak(THREADS);
  console.log(`${'i8 dot'.padEnd(7)} ${pad(f(one), 7)} ${pad(f(many), 7)}  (peak: the dot instruction alone, 12 independent chains)`);
  process.exit(0);
}

// ---- attention -------------------------------------------------------------------------------

/**
 * ms per token of one thread's attention over `positions` cached positions, all layers: the 110M
 * llama's shape (12 layers, 12 heads, head 64) and qwen2 0.5B's (24 layers, 14 → 2 heads, head 64).
 * 'f16' is a generated token (and small prompt batches), 'f32' a token of a prompt batch of 64+
 * ('batch': the batch's last 64 tokens in one call, as the forward pass does; ms per token).
 * Every layer has its own cache, and 64 MiB are read before each token, as the weights are streamed
 * between two tokens of a model, so the cache rows come from memory (or L3) as they do there; each
 * layer's call is timed alone and the figure is the sum of the layers' best times.
 */
function attentionMs(mode: 'f16' | 'f32' | 'batch', layers: number, nHead: number, nHeadKv: number, hd: number, positions: number): number {
  const k = new KernelInstance(km);
  const a = k.arena;
  const kv = nHeadKv * hd;
  const n = positions * kv;
  // caches of plausible values: f16 bits of smooth pseudo-random floats
  const src = a.alloc(n * 4);
  const caches = Array.from({ length: layers }, (_, l) => {
    const kc = a.alloc(n * 2);
    const vc = a.alloc(n * 2);
    a.f32(src, n).set(new Float32Array(n).map((_, i) => Math.sin(i * 0.731 + l) * 1.7));
    k.kvStore(kc, src, n);
    a.f32(src, n).set(new Float32Array(n).map((_, i) => Math.cos(i * 0.377 + l) * 0.9));
    k.kvStore(vc, src, n);
    return [kc, vc];
  });
  const batch = mode === 'batch' ? 64 : 1;
  const q = a.alloc(batch * nHead * hd * 4);
  a.f32(q, batch * nHead * hd).set(new Float32Array(batch * nHead * hd).map((_, i) => Math.sin(i * 1.3) * 2));
  const out = a.alloc(batch * nHead * hd * 4);
  const scratch = a.alloc(k.attnScratchBytes(nHead, nHeadKv, hd, hd, positions));
  const scale = 1 / Math.sqrt(hd);
  const flush = a.alloc(EVICT_BYTES);
  a.u8(flush, EVICT_BYTES).fill(1);
  // each layer's call timed alone, best of the runs (the least disturbed by other processes)
  const b = caches.map(() => Infinity);
  const start = performance.now();
  for (let r = 0; r < 8 || performance.now() - start < 500; r++) {
    k.call('mem_sum', flush, EVICT_BYTES);
    caches.forEach(([kc, vc], l) => {
      const t0 = performance.now();
      if (mode === 'batch') k.attentionBatchF32({ out, q, kc, vc, strideK: kv, strideV: kv, nHead, nHeadKv, hdK: hd, hdV: hd, scale, scratch }, positions - batch, batch, 0);
      else k.attention(mode, { out, q, kc, vc, strideK: kv, strideV: kv, nHead, nHeadKv, hdK: hd, hdV: hd, scale, scratch }, 0, positions - 1);
      b[l] = Math.min(b[l], performance.now() - t0);
    });
  }
  return b.reduce((x, y) => x + y, 0) / batch;
}

function attentionTable(): void {
  const shapes: [string, number, number, number, number][] = [['llama 110M', 12, 12, 12, 64], ['qwen2 0.5B', 24, 14, 2, 64]];
  const lengths = [128, 512, 2048];
  console.log(`\nattention, one thread, ms per token (all layers) at ${lengths.join(' / ')} cached positions`);
  for (const [name, layers, nHead, nHeadKv, hd] of shapes) {
    for (const mode of ['f16', 'f32', 'batch'] as const) {
      const ms = lengths.map((n) => attentionMs(mode, layers, nHead, nHeadKv, hd, n).toFixed(3).padStart(8));
      console.log(`${name.padEnd(11)} ${mode.padEnd(5)} ${ms.join(' ')}`);
    }
  }
}

if (attnOnly) {
  console.log(`kernels ${km.simd === 'relaxed' ? 'relaxed SIMD' : 'SIMD128'} (${km.path}), Node ${process.versions.node}`);
  attentionTable();
  process.exit(0);
}

console.log(`Pantheon kernels: ${matrixMiB ? `[rows, ${COLS}] of about ${matrixMiB} MiB` : `${ROWS}×${COLS}`} matvec, GB/s of weight bytes (best of several runs)`);
console.log(`kernels ${km.simd === 'relaxed' ? 'relaxed SIMD' : 'SIMD128'} (${km.path}), ${THREADS} threads available, Node ${process.versions.node}`);
// ---- A/B of two builds, interleaved ----------------------------------------------------------

const abDir = args.find((a) => a.startsWith('--ab='))?.slice(5);
if (abDir) {
  // the same matrix through build A (--wasm-dir or build/wasm) and build B (--ab=DIR), one call of
  // each in turn, best of each over the same seconds: both see the same disturbances
  const secs = Number(args.find((a) => a.startsWith('--secs='))?.slice(7) ?? 4);
  const kmB = loadKernelModule({ dir: abDir });
  console.log(`A/B ${ROWS}×${COLS} matvec GB/s, best over ${secs} s interleaved (×1: CPU time, ×N: wall): A ${km.path}, B ${kmB.path}, Node ${process.versions.node}`);
  console.log(`${'type'.padEnd(7)} ${pad('A×1', 7)} ${pad('B×1', 7)} ${pad('B/A', 6)} ${pad(`A×${THREADS}`, 7)} ${pad(`B×${THREADS}`, 7)} ${pad('B/A', 6)}`);
  // one thread: this thread's CPU time per call (a busy machine takes the core away mid-call, which
  // wall time counts and CPU time does not); the pool: wall time
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const abPair = (mk: (dir: string | undefined) => MatBackend, type: number, clock: () => number): [number, number] => {
    const m = matrix(type, ROWS);
    const x = new Float32Array(COLS).map((_, i) => Math.sin(i));
    const out = new Float32Array(ROWS);
    const bes = [mk(wasmDir), mk(abDir)];
    const hs = bes.map((be) => be.addWeight({ name: ggmlTypeName(type), type, rows: ROWS, cols: COLS }, m.fill));
    const b = [Infinity, Infinity];
    const start = performance.now();
    for (let r = 0; r < 6 || performance.now() - start < secs * 1000; r++) {
      for (let k = 0; k < 2; k++) {
        const t0 = clock();
        bes[k].matvec(out, hs[k], x);
        b[k] = Math.min(b[k], clock() - t0);
      }
    }
    for (const be of bes) (be as { dispose?: () => void }).dispose?.();
    return [m.bytes / b[0] / 1e6, m.bytes / b[1] / 1e6];
  };
  for (const type of types) {
    const [a1, b1] = abPair((dir) => new WasmBackend({ dir }), type, cpuMs);
    const [an, bn] = THREADS > 1 ? abPair((dir) => new PoolBackend({ threads: THREADS, dir }), type, () => performance.now()) : [NaN, NaN];
    console.log(`${ggmlTypeName(type).padEnd(7)} ${pad(f(a1), 7)} ${pad(f(b1), 7)} ${pad((b1 / a1).toFixed(3), 6)} ${pad(f(an), 7)} ${pad(f(bn), 7)} ${pad((bn / an).toFixed(3), 6)}`);
  }
  process.exit(0);
}

const noBw = args.includes('--no-bw');
const bw1 = noBw ? NaN : bandwidth1();
const bwN = noBw ? NaN : THREADS > 1 ? await bandwidthN(THREADS) : bw1;
if (!noBw) {
  console.log(`memory bandwidth (wasm read loop over ${BW_BYTES / 2 ** 20} MiB): 1 thread ${bw1.toFixed(2)} GB/s, ${THREADS} threads ${bwN.toFixed(2)} GB/s`);
  const ks = [1, 2, 4, 8, 16];
  console.log(`1 thread, 1 MiB pieces read as k streams: ${streams1(ks).map((g, i) => `k=${ks[i]} ${g.toFixed(1)}`).join(', ')} GB/s\n`);
}
console.log(`${'type'.padEnd(7)} ${pad('MiB', 7)} ${pad('scalar', 7)} ${pad('simd×1', 7)} ${pad('% bw1', 6)} ${pad(`pool×${THREADS}`, 7)} ${pad('% bwN', 6)}`);
for (const type of types) {
  const rows = matrixMiB ? Math.ceil((matrixMiB * 2 ** 20) / rowBytes(type, COLS) / 4) * 4 : ROWS;
  const mib = (rowBytes(type, COLS) * rows) / 2 ** 20;
  const scalar = noScalar ? undefined : gbps(new ScalarBackend(), type, SCALAR_ROWS);
  const single = gbps(new WasmBackend({ dir: wasmDir }), type, rows);
  const pool = new PoolBackend({ threads: THREADS, dir: wasmDir });
  const multi = gbps(pool, type, rows);
  pool.dispose();
  console.log(`${ggmlTypeName(type).padEnd(7)} ${pad(mib.toFixed(1), 7)} ${pad(f(scalar), 7)} ${pad(f(single), 7)} ${pad(((single / bw1) * 100).toFixed(0), 6)} ${pad(f(multi), 7)} ${pad(((multi / bwN) * 100).toFixed(0), 6)}`);
}
if (!picked) attentionTable();
