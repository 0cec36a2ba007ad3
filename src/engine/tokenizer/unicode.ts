// Unicode facts the tokenizers need, with llama.cpp's exact definitions (src/unicode.cpp,
// scripts/gen-unicode-data.py): one category flag per code point, a fixed whitespace set, the
// GPT-2 byte-to-unicode table, and UTF-8 helpers.

// ---------------------------------------------------------------------------------------------
// Code point flags (unicode.h `struct unicode_cpt_flags`, same bit values)

export const CPT_UNDEFINED = 0x0001; // general category Cn (unassigned)
export const CPT_NUMBER = 0x0002; //    \p{N}
export const CPT_LETTER = 0x0004; //    \p{L}
export const CPT_SEPARATOR = 0x0008; // \p{Z}
export const CPT_MARK = 0x0010; //      \p{M}
export const CPT_PUNCTUATION = 0x0020; // \p{P}
export const CPT_SYMBOL = 0x0040; //    \p{S}
export const CPT_CONTROL = 0x0080; //   \p{C} other than Cn (Cc, Cf, Co, Cs)
export const CPT_CATEGORIES = 0x00ff;
export const CPT_WHITESPACE = 0x0100;

export const MAX_CODEPOINT = 0x10ffff;

// gen-unicode-data.py: the <White_Space> code points of PropList.txt, written out by hand there.
// Note U+FEFF is *not* whitespace here (JavaScript's \s says it is).
const WHITESPACE = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680,
  0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
  0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

const RE_CN = /^\p{Cn}$/u;
const RE_L = /^\p{L}$/u;
const RE_N = /^\p{N}$/u;
const RE_Z = /^\p{Z}$/u;
const RE_M = /^\p{M}$/u;
const RE_P = /^\p{P}$/u;
const RE_S = /^\p{S}$/u;

// Lazily filled: 0 = not computed yet, else flags | 0x8000.
let flagCache: Uint16Array | null = null;

function computeFlags(cp: number): number {
  const s = String.fromCodePoint(cp);
  let f: number;
  if (RE_CN.test(s)) f = CPT_UNDEFINED;
  else if (RE_L.test(s)) f = CPT_LETTER;
  else if (RE_N.test(s)) f = CPT_NUMBER;
  else if (RE_Z.test(s)) f = CPT_SEPARATOR;
  else if (RE_M.test(s)) f = CPT_MARK;
  else if (RE_P.test(s)) f = CPT_PUNCTUATION;
  else if (RE_S.test(s)) f = CPT_SYMBOL;
  else f = CPT_CONTROL;
  if (WHITESPACE.has(cp)) f |= CPT_WHITESPACE;
  return f;
}

/** unicode_cpt_flags_from_cpt: the flags of a code point; 0 outside 0..0x10FFFF. */
export function cptFlags(cp: number): number {
  if (cp < 0 || cp > MAX_CODEPOINT) return 0;
  if (!flagCache) flagCache = new Uint16Array(MAX_CODEPOINT + 1);
  const v = flagCache[cp];
  if (v !== 0) return v & 0x7fff;
  const f = computeFlags(cp);
  flagCache[cp] = f | 0x8000;
  return f;
}

/** ASCII-only lower case; enough for the contraction checks ('s 't 're 've 'm 'll 'd). */
export function asciiLower(cp: number): number {
  return cp >= 0x41 && cp <= 0x5a ? cp + 32 : cp;
}

// ---------------------------------------------------------------------------------------------
// Code points and UTF-8

/**
 * The code points of a string, as llama.cpp sees the UTF-8 of it: a lone surrogate (which UTF-8
 * cannot carry; TextEncoder writes EF BF BD for it) becomes U+FFFD.
 */
export function codepoints(s: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out.push(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000);
        i++;
        continue;
      }
    }
    out.push(c >= 0xd800 && c <= 0xdfff ? 0xfffd : c);
  }
  return out;
}

/** The string of cps[start..end), in chunks (a spread of a huge array overflows the stack). */
export function fromCodepoints(cps: readonly number[], start = 0, end = cps.length): string {
  let s = '';
  for (let i = start; i < end; i += 8192) s += String.fromCodePoint(...cps.slice(i, Math.min(end, i + 8192)));
  return s;
}

/** Append the UTF-8 bytes of code point `cp` to `out`. */
export function pushUtf8(out: number[], cp: number): void {
  if (cp < 0x80) out.push(cp);
  else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
  else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
}

const encoder = new TextEncoder();
export function utf8Bytes(s: string): Uint8Array {
  return encoder.encode(s);
}

/** Number of UTF-8 bytes of a string (lone surrogates count 3, as TextEncoder writes them). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// GPT-2 byte-level alphabet (unicode.cpp unicode_byte_to_utf8_map): the printable bytes
// 0x21..0x7E, 0xA1..0xAC and 0xAE..0xFF stand for themselves; the other 68 bytes, in order, take
// the code points 256, 257, ... so every byte is one visible character.

/** byte -> its character (always one UTF-16 unit). */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const table: string[] = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table[b] = String.fromCharCode(printable ? b : 256 + n++);
  }
  return table;
})();

/** code point -> byte, for the 256 characters of BYTE_TO_CHAR. */
export const CHAR_TO_BYTE: ReadonlyMap<number, number> = new Map(BYTE_TO_CHAR.map((c, b) => [c.charCodeAt(0), b]));
