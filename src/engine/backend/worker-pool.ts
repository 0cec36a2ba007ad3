// The threads of the pool backend and their memories: T computing threads (the calling thread is
// thread 0, the others are workers running pool-worker.ts), each hosting `shards` WebAssembly
// (instance, memory) pairs, the "parts". The parent creates every memory (shared,
// SharedArrayBuffer-backed) and runs every allocator (arenas), so weights are placed without
// messages. A worker is driven through its control block (pool-worker.ts CTRL): the parent writes
// jobs, bumps SEQ (start), and waits for DONE (wait); hold() keeps the workers polling during a
// forward pass. What the jobs are (the products, attention) is decided above: pool.ts,
// pool-plan.ts, pool-attention.ts.

import { EngineError } from '../../shared/errors.js';
import { Arena, newSharedMemory } from '../wasm/arena.js';
import { exportedFunctions, KernelInstance } from '../wasm/instance.js';
import type { KernelModule } from '../wasm/loader.js';
import { startWorker } from '../worker-start.js';
import { CTRL, POOL_WORKER_SOURCE, runJobs, WORKER_ERR } from './pool-worker.js';
import type { Worker } from 'node:worker_threads';

export type Kernel = (...args: number[]) => number;

/** One memory holding rows of every weight: part p lives on thread host = ⌊p / shards⌋, as its instance number slot. */
export interface Part {
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

export interface WorkerPoolOptions {
  threads: number;
  shards: number;
  /** µs a waiting thread polls before it sleeps (PoolOptions.spin). */
  spin: number;
  timeoutMs: number;
  /** Bytes a memory may reach (tests lower it), or undefined for wasm32's 4 GiB. */
  memoryBytes?: number;
}

export class WorkerPool {
  readonly threads: number;
  /** Parts per thread. */
  readonly shards: number;
  /** The calling thread's first instance (part 0). */
  readonly main: KernelInstance;
  /** Every part, in order: thread 0's shards, then thread 1's, … */
  readonly parts: Part[];
  private readonly hosts: Host[];
  /** Export index by name: a job's kernel on part slot s is fnIndex(name) + s · fnIndex.size. */
  readonly fnIndex: Map<string, number>;
  readonly spin: number;
  /** Claim words of the bands (runJobs: BAND), MAXJOBS per boundary between parts, shared by every thread. */
  readonly claims: Int32Array;
  /** Every export, by index (fnIndex), on this thread's instances in turn (Part.slot): what runJobs calls here. */
  readonly fns: Kernel[];
  /** Jobs a control block holds (CTRL.CAP per part of a thread). */
  readonly cap: number;
  /** This thread's spin budget (µs), between 0 and spin. */
  private budget: number;
  private readonly timeoutMs: number;
  private disposed = false;
  /** Buffers known to be (mainBuffers) or not to be (otherBuffers) this thread's memory (inKernelMemory). */
  private readonly mainBuffers: ArrayBufferLike[] = [];
  private readonly otherBuffers = new WeakSet<ArrayBufferLike>();
  /** A word of this thread's memory that inKernelMemory writes to tell its buffers apart. */
  private readonly probe: number;

  constructor(km: KernelModule, opts: WorkerPoolOptions) {
    this.main = new KernelInstance(km);
    this.threads = opts.threads;
    this.shards = opts.shards;
    this.spin = opts.spin;
    this.timeoutMs = opts.timeoutMs;
    const P = this.threads * this.shards;
    this.cap = CTRL.CAP * this.shards;
    this.claims = new Int32Array(new SharedArrayBuffer(Math.max(1, P - 1) * CTRL.MAXJOBS * 4));
    this.budget = this.spin;
    const names = exportedFunctions(km.module);
    this.fnIndex = new Map(names.map((n, i) => [n, i]));
    // (a template job's kernel index has 16 bits: pool-worker.ts runJobs)
    if (names.length * this.shards > 0xffff) throw new EngineError('POOL_START', `${this.shards} memories per thread are more than the pool can address; use more threads`);
    // this thread's parts: its own instance, then one more per shard
    const own = [this.main, ...Array.from({ length: this.shards - 1 }, () => new KernelInstance(km))];
    this.fns = own.flatMap((inst) => names.map((n) => inst.kernel(n)));
    this.parts = own.map((inst, slot) => ({ arena: inst.arena, host: 0, slot }));
    this.hosts = [{ seq: 0, busy: false }];
    this.probe = this.main.arena.alloc(4, 4);
    const base = this.main.heapBase;
    for (let t = 1; t < this.threads; t++) {
      const memories = Array.from({ length: this.shards }, () => newSharedMemory(base));
      const ctrlBuf = new SharedArrayBuffer((CTRL.JOBS + this.cap * CTRL.JOB) * 4);
      const worker = startWorker(POOL_WORKER_SOURCE, { module: km.module, memories, ctrl: ctrlBuf, claims: this.claims.buffer, names, spin: this.spin });
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

  /** The index of export `name` (on a part's first slot). */
  fnId(name: string): number {
    const i = this.fnIndex.get(name);
    if (i === undefined) throw new Error(`the kernel module has no export "${name}"`);
    return i;
  }

  /** Thread t's first memory and allocator (attention's share of thread t lives there: pool-attention.ts). */
  arenaOf(t: number): Arena {
    return this.parts[t * this.shards].arena;
  }

  /** Worker t's control block (t ≥ 1). */
  ctrlOf(t: number): Int32Array {
    return this.hosts[t].ctrl!;
  }

  /** Run this thread's nj jobs of `words` (a control block's layout from CTRL.JOBS) here. */
  runOwn(words: Int32Array, nj: number): void {
    runJobs(words, nj, this.fns, this.claims);
  }

  /** Write `words` (jobs, CTRL.JOB ints each) into worker t's control block and start them. */
  startJobs(t: number, words: ArrayLike<number>): void {
    const nj = words.length / CTRL.JOB;
    if (nj > this.cap) throw new Error(`${nj} jobs exceed the control block (${this.cap})`);
    const c = this.hosts[t].ctrl!;
    c.set(words, CTRL.JOBS);
    this.start(t, nj);
  }

  /** Run export number `fn` (fnId) with one i32 argument on worker t (t ≥ 1), without waiting. */
  startJob(t: number, fn: number, arg: number): void {
    const c = this.hosts[t].ctrl!;
    c[CTRL.JOBS] = fn;
    c[CTRL.JOBS + 1] = arg;
    this.start(t, 1);
  }

  /**
   * on: a forward pass begins, workers poll for their next job instead of sleeping between jobs;
   * off: it ended, they sleep (an idle pool takes no CPU).
   */
  hold(on: boolean): void {
    for (let t = 1; t < this.hosts.length; t++) Atomics.store(this.hosts[t].ctrl!, CTRL.HOT, on && this.spin > 0 ? 1 : 0);
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
  }

  /** Wake worker t to run its `nj` jobs. */
  start(t: number, nj: number): void {
    if (this.disposed) throw new EngineError('POOL_DISPOSED', 'the WebAssembly pool was disposed; create a new backend');
    const p = this.hosts[t];
    const c = p.ctrl!;
    c[CTRL.NJOBS] = nj;
    p.busy = true;
    Atomics.store(c, CTRL.SEQ, ++p.seq);
    if (Atomics.load(c, CTRL.SLEEP) === 1) Atomics.notify(c, CTRL.SEQ); // (pool-worker.ts: SLEEP)
  }

  /** Block until worker t has finished its last job. */
  private wait(t: number): void {
    const p = this.hosts[t];
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
          if (left <= 0) throw new EngineError('POOL_TIMEOUT', `worker ${t} of the WebAssembly pool stopped answering; reload the model`);
          Atomics.wait(c, CTRL.DONE, done, left);
          done = Atomics.load(c, CTRL.DONE);
        }
      } finally {
        Atomics.store(c, CTRL.WAIT, 0);
      }
    }
    const err = c[CTRL.ERR];
    if (err === WORKER_ERR.READ) throw new EngineError('POOL_READ', `worker ${t} of the WebAssembly pool could not read the model file (it may be truncated or unreadable)`);
    if (err) throw new EngineError('POOL_KERNEL', `a kernel failed on worker ${t} of the WebAssembly pool; reload the model`);
  }
}
