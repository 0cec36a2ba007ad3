// The softmax normaliser Σ exp(l_i − max) over a whole vocabulary without one Math.exp per token.
// Math.exp is a call into C in V8 (~10 ns); over 152k logits it dominated sampling. Instead each
// term is a table entry times a short polynomial:
//   d = (max − l)·64, j = round(d), r = (d − j)/64 ∈ [−1/128, 1/128]
//   exp(−(max − l)) = exp(−j/64) · exp(−r),  exp(−r) ≈ 1 − r + r²/2 − r³/6
// Taylor remainder ≤ r⁴/24 ≈ 1.0e-10 relative per term, so the sum is within ~1e-10 relative.
// Terms with l < max − 32 are dropped: each is < e^-31.99 ≈ 1.3e-14 of the max's term (which is 1),
// so n of them move the sum by < n·1.3e-14 relative (2e-9 for a 152k vocabulary).

import { FUSED_TOP_MAX } from '../backend/logit-stats.js';

const STEPS_PER_LOGIT = 64;
const DEPTH = 32; // logits below the max still counted
const LIMIT = DEPTH * STEPS_PER_LOGIT;

/** EXP_TABLE[j] = exp(−j/64) for j < LIMIT; 0 at LIMIT, where everything deeper is clamped. */
const EXP_TABLE = (() => {
  const t = new Float64Array(LIMIT + 1);
  for (let j = 0; j < LIMIT; j++) t[j] = Math.exp(-j / STEPS_PER_LOGIT);
  return t;
})();

/**
 * Σ exp(values[i] − max) over i < n, within 1e-8 relative of the exact sum. max must be the
 * largest value (finite); NaN must have been replaced (−inf counts as 0).
 */
export function expSumBelowMax(values: Float32Array, n: number, max: number): number {
  // Module constants copied to locals: V8 reloads module bindings on every iteration otherwise.
  const table = EXP_TABLE, steps = STEPS_PER_LOGIT, limit = LIMIT;
  const scaledMax = max * steps;
  const inv = 1 / steps;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    // Clamping to the limit (table entry 0, r = 0) keeps the loop free of branches; −inf lands there.
    const d = Math.min(scaledMax - values[i] * steps, limit);
    const j = (d + 0.5) | 0;
    const r = (d - j) * inv;
    sum += table[j] * (1 + r * (-1 + r * (0.5 - r * (1 / 6))));
  }
  return sum;
}

/** Scalar reference: one Math.exp per value (for tests). */
export function expSumBelowMaxReference(values: Float32Array, n: number, max: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += Math.exp(values[i] - max);
  return sum;
}

/** Largest k for which expSumAndTop's insertion list beats selectTopK's heap (backend/logit-stats.ts). */
export { FUSED_TOP_MAX };

/**
 * expSumBelowMax and the k largest values: writes into out[0..k) their indices, largest first,
 * lower index first on ties (like selectTopK), by insertion into a sorted list (after the first
 * few hundred values an insertion is rare). k is clamped to [0, min(n, FUSED_TOP_MAX)]; returns the
 * sum. Two passes (the sum, then the list) beat one fused loop in V8 (docs/performance.md,
 * "Numbers behind choices in the code").
 */
export function expSumAndTop(out: Int32Array, values: Float32Array, n: number, max: number, k: number): number {
  k = Math.max(0, Math.min(k, n, FUSED_TOP_MAX));
  const sum = expSumBelowMax(values, n, max);
  let size = 0;
  let worst = k > 0 ? -Infinity : Infinity; // the value a newcomer must beat once the list is full
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v > worst || size < k) {
      // Insert i; equal values stay ahead of it. When the list is full its last entry drops off.
      let s = size < k ? size++ : k - 1;
      while (s > 0 && v > values[out[s - 1]]) {
        out[s] = out[s - 1];
        s--;
      }
      out[s] = i;
      if (size === k) worst = values[out[k - 1]];
    }
  }
  return sum;
}
