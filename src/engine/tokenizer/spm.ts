// SentencePiece BPE (tokenizer.ggml.model = "llama"), as llama.cpp's llm_tokenizer_spm_session:
// start from one symbol per character, repeatedly merge the adjacent pair whose joined text is
// the vocabulary token with the highest score (ties: the leftmost pair), then emit each symbol's
// token, or its UTF-8 bytes as <0xXX> tokens when the symbol is not in the vocabulary.
//
// The caller has already replaced ' ' with U+2581 and added the leading space.

import { ModelError } from '../../shared/errors.js';
import { Heap } from './heap.js';
import { codepointSymbols, mergeSymbols, WordCache } from './symbols.js';
import { utf8Bytes } from './unicode.js';
import type { Vocab } from './vocab.js';

interface Bigram {
  left: number;
  right: number;
  score: number;
  /** Length of left + right when queued; a mismatch later means the pair is stale. */
  size: number;
}

const before = (a: Bigram, b: Bigram) => a.score > b.score || (a.score === b.score && a.left < b.left);

const HEX = '0123456789ABCDEF';

/** llama_vocab::byte_to_token for SPM: "<0xXX>", else the byte itself as a one-character token. */
export function spmByteToken(vocab: Vocab, byte: number): number {
  const id = vocab.tokenToId.get(`<0x${HEX[byte >> 4]}${HEX[byte & 15]}>`)
    ?? (byte < 0x80 ? vocab.tokenToId.get(String.fromCharCode(byte)) : undefined);
  if (id !== undefined) return id;
  // llama.cpp throws here; a vocabulary without byte tokens falls back to <unk> instead.
  if (vocab.special.unk !== null) return vocab.special.unk;
  throw new ModelError('TOKENIZER_BAD', `the vocabulary has no token for byte 0x${byte.toString(16)} and no unknown token`);
}

/** One run of the merge algorithm over all of `text`. */
export function spmTokenize(vocab: Vocab, text: string, out: number[]): void {
  const syms = codepointSymbols(text);
  const { count, start, len, prev, next } = syms;
  if (count === 0) return;

  const queue = new Heap<Bigram>(before);
  const tryAdd = (left: number, right: number) => {
    if (left === -1 || right === -1) return;
    const id = vocab.tokenToId.get(text.substr(start[left], len[left] + len[right]));
    if (id === undefined) return;
    queue.push({ left, right, score: vocab.scores[id], size: len[left] + len[right] });
  };
  for (let i = 1; i < count; i++) tryAdd(i - 1, i);

  while (queue.size > 0) {
    const b = queue.pop()!;
    if (len[b.left] === 0 || len[b.right] === 0 || len[b.left] + len[b.right] !== b.size) continue;
    mergeSymbols(syms, b.left, b.right);
    tryAdd(prev[b.left], b.left);
    tryAdd(b.left, next[b.left]);
  }

  // llama.cpp's resegment also consults the pairs it merged, but a merged symbol is always a
  // token, so only unmerged characters can miss the vocabulary: those become bytes.
  for (let i = 0; i !== -1; i = next[i]) {
    const s = text.substr(start[i], len[i]);
    const id = vocab.tokenToId.get(s);
    if (id !== undefined) {
      out.push(id);
      continue;
    }
    for (const byte of utf8Bytes(s)) out.push(spmByteToken(vocab, byte));
  }
}

/**
 * An SPM tokenizer session. When the vocabulary allows it (Vocab.spmWordSplit) the text is cut
 * before each run of U+2581 and the words are merged separately, with a cache: merges inside one
 * word never depend on another word, so the ids are the same as merging the whole text at once.
 */
export class SpmSession {
  private readonly cache: WordCache;

  constructor(private readonly vocab: Vocab) {
    this.cache = new WordCache((word, out) => spmTokenize(vocab, word, out));
  }

  tokenize(text: string, out: number[]): void {
    if (!this.vocab.spmWordSplit) {
      spmTokenize(this.vocab, text, out);
      return;
    }
    let start = 0;
    for (let i = 1; i <= text.length; i++) {
      if (i < text.length && !(text.charCodeAt(i) === 0x2581 && text.charCodeAt(i - 1) !== 0x2581)) continue;
      const word = text.slice(start, i);
      start = i;
      this.cache.append(word, out);
    }
  }
}
