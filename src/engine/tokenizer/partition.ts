// Splitting text on special tokens before tokenizing, as llama.cpp's tokenizer_st_partition:
// for each special token, longest first, every occurrence in every remaining text fragment
// becomes that token. User-defined tokens are always split out; control and unknown tokens only
// when parse_special is on. A token with LSTRIP/RSTRIP also eats the whitespace to its left/right.

import { ATTR_CONTROL, ATTR_LSTRIP, ATTR_RSTRIP, ATTR_UNKNOWN, type Vocab } from './vocab.js';

/** A fragment: raw text (string) or a token id (number). */
export type Fragment = string | number;

/** C isspace() in the "C" locale. */
function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

export function partitionSpecial(vocab: Vocab, text: string, parseSpecial: boolean): Fragment[] {
  let frags: Fragment[] = text.length > 0 ? [text] : [];
  for (const id of vocab.specialTokens) {
    const attr = vocab.attrs[id];
    if (!parseSpecial && attr & (ATTR_CONTROL | ATTR_UNKNOWN)) continue;
    const tok = vocab.tokens[id];
    if (!text.includes(tok)) continue;
    const next: Fragment[] = [];
    for (const f of frags) {
      if (typeof f === 'number' || !f.includes(tok)) {
        next.push(f);
        continue;
      }
      let pos = 0;
      for (;;) {
        const m = f.indexOf(tok, pos);
        if (m < 0) {
          if (pos < f.length) next.push(f.slice(pos));
          break;
        }
        let leftEnd = m;
        if (attr & ATTR_LSTRIP) while (leftEnd > pos && isSpace(f.charCodeAt(leftEnd - 1))) leftEnd--;
        if (leftEnd > pos) next.push(f.slice(pos, leftEnd));
        next.push(id);
        pos = m + tok.length;
        if (attr & ATTR_RSTRIP) while (pos < f.length && isSpace(f.charCodeAt(pos))) pos++;
      }
    }
    frags = next;
  }
  return frags;
}
