// The worker-pool backend: the rows of every weight matrix are split across T threads (the calling
// thread is one of them), each thread with its own WebAssembly instance and memory, so no single
// 4 GiB wasm32 memory has to hold the model and every core streams its own share of the weights.
//
// Design (see pool-worker.ts for the worker's side):
// - The parent creates every memory (shared, SharedArrayBuffer-backed) and runs every allocator,
//   so loading is synchronous and needs no messages: fill() writes straight into the memory of
//   the worker that will compute on those rows.
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
import { Worker } from 'node:worker_threads';
import { EngineError } from '../../shared/errors.js';
import { rowBytes } from '../gguf/ggml-types.js';
import { Arena, newSharedMemory } from '../wasm/arena.js';
import { exportedFunctions, KernelInstance } from '../wasm/instance.js';
import { actBytes, gemmScratchBytes, kernelType, rowGroup, rowLayout, storedRowBytes, widenBytes, type ActKind, type KernelType } from '../wasm/layout.js';
import { loadKernelModule, type LoadOptions } from '../wasm/loader.js';
import { CTRL, JOBK, POOL_WORKER_SOURCE, runJobs } from './pool-worker.js';
import { createPoolAttention } from './pool-attention.js';
import { addInto } from './vec.js';
import { mergeSliceTops, type LogitStats, type SliceTop } from './logit-stats.js';
import type { AttentionShape, FillFn, MatBackend, SplitAttention, WaitMeter, WeightHandle, WeightSpec } from './types.js';
import { checkShapes, kernelFor } from './wasm.js';

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

/** One memory holding rows of every weight: part p lives on thread host = ⌊p / shards⌋, as its instance number slot. */
interface Part {
  readonly arena: Arena;
  readonly host: number;
  /** Its kernels are fns[slot · exports + i] on its thread (runJobs). */
  readonly slot: number;
}

/** One computing thread: index 0 is the calling thread, the others are workers. */
interface Host {
  readonly worker?: Worker;
  readonly ctrl?: Int32Array;
  seq: number;
  /** A job was started and not yet waited for. */
  busy: boolean;
}

/**
 * The rows [r0, r1) of a weight held by part `part`, starting at byte `ptr` of its memory; of them
 * [k0, k1) are its own (its core), the rest lie in the bands it shares with its neighbours.
 */
interface Slice {
  readonly part: number;
  readonly r0: number;
  readonly r1: number;
  readonly k0: number;
  readonly k1: number;
  readonly ptr: number;
}

/**
 * Rows [s, e) held by both part b and part b + 1 (b: its index in PoolWeight.bands), computed by
 * whichever gets there first, in `count` chunks of `ch` rows (a multiple of 4) claimed from both
 * ends (pool-worker.ts runJobs: BAND).
 */
interface Band {
  readonly s: number;
  readonly e: number;
  readonly ch: number;
  readonly count: number;
  /** The same band in at most BAND_CHUNKS chunks, for matvecTop (its sampling stats are per chunk, and cost more in small ones). */
  readonly coarse: { readonly ch: number; readonly count: number };
}

interface PoolWeight extends WeightHandle {
  readonly kt: KernelType;
  readonly rowBytes: number;
  readonly slices: readonly Slice[];
  /** Per boundary between parts b and b + 1, the rows they share (null: a fixed split there; none: everywhere). */
  readonly bands: readonly (Band | null)[] | null;
  /** The last one-token plan whose first weight this is (a forward pass repeats the same sets). */
  plan: Plan | null;
  /** As the first weight of a set with biases (matmulShared): their copies per part (biasCopies). */
  bias: BiasCopies | null;
}

/**
 * The biases of a set of weights in each part's memory: per part p, at ptrs[p], the bias values of
 * p's rows of every weight in turn (as its outputs lie), `bytes` long (0: p holds no rows).
 */
interface BiasCopies {
  readonly arrays: readonly Float32Array[];
  readonly ptrs: readonly number[];
  readonly bytes: readonly number[];
}

type Kernel = (...args: number[]) => number;

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

/** Weight i's rows on one part in a round trip: held rows `slice`, outputs [n, lr] f32 at `out` in its memory. */
interface PartOut {
  readonly i: number;
  readonly part: number;
  readonly slice: Slice;
  readonly lr: number;
  readonly out: number;
  readonly local: Float32Array;
}

/** A part's copy of a round trip's input, in its memory (every part but 0). */
interface InputCopy {
  /** Where its copy of the quantised activations goes, for one token. */
  readonly xq: Uint8Array;
  /** For a batch, where its copy of x goes instead (it quantises and widens its own, in parallel). */
  readonly x: Float32Array | null;
}

/** One worker's share of a round trip. */
interface WorkerStep {
  readonly host: number;
  readonly ctrl: Int32Array;
  /** Its parts' jobs as control-block words (CTRL.JOB per job), copied in as they are. */
  readonly words: Int32Array;
  readonly nj: number;
  readonly copies: readonly InputCopy[];
}

/** A piece of rows whose sampling stats one part wrote (matvecTop): views on them, and the row range. */
interface StatsSlot {
  readonly top: SliceTop;
  readonly f32: Float32Array;
  readonly f64: Float64Array;
}

/**
 * A prepared round trip: everything run() derives from the weights alone (region layout, job
 * words, kernels, views), so a generated token's products allocate nothing. Built on first use;
 * the addresses assume each part's scratch region where it was (`bases`): if a region grew and
 * moved, the plan is built again.
 */
interface Plan {
  readonly ws: readonly PoolWeight[];
  readonly n: number;
  readonly gated: boolean;
  /** Scratch bytes and base per part (0 bytes: the part takes no rows). */
  readonly bytes: readonly number[];
  readonly bases: readonly number[];
  /** This thread's region: [x f32 (when x is elsewhere)][xq per activation kind][own outputs][gemm scratch][stats]. */
  readonly x: Float32Array;
  readonly xqPtr: number;
  readonly xq: Uint8Array;
  /** Per activation kind: quantise into xqPtr + at (ab bytes per token), then widen when `widen`. */
  readonly quant: readonly { quantize: Kernel; widen: Kernel | null; at: number; ab: number }[];
  /** This thread's jobs (runJobs) from CTRL.JOBS, and the words holding weight i's output base (local, or the caller's array when direct). */
  readonly ownWords: Int32Array;
  readonly ownNj: number;
  readonly ownRefs: readonly { pos: number; i: number; local: number }[];
  /** The input copies of this thread's other parts (shards), made before its jobs run. */
  readonly ownCopies: readonly InputCopy[];
  readonly outs: readonly PartOut[];
  readonly workers: readonly WorkerStep[];
  /** The claim words of the bands this round trip uses, and their start (count << 16: all chunks free). */
  readonly resets: readonly { word: number; v: number }[];
  /** matvecTop (want > 0): per part its stats slots (core, right band chunks, left band chunks), and a selection in row order. */
  readonly want: number;
  readonly slots: readonly (readonly StatsSlot[])[];
  readonly sel: SliceTop[];
  readonly pos: Int32Array;
  /** The biases every thread adds to its rows (one token), or null. */
  readonly bias: BiasCopies | null;
  /** Per unit (plan()) and boundary, the band as this round trip chunks it (null: none). */
  readonly bands: readonly (readonly (Band | null)[])[];
}

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

/**
 * Chunks a band is cut into, at least (while it has that many blocks of 4 rows), so the thread
 * that is ahead takes it in small steps; and at most CHUNK_BYTES of weights in a chunk, so the
 * other never waits long for the last one (a big matrix's band takes more chunks).
 */
const BAND_CHUNKS = 16;
const CHUNK_BYTES = 128 * 1024;

/** Default share of every weight's rows held by two threads (PoolOptions.band). */
export const BAND = 0.125;

/**
 * How a weight of `rows` rows is shared among p parts: part i holds rows held[i] and owns core[i].
 * With band > 0, each of the p − 1 boundaries between parts b and b + 1 becomes bands[b]:
 * band × rows / (p − 1) rows around the even split (at most half a part's share), in whole blocks
 * of 4 rows (a multiple of any row group and of the kernels' row blocks), held by both and claimed
 * at run time: band × rows are held twice in all. Without bands (band 0, one part, or too few
 * rows) the even split in units of `unit` rows. rowBytes sizes the chunks. With `shards` parts per
 * thread, only the boundaries between threads (b + 1 a multiple of shards) get bands: the others
 * are fixed cuts at the even split (kept between the bands around them).
 */
export function splitRows(rows: number, unit: number, p: number, band: number, rowBytes: number, shards = 1): { held: [number, number][]; core: [number, number][]; bands: (Band | null)[] | null } {
  const units = Math.ceil(rows / unit);
  const even = (i: number) => Math.min(rows, unit * (i * Math.floor(units / p) + Math.min(i, units % p)));
  const blocks = Math.ceil(rows / 4);
  const threads = Math.ceil(p / shards);
  const bb = threads > 1 ? Math.min(Math.floor((blocks * Math.max(0, band)) / (threads - 1)), Math.floor(blocks / p / 2)) : 0; // blocks per band
  if (bb < 1) {
    const cuts = Array.from({ length: p }, (_, i): [number, number] => [even(i), even(i + 1)]);
    return { held: cuts, core: cuts, bands: null };
  }
  const bands: (Band | null)[] = [];
  for (let b = 0; b < p - 1; b++) {
    if ((b + 1) % shards !== 0) {
      bands.push(null);
      continue;
    }
    const s = 4 * (Math.round((blocks * (b + 1)) / p) - (bb >> 1));
    const e = Math.min(rows, s + 4 * bb);
    const big = 4 * Math.ceil(bb / BAND_CHUNKS);
    const ch = Math.min(big, 4 * Math.max(1, Math.floor(CHUNK_BYTES / (4 * rowBytes))));
    bands.push({ s, e, ch, count: Math.ceil((e - s) / ch), coarse: { ch: big, count: Math.ceil((e - s) / big) } });
  }
  // every boundary as rows [s, e) held by both sides (a fixed cut: s = e), in order
  const cuts: { s: number; e: number }[] = [];
  for (let b = 0; b < p - 1; b++) {
    const bd = bands[b];
    if (bd) {
      cuts.push(bd);
      continue;
    }
    const after = bands.find((bd, c) => c > b && bd !== null);
    const c = Math.min(after ? after.s : rows, Math.max(b > 0 ? cuts[b - 1].e : 0, even(b + 1)));
    cuts.push({ s: c, e: c });
  }
  const held = Array.from({ length: p }, (_, i): [number, number] => [i > 0 ? cuts[i - 1].s : 0, i < p - 1 ? cuts[i].e : rows]);
  const core = Array.from({ length: p }, (_, i): [number, number] => [i > 0 ? cuts[i - 1].e : 0, i < p - 1 ? cuts[i].s : rows]);
  return { held, core, bands };
}

export class PoolBackend implements MatBackend {
  readonly name: string;
  waitMeter: WaitMeter | null = null;
  readonly threads: number;
  private readonly main: KernelInstance;
  private readonly parts: Part[];
  private readonly hosts: Host[];
  /** Parts per thread (PoolOptions.shards). */
  readonly shards: number;
  private readonly fnIndex: Map<string, number>;
  private readonly spin: number;
  private readonly band: number;
  /** Claim words of the bands (runJobs: BAND), MAXJOBS per boundary between parts, shared by every thread. */
  private readonly claims: Int32Array;
  /** Every export, by index (fnIndex), on this thread's instances in turn (Part.slot): what runJobs calls here. */
  private readonly fns: Kernel[];
  /** Jobs a control block holds (CTRL.CAP per part of a thread). */
  private readonly cap: number;
  /** This thread's spin budget (µs), between 0 and spin. */
  private budget: number;
  private readonly timeoutMs: number;
  private bytes = 0;
  private nextId = 0;
  private disposed = false;
  /** Buffers known to be (mainBuffers) or not to be (otherBuffers) this thread's memory (inKernelMemory). */
  private readonly mainBuffers: ArrayBufferLike[] = [];
  private readonly otherBuffers = new WeakSet<ArrayBufferLike>();
  /** A word of this thread's memory that inKernelMemory writes to tell its buffers apart. */
  private readonly probe: number;
  private readonly addF32: Kernel;

  constructor(opts: PoolOptions = {}) {
    const km = loadKernelModule(opts);
    this.main = new KernelInstance(km);
    this.threads = Math.max(1, Math.floor(opts.threads ?? availableParallelism()));
    this.shards = Math.max(1, Math.floor(opts.shards ?? 1));
    this.spin = Math.max(0, Math.floor(opts.spin ?? SPIN_US));
    this.band = opts.band ?? BAND;
    const P = this.threads * this.shards;
    this.cap = CTRL.CAP * this.shards;
    this.claims = new Int32Array(new SharedArrayBuffer(Math.max(1, P - 1) * CTRL.MAXJOBS * 4));
    this.budget = this.spin;
    this.timeoutMs = opts.timeoutMs ?? 60000;
    this.name = `wasm-${km.simd}-pool`;
    const names = exportedFunctions(km.module);
    this.fnIndex = new Map(names.map((n, i) => [n, i]));
    // (a template job's kernel index has 16 bits: pool-worker.ts runJobs)
    if (names.length * this.shards > 0xffff) throw new EngineError('POOL_START', `${this.shards} memories per thread are more than the pool can address; use more threads`);
    // this thread's parts: its own instance, then one more per shard
    const own = [this.main, ...Array.from({ length: this.shards - 1 }, () => new KernelInstance(km))];
    this.fns = own.flatMap((inst) => names.map((n) => inst.kernel(n)));
    this.parts = own.map((inst, slot) => ({ arena: inst.arena, host: 0, slot }));
    this.hosts = [{ seq: 0, busy: false }];
    this.addF32 = this.main.kernel('add_f32');
    this.probe = this.main.arena.alloc(4, 4);
    const base = this.main.heapBase;
    for (let t = 1; t < this.threads; t++) {
      const memories = Array.from({ length: this.shards }, () => newSharedMemory(base));
      const ctrlBuf = new SharedArrayBuffer((CTRL.JOBS + this.cap * CTRL.JOB) * 4);
      const worker = new Worker(POOL_WORKER_SOURCE, { eval: true, workerData: { module: km.module, memories, ctrl: ctrlBuf, claims: this.claims.buffer, names, spin: this.spin } });
      worker.unref(); // an idle pool must not keep the process alive
      this.hosts.push({ worker, ctrl: new Int32Array(ctrlBuf), seq: 0, busy: false });
      memories.forEach((memory, slot) => this.parts.push({ arena: new Arena(memory, base), host: t, slot }));
    }
    if (opts.memoryBytes !== undefined) for (const p of this.parts) p.arena.limit = Math.min(p.arena.limit, opts.memoryBytes);
    for (let i = 1; i < this.hosts.length; i++) {
      const c = this.hosts[i].ctrl!;
      if (Atomics.wait(c, CTRL.STATE, 0, this.timeoutMs) === 'timed-out' || c[CTRL.STATE] !== 1) {
        this.dispose();
        throw new EngineError('POOL_START', `worker ${i} of the WebAssembly pool did not start; run with fewer threads or use the single-thread WebAssembly backend`);
      }
    }
  }

  get kernels(): KernelInstance {
    return this.main;
  }

  supports(type: number): boolean {
    return kernelType(type) !== undefined;
  }

  addWeight(spec: WeightSpec, fill: FillFn): WeightHandle {
    const kt = kernelFor(spec);
    const rb = storedRowBytes(spec.type, spec.cols);
    const fileRb = rowBytes(spec.type, spec.cols);
    const slices: Slice[] = [];
    const p = this.parts.length;
    const { held, core, bands } = splitRows(spec.rows, rowGroup(spec.type), p, this.band, rb, this.shards);
    const lay = rowLayout(spec.type, spec.cols);
    const slack = lay ? lay.slack : 0;
    const own: [number, number[]][] = []; // this thread's layout jobs (part slot, arguments)
    const jobs: number[][] = this.hosts.map(() => []); // each worker's layout jobs, as control-block words
    for (let i = 0; i < p; i++) {
      const [r0, r1] = held[i];
      if (r1 === r0) continue;
      const arena = this.parts[i].arena;
      const size = (r1 - r0) * rb;
      const ptr = arena.alloc(size + slack);
      fill(arena.u8(ptr + slack, (r1 - r0) * fileRb), r0 * fileRb);
      // the stored layout (F16, Q4_0: rowLayout), by the thread owning the memory: the workers'
      // slices start here, this thread's after the loop, so they run together
      if (lay) {
        const args = lay.args(ptr, ptr + slack, r1 - r0);
        const { host, slot } = this.parts[i];
        if (host === 0) own.push([slot, args]);
        else {
          const words = jobs[host];
          words.push(this.fnId(lay.fn) + slot * this.fnIndex.size, ...args);
          while (words.length % CTRL.JOB !== 0) words.push(0);
        }
      }
      slices.push({ part: i, r0, r1, k0: core[i][0], k1: core[i][1], ptr: ptr + rb - fileRb });
      this.bytes += rb * (r1 - r0);
    }
    for (let t = 1; t < this.hosts.length; t++) {
      if (jobs[t].length === 0) continue;
      this.hosts[t].ctrl!.set(jobs[t], CTRL.JOBS);
      this.start(t, jobs[t].length / CTRL.JOB);
    }
    if (lay) for (const [slot, args] of own) this.fns[this.fnId(lay.fn) + slot * this.fnIndex.size](...args);
    this.waitAll();
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
    if (had) had.ptrs.forEach((ptr, p) => had.bytes[p] > 0 && this.parts[p].arena.free(ptr, had.bytes[p]));
    const bytes = this.parts.map((_, p) => 4 * ws.reduce((c, w) => c + this.rowsOf(w, p), 0));
    const ptrs = this.parts.map((part, p) => {
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
    return createPoolAttention(this, shape, positions);
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
    if (this.inKernelMemory(x)) {
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
    runJobs(ow, plan.ownNj, this.fns, this.claims);
    if (this.waitMeter) {
      const t0 = performance.now();
      this.waitAll();
      this.waitMeter.addWait(performance.now() - t0);
    } else this.waitAll();
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
        if (s.part === 0 && this.inKernelMemory(out)) this.addF32(out.byteOffset + lo * 4, po.out + (lo - s.r0) * 4, hi - lo);
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
    for (const r of plan.resets) Atomics.store(this.claims, r.word, r.v);
    for (const wk of plan.workers) {
      for (const c of wk.copies) copyInput(c, plan, x);
      wk.ctrl.set(wk.words, CTRL.JOBS);
      this.start(wk.host, wk.nj);
    }
  }

  /** Where the rows of w end that part b computed, b's rows meeting b + 1's (fixed: a part's core end `fixed`). */
  private split(plan: Plan, b: number, u: number, fixed: number): number {
    const band = b < this.parts.length - 1 ? plan.bands[u][b] : null;
    if (!band) return fixed;
    return Math.min(band.e, band.s + (this.claims[b * CTRL.MAXJOBS + u] & 0xffff) * band.ch);
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
      const band = p < this.parts.length - 1 ? plan.bands[0][p] : null;
      if (!band) continue;
      const taken = this.claims[p * CTRL.MAXJOBS] & 0xffff;
      const rightOfNext = p + 1 < this.parts.length - 1 ? plan.bands[0][p + 1]?.count ?? 0 : 0;
      for (let k = 0; k < band.count; k++) takeStats(sel, k < taken ? slots[1 + k] : plan.slots[p + 1][1 + rightOfNext + k]);
    }
  }

  /** Whether this thread writes weight i's rows straight into `out` (one token, out in its memory; not the up of a gated pair, not added). */
  private direct(out: Float32Array, n: number, gated: boolean, i: number, add = false): boolean {
    return n === 1 && !add && !(gated && i > 0) && this.inKernelMemory(out);
  }

  /** The plan for these weights: a one-token plan is kept on the first weight, a batch's built each time. */
  private planFor(ws: PoolWeight[], n: number, gated: boolean, want: number, bias: BiasCopies | null): Plan {
    let plan = n === 1 ? ws[0].plan : null;
    let same = plan !== null && plan.gated === gated && plan.want === want && plan.bias === bias && plan.ws.length === ws.length;
    for (let i = 1; same && i < ws.length; i++) same = plan!.ws[i] === ws[i];
    if (plan && same) {
      let moved = false;
      for (let p = 0; p < this.parts.length; p++) if (plan.bytes[p] > 0 && this.parts[p].arena.scratch(plan.bytes[p]) !== plan.bases[p]) moved = true;
      if (!moved) return plan;
    }
    plan = this.plan(ws, n, gated, want, bias);
    if (n === 1) ws[0].plan = plan;
    return plan;
  }

  private plan(ws: PoolWeight[], n: number, gated: boolean, want: number, bias: BiasCopies | null): Plan {
    if (want > 0 && (n !== 1 || gated || ws.length !== 1)) throw new Error('sampling stats are for one weight and one token');
    if (bias && (n !== 1 || gated)) throw new Error('biases are folded for one token');
    const cols = ws[0].spec.cols;
    const P = this.parts.length;
    const sliceOf = (w: PoolWeight, p: number) => w.slices.find((s) => s.part === p);
    if (gated) {
      const [g, u] = ws;
      const same = g.slices.length === u.slices.length && g.slices.every((s, j) => {
        const t = u.slices[j];
        return s.part === t.part && s.r0 === t.r0 && s.r1 === t.r1 && s.k0 === t.k0 && s.k1 === t.k1;
      }) && JSON.stringify(g.bands) === JSON.stringify(u.bands);
      if (!same) throw new EngineError('BAD_SHAPE', `tensors "${g.spec.name}" and "${u.spec.name}" are split differently among threads`);
    }
    // the activation kinds, and where each weight's quantised x sits in the xq region
    // (for a batch on a gemm kernel, the activation's widened copy follows its quantised rows)
    const kinds: { act: ActKind; at: number; ab: number; wide: boolean }[] = [];
    const kindOf: number[] = [];
    let xqBytes = 0;
    for (let i = 0; i < ws.length; i++) {
      const { spec, kt } = ws[i];
      if (spec.cols !== cols) throw new EngineError('BAD_SHAPE', `tensors "${ws[0].spec.name}" and "${spec.name}" do not take the same input`);
      let k = kinds.findIndex((c) => c.act === kt.act);
      if (k < 0) {
        const wide = n > 1 && ws.some((w) => w.kt.act === kt.act && w.kt.gemm);
        k = kinds.push({ act: kt.act, at: xqBytes, ab: actBytes(kt.act, cols), wide }) - 1;
        xqBytes += n * actBytes(kt.act, cols) + (wide ? widenBytes(kt.act, n, cols) : 0);
      }
      kindOf.push(k);
    }
    const gs = n > 1 && ws.some((w) => w.kt.gemm) ? gemmScratchBytes(cols) : 0;
    const outBytes = (p: number) => ws.reduce((b, w) => {
      const s = sliceOf(w, p);
      return b + (s ? n * (s.r1 - s.r0) * 4 : 0);
    }, 0);
    // the units of work (gated: gate and up together, split alike; otherwise each weight), and
    // their bands: right of part p is boundary p, left is p − 1; claim word b·MAXJOBS + unit
    const units: number[][] = gated ? [[0, 1]] : ws.map((_, i) => [i]);
    // (matvecTop: the coarse chunks, see Band)
    const bands = units.map((unit) => Array.from({ length: Math.max(0, P - 1) }, (_, b) => {
      const band = ws[unit[0]].bands?.[b];
      return band && want > 0 ? { ...band, ...band.coarse } : band ?? null;
    }));
    const bandAt = (u: number, b: number): Band | null => (b >= 0 && b < P - 1 ? bands[u][b] : null);
    // matvecTop's results per stats slot: f32 max, f64 sum at 8, i32 ids from 16 (sample_slice_top);
    // slots per part: core, its right band's chunks, its left band's chunks
    const sb = want > 0 ? 32 + Math.ceil(want / 4) * 16 : 0;
    const slotCount = (p: number) => (want > 0 && sliceOf(ws[0], p) ? 1 + (bandAt(0, p)?.count ?? 0) + (bandAt(0, p - 1)?.count ?? 0) : 0);
    const align16 = (at: number) => Math.ceil(at / 16) * 16;
    // every part's region: this thread [x f32][xq][outputs][gemm scratch][stats], a worker
    // [xq][gemm scratch][outputs][stats][x f32, for a batch]
    const xWorker = n > 1 ? n * cols * 4 + 16 : 0;
    const bytes = this.parts.map((_, p) => (p === 0 ? n * cols * 4 + xqBytes + outBytes(0) + gs : outBytes(p) > 0 ? xqBytes + gs + outBytes(p) + xWorker : 0) + (slotCount(p) > 0 ? 16 + slotCount(p) * sb : 0));
    const bases = bytes.map((b, p) => (b > 0 ? this.parts[p].arena.scratch(b) : 0));
    const a = this.main.arena;
    const xqPtr = bases[0] + n * cols * 4;
    const outsAll: PartOut[] = [];
    const slots: StatsSlot[][] = [];
    const resets: { word: number; v: number }[] = [];
    for (let u = 0; u < units.length; u++) for (let b = 0; b < P - 1; b++) {
      const band = bandAt(u, b);
      if (band) resets.push({ word: b * CTRL.MAXJOBS + u, v: band.count << 16 });
    }
    // per thread, its parts' jobs in part order, the left bands (BAND from the high end) of all
    // after the rest so a thread first does the rows no other can; and its parts' input copies
    const early: number[][] = this.hosts.map(() => []), late: number[][] = this.hosts.map(() => []);
    const copies: InputCopy[][] = this.hosts.map(() => []);
    const ownRefs: { pos: number; i: number; local: number }[] = [];
    for (let p = 0; p < P; p++) {
      slots.push([]);
      if (bytes[p] === 0) continue;
      const { arena, host, slot } = this.parts[p];
      const off = slot * this.fnIndex.size; // this part's kernels among its thread's (Part.slot)
      const base = bases[p];
      const xqAt = p === 0 ? xqPtr : base;
      const scratch = p === 0 ? xqPtr + xqBytes + outBytes(0) : base + xqBytes;
      let at = p === 0 ? xqPtr + xqBytes : scratch + gs;
      // weight i's outputs on this part, one after another (as its bias copy lies)
      const outAt: number[] = [];
      const lrs: number[] = [];
      ws.forEach((w, i) => {
        const s = sliceOf(w, p);
        if (!s) return;
        const lr = s.r1 - s.r0;
        outAt[i] = at;
        lrs[i] = lr;
        outsAll.push({ i, part: p, slice: s, lr, out: at, local: arena.f32(at, n * lr) });
        at += n * lr * 4;
      });
      const statsAt = align16(p === 0 ? scratch + gs : at);
      for (let k = 0; k < slotCount(p); k++) {
        const sat = statsAt + k * sb;
        slots[p].push({ top: { r0: 0, n: 0, max: 0, sum: 0, ids: new Int32Array(arena.memory.buffer, sat + 16, want) }, f32: arena.f32(sat, 1), f64: new Float64Array(arena.memory.buffer, sat, 2) });
      }
      // the job words: per unit its core (PIECE), then the right bands, then the left bands (BAND),
      // each followed by the unit's templates (part 0 comes first on its thread, with no left band:
      // its refs are positions in this thread's list)
      let words = early[host];
      const refs: { pos: number; i: number; local: number }[] = [];
      const put = (fn: number, args: number[], outRefs: [number, number][] = []) => {
        for (const [k, i] of outRefs) refs.push({ pos: CTRL.JOBS + words.length + 1 + k, i, local: outAt[i] });
        words.push(fn >= 0 ? fn + off : fn, ...args.map((v) => v | 0));
        while (words.length % CTRL.JOB !== 0) words.push(0);
      };
      const templates = (u: number, statsBase: number) => {
        const s0 = sliceOf(ws[units[u][0]], p)!;
        for (const i of units[u]) {
          const w = ws[i], s = sliceOf(w, p)!, lr = lrs[i];
          const { at: kat, ab } = kinds[kindOf[i]];
          const xq = xqAt + kat;
          let name: string, a8 = 0, a9 = 0, xin = xq;
          if (n === 1) name = `matvec_${w.kt.suffix}`;
          else if (w.kt.gemm) [name, a8, a9, xin] = [`gemm_${w.kt.suffix}`, lr, scratch, xq + n * ab];
          else [name, a8, a9] = [`matmul_${w.kt.suffix}`, ab, lr];
          put(this.fnId(name) | (JOBK.PRODUCT << JOBK.MODE_SHIFT), [outAt[i], s.ptr, w.rowBytes, 0, 0, xin, cols, n, a8, a9], [[0, i]]);
        }
        if (gated) {
          const lr = s0.r1 - s0.r0;
          if (n === 1) put(this.fnId('swiglu') | (JOBK.ROWS3 << JOBK.MODE_SHIFT), [outAt[0], outAt[0], outAt[1]], [[0, 0], [1, 0]]);
          else put(this.fnId('swiglu') | (JOBK.TOKENS3 << JOBK.MODE_SHIFT), [outAt[0], outAt[0], outAt[1], 0, n, lr]);
        }
        if (bias) {
          const i = units[u][0];
          let off = 0;
          for (let j = 0; j < i; j++) off += lrs[j] ?? 0;
          put(this.fnId('add_f32') | (JOBK.ROWS2 << JOBK.MODE_SHIFT), [outAt[i], bias.ptrs[p] + off * 4], [[0, i]]);
        }
        if (want > 0) put(this.fnId('sample_slice_top') | (JOBK.STATS << JOBK.MODE_SHIFT), [statsBase, outAt[0], 0, want, sb], [[1, 0]]);
      };
      // a worker's batch: first quantise (and widen) its copy of x, kind by kind
      const xAt = align16(statsAt + slotCount(p) * sb);
      if (p > 0 && n > 1) {
        for (const k of kinds) {
          put(this.fnId(`quantize_rows_${k.act}`), [xqAt + k.at, xAt, cols, n, k.ab]);
          if (k.wide) put(this.fnId(`widen_${k.act}`), [xqAt + k.at + n * k.ab, xqAt + k.at, n, cols, k.ab]);
        }
      }
      const perUnit = units[0].length + (gated ? 1 : 0) + (bias ? 1 : 0) + (want > 0 ? 1 : 0);
      const rightCount = bandAt(0, p)?.count ?? 0;
      for (let u = 0; u < units.length; u++) {
        const s = sliceOf(ws[units[u][0]], p);
        if (!s || s.k1 <= s.k0) continue;
        put(JOBK.PIECE, [s.k0 - s.r0, s.k1 - s.r0, 0, 0, 0, perUnit]);
        templates(u, statsAt);
      }
      for (let u = 0; u < units.length; u++) {
        const s = sliceOf(ws[units[u][0]], p), band = bandAt(u, p);
        if (!s || !band) continue;
        put(JOBK.BAND, [p * CTRL.MAXJOBS + u, 0, band.ch, band.s - s.r0, band.e - s.r0, perUnit]);
        templates(u, statsAt + sb);
      }
      words = late[host];
      for (let u = 0; u < units.length; u++) {
        const s = sliceOf(ws[units[u][0]], p), band = bandAt(u, p - 1);
        if (!s || !band) continue;
        put(JOBK.BAND, [(p - 1) * CTRL.MAXJOBS + u, 1, band.ch, band.s - s.r0, band.e - s.r0, perUnit]);
        templates(u, statsAt + (1 + rightCount) * sb);
      }
      if (p === 0) ownRefs.push(...refs);
      else copies[host].push({ xq: arena.u8(base, xqBytes), x: n > 1 ? arena.f32(xAt, n * cols) : null });
    }
    const workers: WorkerStep[] = [];
    let ownWords = new Int32Array(0), ownNj = 0;
    for (let t = 0; t < this.hosts.length; t++) {
      const words = [...early[t], ...late[t]];
      const nj = words.length / CTRL.JOB;
      if (nj > this.cap) throw new Error(`a round trip of ${nj} jobs exceeds the control block (${this.cap})`);
      if (t === 0) {
        ownWords = new Int32Array(CTRL.JOBS + words.length);
        ownWords.set(words, CTRL.JOBS);
        ownNj = nj;
      } else if (nj > 0) {
        workers.push({ host: t, ctrl: this.hosts[t].ctrl!, words: Int32Array.from(words), nj, copies: copies[t] });
      }
    }
    const quant = kinds.map((k) => ({ quantize: this.main.kernel(`quantize_${k.act}`), widen: k.wide ? this.main.kernel(`widen_${k.act}`) : null, at: k.at, ab: k.ab }));
    // the stats pieces' rows, fixed per slot (which part's slot is read is decided per run)
    if (want > 0) {
      const w = ws[0];
      for (const s of w.slices) {
        const p = s.part, right = bandAt(0, p), left = bandAt(0, p - 1);
        const setTop = (k: number, r0: number, r1: number) => Object.assign(slots[p][k].top, { r0, n: r1 - r0 });
        setTop(0, s.k0, s.k1);
        for (let k = 0; right && k < right.count; k++) setTop(1 + k, right.s + k * right.ch, Math.min(right.e, right.s + (k + 1) * right.ch));
        for (let k = 0; left && k < left.count; k++) setTop(1 + (right?.count ?? 0) + k, left.s + k * left.ch, Math.min(left.e, left.s + (k + 1) * left.ch));
      }
    }
    const maxSel = slots.reduce((c, sl) => c + sl.length, 0);
    return { ws: ws.slice(), n, gated, bytes, bases, x: a.f32(bases[0], n * cols), xqPtr, xq: a.u8(xqPtr, xqBytes), quant, ownWords, ownNj, ownRefs, ownCopies: copies[0], outs: outsAll, workers, resets, want, slots, sel: [], pos: new Int32Array(maxSel), bias, bands };
  }

  /**
   * on: a forward pass begins, workers poll for their next job instead of sleeping between jobs;
   * off: it ended, they sleep (an idle pool takes no CPU).
   */
  hold(on: boolean): void {
    for (let t = 1; t < this.hosts.length; t++) Atomics.store(this.hosts[t].ctrl!, CTRL.HOT, on && this.spin > 0 ? 1 : 0);
  }

  /** Rows of `w` that part `p` holds. */
  private rowsOf(w: PoolWeight, p: number): number {
    const s = w.slices.find((sl) => sl.part === p);
    return s ? s.r1 - s.r0 : 0;
  }

  // ---- for pool-attention.ts -----------------------------------------------------------------

  // (attention splits by thread: its "part" p is thread p and that thread's first memory)

  /** Threads that compute (the calling thread is part 0). */
  get partCount(): number {
    return this.hosts.length;
  }

  /** Thread p's first memory and allocator. */
  arenaOf(p: number): Arena {
    return this.parts[p * this.shards].arena; // (its first memory: startJob's kernels run on it)
  }

  /** The index of export `name`, for startJob. */
  fnId(name: string): number {
    const i = this.fnIndex.get(name);
    if (i === undefined) throw new Error(`the kernel module has no export "${name}"`);
    return i;
  }

  /** Run export number `fn` (fnId) with one i32 argument on worker p (p ≥ 1), without waiting. */
  startJob(p: number, fn: number, arg: number): void {
    const c = this.hosts[p].ctrl!;
    c[CTRL.JOBS] = fn;
    c[CTRL.JOBS + 1] = arg;
    this.start(p, 1);
  }

  /** True when v is a view on the calling thread's kernel memory (kernels can read and write it in place). */
  inKernelMemory(v: Float32Array): boolean {
    const b = v.buffer;
    const bufs = this.mainBuffers;
    for (let i = bufs.length - 1; i >= 0; i--) if (bufs[i] === b) return true;
    if (!(b instanceof SharedArrayBuffer) || this.otherBuffers.has(b)) return false;
    // A buffer not seen before. A grown memory hands out a new buffer object while views made on
    // the old one still see the same bytes, so identity with memory.buffer is not enough: write
    // two values to the probe word through this memory and see whether b shows them.
    let mine = b.byteLength >= this.probe + 4;
    if (mine) {
      const cell = new Int32Array(this.main.arena.memory.buffer, this.probe, 1);
      const seen = new Int32Array(b, this.probe, 1);
      cell[0] = 0x5a5a1234;
      mine = seen[0] === 0x5a5a1234;
      cell[0] = 0x0f0f4321;
      mine = mine && seen[0] === 0x0f0f4321;
    }
    if (mine) bufs.push(b);
    else this.otherBuffers.add(b);
    return mine;
  }

  /** Wait for every worker with a job in flight. */
  waitAll(): void {
    for (let t = 1; t < this.hosts.length; t++) if (this.hosts[t].busy) this.wait(t);
  }

  getRow(out: Float32Array, w: WeightHandle, row: number): void {
    const { spec, kt, rowBytes: rb, slices } = w as PoolWeight;
    const s = slices.find((sl) => row >= sl.r0 && row < sl.r1);
    if (!s) throw new EngineError('BAD_SHAPE', `row ${row} is outside tensor "${spec.name}" (${spec.rows} rows)`);
    const a = this.main.arena;
    // the row's group of the stored layout (rowGroup) when the slice holds it whole, else the row alone
    const unit = rowGroup(spec.type), local = row - s.r0, g = local - (local % unit);
    const [first, count] = g + unit <= s.r1 - s.r0 ? [g, unit] : [local, 1];
    let src = s.ptr + first * rb;
    const len = (count - 1) * rb + rowBytes(spec.type, spec.cols); // what dequant reads (not an F16 row's bitmap)
    const tmp = a.scratch(len + 64 + spec.cols * 4);
    const o = tmp + Math.ceil(len / 64) * 64;
    if (s.part !== 0) {
      // The row lives in a worker's memory: copy its bytes here and dequantise on this thread.
      a.u8(tmp, len).set(this.parts[s.part].arena.u8(src, len));
      src = tmp;
    }
    this.main.dequantRow(kt, o, src, rb, count, local - first, spec.cols);
    out.set(a.f32(o, spec.cols));
  }

  weightBytes(): number {
    return this.bytes;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const p of this.hosts) {
      if (!p.worker || !p.ctrl) continue;
      p.ctrl[CTRL.NJOBS] = -1;
      Atomics.store(p.ctrl, CTRL.SEQ, ++p.seq);
      Atomics.notify(p.ctrl, CTRL.SEQ);
      void p.worker.terminate();
    }
    this.bytes = 0;
  }

  /** Wake worker `part` to run its `nj` jobs. */
  private start(part: number, nj: number): void {
    if (this.disposed) throw new EngineError('POOL_DISPOSED', 'the WebAssembly pool was disposed; create a new backend');
    const p = this.hosts[part];
    const c = p.ctrl!;
    c[CTRL.NJOBS] = nj;
    p.busy = true;
    Atomics.store(c, CTRL.SEQ, ++p.seq);
    if (Atomics.load(c, CTRL.SLEEP) === 1) Atomics.notify(c, CTRL.SEQ); // (pool-worker.ts: SLEEP)
  }

  /** Block until worker `part` has finished its last job. */
  private wait(part: number): void {
    const p = this.hosts[part];
    const c = p.ctrl!;
    p.busy = false;
    let done = Atomics.load(c, CTRL.DONE);
    if (done !== p.seq && this.budget > 0) {
      // as the workers do (pool-worker.ts): poll up to budget µs, adapting it to how often that pays
      const until = performance.now() + this.budget / 1000;
      for (let i = 1; done !== p.seq; i++) {
        done = Atomics.load(c, CTRL.DONE);
        if ((i & 63) === 0 && performance.now() > until) break;
      }
      if (done === p.seq) this.budget = Math.min(this.spin, this.budget + (this.spin >> 3));
      else this.budget = Math.max(this.budget >> 1, this.spin >> 5);
    }
    const deadline = Date.now() + this.timeoutMs;
    if (done !== p.seq) {
      Atomics.store(c, CTRL.WAIT, 1); // the worker now notifies when it is done
      try {
        while (done !== p.seq) {
          const left = deadline - Date.now();
          if (left <= 0) throw new EngineError('POOL_TIMEOUT', `worker ${part} of the WebAssembly pool stopped answering; reload the model`);
          Atomics.wait(c, CTRL.DONE, done, left);
          done = Atomics.load(c, CTRL.DONE);
        }
      } finally {
        Atomics.store(c, CTRL.WAIT, 0);
      }
    }
    if (c[CTRL.ERR]) throw new EngineError('POOL_KERNEL', `a kernel failed on worker ${part} of the WebAssembly pool; reload the model`);
  }
}
