// The inspection worker's thread: one tensor's statistics or a comparison of two files per
// message, with progress, so reading gigabytes never blocks Electron main (inspect-jobs.ts runs it).

import { closeSync, openSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { ModelCompareView, TensorStatsView } from '../../shared/contract.js';
import { readGgufHeaderSync } from '../../engine/gguf/file.js';
import { diffModels } from '../../engine/inspect/model-diff.js';
import { findTensor } from '../../engine/inspect/tensor-chunks.js';
import { tensorStats } from '../../engine/inspect/tensor-stats.js';

export type InspectJob =
  | { id: number; kind: 'stats'; path: string; name: string; bins: number; heatmap: { rows: number; cols: number } }
  | { id: number; kind: 'compare'; path: string; other: string };

export type InspectAnswer =
  | { id: number; progress: { done: number; total: number } }
  | { id: number; ok: true; result: TensorStatsView | Omit<ModelCompareView, 'other'> }
  | { id: number; ok: false; message: string };

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** At most ~20 progress messages a second. */
function throttled(id: number): (done: number, total: number) => void {
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (done !== total && now - last < 50) return;
    last = now;
    parentPort!.postMessage({ id, progress: { done, total } } satisfies InspectAnswer);
  };
}

function run(job: InspectJob): InspectAnswer {
  if (job.kind === 'stats') {
    const h = readGgufHeaderSync(job.path);
    const t = findTensor(h, job.name);
    const fd = openSync(job.path, 'r');
    try {
      const s = tensorStats(fd, h, t, { bins: job.bins, heatmap: job.heatmap, onProgress: throttled(job.id) });
      return { id: job.id, ok: true, result: { ...s, min: finite(s.min), max: finite(s.max), mean: finite(s.mean), std: finite(s.std) } };
    } finally {
      closeSync(fd);
    }
  }
  const a = readGgufHeaderSync(job.path);
  const b = readGgufHeaderSync(job.other);
  const fdA = openSync(job.path, 'r');
  try {
    const fdB = openSync(job.other, 'r');
    try {
      const progress = throttled(job.id);
      const d = diffModels(fdA, a, fdB, b, { onProgress: (done, total) => progress(done, total) });
      return { id: job.id, ok: true, result: d };
    } finally {
      closeSync(fdB);
    }
  } finally {
    closeSync(fdA);
  }
}

parentPort?.on('message', (job: InspectJob) => {
  let answer: InspectAnswer;
  try {
    answer = run(job);
  } catch (err) {
    answer = { id: job.id, ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(answer);
});
