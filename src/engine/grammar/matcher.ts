// A grammar applied to generation, one token at a time (llama.cpp's llama_grammar_apply_impl /
// llama_grammar_accept_impl): which tokens may come next, and the state after the chosen one.
//
// Speed: the sampler first checks only the token it drew (allows(): a walk over that token's bytes)
// and asks for the whole mask only when that token is rejected (llama.cpp's grammar "first try").
// The mask is one scan over the vocabulary's byte trie that skips every rejected subtree, with the
// automaton's transitions cached across tokens, and the last masks are kept per state.

import { UsageError } from '../../shared/errors.js';
import { DEAD, GrammarAutomaton, UNKNOWN } from './automaton.js';
import { parseGbnf, type ParseOptions } from './gbnf.js';
import { tokenTrie, type GrammarVocab, type TokenTrie } from './trie.js';

/** Masks kept per automaton, most recent first. */
const MASK_CACHE = 16;

/** A grammar ready to match: its GBNF text and the automaton built from it (shared by matchers). */
export interface CompiledGrammar {
  readonly text: string;
  automaton: GrammarAutomaton;
}

const compiled = new Map<string, CompiledGrammar>();

/** Parse and check GBNF text (throws UsageError), reusing the last 4 compiled grammars (each automaton stays under GrammarMatcher.maxStates states, ~1 KiB each). */
export function compileGrammar(text: string, opts: ParseOptions = {}): CompiledGrammar {
  const hit = opts.tokenId ? undefined : compiled.get(text);
  if (hit) return hit;
  const g: CompiledGrammar = { text, automaton: new GrammarAutomaton(parseGbnf(text, opts)) };
  if (!opts.tokenId) {
    if (compiled.size >= 4) compiled.delete(compiled.keys().next().value!);
    compiled.set(text, g);
  }
  return g;
}

export class GrammarMatcher {
  /** Past this many automaton states (about 1 KiB each), a matcher starts a fresh automaton. */
  static maxStates = 20_000;
  private readonly trie: TokenTrie;
  private a: GrammarAutomaton;
  private s: number;
  private readonly stateAt: Int32Array; // the scan's state at each trie depth

  constructor(private readonly g: CompiledGrammar, readonly vocab: GrammarVocab) {
    this.trie = tokenTrie(vocab);
    this.a = g.automaton;
    this.s = this.a.start;
    this.stateAt = new Int32Array(this.trie.maxDepth + 1);
  }

  /** Some parse is complete: an end-of-generation token is allowed now. */
  get accepting(): boolean {
    return this.a.states[this.s].accepting;
  }

  /** Every parse is complete: nothing more may be generated. */
  get complete(): boolean {
    return this.a.states[this.s].complete;
  }

  /** Whether token `id` may come next. */
  allows(id: number): boolean {
    const st = this.a.states[this.s];
    if (id < 0 || id >= this.trie.tokenBytes.length) return false;
    if (this.isEogToken(id)) return st.accepting;
    const n = this.a.acceptToken(this.s, id, this.trie.tokenBytes[id]);
    return n !== DEAD && this.a.states[n].endOk;
  }

  private isEogToken(id: number): boolean {
    const eog = this.trie.eog;
    for (let i = 0; i < eog.length; i++) if (eog[i] === id) return true;
    return false;
  }

  /** Whether mask() for the current state would come from the cache. */
  hasCachedMask(): boolean {
    return this.a.masks.get(this.vocab)?.has(this.s) ?? false;
  }

  /** allowed[id] = 1 for each token that may come next, 0 otherwise (n_vocab entries; do not keep it). */
  mask(): Uint8Array {
    let cache = this.a.masks.get(this.vocab);
    if (!cache) this.a.masks.set(this.vocab, (cache = new Map()));
    const hit = cache.get(this.s);
    if (hit) {
      cache.delete(this.s); // most recent last
      cache.set(this.s, hit);
      return hit;
    }
    const t = this.trie, a = this.a;
    const allowed = new Uint8Array(t.tokenBytes.length);
    const stateAt = this.stateAt;
    stateAt[0] = this.s;
    const { byte, depth, end, tokenHead, tokenNext } = t;
    const n = byte.length;
    let trans = a.trans, endOk = a.endOk;
    for (let i = 1; i < n; ) {
      const from = stateAt[depth[i] - 1];
      let s = trans[from * 256 + byte[i]];
      if (s === UNKNOWN) {
        s = a.next(from, byte[i]); // computes the transition (the tables may grow)
        trans = a.trans;
        endOk = a.endOk;
      }
      if (s === DEAD) {
        i = end[i];
        continue;
      }
      stateAt[depth[i]] = s;
      if (endOk[s]) for (let id = tokenHead[i]; id >= 0; id = tokenNext[id]) allowed[id] = 1;
      i++;
    }
    const st = a.states[this.s];
    for (const id of t.eog) allowed[id] = st.accepting ? 1 : 0;
    if (st.tokenStacks.length > 0) {
      for (let id = 0; id < allowed.length; id++) if (!allowed[id] && a.acceptTokenElement(this.s, id).length > 0) allowed[id] = 1;
    }
    if (cache.size >= MASK_CACHE) cache.delete(cache.keys().next().value!);
    cache.set(this.s, allowed);
    return allowed;
  }

  /** Advance past token `id` (llama_grammar_accept_impl). Throws when the grammar does not allow it. */
  accept(id: number): void {
    const a = this.a;
    const st = a.states[this.s];
    if (this.isEogToken(id)) {
      if (!st.accepting) throw new UsageError(`the grammar does not allow ending here (token ${id})`);
      return;
    }
    const next = a.acceptToken(this.s, id, this.trie.tokenBytes[id] ?? new Uint8Array(0));
    if (next === DEAD || !a.states[next].endOk) throw new UsageError(`the grammar does not allow token ${id} here`);
    this.s = next;
    if (a.size > GrammarMatcher.maxStates) this.rebase();
  }

  /**
   * Advance past `text` as if generated (a lazy grammar catching up with the text since its
   * trigger); false, and no change, when the grammar does not allow it.
   */
  acceptText(text: string): boolean {
    const next = this.a.walk(this.s, new TextEncoder().encode(text));
    if (next === DEAD || !this.a.states[next].endOk) return false;
    this.s = next;
    if (this.a.size > GrammarMatcher.maxStates) this.rebase();
    return true;
  }

  /** A fresh automaton holding only the current state (the old one's cached transitions are dropped). */
  private rebase(): void {
    const old = this.a, st = old.states[this.s];
    const fresh = new GrammarAutomaton(old.grammar);
    const stacks = st.stacks.map((id) => fresh.internStack([...old.stack(id)]));
    this.s = fresh.state(stacks, st.partialValue, st.partialRemain);
    this.a = fresh;
    this.g.automaton = fresh;
  }
}
