// The passes over the whole vocabulary that sampling makes for every token (copy and scrub the
// logits, their max, the softmax normaliser, the sorted head), behind one interface so the Sampler
// runs them in TypeScript (ScalarPasses, here: the reference) or in WebAssembly SIMD (WasmPasses,
// wasm.ts) and decides the same way with either.

import { expSumAndTop, expSumBelowMax, FUSED_TOP_MAX } from './expsum.js';
import { nucleusMass, nucleusSplit } from './nucleus.js';
import { selectTopK } from './select.js';

export interface VocabPasses {
  /** (≥ n_vocab) the working logits: load's copy, then penalised by the sampler. */
  readonly work: Float32Array;
  /** (≥ n_vocab) candidate token ids: the sorted head, then the candidates. */
  readonly ids: Int32Array;
  /** (≥ n_vocab) top-p's boundary bin (nucleusSplit). */
  readonly scratch: Int32Array;
  /** work[0..n) ← logits (n = logits.length) with NaN → −inf; returns the largest (−inf if none). */
  load(logits: Float32Array): number;
  /** Size work, ids and scratch for n values without filling them (the caller fills what it reads). */
  prepare(n: number): void;
  /** The largest of work[0..n) (NaN-free). */
  max(n: number): number;
  /** Σ exp(work[i] − max) over i < n (max: their largest), within 1e-8 relative (expSumBelowMax). */
  expSum(n: number, max: number): number;
  /** expSum, and the k ≤ FUSED_TOP_MAX largest into ids[0..k) (expSumAndTop). */
  expSumAndTop(n: number, max: number, k: number): number;
  /** The k largest of work[0..n) into ids[0..k) (selectTopK); returns k clamped to n. */
  selectTopK(n: number, k: number): number;
  /** nucleusMass over work[0..n) into mass (NUCLEUS_BINS), bit for bit; returns the total. */
  nucleusMass(mass: Float64Array, n: number, max: number): number;
  /** nucleusSplit of work[0..n) into ids and scratch. */
  nucleusSplit(n: number, max: number, boundary: number): { size: number; inBoundary: number };
}

/** x[0..n) in place: NaN → −inf (so it can never be picked); returns the largest value. */
export function scrubMax(x: Float32Array, n: number): number {
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = x[i];
    if (v > max) max = v;
    else if (v !== v) x[i] = -Infinity;
  }
  return max;
}

/** The passes in TypeScript: the reference for WasmPasses, and what runs without the kernels. */
export class ScalarPasses implements VocabPasses {
  work: Float32Array = new Float32Array(0);
  ids: Int32Array = new Int32Array(0);
  scratch: Int32Array = new Int32Array(0);

  load(logits: Float32Array): number {
    const n = logits.length;
    this.prepare(n);
    this.work.set(logits);
    return scrubMax(this.work, n);
  }

  prepare(n: number): void {
    if (this.work.length < n) {
      this.work = new Float32Array(n);
      this.ids = new Int32Array(n);
      this.scratch = new Int32Array(n);
    }
  }

  max(n: number): number {
    return scrubMax(this.work, n);
  }

  expSum(n: number, max: number): number {
    return expSumBelowMax(this.work, n, max);
  }

  expSumAndTop(n: number, max: number, k: number): number {
    return expSumAndTop(this.ids, this.work, n, max, Math.min(k, FUSED_TOP_MAX));
  }

  selectTopK(n: number, k: number): number {
    return selectTopK(this.ids, this.work, n, k);
  }

  nucleusMass(mass: Float64Array, n: number, max: number): number {
    return nucleusMass(mass, this.work, n, max);
  }

  nucleusSplit(n: number, max: number, boundary: number): { size: number; inBoundary: number } {
    return nucleusSplit(this.ids, this.scratch, this.work, n, max, boundary);
  }
}
