// Byte-level BPE (tokenizer.ggml.model = "gpt2"), as llama.cpp's llm_tokenizer_bpe_session:
// split the text into words with the pre-tokenizer, then inside each word start from one symbol
// per character and repeatedly merge the adjacent pair with the lowest merge rank (ties: the
// leftmost pair). With ignore_merges (Llama 3 and others) a word that is itself a token is
// emitted whole. A symbol missing from the vocabulary falls back to its bytes.

import { Heap } from './heap.js';
import { splitWords } from './pre-tokenize.js';
import { codepointSymbols, mergeSymbols, WordCache } from './symbols.js';
import { utf8Bytes } from './unicode.js';
import type { Vocab } from './vocab.js';

interface Bigram {
  left: number;
  right: number;
  rank: number;
  /** Lengths of left and right when queued; a mismatch later means the pair is stale. */
  leftLen: number;
  rightLen: number;
}

const before = (a: Bigram, b: Bigram) => a.rank < b.rank || (a.rank === b.rank && a.left < b.left);

const HEX = '0123456789ABCDEF';

/** Merge one word and append its token ids. */
function tokenizeWord(vocab: Vocab, word: string, out: number[]): void {
  const whole = vocab.tokenToId.get(word);
  if (whole !== undefined && (vocab.ignoreMerges || (vocab.preSpec?.kind === 'gemma4' && /^\n+$/.test(word)))) {
    out.push(whole);
    return;
  }
  const syms = codepointSymbols(word);
  const { count, start, len, prev, next } = syms;
  const queue = new Heap<Bigram>(before);
  const tryAdd = (left: number, right: number) => {
    if (left === -1 || right === -1) return;
    const rank = vocab.mergeRanks.get(`${word.substr(start[left], len[left])} ${word.substr(start[right], len[right])}`);
    if (rank === undefined) return;
    queue.push({ left, right, rank, leftLen: len[left], rightLen: len[right] });
  };
  for (let i = 1; i < count; i++) tryAdd(i - 1, i);

  while (queue.size > 0) {
    const b = queue.pop()!;
    if (len[b.left] !== b.leftLen || len[b.right] !== b.rightLen || len[b.left] === 0 || len[b.right] === 0) continue;
    mergeSymbols(syms, b.left, b.right);
    tryAdd(prev[b.left], b.left);
    tryAdd(b.left, next[b.left]);
  }

  for (let i = 0; i < count; i++) {
    if (len[i] === 0) continue;
    const s = word.substr(start[i], len[i]);
    const id = vocab.tokenToId.get(s);
    if (id !== undefined) {
      out.push(id);
      continue;
    }
    // Not in the vocabulary: llama.cpp looks up each UTF-8 byte of the symbol, as a one-byte
    // string (byte alphabet) or as <0xXX> (raw UTF-8 vocabularies), and skips what it cannot find.
    for (const byte of utf8Bytes(s)) {
      const t = vocab.byteEncode
        ? (byte < 0x80 ? vocab.tokenToId.get(String.fromCharCode(byte)) : undefined)
        : vocab.tokenToId.get(`<0x${HEX[byte >> 4]}${HEX[byte & 15]}>`);
      if (t !== undefined) out.push(t);
    }
  }
}

/** A BPE tokenizer session with a cache of merged words. */
export class BpeSession {
  private readonly cache: WordCache;

  constructor(private readonly vocab: Vocab) {
    this.cache = new WordCache((word, out) => tokenizeWord(vocab, word, out));
  }

  tokenize(text: string, out: number[]): void {
    const v = this.vocab;
    for (const word of splitWords(text, v.preRegexes, v.byteEncode)) {
      if (word.length > 0) this.cache.append(word, out);
    }
  }
}
