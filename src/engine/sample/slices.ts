// Sampling's whole-vocabulary pass split by rows: each thread that computed a slice of the logits
// finds that slice's max, its normaliser Σ exp(l − slice max) and its k largest (sliceTop here, the
// reference for assembly/sample.ts sample_slice_top); backend/logit-stats.ts mergeSliceTops
// combines the slices into the row's.

import { expSumAndTop, FUSED_TOP_MAX } from './expsum.js';
import { scrubMax } from './passes.js';

export { mergeSliceTops, type SliceTop } from '../backend/logit-stats.js';

/**
 * x[0..n) scrubbed in place (NaN → −inf), then its max, Σ exp(x[i] − max) (0 unless the max is
 * finite) and the min(k, n) largest indices into ids, as sample_slice_top; returns {max, sum}.
 */
export function sliceTop(ids: Int32Array, x: Float32Array, n: number, k: number): { max: number; sum: number } {
  const max = scrubMax(x, n);
  const sum = Number.isFinite(max) ? expSumAndTop(ids, x, n, max, Math.min(k, FUSED_TOP_MAX)) : 0;
  return { max, sum };
}
