// From token ids back to text, as llama.cpp's token_to_piece and detokenize: each token's bytes
// (SPM: U+2581 -> space, <0xXX> -> that byte; byte-level BPE: each character -> its byte), the
// leading space that SPM added removed, and (for some BPE models) clean_up_tokenization_spaces.

import { ModelError } from '../../shared/errors.js';
import { CHAR_TO_BYTE, codepoints, utf8Bytes } from './unicode.js';
import { ATTR_BYTE, ATTR_CONTROL, ATTR_NORMAL, ATTR_UNKNOWN, ATTR_USER_DEFINED, type Vocab } from './vocab.js';

const EMPTY = new Uint8Array(0);

/** The bytes of every token as llama.cpp renders it with special = true (built on demand). */
export class PieceTable {
  private readonly cache: (Uint8Array | undefined)[];

  constructor(private readonly vocab: Vocab) {
    this.cache = new Array(vocab.tokens.length);
  }

  /** Bytes of token `id`; control and unknown tokens are empty unless `special`. */
  bytes(id: number, special: boolean): Uint8Array {
    const v = this.vocab;
    if (!Number.isInteger(id) || id < 0 || id >= v.tokens.length) {
      throw new ModelError('TOKEN_OUT_OF_RANGE', `token id ${id} is not in the vocabulary (0..${v.tokens.length - 1})`);
    }
    if (!special && v.attrs[id] & (ATTR_UNKNOWN | ATTR_CONTROL)) return EMPTY;
    return (this.cache[id] ??= this.render(id));
  }

  private render(id: number): Uint8Array {
    const v = this.vocab;
    const attr = v.attrs[id];
    const text = v.tokens[id];
    if (attr & (ATTR_UNKNOWN | ATTR_CONTROL | ATTR_USER_DEFINED)) return utf8Bytes(text);
    if (attr & ATTR_NORMAL) {
      if (v.type === 'spm' || v.escapeWhitespaces) return utf8Bytes(text.replaceAll('\u2581', ' '));
      return byteLevelDecode(text);
    }
    if (attr & ATTR_BYTE) return Uint8Array.of(parseInt(text.substr(3, 2), 16) & 0xff);
    return EMPTY; // unused and undefined tokens render as nothing
  }
}

/** llama_decode_text: each character of the GPT-2 byte alphabet back to its byte. */
function byteLevelDecode(text: string): Uint8Array {
  const out: number[] = [];
  for (const cp of codepoints(text)) {
    const b = CHAR_TO_BYTE.get(cp);
    if (b !== undefined) {
      out.push(b);
      continue;
    }
    // Not a byte character: llama.cpp writes "[UNK_BYTE_0x<hex of its UTF-8>" + the token + "]".
    const utf8 = utf8Bytes(String.fromCodePoint(cp));
    const hex = Array.from(utf8, (x) => x.toString(16).padStart(2, '0')).join('');
    out.push(...utf8Bytes(`[UNK_BYTE_0x${hex}${text}]`));
  }
  return Uint8Array.from(out);
}

/**
 * clean_up_tokenization_spaces, a literal port of the three in-place passes of llama.cpp's
 * detokenize (the passes read the buffer they rewrite, so their quirks carry over):
 *  1. " ?", " !", " .", " ," lose the space;
 *  2. " ' " becomes "'";
 *  3. " 's", " 'm", " 're", " 've" lose the space (" 't", " 'd", " 'll" keep it).
 */
export function cleanSpaces(s: string): string {
  const t = s.split('');
  let total = t.length;
  // pass 1
  const total1 = total;
  total = total ? 1 : 0;
  for (let i = 1; i < total1; i++) {
    const x = t[i];
    if (t[i - 1] === ' ' && (x === '?' || x === '!' || x === '.' || x === ',')) total--;
    t[total++] = x;
  }
  // pass 2
  const total2 = total;
  total = total ? 1 : 0;
  for (let i = 1; i < total2; i++) {
    const x = t[i];
    if (x === "'" && i + 1 < total2 && t[i - 1] === ' ' && t[i + 1] === ' ') {
      total--;
      t[++i] = '\0';
    }
    t[total++] = x;
  }
  // pass 3
  const total3 = total;
  total = total ? 1 : 0;
  for (let i = 1; i < total3; i++) {
    const x = t[i];
    if (t[i - 1] === ' ' && x === "'" && i + 1 < total3) {
      const x1 = t[i + 1];
      if (x1 === 't' || x1 === 'd') {
        // kept
      } else if (x1 === 's' || x1 === 'm') {
        total--;
      } else if (i + 2 < total3) {
        const x2 = t[i + 2];
        if ((x1 === 'r' && x2 === 'e') || (x1 === 'v' && x2 === 'e')) total--;
      }
    }
    t[total++] = x;
  }
  return t.slice(0, total).join('');
}
