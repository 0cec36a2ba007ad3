// A lazy grammar (llama.cpp's grammar_lazy + grammar_triggers): the output is free text until a
// trigger pattern shows in it, then the grammar takes over. It is matched from where the trigger
// says (its first capture group; after the match when it has none), and it first takes the text
// written since then, so a trigger that ends inside a token loses nothing: Llama 3's call is
// matched from its "{", a Harmony call from its "<|channel|>" header.

import type { GrammarMatcher } from './matcher.js';

export interface GrammarTrigger {
  /** Where the grammar starts: its first capture group, or the end of the match when it has none. */
  pattern: RegExp;
  /** Tried only while the output is short enough to be seen whole (the pattern starts with ^). */
  atStart?: boolean;
}

export interface LazyGrammar {
  /** GBNF for the text from the trigger on. */
  grammar: string;
  triggers: GrammarTrigger[];
}

/** How much of the output the triggers see (a trigger is shorter than this). */
const WINDOW = 512;

export class LazyGrammarWatch {
  private text = '';
  /** Characters dropped from the front of `text` (atStart triggers no longer apply). */
  private dropped = 0;
  private readonly patterns: { re: RegExp; atStart: boolean }[];

  constructor(readonly lazy: LazyGrammar, private readonly newMatcher: (gbnf: string) => GrammarMatcher) {
    // ('d': the capture groups' indices)
    this.patterns = lazy.triggers.map((t) => ({ re: new RegExp(t.pattern.source, t.pattern.flags.replace(/[gyd]/g, '') + 'd'), atStart: t.atStart ?? false }));
  }

  /** The output's next piece; a matcher that has taken the text since the trigger, once one fires. */
  push(piece: string): GrammarMatcher | null {
    this.text += piece;
    for (const p of this.patterns) {
      if (p.atStart && this.dropped > 0) continue;
      const m = p.re.exec(this.text);
      if (!m) continue;
      const from = m.indices?.[1]?.[0] ?? m.index + m[0].length;
      const g = this.newMatcher(this.lazy.grammar);
      if (g.acceptText(this.text.slice(from))) return g;
      // what follows the trigger is not the grammar's (a call to no tool): free text, looking past it
      this.drop(m.index + m[0].length);
    }
    if (this.text.length > WINDOW) this.drop(this.text.length - WINDOW);
    return null;
  }

  private drop(n: number): void {
    this.text = this.text.slice(n);
    this.dropped += n;
  }
}
