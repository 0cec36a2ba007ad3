// Top-p over the whole vocabulary (top-k off) without sorting it. Tokens are binned by how far
// their logit lies below the max (1/16 logit per bin, 32 logits deep, one bin for the rest); the
// bins' probability mass says which bin the top-p boundary falls in, so only that bin is sorted.
// Same survivors as llama.cpp llama_sampler_top_p_apply (shortest most-likely set reaching p),
// which gets there by a bucketed partial sort instead.

export const NUCLEUS_BINS_PER_LOGIT = 16;
export const NUCLEUS_DEPTH = 32; // logits below the max; e^-32 ≈ 1e-14
export const NUCLEUS_BINS = NUCLEUS_BINS_PER_LOGIT * NUCLEUS_DEPTH + 1; // last bin: everything deeper

function binOf(below: number): number {
  return below < NUCLEUS_DEPTH ? (below * NUCLEUS_BINS_PER_LOGIT) | 0 : NUCLEUS_BINS - 1;
}

/** mass[b] = Σ exp(l − max) over the tokens in bin b; returns the total (the softmax normaliser). */
export function nucleusMass(mass: Float64Array, logits: Float32Array, n: number, max: number): number {
  mass.fill(0);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const d = max - logits[i];
    const e = Math.exp(-d);
    mass[binOf(d)] += e;
    total += e;
  }
  return total;
}

/**
 * Write into out[0..size) the smallest set of most likely tokens whose probability reaches topP
 * (ties broken by lower id) and return size. The set is in id order except for the boundary bin,
 * which comes last, sorted. scratch (n entries) holds the boundary bin while it is sorted.
 */
export function nucleusCut(out: Int32Array, scratch: Int32Array, logits: Float32Array, n: number, max: number, mass: Float64Array, total: number, topP: number): number {
  const at = nucleusBoundary(mass, total, topP);
  const split = nucleusSplit(out, scratch, logits, n, max, at.boundary);
  return nucleusFinish(out, split.size, scratch, split.inBoundary, logits, max, at.cum, at.target);
}

/** The bin the top-p boundary falls in, the mass of the bins before it, and the mass to reach. */
export function nucleusBoundary(mass: Float64Array, total: number, topP: number): { boundary: number; cum: number; target: number } {
  const target = topP * total;
  let cum = 0;
  for (let b = 0; b < NUCLEUS_BINS; b++) {
    if (cum + mass[b] >= target) return { boundary: b, cum, target };
    cum += mass[b];
  }
  return { boundary: NUCLEUS_BINS - 1, cum, target };
}

/**
 * The pass over the vocabulary: ids of the tokens in bins before `boundary` into out (id order),
 * those in the boundary bin into scratch. Returns how many of each.
 */
export function nucleusSplit(out: Int32Array, scratch: Int32Array, logits: Float32Array, n: number, max: number, boundary: number): { size: number; inBoundary: number } {
  let size = 0;
  let inBoundary = 0;
  for (let i = 0; i < n; i++) {
    const b = binOf(max - logits[i]);
    if (b < boundary) out[size++] = i;
    else if (b === boundary) scratch[inBoundary++] = i;
  }
  return { size, inBoundary };
}

/**
 * Sort the boundary bin (scratch[0..inBoundary)) and append its tokens to out[0..size) until the
 * cumulative mass reaches target; returns the new size.
 */
export function nucleusFinish(out: Int32Array, size: number, scratch: Int32Array, inBoundary: number, logits: Float32Array, max: number, cum: number, target: number): number {
  const edge = scratch.subarray(0, inBoundary);
  edge.sort((a, b) => (logits[b] - logits[a]) || (a - b));
  for (let j = 0; j < inBoundary; j++) {
    out[size++] = edge[j];
    cum += Math.exp(logits[edge[j]] - max);
    if (cum >= target) break;
  }
  return size;
}
