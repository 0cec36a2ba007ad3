// What sampling needs of a logits row (its max, softmax normaliser and largest entries), found by
// the backend's threads while the row is in cache (MatBackend.matvecTop), and how the per-thread
// slices are merged into the row's. The sampler (sample/) reads these; the backends fill them.

/** Largest k for which expSumAndTop's insertion list beats selectTopK's heap (sample/expsum.ts). */
export const FUSED_TOP_MAX = 64;

/**
 * A logits row's max, softmax normaliser and largest entries, found by the threads that computed
 * it (MatBackend.matvecTop), so that sampling need not pass over the whole vocabulary again.
 */
export interface LogitStats {
  /** How many of the largest the caller wants (0 to FUSED_TOP_MAX; 0: do not compute them). */
  want: number;
  /** True when the last product filled the fields below for its output; false otherwise. */
  valid: boolean;
  /** The largest value (finite when valid). */
  max: number;
  /** Σ exp(out[i] − max) over the row, within 1e-9 relative (as sample_expsum_top). */
  sum: number;
  /** ids[0..count): the indices of the count = min(want, rows) largest, largest first, lower index first on ties. */
  count: number;
  readonly ids: Int32Array;
}

/** Empty stats that want nothing yet. */
export function createLogitStats(): LogitStats {
  return { want: 0, valid: false, max: 0, sum: 0, count: 0, ids: new Int32Array(FUSED_TOP_MAX) };
}

/** One slice's results: its rows [r0, r0 + n) of the row, max, normaliser below it, ids (slice-local) of its largest. */
export interface SliceTop {
  r0: number;
  n: number;
  max: number;
  sum: number;
  ids: Int32Array;
}

/**
 * into ← the stats of the whole row `out` (its slices already scrubbed) from its slices, in row
 * order: max M = the slices' largest, Σ = Σ_j sum_j · exp(max_j − M), and the k largest by a merge
 * of the sorted lists (the earlier slice first on equal values, so lower index first on ties, as
 * one pass over the whole row orders them). into.valid is false when a slice's max is not finite
 * (the sampler then makes its own passes). `pos` (≥ slices.length) is scratch.
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
