// Headers are read off the main thread: one worker thread (header-worker.ts) runs one job at a
// time (a library entry's summary, an opened model's view, a metadata slice: header-jobs.ts),
// each under a time limit and the worker under a memory limit. A file that passes
// either gets an error entry; the worker is ended (terminate() stops even a busy loop) and a fresh
// one reads the next file. Electron main and the dev harness stay responsive whatever the files.
//
// The worker entry is out/main/header-worker.js in the built app (electron.vite.config.ts) and
// src/main/services/header-worker.ts from source, started through bin/ts-worker.mjs (tsx).

import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { GgufError, deserializeError } from '../../shared/errors.js';
import { HeaderJobs, type HeaderAnswer, type HeaderJob, type HeaderResults } from './header-jobs.js';
import type { EntrySummary } from './header-summary.js';
import type { Logger } from './log.js';

export interface HeaderReaderOptions {
  /** Per file (default 10 s). */
  timeoutMs?: number;
  /** The worker's heap limit (default 1024 MiB). */
  maxHeapMb?: number;
  /** A worker script to run instead of the default (tests). */
  script?: { file: string; workerData?: unknown };
}

const here = dirname(fileURLToPath(import.meta.url));

function defaultScript(): { file: string; workerData?: unknown } | null {
  const built = join(here, 'header-worker.js');
  if (existsSync(built)) return { file: built };
  const source = join(here, 'header-worker.ts');
  const boot = resolve(here, '..', '..', '..', 'bin', 'ts-worker.mjs');
  if (existsSync(source) && existsSync(boot)) return { file: boot, workerData: { entry: pathToFileURL(source).href } };
  return null;
}

type JobRequest = HeaderJob extends infer J ? (J extends HeaderJob ? Omit<J, 'id'> : never) : never;

interface Job {
  job: HeaderJob;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export class HeaderReader {
  private worker: Worker | null = null;
  private readonly queue: Job[] = [];
  private current: { job: Job; timer: NodeJS.Timeout } | null = null;
  private nextId = 1;
  private closed = false;
  private inProcess: HeaderJobs | null = null;
  private readonly timeoutMs: number;
  private readonly script: { file: string; workerData?: unknown } | null;

  constructor(private readonly log: Logger, private readonly opts: HeaderReaderOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.script = opts.script ?? defaultScript();
  }

  /** The summary of `path`'s header. Rejects with a one-line error for a bad, slow or huge header. */
  summary(path: string): Promise<EntrySummary> {
    return this.run({ kind: 'summary', path });
  }

  /** The page's view of the model at `path` (all but its library entry); the worker keeps its header. */
  open(path: string): Promise<HeaderResults['open']> {
    return this.run({ kind: 'open', path });
  }

  /** A slice of a long metadata array of the model at `path` (see metaArraySlice). */
  metaArray(path: string, key: string, offset: number, limit: number, query?: string): Promise<HeaderResults['metaArray']> {
    return this.run({ kind: 'metaArray', path, key, offset, limit, ...(query === undefined ? {} : { query }) });
  }

  private run<R extends JobRequest>(request: R): Promise<HeaderResults[R['kind']]> {
    const job = { ...request, id: this.nextId++ } as HeaderJob;
    if (!this.script) { // no worker entry (should not happen): in process
      this.inProcess ??= new HeaderJobs();
      return this.inProcess.run(job).then(settle) as Promise<HeaderResults[R['kind']]>;
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve: resolve as (v: unknown) => void, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const j of this.queue.splice(0)) j.reject(new Error('the library is closing'));
    if (this.current) this.finish(new Error('the library is closing'));
    await this.worker?.terminate();
    this.worker = null;
  }

  private start(): Worker {
    const s = this.script!;
    const w = new Worker(s.file, { workerData: s.workerData, resourceLimits: { maxOldGenerationSizeMb: this.opts.maxHeapMb ?? 1024 } });
    w.unref(); // an idle reader never keeps the process alive
    // A worker ended by a timeout is no longer this.worker: what it says or does after is ignored.
    w.on('message', (a: HeaderAnswer) => {
      if (this.worker !== w || !this.current || a.id !== this.current.job.job.id) return;
      if (a.ok) this.finish(null, a.value);
      else this.finish(deserializeError(a.error));
    });
    w.on('error', (err) => {
      if (this.worker !== w) return;
      this.log(`library: header worker failed: ${err.message}`);
      this.worker = null;
      const oom = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      if (this.current) this.finish(oom ? new GgufError('GGUF_TOO_LARGE', 'its header needs more memory than any model\'s; the file is corrupt or not a model') : new GgufError('GGUF_IO', `its header could not be read (${err.message})`));
    });
    w.on('exit', () => {
      if (this.worker !== w) return;
      this.worker = null;
      if (this.current) this.finish(new GgufError('GGUF_IO', 'its header could not be read (the reader stopped)'));
    });
    return w;
  }

  private pump(): void {
    if (this.current || this.closed) return;
    const job = this.queue.shift();
    if (!job) return;
    this.worker ??= this.start();
    const timer = setTimeout(() => {
      this.log(`library: reading the header of ${job.job.path} took over ${this.timeoutMs} ms; ending the reader`);
      const w = this.worker;
      this.worker = null;
      void w?.terminate();
      this.finish(new GgufError('GGUF_TOO_LARGE', `reading its header took longer than ${this.timeoutMs / 1000} s; the file is corrupt or not a model`));
    }, this.timeoutMs);
    this.current = { job, timer };
    this.worker.postMessage(job.job);
  }

  private finish(err: Error | null, value?: unknown): void {
    const c = this.current;
    if (!c) return;
    this.current = null;
    clearTimeout(c.timer);
    if (err) c.job.reject(err);
    else c.job.resolve(value);
    this.pump();
  }
}

function settle(a: HeaderAnswer): unknown {
  if (a.ok) return a.value;
  throw deserializeError(a.error);
}
