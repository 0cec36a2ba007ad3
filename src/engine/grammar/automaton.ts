// The grammar's pushdown matcher (llama.cpp src/llama-grammar.cpp: advance_stack, match_char,
// match_partial_char, accept_chr) turned into a lazily built automaton over bytes.
//
// A stack is a list of element positions (the top last), each a position in the flat element
// array; llama.cpp's "stacks" (the set of parses still alive) plus the bytes of an unfinished UTF-8
// character make a state. States are interned, so a state is a number, and the transition on each
// byte is computed once and kept in a table: walking a token's bytes (or the whole vocabulary's
// trie) is then one array read per byte.

import { UsageError } from '../../shared/errors.js';
import { ALT, CHAR, CHAR_ALT, CHAR_ANY, CHAR_NOT, CHAR_RNG_UPPER, END, leftRecursiveRule, RULE_REF, TOKEN, TOKEN_NOT, type ParsedGrammar } from './gbnf.js';

/** A transition that has not been computed yet / one that no parse survives. */
export const UNKNOWN = -2;
export const DEAD = -1;

/** A grammar state: the stacks alive and the partial UTF-8 character read so far. */
export interface GrammarState {
  stacks: number[]; // stack ids, ascending, no duplicates
  partialValue: number; // the bits of the unfinished character
  partialRemain: number; // its continuation bytes still to come (0: none)
  /** Some stack is empty: the text so far is a complete sentence (EOS may be sampled). */
  accepting: boolean;
  /** Every stack is empty: nothing can follow, generation is over. */
  complete: boolean;
  /** A token may end here: no partial character, or one that can still match some stack. */
  endOk: boolean;
  /** Stack ids whose top is a token element (<[id]>, !<[id]>): matched by token id, not bytes. */
  tokenStacks: number[];
  /** The state with the same stacks and no partial character (itself when it has none). */
  base: number;
  /** Distinct char-set positions on top of the stacks: the next state depends on c only through which match. */
  tops: number[];
  /** The next state for each match signature over `tops` (bit i: tops[i] matches). */
  bySignature: Map<number, number>;
}

export class GrammarAutomaton {
  // The rules, flattened: element i is (types[i], values[i]); ruleStart[r] is rule r's first.
  readonly types: Uint8Array;
  readonly values: Uint32Array;
  readonly ruleStart: Int32Array;

  private readonly stackList: number[][] = [];
  private readonly stackIds = new Map<string, number>();
  private readonly advanced = new Map<number, number[]>(); // stack id → its advanced stack ids
  readonly states: GrammarState[] = [];
  private readonly stateIds = new Map<string, number>();
  /** (states) × 256: the next state on each byte (UNKNOWN: not computed yet; see next()). */
  trans = new Int32Array(0);
  /** states[s].endOk as an array (the mask's scan reads it per trie node). */
  endOk = new Uint8Array(0);
  /** The state before any text. */
  readonly start: number;
  /** The last few token masks of each vocabulary, by state (matcher.ts). */
  readonly masks = new WeakMap<object, Map<number, Uint8Array>>();

  constructor(readonly grammar: ParsedGrammar, root = 'root') {
    const rootId = grammar.ids.get(root);
    if (rootId === undefined) throw new UsageError(`Grammar error: the grammar has no rule '${root}' to start from.`);
    const lr = leftRecursiveRule(grammar.rules);
    if (lr >= 0) throw new UsageError(`Grammar error: rule '${grammar.names[lr]}' is left-recursive, which llama.cpp's grammars do not support.`);
    let n = 0;
    for (const r of grammar.rules) n += r.length;
    this.types = new Uint8Array(n);
    this.values = new Uint32Array(n);
    this.ruleStart = new Int32Array(grammar.rules.length);
    let at = 0;
    grammar.rules.forEach((rule, r) => {
      this.ruleStart[r] = at;
      for (const el of rule) {
        this.types[at] = el.type;
        this.values[at] = el.value;
        at++;
      }
    });
    // the initial stacks: each alternate of the root rule, advanced (llama_grammar_init_impl)
    const ids: number[] = [];
    let pos = this.ruleStart[rootId];
    for (;;) {
      const stack = this.isEnd(pos) ? [] : [pos];
      for (const s of this.advance(stack)) ids.push(s);
      while (!this.isEnd(pos)) pos++;
      if (this.types[pos] === ALT) pos++;
      else break;
    }
    this.start = this.state(ids, 0, 0);
  }

  get size(): number {
    return this.states.length;
  }

  private isEnd(pos: number): boolean {
    const t = this.types[pos];
    return t === END || t === ALT;
  }

  internStack(stack: number[]): number {
    const key = stack.join(',');
    let id = this.stackIds.get(key);
    if (id === undefined) {
      id = this.stackList.length;
      this.stackList.push(stack);
      this.stackIds.set(key, id);
    }
    return id;
  }

  stack(id: number): readonly number[] {
    return this.stackList[id];
  }

  /**
   * llama_grammar_advance_stack: expand rule references on top of `stack` until every resulting
   * stack has a terminal on top (or is empty). Returns their ids.
   */
  private advance(stack: number[]): number[] {
    const id = this.internStack(stack);
    const memo = this.advanced.get(id);
    if (memo) return memo;
    const out: number[] = [];
    const seen = new Set<string>();
    const todo: number[][] = [stack];
    while (todo.length > 0) {
      const cur = todo.pop()!;
      const key = cur.join(',');
      if (seen.has(key)) continue;
      seen.add(key);
      if (cur.length === 0) {
        const e = this.internStack(cur);
        if (!out.includes(e)) out.push(e);
        continue;
      }
      const pos = cur[cur.length - 1];
      const type = this.types[pos];
      if (type === RULE_REF) {
        let sub = this.ruleStart[this.values[pos]];
        for (;;) {
          const next = cur.slice(0, -1);
          if (!this.isEnd(pos + 1)) next.push(pos + 1);
          if (!this.isEnd(sub)) next.push(sub);
          todo.push(next);
          while (!this.isEnd(sub)) sub++;
          if (this.types[sub] === ALT) sub++;
          else break;
        }
      } else if (type === CHAR || type === CHAR_NOT || type === CHAR_ANY || type === TOKEN || type === TOKEN_NOT) {
        const e = this.internStack(cur);
        if (!out.includes(e)) out.push(e);
      } else {
        throw new UsageError('Grammar error: a stack was left on the middle of a character set (malformed grammar).');
      }
    }
    this.advanced.set(id, out);
    return out;
  }

  /** The interned state for these stacks and partial character. */
  state(stackIds: number[], partialValue: number, partialRemain: number): number {
    const ids = [...new Set(stackIds)].sort((a, b) => a - b);
    const key = ids.join(',');
    let base = this.stateIds.get(key);
    if (base === undefined) base = this.intern(key, ids, 0, 0, -1);
    return partialRemain === 0 ? base : this.partial(base, partialValue, partialRemain);
  }

  /** The state of `base`'s stacks with a partial character (interned by base id, a short key). */
  private partial(base: number, value: number, remain: number): number {
    const key = `${base}/${value}/${remain}`;
    const id = this.stateIds.get(key);
    if (id !== undefined) return id;
    // No completion of the character can match any top: DEAD now rather than bytes later. (Only
    // positive sets are decided by match_partial_char exactly; an inverse set always may match.)
    const b = this.states[base];
    if (b.tokenStacks.length === 0 && !b.tops.some((p) => this.types[p] === CHAR_NOT || this.matchPartial(p, value, remain))) return DEAD;
    return this.intern(key, b.stacks, value, remain, base);
  }

  private intern(key: string, ids: number[], partialValue: number, partialRemain: number, base: number): number {
    const id = this.states.length;
    let accepting = false;
    let complete = ids.length > 0;
    const tokenStacks: number[] = [];
    for (const s of ids) {
      const st = this.stackList[s];
      if (st.length === 0) accepting = true;
      else {
        complete = false;
        const t = this.types[st[st.length - 1]];
        if (t === TOKEN || t === TOKEN_NOT) tokenStacks.push(s);
      }
    }
    let endOk = partialRemain === 0;
    if (!endOk) {
      for (const s of ids) {
        const st = this.stackList[s];
        if (st.length > 0 && this.isCharTop(st[st.length - 1]) && this.matchPartial(st[st.length - 1], partialValue, partialRemain)) {
          endOk = true;
          break;
        }
      }
    }
    const tops: number[] = [];
    for (const s of ids) {
      const st = this.stackList[s];
      if (st.length > 0 && this.isCharTop(st[st.length - 1]) && !tops.includes(st[st.length - 1])) tops.push(st[st.length - 1]);
    }
    this.states.push({ stacks: ids, partialValue, partialRemain, accepting, complete, endOk, tokenStacks, base: base < 0 ? id : base, tops, bySignature: new Map() });
    this.stateIds.set(key, id);
    if (this.trans.length < this.states.length * 256) {
      const grown = new Int32Array(Math.max(this.states.length * 256, this.trans.length * 2));
      grown.fill(UNKNOWN);
      grown.set(this.trans);
      this.trans = grown;
      const ok = new Uint8Array(grown.length / 256);
      ok.set(this.endOk);
      this.endOk = ok;
    }
    this.endOk[id] = endOk ? 1 : 0;
    return id;
  }

  private isCharTop(pos: number): boolean {
    const t = this.types[pos];
    return t === CHAR || t === CHAR_NOT || t === CHAR_ANY;
  }

  /** llama_grammar_match_char: whether code point c satisfies the char set at pos, and the position after the set. */
  private matchChar(pos: number, c: number): [boolean, number] {
    const types = this.types, values = this.values;
    let found = false;
    const positive = types[pos] === CHAR || types[pos] === CHAR_ANY;
    do {
      if (types[pos + 1] === CHAR_RNG_UPPER) {
        found = found || (values[pos] <= c && c <= values[pos + 1]);
        pos += 2;
      } else if (types[pos] === CHAR_ANY) {
        found = true;
        pos += 1;
      } else {
        found = found || values[pos] === c;
        pos += 1;
      }
    } while (types[pos] === CHAR_ALT);
    return [found === positive, pos];
  }

  /** matchChar's verdict alone, without allocating. */
  private matches(pos: number, c: number): boolean {
    const types = this.types, values = this.values;
    let found = false;
    const positive = types[pos] === CHAR || types[pos] === CHAR_ANY;
    do {
      if (types[pos + 1] === CHAR_RNG_UPPER) {
        found = found || (values[pos] <= c && c <= values[pos + 1]);
        pos += 2;
      } else {
        found = found || types[pos] === CHAR_ANY || values[pos] === c;
        pos += 1;
      }
    } while (types[pos] === CHAR_ALT);
    return found === positive;
  }

  /** llama_grammar_match_partial_char: whether some completion of the partial character could satisfy pos. */
  private matchPartial(pos: number, value: number, remain: number): boolean {
    const types = this.types, values = this.values;
    const positive = types[pos] === CHAR || types[pos] === CHAR_ANY;
    if (remain < 0 || (remain === 1 && value < 2)) return false; // invalid, or an overlong 7-bit char
    let low = value * 2 ** (remain * 6);
    const high = low + 2 ** (remain * 6) - 1;
    if (low === 0) {
      if (remain === 2) low = 1 << 11;
      else if (remain === 3) low = 1 << 16;
    }
    do {
      if (types[pos + 1] === CHAR_RNG_UPPER) {
        if (values[pos] <= high && low <= values[pos + 1]) return positive;
        pos += 2;
      } else if (types[pos] === CHAR_ANY) {
        return true;
      } else {
        if (low <= values[pos] && values[pos] <= high) return positive;
        pos += 1;
      }
    } while (types[pos] === CHAR_ALT);
    return !positive;
  }

  /** The stacks after code point c (llama_grammar_accept over llama_grammar_accept_chr). */
  private acceptChar(stackIds: readonly number[], c: number): number[] {
    const out: number[] = [];
    for (const s of stackIds) {
      const st = this.stackList[s];
      if (st.length === 0) continue;
      const pos = st[st.length - 1];
      if (!this.isCharTop(pos)) continue; // token elements take whole tokens, not characters
      const [ok, after] = this.matchChar(pos, c);
      if (!ok) continue;
      const next = st.slice(0, -1);
      if (!this.isEnd(after)) next.push(after);
      for (const a of this.advance(next)) out.push(a);
    }
    return out;
  }

  /** The state after byte b, or DEAD. Invalid UTF-8 is DEAD. */
  next(state: number, b: number): number {
    const k = state * 256 + b;
    const t = this.trans[k];
    if (t !== UNKNOWN) return t;
    const r = this.step(this.states[state], b);
    this.trans[k] = r;
    return r;
  }

  private step(s: GrammarState, b: number): number {
    if (s.partialRemain > 0) {
      if (b >> 6 !== 2) return DEAD;
      const v = s.partialValue * 64 + (b & 0x3f);
      const remain = s.partialRemain - 1;
      return remain > 0 ? this.partial(s.base, v, remain) : this.afterChar(s.base, v);
    }
    if (b < 0x80) return this.afterChar(s.base, b);
    const high = b >> 4;
    if (high < 0xc) return DEAD; // a continuation byte with nothing to continue
    const remain = high === 0xf ? 3 : high === 0xe ? 2 : 1;
    return this.partial(s.base, b & ((1 << (7 - remain)) - 1), remain);
  }

  /** The state after code point c from base state `from`, cached by which of its top char sets c matches. */
  private afterChar(from: number, c: number): number {
    const st = this.states[from];
    const tops = st.tops;
    if (tops.length > 30) return this.acceptState(st.stacks, c);
    let sig = 0;
    for (let i = 0; i < tops.length; i++) if (this.matches(tops[i], c)) sig |= 1 << i;
    if (sig === 0) return DEAD;
    let next = st.bySignature.get(sig);
    if (next === undefined) st.bySignature.set(sig, (next = this.acceptState(st.stacks, c)));
    return next;
  }

  private acceptState(stacks: readonly number[], c: number): number {
    const next = this.acceptChar(stacks, c);
    return next.length === 0 ? DEAD : this.state(next, 0, 0);
  }

  /** The state after the bytes of one token (DEAD when the grammar rejects them), ignoring token elements. */
  walk(state: number, bytes: Uint8Array): number {
    let s = state;
    for (let i = 0; i < bytes.length && s !== DEAD; i++) s = this.next(s, bytes[i]);
    return s;
  }

  /**
   * The stacks after token `id` taken by the token elements on top of `state`'s stacks
   * (llama_grammar_accept_token's first branch).
   */
  acceptTokenElement(state: number, id: number): number[] {
    const out: number[] = [];
    for (const s of this.states[state].tokenStacks) {
      const st = this.stackList[s];
      const pos = st[st.length - 1];
      const match = this.types[pos] === TOKEN ? this.values[pos] === id : this.values[pos] !== id;
      if (!match) continue;
      const next = st.slice(0, -1);
      if (!this.isEnd(pos + 1)) next.push(pos + 1);
      for (const a of this.advance(next)) out.push(a);
    }
    return out;
  }

  /**
   * The state after a token with this id and these bytes (llama_grammar_accept_token): the token
   * elements on top take it by id, the other stacks by its bytes. DEAD when no parse survives.
   */
  acceptToken(state: number, id: number, bytes: Uint8Array): number {
    const byBytes = bytes.length > 0 ? this.walk(state, bytes) : DEAD;
    if (this.states[state].tokenStacks.length === 0) return byBytes;
    const byId = this.acceptTokenElement(state, id);
    if (byId.length === 0) return byBytes;
    const b = byBytes === DEAD ? null : this.states[byBytes];
    return this.state([...(b ? b.stacks : []), ...byId], b ? b.partialValue : 0, b ? b.partialRemain : 0);
  }

  /** Whether text is a complete sentence of the grammar (test-grammar-integration's match_string). */
  accepts(text: string): boolean {
    const s = this.walk(this.start, new TextEncoder().encode(text));
    return s !== DEAD && this.states[s].accepting;
  }
}
