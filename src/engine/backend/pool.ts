// The worker-pool backend: the rows of every weight matrix are split across T threads (the calling
// thread is one of them), each thread with its own WebAssembly instance and memory, so no single
// 4 GiB wasm32 memory has to hold the model and every core streams its own share of the weights.
//
// Files: worker-pool.ts (the threads, memories, control blocks), pool-worker.ts (the worker's
// side), pool-plan.ts (where rows go, and each round trip's layout), pool-attention.ts.
//
// Design:
// - The parent creates every memory (shared, SharedArrayBuffer-backed) and runs every allocator,
//   so loading is synchronous: each thread reads its own rows of a weight from the model file
//   straight into its memory, all threads at once (addWeight; fill() on this thread when the
//   bytes are not in a file).
// - Per matvec the calling thread quantises the activation once, copies the few KiB of quantised
//   activation into each worker's memory, bumps each worker's job word (Atomics.notify), computes
//   its own rows, then waits (Atomics.wait) for the workers and gathers their outputs. The forward
//   pass stays synchronous. Workers spin briefly on the job word before sleeping, so back-to-back
//   matvecs do not pay a futex wake each.
// - Results equal WasmBackend's bit for bit: the same kernels compute the same rows. For a prompt
//   batch on a gemm kernel the widened activations (assembly/gemm.ts) travel with the quantised ones.
// - Bands (splitRows): an even split leaves the faster thread waiting whenever the other gets less
//   of its core or starts late, which on a shared 2-vCPU VM was 10-20% of a prompt's products and
//   ~7% of a token's (measured). So the rows around each boundary are held by both neighbours and
//   split at run time: each thread computes its own rows, then claims chunks of a shared band from
//   its end (pool-worker.ts runJobs, a compare-and-swap on a word both see) until they meet.
//   matvecTop's sampling stats are per fixed chunk, so they come out the same whoever computes.
// - Shards (PoolOptions.shards): a thread may host several (instance, memory) pairs, each a "part"
//   holding its rows of every weight, so a model larger than threads × 4 GiB still loads. Rows are
//   split evenly among all parts (threads × shards); bands lie only between parts of different
//   threads; a thread runs its parts' jobs in one list (their kernels' indices offset by the part's
//   slot: fns holds every instance's exports in turn), each part with its own copy of the
//   quantised activation. One shard per thread is the pool as it was.

import { availableParallelism } from 'node:os';
import { readSync } from 'node:fs';
import { EngineError, GgufError } from '../../shared/errors.js';
import { rowBytes } from '../gguf/ggml-types.js';
import type { Arena } from '../wasm/arena.js';
import type { KernelInstance } from '../wasm/instance.js';
import { kernelType, rowGroup, rowLayout, storedRowBytes } from '../wasm/layout.js';
import { loadKernelModule, type LoadOptions } from '../wasm/loader.js';
import { CTRL, JOBK } from './pool-worker.js';
import { createPoolAttention } from './pool-attention.js';
import { BAND, buildPlan, splitRows, type BiasCopies, type InputCopy, type Plan, type PoolWeight, type Slice, type StatsSlot } from './pool-plan.js';
import { addInto } from './vec.js';
import { mergeSliceTops, type LogitStats, type SliceTop } from './logit-stats.js';
import type { AttentionShape, FillFn, MatBackend, SplitAttention, WaitMeter, WeightHandle, WeightSpec } from './types.js';
import { checkShapes, kernelFor } from './wasm.js';
import { WorkerPool, type Kernel } from './worker-pool.js';

export { BAND, splitRows } from './pool-plan.js';

/** Default spin before sleeping, µs (PoolOptions.spin). */
export const SPIN_US = 500;

export interface PoolOptions extends LoadOptions {
  /** Threads that compute, the calling thread included (default os.availableParallelism()). */
  threads?: number;
  /**
   * Microseconds a waiting thread polls before it sleeps in Atomics.wait (default SPIN_US): a
   * worker during a forward pass (see hold), the calling thread while it waits for the workers.
   * Jobs of one pass come tens of µs apart and waking a sleeping thread costs about as much (more
   * in a VM); 0 always sleeps.
   */
  spin?: number;
  /** Milliseconds to wait for a worker before the pool is declared dead (default 60000). */
  timeoutMs?: number;
  /**
   * Share of each weight's rows that two neighbouring threads both hold and split at run time,
   * the one ahead taking more (default BAND; splitRows): a thread that gets less of a core, or
   * starts late, no longer holds the others up. Costs that share of the weights' memory again; 0
   * splits every weight evenly once.
   */
  band?: number;
  /** WebAssembly memories (parts) per thread, each holding its rows of every weight (default 1; see planPool). */
  shards?: number;
  /** Bytes a memory may reach (default 4 GiB, wasm32's limit): lowered by tests to shard a small model. */
  memoryBytes?: number;
}

/**
 * What a round trip does besides the products (PoolBackend.run), all off by default:
 *   gated: ws = [gate, up] (rows split alike); every thread then runs swiglu on its rows and only
 *          the gate's slices (now the activated rows) are gathered, into outs[0];
 *   want > 0 (one weight, one token): every thread then runs sample_slice_top on its rows;
 *   bias (one token): every thread adds it to its rows after the products;
 *   add (one weight, one token): the rows are added into outs[0] instead of stored there.
 */
interface RunExtra {
  readonly gated?: boolean;
  readonly want?: number;
  readonly bias?: BiasCopies | null;
  readonly add?: boolean;
}
const PLAIN: RunExtra = {};
const GATED: RunExtra = { gated: true };
const ADD: RunExtra = { add: true };


/** A part's input for a round trip: x for a batch (it quantises its own), else the quantised activations. */
function copyInput(c: InputCopy, plan: Plan, x: Float32Array): void {
  if (c.x) c.x.set(x);
  else c.xq.set(plan.xq);
}

/** sel + the slot's piece, its max and normaliser read from what sample_slice_top wrote there. */
function takeStats(sel: SliceTop[], slot: StatsSlot): void {
  slot.top.max = slot.f32[0];
  slot.top.sum = slot.f64[1];
  sel.push(slot.top);
}


export class PoolBackend implements MatBackend {
  readonly name: string;
  waitMeter: WaitMeter | null = null;
  readonly threads: number;
  /** Parts per thread (PoolOptions.shards). */
  readonly shards: number;
  /** The threads, their memories and control blocks (worker-pool.ts). */
  readonly pool: WorkerPool;
  private readonly band: number;
  private bytes = 0;
  private nextId = 0;
  private readonly addF32: Kernel;

  constructor(opts: PoolOptions = {}) {
    const km = loadKernelModule(opts);
    this.threads = Math.max(1, Math.floor(opts.threads ?? availableParallelism()));
    this.shards = Math.max(1, Math.floor(opts.shards ?? 1));
    this.band = opts.band ?? BAND;
    this.name = `wasm-${km.simd}-pool`;
    this.pool = new WorkerPool(km, {
      threads: this.threads,
      shards: this.shards,
      spin: Math.max(0, Math.floor(opts.spin ?? SPIN_US)),
      timeoutMs: opts.timeoutMs ?? 60000,
      memoryBytes: opts.memoryBytes,
    });
    this.addF32 = this.pool.main.kernel('add_f32');
  }

  get kernels(): KernelInstance {
    return this.pool.main;
  }

  supports(type: number): boolean {
    return kernelType(type) !== undefined;
  }

  /**
   * Place a weight's rows in the parts (splitRows) and fill them. When `fill.file` says where the
   * bytes lie in the model file, every thread reads its own parts' rows from the file itself, in
   * parallel (a READ job on each worker, plain reads here), straight into the memory the kernels
   * read; otherwise this thread fills every part through `fill`. Then each thread lays out its
   * rows (rowLayout: F16, Q4_0, Q4_K, Q6_K).
   */
  addWeight(spec: WeightSpec, fill: FillFn): WeightHandle {
    const pool = this.pool;
    const kt = kernelFor(spec);
    const rb = storedRowBytes(spec.type, spec.cols);
    const fileRb = rowBytes(spec.type, spec.cols);
    const slices: Slice[] = [];
    const p = pool.parts.length;
    const { held, core, bands } = splitRows(spec.rows, rowGroup(spec.type), p, this.band, rb, this.shards);
    const lay = rowLayout(spec.type, spec.cols);
    const slack = lay ? lay.slack : 0;
    const file = fill.file;
    const ownReads: [Uint8Array, number][] = []; // this thread's reads (destination, byte of the tensor)
    const own: [number, number[]][] = []; // this thread's layout jobs (part slot, arguments)
    const temps: [Arena, number][] = []; // the layouts' temporaries, freed when they are done
    const jobs: number[][] = Array.from({ length: this.threads }, (): number[] => []); // each worker's jobs, as control-block words
    const put = (words: number[], job: number[]) => {
      words.push(...job);
      while (words.length % CTRL.JOB !== 0) words.push(0);
    };
    for (let i = 0; i < p; i++) {
      const [r0, r1] = held[i];
      if (r1 === r0) continue;
      const { arena, host, slot } = pool.parts[i];
      const size = (r1 - r0) * rb;
      const ptr = arena.alloc(size + slack);
      const dst = ptr + slack, len = (r1 - r0) * fileRb, from = r0 * fileRb;
      if (!file) fill(arena.u8(dst, len), from);
      else if (host === 0) ownReads.push([arena.u8(dst, len), from]);
      else {
        // (in pieces below 2 GiB: a job's words are i32)
        for (let at = 0; at < len; at += READ_PIECE) {
          const pos = file.at + from + at;
          put(jobs[host], [JOBK.READ, slot, dst + at, Math.min(READ_PIECE, len - at), pos % 2 ** 32, Math.floor(pos / 2 ** 32), file.fd]);
        }
      }
      // the stored layout (F16, Q4_0, Q4_K, Q6_K: rowLayout), by the thread owning the memory after its reads
      if (lay) {
        const temp = lay.temp > 0 ? arena.alloc(lay.temp) : 0;
        if (temp) temps.push([arena, temp]);
        const args = lay.args(ptr, dst, r1 - r0, temp);
        if (host === 0) own.push([slot, args]);
        else put(jobs[host], [pool.fnId(lay.fn) + slot * pool.fnIndex.size, ...args]);
      }
      slices.push({ part: i, r0, r1, k0: core[i][0], k1: core[i][1], ptr: ptr + rb - fileRb });
      this.bytes += rb * (r1 - r0);
    }
    for (let t = 1; t < this.threads; t++) if (jobs[t].length > 0) pool.startJobs(t, jobs[t]);
    try {
      for (const [dst, from] of ownReads) readFile(file!.fd, dst, file!.at + from, spec.name);
    } finally {
      pool.waitAll();
    }
    if (lay) for (const [slot, args] of own) pool.fns[pool.fnId(lay.fn) + slot * pool.fnIndex.size](...args);
    for (const [arena, temp] of temps) arena.free(temp, lay!.temp);
    const h: PoolWeight = { id: this.nextId++, spec, kt, rowBytes: rb, slices, bands, plan: null, bias: null };
    return h;
  }

  matvec(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    this.matmul(out, w, x, 1);
  }

  matmul(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void {
    this.run([out], [w as PoolWeight], x, n);
  }

  /** out[rows] += W · x: each part's rows are added into out where matvec would copy them. */
  matvecAdd(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    this.run([out], [w as PoolWeight], x, 1, ADD);
  }

  /**
   * outs[i][n, rows_i] = x[n, cols] · W_iᵀ (+ biases[i] per token): weights on one input (q/k/v,
   * gate/up) in one round trip. For one token with a bias on every weight, each thread adds the
   * biases to its own rows (copied into its memory on first use) right after its products.
   */
  matmulShared(outs: Float32Array[], ws: WeightHandle[], x: Float32Array, n: number, biases?: readonly (Float32Array | null)[]): void {
    const pws = ws as PoolWeight[];
    const all = biases && biases.length === ws.length && biases.every((b) => b !== null) ? (biases as readonly Float32Array[]) : null;
    if (n === 1 && all && ws.length < CTRL.MAXJOBS) {
      this.run(outs, pws, x, n, { bias: this.biasCopies(pws, all) });
      return;
    }
    for (let i = 0; i < ws.length; i += CTRL.MAXJOBS) this.run(outs.slice(i, i + CTRL.MAXJOBS), pws.slice(i, i + CTRL.MAXJOBS), x, n);
    // otherwise the biases here, token by token (the same f32 additions)
    for (let i = 0; i < ws.length; i++) {
      const b = biases?.[i];
      const rows = ws[i].spec.rows;
      if (b) for (let t = 0; t < n; t++) addInto(outs[i], b, rows, t * rows);
    }
  }

  /** The biases of the set ws in every part's memory, copied on first use (kept on ws[0]). */
  private biasCopies(ws: PoolWeight[], biases: readonly Float32Array[]): BiasCopies {
    const had = ws[0].bias;
    if (had && had.arrays.length === biases.length && had.arrays.every((b, i) => b === biases[i])) return had;
    if (had) had.ptrs.forEach((ptr, p) => had.bytes[p] > 0 && this.pool.parts[p].arena.free(ptr, had.bytes[p]));
    const bytes = this.pool.parts.map((_, p) => 4 * ws.reduce((c, w) => c + this.rowsOf(w, p), 0));
    const ptrs = this.pool.parts.map((part, p) => {
      if (bytes[p] === 0) return 0;
      const ptr = part.arena.alloc(bytes[p], 16);
      const dst = part.arena.f32(ptr, bytes[p] / 4);
      let at = 0;
      ws.forEach((w, i) => {
        for (const sl of w.slices) {
          if (sl.part !== p) continue;
          dst.set(biases[i].subarray(sl.r0, sl.r1), at);
          at += sl.r1 - sl.r0;
        }
      });
      return ptr;
    });
    return (ws[0].bias = { arrays: biases.slice(), ptrs, bytes });
  }

  /**
   * out[n, rows] = silu(x · Wgᵀ) ⊙ (x · Wuᵀ): each thread applies the activation to its own rows of
   * gate and up (split alike), so only the activated rows travel back.
   */
  matmulGated(out: Float32Array, gate: WeightHandle, up: WeightHandle, x: Float32Array, n: number): void {
    if (gate.spec.rows !== up.spec.rows) throw new EngineError('BAD_SHAPE', `tensors "${gate.spec.name}" and "${up.spec.name}" differ in rows`);
    this.run([out, out], [gate as PoolWeight, up as PoolWeight], x, n, GATED);
  }

  /**
   * matvec, then on every thread its rows' sampling stats (sample_slice_top) while they are in
   * cache, merged into stats (NaN in out become −inf).
   */
  matvecTop(out: Float32Array, w: WeightHandle, x: Float32Array, stats: LogitStats): void {
    const want = Math.max(0, Math.min(stats.want, stats.ids.length));
    if (want === 0) {
      this.run([out], [w as PoolWeight], x, 1);
      stats.valid = false;
      return;
    }
    const plan = this.run([out], [w as PoolWeight], x, 1, { want });
    mergeSliceTops(stats, out, plan.sel, plan.pos);
  }

  /** Attention with each thread holding the KV cache of its KV heads (pool-attention.ts). */
  splitAttention(shape: AttentionShape, positions: number): SplitAttention | null {
    return createPoolAttention(this.pool, shape, positions);
  }

  /**
   * The products of up to MAXJOBS weights with one input: x quantised once per activation kind on
   * this thread (straight from x when it lives in this thread's memory), copied into each worker's
   * memory, one wake-up per worker for all its jobs, this thread's jobs (its rows written straight
   * into the outputs when they live in its memory), then the gather. Every thread first computes
   * its core rows, then claims chunks of the bands it shares with its neighbours (runJobs), so the
   * split follows how fast each thread is this time; each row is computed by one thread, with the
   * same kernel and bits whichever.
   */
  private run(outs: Float32Array[], ws: PoolWeight[], x: Float32Array, n: number, extra: RunExtra = PLAIN): Plan {
    const { gated = false, want = 0, bias = null, add = false } = extra;
    for (let i = 0; i < ws.length; i++) checkShapes(ws[i].spec, outs[i], x, n);
    const plan = this.planFor(ws, n, gated, want, bias);
    const cols = ws[0].spec.cols;
    // quantise (and widen) x once per activation kind, into this thread's region
    // a batch: every worker gets x and quantises its own copy (jobs first in its list), so this
    // thread's quantising and widening no longer delays them
    const xs = x.length === n * cols ? x : x.subarray(0, n * cols);
    if (n > 1) this.startWorkers(plan, xs);
    let xp: number;
    if (this.pool.inKernelMemory(x)) {
      xp = x.byteOffset;
    } else {
      plan.x.set(xs);
      xp = plan.x.byteOffset;
    }
    for (const q of plan.quant) {
      for (let t = 0; t < n; t++) q.quantize(plan.xqPtr + q.at + t * q.ab, xp + t * cols * 4, cols);
      if (q.widen) q.widen(plan.xqPtr + q.at + n * q.ab, plan.xqPtr + q.at, n, cols, q.ab);
    }
    if (n === 1) this.startWorkers(plan, xs);
    // this thread's jobs: one token's rows go straight into outputs that live in this memory
    const ow = plan.ownWords;
    for (const r of plan.ownRefs) ow[r.pos] = this.direct(outs[r.i], n, gated, r.i, add) ? outs[r.i].byteOffset : r.local;
    for (const c of plan.ownCopies) copyInput(c, plan, xs);
    this.pool.runOwn(ow, plan.ownNj);
    if (this.waitMeter) {
      const t0 = performance.now();
      this.pool.waitAll();
      this.waitMeter.addWait(performance.now() - t0);
    } else this.pool.waitAll();
    // each part's rows [lo, hi): its core and the band chunks it claimed
    for (const po of plan.outs) {
      if (gated && po.i > 0) continue;
      const w = ws[po.i], s = po.slice, u = gated ? 0 : po.i;
      const lo = s.part > 0 ? this.split(plan, s.part - 1, u, s.k0) : s.k0;
      const hi = this.split(plan, s.part, u, s.k1);
      const out = outs[po.i];
      if (hi <= lo) continue;
      if (add) {
        // (in wasm when out lives in this memory; the same f32 additions as addInto)
        if (s.part === 0 && this.pool.inKernelMemory(out)) this.addF32(out.byteOffset + lo * 4, po.out + (lo - s.r0) * 4, hi - lo);
        else addInto(out, po.local, hi - lo, lo, lo - s.r0);
      } else if (!(s.part === 0 && this.direct(out, n, gated, po.i, add))) {
        const rows = w.spec.rows, off = lo - s.r0;
        if (n === 1) out.set(po.local.subarray(off, off + hi - lo), lo);
        else for (let t = 0; t < n; t++) out.set(po.local.subarray(t * po.lr + off, t * po.lr + off + hi - lo), t * rows + lo);
      }
    }
    if (plan.want > 0) this.selectStats(plan);
    return plan;
  }

  /** The band claims reset, then each worker given its input (plan.workers: xq, or x for a batch) and its jobs, and woken. */
  private startWorkers(plan: Plan, x: Float32Array): void {
    for (const r of plan.resets) Atomics.store(this.pool.claims, r.word, r.v);
    for (const wk of plan.workers) {
      for (const c of wk.copies) copyInput(c, plan, x);
      wk.ctrl.set(wk.words, CTRL.JOBS);
      this.pool.start(wk.host, wk.nj);
    }
  }

  /** Where the rows of w end that part b computed, b's rows meeting b + 1's (fixed: a part's core end `fixed`). */
  private split(plan: Plan, b: number, u: number, fixed: number): number {
    const band = b < this.pool.parts.length - 1 ? plan.bands[u][b] : null;
    if (!band) return fixed;
    return Math.min(band.e, band.s + (this.pool.claims[b * CTRL.MAXJOBS + u] & 0xffff) * band.ch);
  }

  /**
   * plan.sel ← matvecTop's stats pieces in row order (each part's core, then the band chunks by who
   * took them), their max and normaliser read from the slots the kernels wrote.
   */
  private selectStats(plan: Plan): void {
    const w = plan.ws[0], sel = plan.sel;
    sel.length = 0;
    for (const s of w.slices) {
      const p = s.part, slots = plan.slots[p];
      if (s.k1 > s.k0) takeStats(sel, slots[0]);
      const band = p < this.pool.parts.length - 1 ? plan.bands[0][p] : null;
      if (!band) continue;
      const taken = this.pool.claims[p * CTRL.MAXJOBS] & 0xffff;
      const rightOfNext = p + 1 < this.pool.parts.length - 1 ? plan.bands[0][p + 1]?.count ?? 0 : 0;
      for (let k = 0; k < band.count; k++) takeStats(sel, k < taken ? slots[1 + k] : plan.slots[p + 1][1 + rightOfNext + k]);
    }
  }

  /** Whether this thread writes weight i's rows straight into `out` (one token, out in its memory; not the up of a gated pair, not added). */
  private direct(out: Float32Array, n: number, gated: boolean, i: number, add = false): boolean {
    return n === 1 && !add && !(gated && i > 0) && this.pool.inKernelMemory(out);
  }

  /** The plan for these weights: a one-token plan is kept on the first weight, a batch's built each time. */
  private planFor(ws: PoolWeight[], n: number, gated: boolean, want: number, bias: BiasCopies | null): Plan {
    let plan = n === 1 ? ws[0].plan : null;
    let same = plan !== null && plan.gated === gated && plan.want === want && plan.bias === bias && plan.ws.length === ws.length;
    for (let i = 1; same && i < ws.length; i++) same = plan!.ws[i] === ws[i];
    if (plan && same) {
      let moved = false;
      for (let p = 0; p < this.pool.parts.length; p++) if (plan.bytes[p] > 0 && this.pool.parts[p].arena.scratch(plan.bytes[p]) !== plan.bases[p]) moved = true;
      if (!moved) return plan;
    }
    plan = buildPlan(this.pool, ws, n, gated, want, bias);
    if (n === 1) ws[0].plan = plan;
    return plan;
  }


  /** A forward pass begins (true) or ends (false): the workers poll between its jobs (WorkerPool.hold). */
  hold(on: boolean): void {
    this.pool.hold(on);
  }

  /** Rows of `w` that part `p` holds. */
  private rowsOf(w: PoolWeight, p: number): number {
    const s = w.slices.find((sl) => sl.part === p);
    return s ? s.r1 - s.r0 : 0;
  }

  getRow(out: Float32Array, w: WeightHandle, row: number): void {
    const { spec, kt, rowBytes: rb, slices } = w as PoolWeight;
    const s = slices.find((sl) => row >= sl.r0 && row < sl.r1);
    if (!s) throw new EngineError('BAD_SHAPE', `row ${row} is outside tensor "${spec.name}" (${spec.rows} rows)`);
    const a = this.pool.main.arena;
    // the row's group of the stored layout (rowGroup) when the slice holds it whole, else the row alone
    const unit = rowGroup(spec.type), local = row - s.r0, g = local - (local % unit);
    const [first, count] = g + unit <= s.r1 - s.r0 ? [g, unit] : [local, 1];
    let src = s.ptr + first * rb;
    const len = (count - 1) * rb + rowBytes(spec.type, spec.cols); // what dequant reads (not an F16 row's bitmap)
    const tmp = a.scratch(len + 64 + spec.cols * 4);
    const o = tmp + Math.ceil(len / 64) * 64;
    if (s.part !== 0) {
      // The row lives in a worker's memory: copy its bytes here and dequantise on this thread.
      a.u8(tmp, len).set(this.pool.parts[s.part].arena.u8(src, len));
      src = tmp;
    }
    this.pool.main.dequantRow(kt, o, src, rb, count, local - first, spec.cols);
    out.set(a.f32(o, spec.cols));
  }

  weightBytes(): number {
    return this.bytes;
  }

  dispose(): void {
    this.pool.dispose();
    this.bytes = 0;
  }
}

/** Bytes a worker reads in one READ job: under 2 GiB, as a job's words are i32. */
const READ_PIECE = 2 ** 30;

/** dst ← bytes [pos, pos + dst.length) of file fd, in reads of at most READ_PIECE; a short file is GGUF_TRUNCATED. */
function readFile(fd: number, dst: Uint8Array, pos: number, name: string): void {
  for (let done = 0; done < dst.length; ) {
    const got = readSync(fd, dst, done, Math.min(dst.length - done, READ_PIECE), pos + done);
    if (got <= 0) throw new GgufError('GGUF_TRUNCATED', `file ended while reading tensor "${name}": it is truncated`, pos + done);
    done += got;
  }
}
