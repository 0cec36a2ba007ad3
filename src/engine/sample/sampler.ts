// The sampler chain of llama.cpp (common/sampling.cpp order, src/llama-sampling.cpp formulas):
//   penalties → top-k → top-p → min-p → temperature → softmax → draw
// over one reusable working copy of the logits. Float arithmetic is rounded to float32 where
// llama.cpp computes in float, so boundary cases (cumulative sums, thresholds) decide the same way.
// With top-k off, top-p runs over the whole vocabulary by binning (nucleus.ts) instead of sorting.
// The passes over the whole vocabulary run in TypeScript or WebAssembly (passes.ts, wasm.ts).

import { EngineError } from '../../shared/errors.js';
import { validateSampling, type SamplingParams } from './params.js';
import { createRng, randomSeed } from './rng.js';
import { nucleusBoundary, nucleusFinish, NUCLEUS_BINS } from './nucleus.js';
import { FUSED_TOP_MAX } from './expsum.js';
import { ScalarPasses, type VocabPasses } from './passes.js';
import type { LogitStats } from '../backend/logit-stats.js';

export interface TokenProb {
  id: number;
  p: number;
}

export interface SampleResult {
  id: number;
  /** The 5 most likely tokens after penalties, before truncation and temperature (for the UI). */
  top: TokenProb[];
}

const f32 = Math.fround;
const TOP_SHOWN = 5;

// ---------------------------------------------------------------------------------------------
// Kernels (pure functions over the working logits).

/**
 * Repetition, frequency and presence penalties (llama.cpp llama_sampler_penalties_apply): for each
 * distinct token among the last `lastN` of history (lastN < 0: all of it), with count c:
 *   logit = logit <= 0 ? logit * repeat : logit / repeat;  logit -= c * freq + (c > 0) * presence.
 * Returns the ids it changed.
 */
export function applyPenalties(logits: Float32Array, history: readonly number[], lastN: number, repeat: number, freq: number, presence: number): Iterable<number> {
  if (!penalising(lastN, repeat, freq, presence) || history.length === 0) return [];
  const start = lastN < 0 ? 0 : Math.max(0, history.length - lastN);
  const counts = new Map<number, number>();
  for (let i = start; i < history.length; i++) {
    const t = history[i];
    if (Number.isInteger(t) && t >= 0 && t < logits.length) counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  for (const [t, c] of counts) {
    let l = logits[t];
    l = l <= 0 ? f32(l * repeat) : f32(l / repeat);
    logits[t] = f32(l - f32(f32(c * freq) + presence));
  }
  return counts.keys();
}

/** Whether these penalty settings change any logit (given some history). */
function penalising(lastN: number, repeat: number, freq: number, presence: number): boolean {
  return lastN !== 0 && !(repeat === 1 && freq === 0 && presence === 0);
}

// ---------------------------------------------------------------------------------------------
// The sampler.

export class Sampler {
  readonly params: Readonly<SamplingParams>;
  private rng: () => number;
  private seedInUse: number;
  // Reusable buffers, grown to the vocabulary size on first use (the logits after penalties and the
  // candidate ids are passes.work and passes.ids).
  private probs = new Float64Array(0); // (n_vocab) candidate weights for the draw
  private readonly mass = new Float64Array(NUCLEUS_BINS); // top-p's probability mass per bin

  /** passes: where the whole-vocabulary passes run (session.ts gives sharedWasmPasses()). */
  constructor(params: SamplingParams, private readonly passes: VocabPasses = new ScalarPasses()) {
    validateSampling(params);
    this.params = Object.freeze({ ...params, stop: [...params.stop] });
    this.seedInUse = params.seed === -1 ? randomSeed() : params.seed;
    this.rng = createRng(this.seedInUse);
  }

  /** The seed the RNG started from (the random one when params.seed is -1). */
  get seed(): number {
    return this.seedInUse;
  }

  /** Restart the RNG: from `seed`, else from params.seed (a new random seed if that is -1). */
  reset(seed?: number): void {
    this.seedInUse = seed ?? (this.params.seed === -1 ? randomSeed() : this.params.seed);
    this.rng = createRng(this.seedInUse);
  }

  private ensure(n: number): void {
    if (this.probs.length < n) {
      this.probs = new Float64Array(n);
    }
  }

  /**
   * How many of the largest logits this sampler can take ready-made (LogitStats, found by the
   * backend while computing the logits: MatBackend.matvecTop), or 0 when its settings need its own
   * passes over the vocabulary (penalties change logits; top-p without top-k bins all of them;
   * with neither, every token is a candidate).
   */
  get statsWanted(): number {
    const p = this.params;
    if (penalising(p.penaltyLastN, p.repeatPenalty, p.frequencyPenalty, p.presencePenalty)) return 0;
    if (p.temperature <= 0) return TOP_SHOWN;
    if (p.topK <= 0) return 0;
    const head = Math.max(p.topK, TOP_SHOWN);
    return head <= FUSED_TOP_MAX ? head : 0;
  }

  /**
   * Pick the next token from `logits` (n_vocab), given the tokens so far (prompt + generated).
   * `stats`: the logits' max, normaliser and largest entries when the backend found them (used
   * when valid and statsWanted > 0; the result is the same within the normaliser's 1e-9).
   */
  sample(logits: Float32Array, history: readonly number[], stats: LogitStats | null = null): SampleResult {
    const c = this.truncate(logits, history, stats);
    const ids = this.passes.ids;
    if (this.params.temperature <= 0) return { id: ids[0], top: c.top };
    const sum = this.weigh(c.size, c.sorted);
    const target = sum * this.rng();
    let run = 0;
    for (let i = 0; i < c.size; i++) {
      run += this.probs[i];
      if (run >= target) return { id: ids[i], top: c.top };
    }
    return { id: ids[c.size - 1], top: c.top };
  }

  /**
   * The distribution `sample` draws from (after penalties, truncation and temperature), most likely
   * first when truncation sorted it. Does not advance the RNG. Allocates one entry per candidate.
   */
  candidates(logits: Float32Array, history: readonly number[], stats: LogitStats | null = null): TokenProb[] {
    const c = this.truncate(logits, history, stats);
    const ids = this.passes.ids;
    if (this.params.temperature <= 0) return [{ id: ids[0], p: 1 }];
    const sum = this.weigh(c.size, c.sorted);
    const out: TokenProb[] = [];
    for (let i = 0; i < c.size; i++) out.push({ id: ids[i], p: this.probs[i] / sum });
    return out;
  }

  /** Penalties, top-k, top-p, min-p: leaves the candidates in ids[0..size). */
  private truncate(logits: Float32Array, history: readonly number[], stats: LogitStats | null): { top: TokenProb[]; size: number; sorted: boolean } {
    const p = this.params;
    const n = logits.length;
    if (n === 0) throw new EngineError('SAMPLE_EMPTY', 'The model returned no logits to sample from; the vocabulary is empty.');
    this.ensure(n);
    const v = this.passes;
    const useTopK = p.topK > 0;
    const useTopP = p.topP < 1;
    const wholeVocabTopP = !useTopK && useTopP && p.temperature > 0;
    // The sorted head of the distribution: top-k's survivors, or just the UI's top 5 (greedy).
    const head = useTopK && p.temperature > 0 ? Math.max(p.topK, TOP_SHOWN) : TOP_SHOWN;
    let max: number;
    let sumAll: number;
    let nSorted: number;

    // Ready-made: the backend found the max, the normaliser and the head (no penalties apply, and
    // only the head's logits are read below), so the vocabulary is not copied or passed over.
    const wanted = this.statsWanted;
    if (stats && stats.valid && wanted > 0 && stats.count >= Math.min(wanted, n)) {
      v.prepare(n);
      const work = v.work, ids = v.ids;
      nSorted = Math.min(head, n);
      for (let i = 0; i < nSorted; i++) {
        const t = stats.ids[i];
        ids[i] = t;
        work[t] = logits[t];
      }
      max = stats.max;
      sumAll = stats.sum;
      return this.cut(n, nSorted, max, sumAll);
    }

    // Penalties on a copy (NaN → -inf so it can never be picked), finding the max on the way.
    max = v.load(logits);
    const work = v.work;
    const maxBefore = max;
    const penalised = applyPenalties(work, history, p.penaltyLastN, p.repeatPenalty, p.frequencyPenalty, p.presencePenalty);
    let rescan = false;
    for (const t of penalised) {
      if (logits[t] === maxBefore) rescan = true; // the max itself may have dropped
      else if (work[t] > max) max = work[t];
    }
    if (rescan) max = v.max(n);
    if (max === -Infinity) throw new EngineError('SAMPLE_NO_CANDIDATES', 'Every logit is -inf or NaN; the model produced no usable distribution.');

    // The full distribution's normaliser, for the probabilities shown in the UI (and top-p), and
    // with it the sorted head. Greedy and small top-k (the defaults) get both from one pass (expsum.ts).
    if (wholeVocabTopP) {
      sumAll = v.nucleusMass(this.mass, n, max);
      nSorted = v.selectTopK(n, head);
    } else if (head <= FUSED_TOP_MAX) {
      sumAll = v.expSumAndTop(n, max, head);
      nSorted = Math.min(head, n);
    } else {
      sumAll = v.expSum(n, max);
      nSorted = v.selectTopK(n, head);
    }
    return this.cut(n, nSorted, max, sumAll);
  }

  /**
   * The UI's top 5, then top-k, top-p, min-p on the sorted head ids[0..nSorted) (and the rest of
   * the n logits when top-k is off), given their max and the whole distribution's normaliser.
   */
  private cut(n: number, nSorted: number, max: number, sumAll: number): { top: TokenProb[]; size: number; sorted: boolean } {
    const p = this.params;
    const v = this.passes;
    const work = v.work, ids = v.ids;
    const useTopK = p.topK > 0;
    const useTopP = p.topP < 1;
    const top: TokenProb[] = [];
    for (let i = 0; i < Math.min(TOP_SHOWN, nSorted); i++) top.push({ id: ids[i], p: Math.exp(work[ids[i]] - max) / sumAll });

    // Greedy: the argmax (ids[0], lowest id on ties) survives every truncation, so skip them.
    if (p.temperature <= 0) return { top, size: 1, sorted: true };

    // top-k (llama_sampler_top_k_impl): the k best, sorted. Without top-k, the whole vocabulary.
    let size: number;
    let sorted: boolean;
    if (useTopK) {
      size = Math.min(p.topK, n);
      sorted = true;
    } else {
      size = n;
      sorted = false;
    }

    // top-p (llama_sampler_top_p_apply): softmax over the candidates, keep the shortest sorted
    // prefix whose cumulative probability reaches p.
    if (useTopP) {
      if (useTopK) {
        size = topPCut(work, ids, size, p.topP, softmaxSum(work, ids, size, work[ids[0]]), work[ids[0]]) || size;
      } else {
        // nucleusCut, with its pass over the vocabulary on the passes
        const at = nucleusBoundary(this.mass, sumAll, p.topP);
        const split = v.nucleusSplit(n, max, at.boundary);
        size = nucleusFinish(ids, split.size, v.scratch, split.inBoundary, work, max, at.cum, at.target);
      }
    } else if (!useTopK) {
      for (let i = 0; i < n; i++) ids[i] = i;
    }

    // min-p (llama_sampler_min_p_apply): keep logits >= max + log(p), i.e. p_i >= p * p_max.
    if (p.minP > 0 && size > 1) {
      const minLogit = f32((sorted ? work[ids[0]] : max) + f32(Math.log(p.minP)));
      if (sorted) {
        let i = 1;
        while (i < size && work[ids[i]] >= minLogit) i++;
        size = i;
      } else {
        let k = 0;
        for (let i = 0; i < size; i++) if (work[ids[i]] >= minLogit) ids[k++] = ids[i];
        size = k;
      }
    }
    return { top, size, sorted };
  }

  /**
   * Temperature then softmax weights (llama_sampler_temp_impl, llama_sampler_dist_apply): probs[i]
   * = expf(l_i / T - max), returned with their (double) sum.
   */
  private weigh(size: number, sorted: boolean): number {
    const work = this.passes.work, ids = this.passes.ids, probs = this.probs;
    const t = this.params.temperature;
    let maxL = -Infinity;
    for (let i = 0; i < size; i++) {
      const l = f32(work[ids[i]] / t);
      probs[i] = l;
      if (!sorted || i === 0) maxL = Math.max(maxL, l);
    }
    let sum = 0;
    for (let i = 0; i < size; i++) {
      const e = f32(Math.exp(probs[i] - maxL));
      probs[i] = e;
      sum += e;
    }
    return sum;
  }
}

/** Σ exp(l - maxL) over the candidates, in float like llama_sampler_softmax_impl. */
function softmaxSum(work: Float32Array, ids: Int32Array, size: number, maxL: number): number {
  let s = 0;
  for (let i = 0; i < size; i++) s = f32(s + f32(Math.exp(work[ids[i]] - maxL)));
  return s;
}

/** How many sorted candidates top-p keeps, or 0 if their cumulative probability never reaches p. */
function topPCut(work: Float32Array, ids: Int32Array, size: number, topP: number, sum: number, maxL: number): number {
  let cum = 0;
  for (let i = 0; i < size; i++) {
    cum = f32(cum + f32(f32(Math.exp(work[ids[i]] - maxL)) / sum));
    if (cum >= topP) return i + 1;
  }
  return 0;
}
