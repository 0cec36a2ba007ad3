// Quantising on worker threads. Every quantiser works row by row with no state carried between
// rows (ggml's quantize_row_* per row), so a tensor's rows can be split into contiguous ranges,
// one per thread, and the pieces concatenated: the bytes equal a single thread's.
// The calling thread quantises the first range itself while the workers do the others.
// Workers run quantize-worker.ts, started as every engine worker is (worker-start.ts).
// A tensor in a file (quantizeFileRows) is not read by the calling thread: each thread reads its
// own rows, converts them to f32 and quantises them, a slice at a time, so reading and converting
// run in parallel too and no f32 copy of a whole tensor is made.

import { closeSync, openSync, readSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { EngineError, GgufError } from '../../shared/errors.js';
import { rowBytes } from '../gguf/ggml-types.js';
import { moduleWorkerSource, startWorker } from '../worker-start.js';
import { bytesFor, dequantizeRow, quantizeRows } from './index.js';

/** Rows of a matrix in a file: row r (of ggml type `type`) starts at byte at + r·rowBytes(type, cols). */
export interface FileRows {
  path: string;
  at: number;
  type: number;
  /** The tensor's name, for a truncated file's error. */
  name: string;
}

/** A range of rows to quantise, sent to a worker: x (transferred), or the rows in a file. */
export interface QuantizeJob {
  id: number;
  type: number;
  x?: Float32Array;
  src?: FileRows;
  rows: number;
  cols: number;
  /** One importance per column (quantize --imatrix), or none. */
  imatrix?: Float32Array;
}

/** f32 elements converted at a time by quantizeFileRows (16 MiB). */
const SLICE_ELEMENTS = 1 << 22;

/**
 * Rows [r0, r1) of the matrix at src quantised to `type`, as quantizeRows would quantise them from
 * the dequantised f32 rows, read and converted a slice of rows at a time.
 */
export function quantizeFileRows(type: number, src: FileRows, r0: number, r1: number, cols: number, imatrix?: Float32Array, sliceElements = SLICE_ELEMENTS): Uint8Array {
  const inRow = rowBytes(src.type, cols), outRow = bytesFor(type, cols);
  const out = new Uint8Array((r1 - r0) * outRow);
  const per = Math.max(1, Math.floor(sliceElements / cols));
  const bytes = new Uint8Array(Math.min(per, r1 - r0) * inRow);
  const x = new Float32Array(Math.min(per, r1 - r0) * cols);
  const fd = openSync(src.path, 'r');
  try {
    for (let r = r0; r < r1; r += per) {
      const n = Math.min(per, r1 - r);
      const b = bytes.subarray(0, n * inRow), start = src.at + r * inRow;
      for (let done = 0; done < b.length;) {
        const got = readSync(fd, b, done, b.length - done, start + done);
        if (got <= 0) throw new GgufError('GGUF_TRUNCATED', `file ended while reading tensor "${src.name}": it is truncated`, start + done);
        done += got;
      }
      const xs = x.subarray(0, n * cols);
      dequantizeRow(src.type, b, 0, xs, n * cols);
      out.set(quantizeRows(type, xs, n, cols, imatrix), (r - r0) * outRow);
    }
  } finally {
    closeSync(fd);
  }
  return out;
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
  quantizeRows(type: number, x: Float32Array, rows: number, cols: number, imatrix?: Float32Array): Promise<Uint8Array> {
    return this.split(type, rows, cols, imatrix, (r0, r1) => quantizeRows(type, x.subarray(r0 * cols, r1 * cols), r1 - r0, cols, imatrix),
      (r0, r1) => ({ x: x.slice(r0 * cols, r1 * cols) }));
  }

  /** The rows × cols matrix at src quantised to `type`, each thread reading its own rows: quantizeRows' bytes. */
  quantizeFileRows(type: number, src: FileRows, rows: number, cols: number, imatrix?: Float32Array): Promise<Uint8Array> {
    const inRow = rowBytes(src.type, cols);
    return this.split(type, rows, cols, imatrix, (r0, r1) => quantizeFileRows(type, src, r0, r1, cols, imatrix),
      (r0) => ({ src: { ...src, at: src.at + r0 * inRow } }));
  }

  /**
   * Rows [0, rows) in ranges of ⌈rows/parts⌉, the first done here by `here(r0, r1)`, each other one
   * by a worker given the job's input `input(r0, r1)` (its rows 0 .. r1 − r0).
   */
  private async split(type: number, rows: number, cols: number, imatrix: Float32Array | undefined,
    here: (r0: number, r1: number) => Uint8Array, input: (r0: number, r1: number) => Pick<QuantizeJob, 'x' | 'src'>): Promise<Uint8Array> {
    if (this.failure) throw this.failure;
    const parts = Math.min(this.threads, rows, Math.max(1, Math.floor((rows * cols) / this.minPerThread)));
    if (parts <= 1) return here(0, rows);
    this.start();
    const rb = bytesFor(type, cols);
    const out = new Uint8Array(rb * rows);
    const per = Math.ceil(rows / parts);
    const jobs: Promise<void>[] = [];
    for (let p = 1; p * per < rows; p++) {
      const r0 = p * per;
      const r1 = Math.min(rows, r0 + per);
      const id = this.nextId++;
      this.rowsInWorkers += r1 - r0;
      const job: QuantizeJob = { id, type, ...input(r0, r1), rows: r1 - r0, cols, imatrix };
      jobs.push(new Promise<Uint8Array>((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.workers[p - 1].ref();
        this.workers[p - 1].postMessage(job, job.x ? [job.x.buffer as ArrayBuffer] : []);
      }).then((data) => {
        this.workers[p - 1].unref();
        if (data.length !== (r1 - r0) * rb) throw new EngineError('QUANTIZE_WORKER', `a quantize worker returned ${data.length} bytes for ${r1 - r0} rows; expected ${(r1 - r0) * rb}`);
        out.set(data, r0 * rb);
      }));
    }
    try {
      out.set(here(0, per), 0);
    } finally {
      // the workers' jobs settle (or fail) before this call does, so none writes into a later call's output
      await Promise.allSettled(jobs);
    }
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
