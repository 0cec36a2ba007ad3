// Sampling's whole-vocabulary pass split by rows: each thread that computed a slice of the logits
// finds that slice's max, its normaliser Σ exp(l − slice max) and its k largest (sliceTop here, the
// reference for assembly/sample.ts sample_slice_top); mergeSliceTops combines the slices into the
// row's: max M = the slices' largest, Σ = Σ_j sum_j · exp(max_j − M), and the k largest by a merge
// of the sorted lists (the earlier slice first on equal values, so lower index first on ties, as
// one pass over the whole row orders them).

import type { LogitStats } from '../backend/types.js';
import { expSumAndTop, FUSED_TOP_MAX } from './expsum.js';
import { scrubMax } from './passes.js';

/** One slice's results: its rows [r0, r0 + n) of the row, max, normaliser below it, ids (slice-local) of its largest. */
export interface SliceTop {
  r0: number;
  n: number;
  max: number;
  sum: number;
  ids: Int32Array;
}

/**
 * x[0..n) scrubbed in place (NaN → −inf), then its max, Σ exp(x[i] − max) (0 unless the max is
 * finite) and the min(k, n) largest indices into ids, as sample_slice_top; returns {max, sum}.
 */
export function sliceTop(ids: Int32Array, x: Float32Array, n: number, k: number): { max: number; sum: number } {
  const max = scrubMax(x, n);
  const sum = Number.isFinite(max) ? expSumAndTop(ids, x, n, max, Math.min(k, FUSED_TOP_MAX)) : 0;
  return { max, sum };
}

/**
 * into ← the stats of the whole row `out` (its slices already scrubbed) from its slices, in row
 * order; into.valid is false when a slice's max is not finite (the sampler then makes its own
 * passes). `pos` (≥ slices.length) is scratch.
 */
export function mergeSliceTops(into: LogitStats, out: Float32Array, slices: readonly SliceTop[], pos: Int32Array = new Int32Array(slices.length)): void {
  into.valid = false;
  let max = -Infinity;
  for (const s of slices) {
    if (!Number.isFinite(s.max)) return;
    if (s.max > max) max = s.max;
  }
  let sum = 0;
  for (const s of slices) sum += s.sum * Math.exp(s.max - max); // one slice: × 1, its own sum
  let total = 0;
  for (let j = 0; j < slices.length; j++) {
    pos[j] = 0;
    total += Math.min(into.want, slices[j].n);
  }
  const count = Math.min(into.want, total, into.ids.length);
  for (let c = 0; c < count; c++) {
    // the slice whose next entry is largest (the earliest on equal values)
    let best = -1, bestV = 0;
    for (let j = 0; j < slices.length; j++) {
      const s = slices[j];
      if (pos[j] >= Math.min(into.want, s.n)) continue;
      const v = out[s.r0 + s.ids[pos[j]]];
      if (best < 0 || v > bestV) {
        best = j;
        bestV = v;
      }
    }
    const s = slices[best];
    into.ids[c] = s.r0 + s.ids[pos[best]++];
  }
  into.max = max;
  into.sum = sum;
  into.count = count;
  into.valid = true;
}
