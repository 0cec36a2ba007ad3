// Quantising on worker threads. Every quantiser works row by row with no state carried between
// rows (ggml's quantize_row_* per row), so a tensor's rows can be split into contiguous ranges,
// one per thread, and the pieces concatenated: the bytes equal a single thread's.
// The calling thread quantises the first range itself while the workers do the others.
// Workers run quantize-worker.ts, started as every engine worker is (worker-start.ts).

import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { EngineError } from '../../shared/errors.js';
import { moduleWorkerSource, startWorker } from '../worker-start.js';
import { bytesFor, quantizeRows } from './index.js';

/** A range of rows to quantise, sent to a worker (x is transferred). */
export interface QuantizeJob {
  id: number;
  type: number;
  x: Float32Array;
  rows: number;
  cols: number;
  /** One importance per column (quantize --imatrix), or none. */
  imatrix?: Float32Array;
}

export type QuantizeReply =
  | { id: number; kind: 'done'; data: Uint8Array }
  | { id: number; kind: 'error'; message: string };

/** Below this many elements per thread a tensor is not split (a message costs more than it saves). */
const MIN_ELEMENTS_PER_THREAD = 1 << 16;

export interface QuantizePoolOptions {
  /** Threads that quantise, the calling thread included (default os.availableParallelism()). */
  threads?: number;
  /** Fewest elements worth sending to a thread (default 65536; tests lower it to split small tensors). */
  minElementsPerThread?: number;
}

interface Pending {
  resolve: (data: Uint8Array) => void;
  reject: (e: Error) => void;
}

/** The worker's source: import quantize-worker beside this file (.ts from source, .js when built). */
function workerSource(): string {
  return moduleWorkerSource(new URL(import.meta.url.endsWith('.ts') ? './quantize-worker.ts' : './quantize-worker.js', import.meta.url));
}

export class QuantizePool {
  /** Threads that quantise, the calling thread included. */
  readonly threads: number;
  /** Rows quantised by workers so far (the rest were done on the calling thread). */
  rowsInWorkers = 0;
  private workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | null = null;

  private readonly minPerThread: number;

  constructor(opts: QuantizePoolOptions = {}) {
    this.threads = Math.max(1, Math.floor(opts.threads ?? availableParallelism()));
    this.minPerThread = Math.max(1, opts.minElementsPerThread ?? MIN_ELEMENTS_PER_THREAD);
  }

  private start(): void {
    if (this.workers.length || this.threads === 1) return;
    const source = workerSource();
    for (let i = 1; i < this.threads; i++) {
      const w = startWorker(source);
      w.on('message', (m: QuantizeReply) => this.settle(m));
      w.on('error', (e) => this.fail(new EngineError('QUANTIZE_WORKER', `a quantize worker failed: ${e.message}`)));
      w.on('exit', (code) => {
        if (code !== 0) this.fail(new EngineError('QUANTIZE_WORKER', `a quantize worker exited with code ${code}`));
      });
      this.workers.push(w);
    }
  }

  private settle(m: QuantizeReply): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.kind === 'done') p.resolve(m.data);
    else p.reject(new EngineError('QUANTIZE_WORKER', `quantising in a worker failed: ${m.message}`));
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  /** Rows of x (rows × cols) quantised to `type`: the same bytes as quantizeRows. */
  async quantizeRows(type: number, x: Float32Array, rows: number, cols: number, imatrix?: Float32Array): Promise<Uint8Array> {
    if (this.failure) throw this.failure;
    const parts = Math.min(this.threads, rows, Math.max(1, Math.floor((rows * cols) / this.minPerThread)));
    if (parts <= 1) return quantizeRows(type, x, rows, cols, imatrix);
    this.start();
    const rb = bytesFor(type, cols);
    const out = new Uint8Array(rb * rows);
    // Ranges of ⌈rows/parts⌉ rows; the calling thread takes the first.
    const per = Math.ceil(rows / parts);
    const jobs: Promise<void>[] = [];
    for (let p = 1; p * per < rows; p++) {
      const r0 = p * per;
      const r1 = Math.min(rows, r0 + per);
      const id = this.nextId++;
      this.rowsInWorkers += r1 - r0;
      const job: QuantizeJob = { id, type, x: x.slice(r0 * cols, r1 * cols), rows: r1 - r0, cols, imatrix };
      jobs.push(new Promise<Uint8Array>((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.workers[p - 1].ref();
        this.workers[p - 1].postMessage(job, [job.x.buffer as ArrayBuffer]);
      }).then((data) => {
        this.workers[p - 1].unref();
        if (data.length !== (r1 - r0) * rb) throw new EngineError('QUANTIZE_WORKER', `a quantize worker returned ${data.length} bytes for ${r1 - r0} rows; expected ${(r1 - r0) * rb}`);
        out.set(data, r0 * rb);
      }));
    }
    out.set(quantizeRows(type, x.subarray(0, per * cols), per, cols, imatrix), 0);
    await Promise.all(jobs);
    return out;
  }

  /** Stop the workers (the pool cannot be used afterwards). */
  async close(): Promise<void> {
    const ws = this.workers;
    this.workers = [];
    this.failure ??= new EngineError('QUANTIZE_CLOSED', 'the quantize pool was closed');
    await Promise.all(ws.map((w) => w.terminate()));
  }
}
