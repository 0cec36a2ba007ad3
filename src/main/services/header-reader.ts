// Library headers are read off the main thread: one worker thread (header-worker.ts) reads one
// file at a time, each under a time limit and the worker under a memory limit. A file that passes
// either gets an error entry; the worker is ended (terminate() stops even a busy loop) and a fresh
// one reads the next file. Electron main and the dev harness stay responsive whatever the files.
//
// The worker entry is out/main/header-worker.js in the built app (electron.vite.config.ts) and
// src/main/services/header-worker.ts from source, started through bin/ts-worker.mjs (tsx).

import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { HeaderAnswer } from './header-worker.js';
import { readEntrySummary, type EntrySummary } from './header-summary.js';
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

interface Job {
  id: number;
  path: string;
  resolve: (s: EntrySummary) => void;
  reject: (e: Error) => void;
}

export class HeaderReader {
  private worker: Worker | null = null;
  private readonly queue: Job[] = [];
  private current: { job: Job; timer: NodeJS.Timeout } | null = null;
  private nextId = 1;
  private closed = false;
  private readonly timeoutMs: number;
  private readonly script: { file: string; workerData?: unknown } | null;

  constructor(private readonly log: Logger, private readonly opts: HeaderReaderOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.script = opts.script ?? defaultScript();
  }

  /** The summary of `path`'s header. Rejects with a one-line Error for a bad, slow or huge header. */
  summary(path: string): Promise<EntrySummary> {
    if (!this.script) return readEntrySummary(path); // no worker entry (should not happen): in process
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, path, resolve, reject });
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
      if (this.worker !== w || !this.current || a.id !== this.current.job.id) return;
      if (a.ok) this.finish(null, a.summary);
      else this.finish(new Error(a.message));
    });
    w.on('error', (err) => {
      if (this.worker !== w) return;
      this.log(`library: header worker failed: ${err.message}`);
      this.worker = null;
      const oom = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      if (this.current) this.finish(new Error(oom ? 'its header needs more memory than any model\'s; the file is corrupt or not a model' : `its header could not be read (${err.message})`));
    });
    w.on('exit', () => {
      if (this.worker !== w) return;
      this.worker = null;
      if (this.current) this.finish(new Error('its header could not be read (the reader stopped)'));
    });
    return w;
  }

  private pump(): void {
    if (this.current || this.closed) return;
    const job = this.queue.shift();
    if (!job) return;
    this.worker ??= this.start();
    const timer = setTimeout(() => {
      this.log(`library: reading the header of ${job.path} took over ${this.timeoutMs} ms; ending the reader`);
      const w = this.worker;
      this.worker = null;
      void w?.terminate();
      this.finish(new Error(`reading its header took longer than ${this.timeoutMs / 1000} s; the file is corrupt or not a model`));
    }, this.timeoutMs);
    this.current = { job, timer };
    this.worker.postMessage({ id: job.id, path: job.path });
  }

  private finish(err: Error | null, summary?: EntrySummary): void {
    const c = this.current;
    if (!c) return;
    this.current = null;
    clearTimeout(c.timer);
    if (err) c.job.reject(err);
    else c.job.resolve(summary!);
    this.pump();
  }
}
