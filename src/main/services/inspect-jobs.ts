// Tensor statistics and model comparisons run in a worker thread (inspect-worker.ts), one job at a
// time: a new job or Cancel ends the running one (terminate() stops it mid-read) and a fresh
// worker takes the next. Electron main and the dev harness stay responsive however big the tensor.
//
// The worker entry is out/main/inspect-worker.js in the built app (electron.vite.config.ts) and
// src/main/services/inspect-worker.ts from source, started through bin/ts-worker.mjs (tsx).

import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { UsageError } from '../../shared/errors.js';
import type { InspectAnswer, InspectJob } from './inspect-worker.js';

const here = dirname(fileURLToPath(import.meta.url));

function workerScript(): { file: string; workerData?: unknown } {
  const built = join(here, 'inspect-worker.js');
  if (existsSync(built)) return { file: built };
  const source = join(here, 'inspect-worker.ts');
  return { file: resolve(here, '..', '..', '..', 'bin', 'ts-worker.mjs'), workerData: { entry: pathToFileURL(source).href } };
}

/** The job of a request, without the id the runner gives it. */
export type InspectRequest = InspectJob extends infer J ? (J extends InspectJob ? Omit<J, 'id'> : never) : never;

export class InspectCancelled extends UsageError {
  constructor() {
    super('Cancelled.');
  }
}

export class InspectJobs {
  private worker: Worker | null = null;
  private current: { id: number; reject: (e: Error) => void } | null = null;
  private nextId = 1;

  /** Run `job`, ending any running one (it rejects with InspectCancelled). */
  run<T>(job: InspectRequest, onProgress: (done: number, total: number) => void): Promise<T> {
    this.cancel();
    const id = this.nextId++;
    const w = (this.worker ??= this.start());
    return new Promise<T>((resolvePromise, reject) => {
      this.current = { id, reject };
      const onMessage = (a: InspectAnswer) => {
        if (a.id !== id) return;
        if ('progress' in a) return onProgress(a.progress.done, a.progress.total);
        w.off('message', onMessage);
        this.current = null;
        if (a.ok) resolvePromise(a.result as T);
        else reject(new UsageError(a.message));
      };
      w.on('message', onMessage);
      w.postMessage({ ...job, id });
    });
  }

  /** End the running job, if any. */
  cancel(): void {
    const c = this.current;
    if (!c) return;
    this.current = null;
    const w = this.worker;
    this.worker = null;
    void w?.terminate();
    c.reject(new InspectCancelled());
  }

  async close(): Promise<void> {
    this.cancel();
    await this.worker?.terminate();
    this.worker = null;
  }

  private start(): Worker {
    const s = workerScript();
    const w = new Worker(s.file, { workerData: s.workerData, resourceLimits: { maxOldGenerationSizeMb: 2048 } });
    w.unref();
    const fail = (message: string) => {
      if (this.worker !== w) return;
      this.worker = null;
      const c = this.current;
      this.current = null;
      c?.reject(new UsageError(message));
    };
    w.on('error', (err) => fail(`The inspection stopped: ${err.message}`));
    w.on('exit', () => fail('The inspection stopped unexpectedly.'));
    return w;
  }
}
