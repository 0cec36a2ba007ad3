// What both merge tokenizers (bpe.ts, spm.ts) work on, as llama.cpp's llm_symbol lists: one
// symbol per code point of the text, linked both ways; a merge grows the left symbol and empties
// the right one. Plus the per-word cache of their sessions (merging is deterministic).

/**
 * Symbol i is text.substr(start[i], len[i]) (UTF-16 units); len[i] is 0 once merged into its left
 * neighbour. prev/next: the neighbours, -1 at the ends.
 */
export interface Symbols {
  readonly count: number;
  readonly start: number[];
  readonly len: number[];
  readonly prev: Int32Array;
  readonly next: Int32Array;
}

/** One symbol per code point of `text` (a surrogate pair is one symbol). */
export function codepointSymbols(text: string): Symbols {
  const start: number[] = [];
  const len: number[] = [];
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    const n = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
    start.push(i);
    len.push(n);
    i += n;
  }
  const count = start.length;
  const prev = new Int32Array(count);
  const next = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    prev[i] = i - 1;
    next[i] = i + 1 < count ? i + 1 : -1;
  }
  return { count, start, len, prev, next };
}

/** Join symbol `right` into its left neighbour `left`. */
export function mergeSymbols(s: Symbols, left: number, right: number): void {
  s.len[left] += s.len[right];
  s.len[right] = 0;
  s.next[left] = s.next[right];
  if (s.next[right] >= 0) s.prev[s.next[right]] = left;
}

const CACHE_LIMIT = 1 << 16;

/** The ids each word merges to, computed once by `merge` (the cache starts over past 65536 words). */
export class WordCache {
  private readonly ids = new Map<string, number[]>();

  constructor(private readonly merge: (word: string, out: number[]) => void) {}

  /** Append the ids of `word` to out. */
  append(word: string, out: number[]): void {
    let ids = this.ids.get(word);
    if (!ids) {
      ids = [];
      this.merge(word, ids);
      if (this.ids.size >= CACHE_LIMIT) this.ids.clear();
      this.ids.set(word, ids);
    }
    for (const id of ids) out.push(id);
  }
}
