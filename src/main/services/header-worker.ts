// The header worker's thread: reads one model file's header per message and answers with its
// summary, so a slow or huge header never blocks Electron main (header-reader.ts runs it).

import { parentPort } from 'node:worker_threads';
import { readEntrySummary } from './header-summary.js';

export interface HeaderJob { id: number; path: string }
export type HeaderAnswer =
  | { id: number; ok: true; summary: Awaited<ReturnType<typeof readEntrySummary>> }
  | { id: number; ok: false; message: string };

parentPort?.on('message', (job: HeaderJob) => {
  readEntrySummary(job.path).then(
    (summary) => parentPort!.postMessage({ id: job.id, ok: true, summary } satisfies HeaderAnswer),
    (err: unknown) => parentPort!.postMessage({ id: job.id, ok: false, message: err instanceof Error ? err.message : String(err) } satisfies HeaderAnswer),
  );
});
