// The loading line on stderr: `loading 1.23 / 4.56 GB (27%), 640 MB/s`, rewritten in place a few
// times a second while a model loads, and cleared when it is done. Only where stderr is a terminal
// (CliIo.status): a pipe or a log file gets nothing.

import type { CliIo } from './command.js';

/** Milliseconds between two redraws of the line. */
const EVERY_MS = 100;

/** The line for `loaded` of `total` bytes, `ms` after the load began. */
export function progressText(loaded: number, total: number, ms: number): string {
  const gb = (b: number) => (b / 1e9).toFixed(2);
  const pct = total > 0 ? Math.floor((100 * loaded) / total) : 100;
  const rate = ms > 0 ? `, ${Math.round(loaded / 1e3 / ms)} MB/s` : '';
  return `loading ${gb(loaded)} / ${gb(total)} GB (${pct}%)${rate}`;
}

/** LoadOptions.onProgress drawing the line on io.status, and done() to clear it (both no-ops without a terminal). */
export function loadProgress(io: CliIo): { onProgress?: (loaded: number, total: number) => void; done(): void } {
  const status = io.status;
  if (!status) return { done: () => {} };
  const t0 = performance.now();
  let last = -Infinity;
  let shown = false;
  return {
    onProgress: (loaded, total) => {
      const now = performance.now();
      if (now - last < EVERY_MS && loaded < total) return;
      last = now;
      shown = true;
      status(progressText(loaded, total, now - t0));
    },
    done: () => {
      if (shown) status('');
    },
  };
}
