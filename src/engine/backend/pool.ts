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

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { EngineError } from '../../shared/errors.js';
import { rowBytes } from '../gguf/ggml-types.js';
import { Arena, newSharedMemory } from '../wasm/arena.js';
import { exportedFunctions, KernelInstance } from '../wasm/instance.js';
import { actBytes, gemmScratchBytes, kernelType, rowGroup, rowLayout, storedRowBytes, widenBytes, type ActKind, type KernelType } from '../wasm/layout.js';
import { loadKernelModule, type LoadOptions } from '../wasm/loader.js';
import { CTRL, POOL_WORKER_SOURCE } from './pool-worker.js';
import { createPoolAttention } from './pool-attention.js';
import { addInto } from '../model/ops.js';
import { mergeSliceTops, type SliceTop } from '../sample/slices.js';
import type { AttentionShape, FillFn, LogitStats, MatBackend, SplitAttention, WeightHandle, WeightSpec } from './types.js';
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
}

/** One computing thread: index 0 is the calling thread, the others are workers. */
interface Part {
  readonly arena: Arena;
  readonly worker?: Worker;
  readonly ctrl?: Int32Array;
  seq: number;
  /** A job was started and not yet waited for. */
  busy: boolean;
}

/** The rows [r0, r1) of a weight held by part `part`, starting at byte `ptr` of its memory. */
interface Slice {
  readonly part: number;
  readonly r0: number;
  readonly r1: number;
  readonly ptr: number;
}

interface PoolWeight extends WeightHandle {
  readonly kt: KernelType;
  readonly rowBytes: number;
  readonly slices: readonly Slice[];
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

/** The calling thread's slice of weight i: kernel(out, ptr, rowBytes, 0, lr, xq, cols, n, a8, a9). */
interface OwnStep {
  readonly i: number;
  readonly kernel: Kernel;
  readonly ptr: number;
  readonly rowBytes: number;
  readonly r0: number;
  readonly lr: number;
  /** Its activation: quantised (matvec, matmul) or widened (gemm), in this thread's region. */
  readonly xq: number;
  readonly a8: number;
  readonly a9: number;
  /** Where it writes when it cannot write into the caller's output directly ([n, lr] f32). */
  readonly out: number;
  readonly local: Float32Array;
  /** Its rows' bias values in this thread's memory (0: none), added after the product. */
  readonly bias: number;
}

/** One worker's share of a round trip. */
interface WorkerStep {
  readonly part: number;
  readonly ctrl: Int32Array;
  /** Its jobs as control-block words (CTRL.JOB per job), copied in as they are. */
  readonly words: Int32Array;
  readonly nj: number;
  /** Where its copy of the quantised activations goes (a view on its memory). */
  readonly xq: Uint8Array;
  /** Its outputs: rows [r0, r0 + lr) of outs[i], [n, lr] f32 at `local`. */
  readonly gather: readonly { i: number; r0: number; lr: number; local: Float32Array }[];
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
  /** This thread's region: [x f32 (when x is elsewhere)][xq per activation kind][own outputs][gemm scratch]. */
  readonly x: Float32Array;
  readonly xqPtr: number;
  readonly xq: Uint8Array;
  /** Per activation kind: quantise into xqPtr + at (ab bytes per token), then widen when `widen`. */
  readonly quant: readonly { quantize: Kernel; widen: Kernel | null; at: number; ab: number }[];
  readonly own: readonly OwnStep[];
  readonly workers: readonly WorkerStep[];
  /**
   * matvecTop (want > 0): each part's sample_slice_top results at stats (this thread's at ownStats),
   * read back through f32 / f64 / i32 views into `slices` (row order) for mergeSliceTops.
   */
  readonly want: number;
  readonly ownStats: number;
  readonly stats: readonly { f32: Float32Array; f64: Float64Array }[];
  readonly slices: readonly SliceTop[];
  readonly pos: Int32Array;
  /** The biases every thread adds to its rows (one token), or null. */
  readonly bias: BiasCopies | null;
}

export class PoolBackend implements MatBackend {
  readonly name: string;
  readonly threads: number;
  private readonly main: KernelInstance;
  private readonly parts: Part[];
  private readonly fnIndex: Map<string, number>;
  private readonly spin: number;
  /** This thread's current spin budget (µs), between 0 and spin. */
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
  private readonly swiglu: Kernel;
  private readonly sliceTop: Kernel;
  private readonly addF32: Kernel;

  constructor(opts: PoolOptions = {}) {
    const km = loadKernelModule(opts);
    this.main = new KernelInstance(km);
    this.threads = Math.max(1, Math.floor(opts.threads ?? availableParallelism()));
    this.spin = Math.max(0, Math.floor(opts.spin ?? SPIN_US));
    this.budget = this.spin;
    this.timeoutMs = opts.timeoutMs ?? 60000;
    this.name = `wasm-${km.simd}-pool`;
    const names = exportedFunctions(km.module);
    this.fnIndex = new Map(names.map((n, i) => [n, i]));
    this.parts = [{ arena: this.main.arena, seq: 0, busy: false }];
    this.swiglu = this.main.kernel('swiglu');
    this.sliceTop = this.main.kernel('sample_slice_top');
    this.addF32 = this.main.kernel('add_f32');
    this.probe = this.main.arena.alloc(4, 4);
    const base = this.main.heapBase;
    for (let i = 1; i < this.threads; i++) {
      const memory = newSharedMemory(base);
      const ctrlBuf = new SharedArrayBuffer(CTRL.SIZE * 4);
      const worker = new Worker(POOL_WORKER_SOURCE, { eval: true, workerData: { module: km.module, memory, ctrl: ctrlBuf, names, spin: this.spin } });
      worker.unref(); // an idle pool must not keep the process alive
      this.parts.push({ arena: new Arena(memory, base), worker, ctrl: new Int32Array(ctrlBuf), seq: 0, busy: false });
    }
    for (let i = 1; i < this.parts.length; i++) {
      const c = this.parts[i].ctrl!;
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
    // Even split in units of the layout's row group (Q4_0: 4); the first (units % p) parts take one
    // extra unit, and the last slice ends at the last row.
    const unit = rowGroup(spec.type), units = Math.ceil(spec.rows / unit);
    const lay = rowLayout(spec.type, spec.cols);
    const slack = lay ? lay.slack : 0;
    let own: number[] | null = null; // this thread's layout arguments
    for (let i = 0; i < p; i++) {
      const r0 = Math.min(spec.rows, unit * (i * Math.floor(units / p) + Math.min(i, units % p)));
      const r1 = Math.min(spec.rows, r0 + unit * (Math.floor(units / p) + (i < units % p ? 1 : 0)));
      if (r1 === r0) continue;
      const arena = this.parts[i].arena;
      const size = (r1 - r0) * rb;
      const ptr = arena.alloc(size + slack);
      fill(arena.u8(ptr + slack, (r1 - r0) * fileRb), r0 * fileRb);
      // the stored layout (F16, Q4_0: rowLayout), by the thread owning the memory: the workers'
      // slices start here, this thread's after the loop, so they run together
      if (lay) {
        const args = lay.args(ptr, ptr + slack, r1 - r0);
        if (i === 0) own = args;
        else {
          this.parts[i].ctrl!.set([this.fnId(lay.fn), ...args], CTRL.JOBS);
          this.start(i, 1);
        }
      }
      slices.push({ part: i, r0, r1, ptr: ptr + rb - fileRb });
    }
    if (lay && own) this.main.call(lay.fn, ...own);
    this.waitAll();
    this.bytes += rb * spec.rows;
    const h: PoolWeight = { id: this.nextId++, spec, kt, rowBytes: rb, slices, plan: null, bias: null };
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
    for (let j = 0; j < plan.slices.length; j++) {
      plan.slices[j].max = plan.stats[j].f32[0];
      plan.slices[j].sum = plan.stats[j].f64[1];
    }
    mergeSliceTops(stats, out, plan.slices, plan.pos);
  }

  /** Attention with each thread holding the KV cache of its KV heads (pool-attention.ts). */
  splitAttention(shape: AttentionShape, positions: number): SplitAttention | null {
    return createPoolAttention(this, shape, positions);
  }

  /**
   * The products of up to MAXJOBS weights with one input: x quantised once per activation kind on
   * this thread (straight from x when it lives in this thread's memory), copied into each worker's
   * memory, one wake-up per worker for all its slices, this thread's rows (written straight into
   * the outputs when they live in its memory), then the gather.
   */
  private run(outs: Float32Array[], ws: PoolWeight[], x: Float32Array, n: number, extra: RunExtra = PLAIN): Plan {
    const { gated = false, want = 0, bias = null, add = false } = extra;
    for (let i = 0; i < ws.length; i++) checkShapes(ws[i].spec, outs[i], x, n);
    const plan = this.planFor(ws, n, gated, want, bias);
    const cols = ws[0].spec.cols;
    // quantise (and widen) x once per activation kind, into this thread's region
    let xp: number;
    if (this.inKernelMemory(x)) {
      xp = x.byteOffset;
    } else {
      plan.x.set(x.length === n * cols ? x : x.subarray(0, n * cols));
      xp = plan.x.byteOffset;
    }
    for (const q of plan.quant) {
      for (let t = 0; t < n; t++) q.quantize(plan.xqPtr + q.at + t * q.ab, xp + t * cols * 4, cols);
      if (q.widen) q.widen(plan.xqPtr + q.at + n * q.ab, plan.xqPtr + q.at, n, cols, q.ab);
    }
    // the workers: their copy of xq, their job words, one wake-up each
    for (const wk of plan.workers) {
      wk.xq.set(plan.xq);
      wk.ctrl.set(wk.words, CTRL.JOBS);
      this.start(wk.part, wk.nj);
    }
    // this thread's rows: one token's go straight into outputs that live in this memory
    // (gated: the gate's slice comes first, then the up's, which swiglu folds into the gate's)
    let gateOut = 0;
    for (const o of plan.own) {
      const at = !add && this.direct(outs[o.i], n, gated, o.i) ? outs[o.i].byteOffset + o.r0 * 4 : o.out;
      o.kernel(at, o.ptr, o.rowBytes, 0, o.lr, o.xq, cols, n, o.a8, o.a9);
      if (gated && o.i === 0) gateOut = at;
      if (gated && o.i === 1) this.swiglu(gateOut, gateOut, at, n * o.lr);
      if (o.bias) this.addF32(at, o.bias, o.lr);
      if (plan.want > 0) this.sliceTop(plan.ownStats, at, o.lr, plan.want);
    }
    if (add) {
      // (in wasm when out lives in this memory; the same f32 additions as addInto)
      const o = plan.own[0], out = outs[0];
      if (o && this.inKernelMemory(out)) this.addF32(out.byteOffset + o.r0 * 4, o.out, o.lr);
      else if (o) addInto(out, o.local, o.lr, o.r0);
    } else {
      for (const o of plan.own) if (!(gated && o.i > 0) && !this.direct(outs[o.i], n, gated, o.i)) this.gather(outs[o.i], o.local, n, o.r0, o.lr, ws[o.i].spec.rows);
    }
    this.waitAll();
    for (const wk of plan.workers) {
      for (const g of wk.gather) {
        if (add) addInto(outs[g.i], g.local, g.lr, g.r0);
        else this.gather(outs[g.i], g.local, n, g.r0, g.lr, ws[g.i].spec.rows);
      }
    }
    return plan;
  }

  /** Whether this thread writes weight i's rows straight into `out` (one token, out in its memory; not the up of a gated pair). */
  private direct(out: Float32Array, n: number, gated: boolean, i: number): boolean {
    return n === 1 && !(gated && i > 0) && this.inKernelMemory(out);
  }

  /** out[t·rows + r0 …] ← local[t·lr …] (lr values) for t < n. */
  private gather(out: Float32Array, local: Float32Array, n: number, r0: number, lr: number, rows: number): void {
    if (n === 1) out.set(local, r0);
    else for (let t = 0; t < n; t++) out.set(local.subarray(t * lr, (t + 1) * lr), t * rows + r0);
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
    const outBytes = (p: number) => ws.reduce((b, w) => b + w.slices.reduce((c, s) => c + (s.part === p ? n * (s.r1 - s.r0) * 4 : 0), 0), 0);
    // matvecTop's results per part: f32 max, f64 sum at 8, i32 ids from 16 (sample_slice_top), at
    // the next multiple of 16 (outputs of odd row counts end anywhere)
    const sb = want > 0 ? 32 + Math.ceil(want / 4) * 16 : 0;
    const align16 = (at: number) => Math.ceil(at / 16) * 16;
    // every part's region: this thread [x f32][xq][outputs][gemm scratch][stats], a worker [xq][gemm scratch][outputs][stats]
    const bytes = this.parts.map((_, p) => (p === 0 ? n * cols * 4 + xqBytes + outBytes(0) + gs + sb : outBytes(p) > 0 ? xqBytes + gs + outBytes(p) + sb : 0));
    const bases = bytes.map((b, p) => (b > 0 ? this.parts[p].arena.scratch(b) : 0));
    // a slice's job: kernel(out, w, rowBytes, 0, lr, x, cols, n, a8, a9) on base's memory
    const job = (w: PoolWeight, i: number, s: Slice, base: number, scratch: number) => {
      const lr = s.r1 - s.r0;
      const { at, ab } = kinds[kindOf[i]];
      if (n === 1) return { name: `matvec_${w.kt.suffix}`, args: [s.ptr, w.rowBytes, 0, lr, base + at, cols, n, 0, 0] };
      if (w.kt.gemm) return { name: `gemm_${w.kt.suffix}`, args: [s.ptr, w.rowBytes, 0, lr, base + at + n * ab, cols, n, lr, scratch] };
      return { name: `matmul_${w.kt.suffix}`, args: [s.ptr, w.rowBytes, 0, lr, base + at, cols, n, ab, lr] };
    };
    const a = this.main.arena;
    const xqPtr = bases[0] + n * cols * 4;
    const own: OwnStep[] = [];
    let o = xqPtr + xqBytes;
    let ownBias = bias ? bias.ptrs[0] : 0; // this thread's rows' biases, weight after weight
    const ownScratch = o + outBytes(0);
    ws.forEach((w, i) => {
      for (const s of w.slices) {
        if (s.part !== 0) continue;
        const { name, args } = job(w, i, s, xqPtr, ownScratch);
        const lr = s.r1 - s.r0;
        own.push({ i, kernel: this.main.kernel(name), ptr: args[0], rowBytes: args[1], r0: s.r0, lr, xq: args[4], a8: args[7], a9: args[8], out: o, local: a.f32(o, n * lr), bias: bias ? ownBias : 0 });
        ownBias += lr * 4;
        o += n * lr * 4;
      }
    });
    // the stats of each part's slice, in row order (parts hold their rows in part order)
    const stats: Plan['stats'][number][] = [];
    const slices: SliceTop[] = [];
    const addStats = (arena: Arena, at: number, s: Slice) => {
      stats.push({ f32: arena.f32(at, 1), f64: new Float64Array(arena.memory.buffer, at, 2) });
      slices.push({ r0: s.r0, n: s.r1 - s.r0, max: 0, sum: 0, ids: new Int32Array(arena.memory.buffer, at + 16, want) });
    };
    const ownStats = align16(ownScratch + gs);
    if (want > 0) for (const s of ws[0].slices) if (s.part === 0) addStats(a, ownStats, s);
    const workers: WorkerStep[] = [];
    for (let p = 1; p < this.parts.length; p++) {
      if (bytes[p] === 0) continue;
      const arena = this.parts[p].arena;
      const base = bases[p];
      const scratch = base + xqBytes;
      let at = scratch + gs;
      const words: number[] = [];
      const gather: WorkerStep['gather'][number][] = [];
      const put = (name: string, args: number[]) => {
        words.push(this.fnIndex.get(name)!, ...args.map((v) => v | 0));
        while (words.length % CTRL.JOB !== 0) words.push(0);
      };
      const outAt: number[] = [];
      ws.forEach((w, i) => {
        for (const s of w.slices) {
          if (s.part !== p) continue;
          const lr = s.r1 - s.r0;
          const { name, args } = job(w, i, s, base, scratch);
          put(name, [at, ...args]);
          outAt[i] = at;
          if (!(gated && i > 0)) gather.push({ i, r0: s.r0, lr, local: arena.f32(at, n * lr) });
          at += n * lr * 4;
        }
      });
      if (gated) put('swiglu', [outAt[0], outAt[0], outAt[1], n * this.rowsOf(ws[0], p)]);
      // its outputs lie one after another from scratch + gs, as its bias copy does
      if (bias) put('add_f32', [scratch + gs, bias.ptrs[p], bias.bytes[p] / 4]);
      if (want > 0) {
        put('sample_slice_top', [align16(at), outAt[0], this.rowsOf(ws[0], p), want]);
        addStats(arena, align16(at), ws[0].slices.find((s) => s.part === p)!);
      }
      workers.push({ part: p, ctrl: this.parts[p].ctrl!, words: Int32Array.from(words), nj: words.length / CTRL.JOB, xq: arena.u8(base, xqBytes), gather });
    }
    const quant = kinds.map((k) => ({ quantize: this.main.kernel(`quantize_${k.act}`), widen: k.wide ? this.main.kernel(`widen_${k.act}`) : null, at: k.at, ab: k.ab }));
    return { ws: ws.slice(), n, gated, bytes, bases, x: a.f32(bases[0], n * cols), xqPtr, xq: a.u8(xqPtr, xqBytes), quant, own, workers, want, ownStats, stats, slices, pos: new Int32Array(slices.length), bias };
  }

  /**
   * on: a forward pass begins, workers poll for their next job instead of sleeping between jobs;
   * off: it ended, they sleep (an idle pool takes no CPU).
   */
  hold(on: boolean): void {
    for (let p = 1; p < this.parts.length; p++) Atomics.store(this.parts[p].ctrl!, CTRL.HOT, on && this.spin > 0 ? 1 : 0);
  }

  /** Rows of `w` that part `p` holds. */
  private rowsOf(w: PoolWeight, p: number): number {
    const s = w.slices.find((sl) => sl.part === p);
    return s ? s.r1 - s.r0 : 0;
  }

  // ---- for pool-attention.ts -----------------------------------------------------------------

  /** Threads that compute (the calling thread is part 0). */
  get partCount(): number {
    return this.parts.length;
  }

  /** Part p's memory and allocator. */
  arenaOf(p: number): Arena {
    return this.parts[p].arena;
  }

  /** The index of export `name`, for startJob. */
  fnId(name: string): number {
    const i = this.fnIndex.get(name);
    if (i === undefined) throw new Error(`the kernel module has no export "${name}"`);
    return i;
  }

  /** Run export number `fn` (fnId) with one i32 argument on worker p (p ≥ 1), without waiting. */
  startJob(p: number, fn: number, arg: number): void {
    const c = this.parts[p].ctrl!;
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
    for (let p = 1; p < this.parts.length; p++) if (this.parts[p].busy) this.wait(p);
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
    for (const p of this.parts) {
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
    const p = this.parts[part];
    const c = p.ctrl!;
    c[CTRL.NJOBS] = nj;
    p.busy = true;
    Atomics.store(c, CTRL.SEQ, ++p.seq);
    if (Atomics.load(c, CTRL.SLEEP) === 1) Atomics.notify(c, CTRL.SEQ); // (pool-worker.ts: SLEEP)
  }

  /** Block until worker `part` has finished its last job. */
  private wait(part: number): void {
    const p = this.parts[part];
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
