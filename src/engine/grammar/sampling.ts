// Grammar-constrained sampling, as llama.cpp's common_sampler_sample does it without grammar_first:
// draw from the unconstrained chain (the backend's ready-made logit stats still apply), keep the
// token when the grammar allows it, otherwise mask every token the grammar rejects (-inf) and draw
// again from the same chain over the masked logits.
//
// The second draw rarely needs the whole mask: with top-k on and no penalties, it only ever sees
// the k most likely allowed tokens, which are found by checking the most likely tokens one by one
// (a few microseconds each); everything else is set to -inf, and the draw is the same as over the
// fully masked logits. Only when they are not among the M most likely is the whole mask computed.

import type { LogitStats } from '../backend/logit-stats.js';
import type { SampleResult, Sampler } from '../sample/sampler.js';
import { selectTopK } from '../sample/select.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { compileGrammar, GrammarMatcher } from './matcher.js';
import type { GrammarVocab } from './trie.js';

const vocabs = new WeakMap<Tokenizer, GrammarVocab>();
/** How many of the most likely tokens the second draw checks one by one before computing the whole mask. */
const CHECKED = 256;
/** The sampler's top 5 (the UI's candidates) are looked for among the allowed ones too. */
const SHOWN = 5;

/** A tokenizer as the grammar sees it (the same object per tokenizer, so its trie is built once). */
export function grammarVocab(tok: Tokenizer): GrammarVocab {
  let v = vocabs.get(tok);
  if (!v) vocabs.set(tok, (v = { size: tok.vocabSize, bytes: (id) => tok.bytes(id, { skipSpecial: true }), isEog: (id) => tok.isEog(id) }));
  return v;
}

/** A matcher for GBNF text over a tokenizer's vocabulary (throws UsageError on a bad grammar). */
export function grammarMatcher(gbnf: string, tok: Tokenizer): GrammarMatcher {
  return new GrammarMatcher(compileGrammar(gbnf), grammarVocab(tok));
}

export class ConstrainedSampler {
  private masked = new Float32Array(0);
  private order = new Int32Array(CHECKED);
  /** Tokens drawn, how many needed a second draw, and how many of those the whole mask (benchmarks). */
  drawn = 0;
  redrawn = 0;
  masks = 0;

  constructor(readonly sampler: Sampler, readonly matcher: GrammarMatcher) {}

  /** Draw the next token among those the grammar allows, and advance the grammar past it. */
  sample(logits: Float32Array, history: readonly number[], stats: LogitStats | null): SampleResult {
    this.drawn++;
    let r = this.sampler.sample(logits, history, stats);
    if (!this.matcher.allows(r.id)) {
      this.redrawn++;
      const n = logits.length;
      if (this.masked.length !== n) this.masked = new Float32Array(n);
      // (a small vocabulary's mask, or one cached for this state, is cheaper than checking)
      if (n < 16 * CHECKED || this.matcher.hasCachedMask() || !this.maskByChecking(logits)) {
        this.masks++;
        const mask = this.matcher.mask();
        const m = this.masked;
        for (let i = 0; i < n; i++) m[i] = mask[i] ? logits[i] : -Infinity;
      }
      r = this.sampler.sample(this.masked, history, null);
    }
    this.matcher.accept(r.id);
    return r;
  }

  /**
   * masked = logits on the top-k allowed tokens (and the UI's top 5), -inf elsewhere, when those are
   * among the CHECKED most likely tokens; false when the whole mask is needed (top-k off, penalties
   * on, which reorder the logits, or too few allowed tokens near the top).
   */
  private maskByChecking(logits: Float32Array): boolean {
    const p = this.sampler.params;
    const penalties = p.penaltyLastN !== 0 && !(p.repeatPenalty === 1 && p.frequencyPenalty === 0 && p.presencePenalty === 0);
    const k = Math.max(p.temperature <= 0 ? 1 : p.topK, SHOWN);
    if ((p.temperature > 0 && p.topK <= 0) || penalties || k > CHECKED / 2) return false;
    const n = logits.length;
    for (let i = 0; i < n; i++) if (Number.isNaN(logits[i])) return false; // (selectTopK needs no NaN)
    const got = selectTopK(this.order, logits, n, Math.min(CHECKED, n));
    const found: number[] = [];
    for (let i = 0; i < got && found.length < k; i++) if (this.matcher.allows(this.order[i])) found.push(this.order[i]);
    if (found.length < k && got < n) return false;
    const m = this.masked;
    m.fill(-Infinity);
    for (const id of found) m[id] = logits[id];
    return found.length > 0;
  }
}
