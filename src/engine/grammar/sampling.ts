// Grammar-constrained sampling, as llama.cpp's common_sampler_sample does it without grammar_first:
// draw from the unconstrained chain (the backend's ready-made logit stats still apply), keep the
// token when the grammar allows it, otherwise mask every token the grammar rejects (-inf) and draw
// again from the same chain over the masked logits.

import type { LogitStats } from '../backend/types.js';
import type { SampleResult, Sampler } from '../sample/sampler.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { compileGrammar, GrammarMatcher } from './matcher.js';
import type { GrammarVocab } from './trie.js';

const vocabs = new WeakMap<Tokenizer, GrammarVocab>();

/** A tokenizer as the grammar sees it (the same object per tokenizer, so its trie is built once). */
export function grammarVocab(tok: Tokenizer): GrammarVocab {
  let v = vocabs.get(tok);
  if (!v) vocabs.set(tok, (v = { size: tok.vocabSize, bytes: (id) => tok.tokenBytes(id), isEog: (id) => tok.isEog(id) }));
  return v;
}

/** A matcher for GBNF text over a tokenizer's vocabulary (throws UsageError on a bad grammar). */
export function grammarMatcher(gbnf: string, tok: Tokenizer): GrammarMatcher {
  return new GrammarMatcher(compileGrammar(gbnf), grammarVocab(tok));
}

export class ConstrainedSampler {
  private masked = new Float32Array(0);
  /** Tokens drawn, and how many of them needed the full mask (for benchmarks). */
  drawn = 0;
  masks = 0;

  constructor(readonly sampler: Sampler, readonly matcher: GrammarMatcher) {}

  /** Draw the next token among those the grammar allows, and advance the grammar past it. */
  sample(logits: Float32Array, history: readonly number[], stats: LogitStats | null): SampleResult {
    this.drawn++;
    let r = this.sampler.sample(logits, history, stats);
    if (!this.matcher.allows(r.id)) {
      this.masks++;
      const mask = this.matcher.mask();
      const n = logits.length;
      if (this.masked.length !== n) this.masked = new Float32Array(n);
      const m = this.masked;
      for (let i = 0; i < n; i++) m[i] = mask[i] ? logits[i] : -Infinity;
      r = this.sampler.sample(m, history, null);
    }
    this.matcher.accept(r.id);
    return r;
  }
}
