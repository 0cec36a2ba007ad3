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
import { GgmlType, rowBytes } from '../gguf/ggml-types.js';
import { Arena, newSharedMemory } from '../wasm/arena.js';
import { exportedFunctions, KernelInstance } from '../wasm/instance.js';
import { actBytes, gemmScratchBytes, kernelType, storedRowBytes, widenBytes, type ActKind, type KernelType } from '../wasm/layout.js';
import { loadKernelModule, type LoadOptions } from '../wasm/loader.js';
import { CTRL, POOL_WORKER_SOURCE } from './pool-worker.js';
import { createPoolAttention } from './pool-attention.js';
import type { AttentionShape, FillFn, MatBackend, SplitAttention, WeightHandle, WeightSpec } from './types.js';
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
    for (let i = 0; i < p; i++) {
      // Even split; the first (rows % p) parts take one extra row.
      const r0 = i * Math.floor(spec.rows / p) + Math.min(i, spec.rows % p);
      const r1 = r0 + Math.floor(spec.rows / p) + (i < spec.rows % p ? 1 : 0);
      if (r1 === r0) continue;
      const arena = this.parts[i].arena;
      const size = (r1 - r0) * rb;
      const ptr = arena.alloc(size);
      fill(arena.u8(ptr, (r1 - r0) * fileRb), r0 * fileRb);
      // F16: each row preceded by its bitmap (layout.ts storedRowBytes), by the thread owning the memory
      if (spec.type === GgmlType.F16) {
        if (i === 0) this.main.call('layout_f16', ptr, r1 - r0, spec.cols);
        else this.startJob(i, 'layout_f16', [ptr, r1 - r0, spec.cols]);
      }
      slices.push({ part: i, r0, r1, ptr: ptr + rb - fileRb });
    }
    this.waitAll();
    this.bytes += rb * spec.rows;
    const h: PoolWeight = { id: this.nextId++, spec, kt, rowBytes: rb, slices };
    return h;
  }

  matvec(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    this.matmul(out, w, x, 1);
  }

  matmul(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void {
    this.run([out], [w as PoolWeight], x, n);
  }

  /** outs[i][n, rows_i] = x[n, cols] · W_iᵀ: weights on one input (q/k/v, gate/up) in one round trip. */
  matmulShared(outs: Float32Array[], ws: WeightHandle[], x: Float32Array, n: number): void {
    for (let i = 0; i < ws.length; i += CTRL.MAXJOBS) this.run(outs.slice(i, i + CTRL.MAXJOBS), ws.slice(i, i + CTRL.MAXJOBS) as PoolWeight[], x, n);
  }

  /**
   * out[n, rows] = silu(x · Wgᵀ) ⊙ (x · Wuᵀ): each thread applies the activation to its own rows of
   * gate and up (split alike), so only the activated rows travel back.
   */
  matmulGated(out: Float32Array, gate: WeightHandle, up: WeightHandle, x: Float32Array, n: number): void {
    if (gate.spec.rows !== up.spec.rows) throw new EngineError('BAD_SHAPE', `tensors "${gate.spec.name}" and "${up.spec.name}" differ in rows`);
    this.run([out, out], [gate as PoolWeight, up as PoolWeight], x, n, true);
  }

  /** Attention with each thread holding the KV cache of its KV heads (pool-attention.ts). */
  splitAttention(shape: AttentionShape, positions: number): SplitAttention | null {
    return createPoolAttention(this, shape, positions);
  }

  /**
   * The products of up to MAXJOBS weights with one input: x quantised once per activation kind on
   * this thread, copied into each worker's memory, one wake-up per worker for all its slices, this
   * thread's rows, then the gather.
   */
  // gated: ws = [gate, up] (rows split alike); every thread then runs swiglu on its rows and only
  // the gate's slices (now the activated rows) are gathered, into outs[0].
  private run(outs: Float32Array[], ws: PoolWeight[], x: Float32Array, n: number, gated = false): void {
    const cols = ws[0].spec.cols;
    // the activation kinds, and where each weight's quantised x sits in the xq region
    // (for a batch on a gemm kernel, the activation's widened copy follows its quantised rows)
    const acts: ActKind[] = [];
    const actAt: number[] = [];
    const widened: boolean[] = [];
    const xqAt: number[] = [];
    let xqBytes = 0;
    for (let i = 0; i < ws.length; i++) {
      const { spec, kt } = ws[i];
      checkShapes(spec, outs[i], x, n);
      if (spec.cols !== cols) throw new EngineError('BAD_SHAPE', `tensors "${ws[0].spec.name}" and "${spec.name}" do not take the same input`);
      let k = acts.indexOf(kt.act);
      if (k < 0) {
        k = acts.push(kt.act) - 1;
        actAt.push(xqBytes);
        const wide = n > 1 && ws.some((w) => w.kt.act === kt.act && w.kt.gemm);
        widened.push(wide);
        xqBytes += n * actBytes(kt.act, cols) + (wide ? widenBytes(kt.act, n, cols) : 0);
      }
      xqAt.push(actAt[k]);
    }
    // this thread: [x f32][xq per kind][outputs of its own slices][gemm scratch]
    const gs = n > 1 && ws.some((w) => w.kt.gemm) ? gemmScratchBytes(cols) : 0;
    let mineBytes = gs;
    for (const w of ws) for (const s of w.slices) if (s.part === 0) mineBytes += n * (s.r1 - s.r0) * 4;
    const a = this.main.arena;
    const xPtr = a.scratch(n * cols * 4 + xqBytes + mineBytes);
    const xqPtr = xPtr + n * cols * 4;
    a.f32(xPtr, n * cols).set(x.subarray(0, n * cols));
    for (let k = 0; k < acts.length; k++) {
      const ab = actBytes(acts[k], cols);
      for (let t = 0; t < n; t++) this.main.quantize(acts[k], xqPtr + actAt[k] + t * ab, xPtr + t * cols * 4, cols);
      if (widened[k]) this.main.widen(acts[k], xqPtr + actAt[k] + n * ab, xqPtr + actAt[k], n, cols, ab);
    }
    const xq = a.u8(xqPtr, xqBytes);
    // each worker: [xq][gemm scratch][outputs of its slices], one job per slice, one wake-up
    const outPtr: number[][] = ws.map(() => []);
    for (let p = 1; p < this.parts.length; p++) {
      let bytes = xqBytes + gs;
      for (const w of ws) for (const s of w.slices) if (s.part === p) bytes += n * (s.r1 - s.r0) * 4;
      if (bytes === xqBytes + gs) continue;
      const arena = this.parts[p].arena;
      const base = arena.scratch(bytes);
      arena.u8(base, xqBytes).set(xq);
      const scratch = base + xqBytes;
      let o = scratch + gs;
      const c = this.parts[p].ctrl!;
      let nj = 0;
      ws.forEach((w, i) => {
        for (const s of w.slices) {
          if (s.part !== p) continue;
          const lr = s.r1 - s.r0;
          outPtr[i][p] = o;
          const ab = actBytes(w.kt.act, cols);
          if (n > 1 && w.kt.gemm) this.job(c, nj++, `gemm_${w.kt.suffix}`, [o, s.ptr, w.rowBytes, 0, lr, base + xqAt[i] + n * ab, cols, n, lr, scratch]);
          else this.job(c, nj++, `${n === 1 ? 'matvec' : 'matmul'}_${w.kt.suffix}`, [o, s.ptr, w.rowBytes, 0, lr, base + xqAt[i], cols, n, ab, lr]);
          o += n * lr * 4;
        }
      });
      if (gated) this.job(c, nj++, 'swiglu', [outPtr[0][p], outPtr[0][p], outPtr[1][p], n * this.rowsOf(ws[0], p)]);
      this.start(p, nj);
    }
    // this thread's rows
    const scratch = xqPtr + xqBytes;
    let o = scratch + gs;
    ws.forEach((w, i) => {
      for (const s of w.slices) {
        if (s.part !== 0) continue;
        const lr = s.r1 - s.r0;
        const ab = actBytes(w.kt.act, cols);
        outPtr[i][0] = o;
        if (n === 1) this.main.matvec(w.kt, o, s.ptr, w.rowBytes, 0, lr, xqPtr + xqAt[i], cols);
        else if (w.kt.gemm) this.main.gemm(w.kt, o, s.ptr, w.rowBytes, 0, lr, xqPtr + xqAt[i] + n * ab, cols, n, lr, scratch);
        else this.main.matmul(w.kt, o, s.ptr, w.rowBytes, 0, lr, xqPtr + xqAt[i], cols, n, ab, lr);
        o += n * lr * 4;
      }
    });
    if (gated && outPtr[0][0] !== undefined) this.main.swiglu(outPtr[0][0], outPtr[0][0], outPtr[1][0], n * this.rowsOf(ws[0], 0));
    this.waitAll();
    // gather: slice-local [n, lr] → out[n, rows]
    ws.forEach((w, i) => {
      if (gated && i > 0) return;
      const rows = w.spec.rows;
      for (const s of w.slices) {
        const lr = s.r1 - s.r0;
        const local = this.parts[s.part].arena.f32(outPtr[i][s.part], n * lr);
        for (let t = 0; t < n; t++) outs[i].set(local.subarray(t * lr, (t + 1) * lr), t * rows + s.r0);
      }
    });
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

  /** Run export `fn` with i32 arguments on worker p (p ≥ 1), without waiting. */
  startJob(p: number, fn: string, args: number[]): void {
    this.job(this.parts[p].ctrl!, 0, fn, args);
    this.start(p, 1);
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
    let src = s.ptr + (row - s.r0) * rb;
    const len = rowBytes(spec.type, spec.cols); // what dequant reads (not an F16 row's bitmap)
    const tmp = a.scratch(len + 64 + spec.cols * 4);
    const o = tmp + Math.ceil(len / 64) * 64;
    if (s.part !== 0) {
      // The row lives in a worker's memory: copy its bytes here and dequantise on this thread.
      a.u8(tmp, len).set(this.parts[s.part].arena.u8(src, len));
      src = tmp;
    }
    this.main.dequant(kt, o, src, spec.cols);
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

  /** Write job `j` of a worker's next round: export `fn` with i32 arguments. */
  private job(c: Int32Array, j: number, fn: string, args: number[]): void {
    const at = CTRL.JOBS + j * CTRL.JOB;
    c[at] = this.fnIndex.get(fn)!;
    for (let i = 0; i < args.length; i++) c[at + 1 + i] = args[i] | 0;
  }

  /** Wake worker `part` to run its `nj` jobs. */
  private start(part: number, nj: number): void {
    if (this.disposed) throw new EngineError('POOL_DISPOSED', 'the WebAssembly pool was disposed; create a new backend');
    const p = this.parts[part];
    const c = p.ctrl!;
    c[CTRL.NJOBS] = nj;
    p.busy = true;
    Atomics.store(c, CTRL.SEQ, ++p.seq);
    Atomics.notify(c, CTRL.SEQ);
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
    while (done !== p.seq) {
      const left = deadline - Date.now();
      if (left <= 0) throw new EngineError('POOL_TIMEOUT', `worker ${part} of the WebAssembly pool stopped answering; reload the model`);
      Atomics.wait(c, CTRL.DONE, done, left);
      done = Atomics.load(c, CTRL.DONE);
    }
    if (c[CTRL.ERR]) throw new EngineError('POOL_KERNEL', `a kernel failed on worker ${part} of the WebAssembly pool; reload the model`);
  }
}
