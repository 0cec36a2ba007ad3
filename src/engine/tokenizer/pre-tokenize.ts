// Splitting text into BPE words, reproducing llama.cpp's unicode_regex_split (src/unicode.cpp).
//
// The regexes of a pre-tokenizer run one after the other; each splits every piece left by the
// previous one further (a match and the text between matches both become pieces). Four regexes
// are recognised by their exact text and run as hand-written splitters, as llama.cpp does
// (GPT-2, Llama 3, Kimi-K2, AFMoE digits). The others run as JavaScript regexes with llama.cpp's
// character semantics:
//  - A regex that uses \p{..} runs on a "collapsed" copy of the text where every code point
//    >= 128 is replaced by one stand-in character for its category (letter, number, ...), and
//    each \p{X} becomes a class of that stand-in plus the ASCII members of X. So \p{Lu} matches
//    every non-ASCII letter, upper case or not, exactly as in llama.cpp.
//  - \s is ASCII whitespace; every non-ASCII whitespace code point (llama.cpp's list) is replaced
//    by U+000B first, so it matches \s and nothing else.
// Finally each word is turned into the GPT-2 byte alphabet (or kept as UTF-8 for Gemma-4-style
// vocabularies).

import { ModelError } from '../../shared/errors.js';
import {
  asciiLower, BYTE_TO_CHAR, codepoints, fromCodepoints, CPT_CATEGORIES, CPT_LETTER, CPT_MARK, CPT_NUMBER,
  CPT_PUNCTUATION, CPT_SYMBOL, CPT_WHITESPACE, cptFlags, pushUtf8,
} from './unicode.js';

// ---------------------------------------------------------------------------------------------
// Hand-written splitters. Each walks the code points cps[ini..end) and appends piece lengths.

const OUT = -1; // a position outside the piece

type Splitter = (cps: readonly number[], ini: number, end: number, out: number[]) => void;

function isContractionAt(cps: readonly number[], pos: number, end: number, lower: boolean): number {
  // 's 't 'm 'd -> 2, 're 've 'll -> 3, else 0 (the leading ' is at pos)
  if (cps[pos] !== 0x27 || pos + 1 >= end) return 0;
  const l = lower ? asciiLower : (c: number) => c;
  const a = l(cps[pos + 1]);
  if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) return 2;
  if (pos + 2 < end) {
    const b = l(cps[pos + 2]);
    if ((a === 0x72 && b === 0x65) || (a === 0x76 && b === 0x65) || (a === 0x6c && b === 0x6c)) return 3;
  }
  return 0;
}

/**
 * The walk state of a hand-written splitter over cps[ini..end): the code point (OUT outside) and
 * its flags (0 outside) at a position, and add(e) to close the piece that ends at e (an empty one
 * is not emitted); add returns the piece's length.
 */
interface Cursor {
  cpt(p: number): number;
  flags(p: number): number;
  add(e: number): number;
}

function cursor(cps: readonly number[], ini: number, end: number, out: number[]): Cursor {
  let prev = ini;
  return {
    cpt: (p) => (p >= ini && p < end ? cps[p] : OUT),
    flags: (p) => (p >= ini && p < end ? cptFlags(cps[p]) : 0),
    add: (e) => {
      const n = e - prev;
      if (n > 0) out.push(n);
      prev = e;
      return n;
    },
  };
}

/** '\p{N}{1,3}' repeated: the number run at pos in pieces of up to three. Returns its end. */
function numberRun(k: Cursor, pos: number): number {
  let ini3 = pos;
  while (k.flags(pos) & CPT_NUMBER) {
    if (++pos - ini3 >= 3) {
      k.add(pos);
      ini3 = pos;
    }
  }
  k.add(pos);
  return pos;
}

/**
 * ' ?[^\s\p{L}\p{N}]+', then '[\r\n]*' when `newlines`: c is the code point at pos, f2 the flags
 * of the first symbol (at pos, or pos + 1 after a space). Returns the piece's end.
 */
function symbolRun(k: Cursor, pos: number, c: number, f2: number, newlines: boolean): number {
  if (c === 0x20) pos++;
  while (!(f2 & (CPT_WHITESPACE | CPT_LETTER | CPT_NUMBER)) && f2) f2 = k.flags(++pos);
  if (newlines) {
    let c2 = k.cpt(pos);
    while (c2 === 0x0d || c2 === 0x0a) c2 = k.cpt(++pos);
  }
  k.add(pos);
  return pos;
}

/**
 * The alternatives Llama 3 and Kimi-K2 end with: '\s*[\r\n]+', '\s+(?!\S)', '\s+', and
 * otherwise the code point at pos alone. Returns the piece's end.
 */
function whitespaceRun(k: Cursor, pos: number): number {
  let nws = 0;
  let lastNl = 0;
  while (k.flags(pos + nws) & CPT_WHITESPACE) {
    const c2 = k.cpt(pos + nws);
    if (c2 === 0x0d || c2 === 0x0a) lastNl = pos + nws + 1;
    nws++;
  }
  if (lastNl > 0) pos = lastNl; // '\s*[\r\n]+'
  else if (nws > 1 && k.cpt(pos + nws) !== OUT) pos += nws - 1; // '\s+(?!\S)': leave the last space for the next word
  else if (nws > 0) pos += nws; // '\s+'
  else pos++;
  k.add(pos);
  return pos;
}

/** 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S) (unicode_regex_split_custom_gpt2) */
const splitGpt2: Splitter = (cps, ini, end, out) => {
  const k = cursor(cps, ini, end, out);
  const { cpt, flags, add } = k;
  for (let pos = ini; pos < end;) {
    const c = cpt(pos);
    const contraction = isContractionAt(cps, pos, end, false);
    if (contraction) {
      pos += add(pos + contraction);
      continue;
    }
    let f2 = c === 0x20 ? flags(pos + 1) : flags(pos);
    if (f2 & CPT_LETTER) { // ' ?\p{L}+'
      if (c === 0x20) pos++;
      while (f2 & CPT_LETTER) f2 = flags(++pos);
      add(pos);
      continue;
    }
    if (f2 & CPT_NUMBER) { // ' ?\p{N}+'
      if (c === 0x20) pos++;
      while (f2 & CPT_NUMBER) f2 = flags(++pos);
      add(pos);
      continue;
    }
    if (!(f2 & (CPT_WHITESPACE | CPT_LETTER | CPT_NUMBER)) && f2) { // ' ?[^\s\p{L}\p{N}]+'
      pos = symbolRun(k, pos, c, f2, false);
      continue;
    }
    let nws = 0;
    while (flags(pos + nws) & CPT_WHITESPACE) nws++;
    if (nws > 1 && cpt(pos + nws) !== OUT) { // '\s+(?!\S)': leave the last space for the next word
      pos += nws - 1;
      add(pos);
      continue;
    }
    if (nws > 0) { // '\s+'
      pos += nws;
      add(pos);
      continue;
    }
    add(++pos);
  }
};

/**
 * (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
 * \s*[\r\n]+|\s+(?!\S)|\s+ (unicode_regex_split_custom_llama3)
 */
const splitLlama3: Splitter = (cps, ini, end, out) => {
  const k = cursor(cps, ini, end, out);
  const { cpt, flags, add } = k;
  for (let pos = ini; pos < end;) {
    const c = cpt(pos);
    const f = flags(pos);
    const contraction = isContractionAt(cps, pos, end, true);
    if (contraction) {
      pos += add(pos + contraction);
      continue;
    }
    if (!(c === 0x0d || c === 0x0a || f & CPT_NUMBER)) { // '[^\r\n\p{L}\p{N}]?\p{L}+'
      if (f & CPT_LETTER || flags(pos + 1) & CPT_LETTER) {
        pos++;
        while (flags(pos) & CPT_LETTER) pos++;
        add(pos);
        continue;
      }
    }
    if (f & CPT_NUMBER) { // '\p{N}{1,3}'
      pos = numberRun(k, pos);
      continue;
    }
    const f2 = c === 0x20 ? flags(pos + 1) : f;
    // ' ?[^\s\p{L}\p{N}]+[\r\n]*' (llama.cpp tests the current code point's flags for "defined")
    if (!(f2 & (CPT_WHITESPACE | CPT_LETTER | CPT_NUMBER)) && f) {
      pos = symbolRun(k, pos, c, f2, true);
      continue;
    }
    pos = whitespaceRun(k, pos);
  }
};

/** unicode_cpt_is_han: the CJK ideograph blocks. */
function isHan(cp: number): boolean {
  return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x20000 && cp <= 0x2a6df)
    || (cp >= 0x2a700 && cp <= 0x2b73f) || (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b820 && cp <= 0x2ceaf)
    || (cp >= 0x2ceb0 && cp <= 0x2ebef) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);
}

/** Kimi-K2's pattern set, \p{Han}+ first (unicode_regex_split_custom_kimi_k2). */
const splitKimiK2: Splitter = (cps, ini, end, out) => {
  const k = cursor(cps, ini, end, out);
  const { cpt, flags, add } = k;
  const nonHanLetter = (p: number) => (flags(p) & CPT_LETTER) !== 0 && !isHan(cpt(p));
  for (let pos = ini; pos < end;) {
    const c = cpt(pos);
    const f = flags(pos);
    if (isHan(c)) {
      while (isHan(cpt(pos))) pos++;
      add(pos);
      continue;
    }
    const canLead = !(c === 0x0d || c === 0x0a || f & (CPT_LETTER | CPT_NUMBER));
    if (((f & CPT_LETTER) && !isHan(c)) || (canLead && nonHanLetter(pos + 1))) {
      let lead = false;
      if (canLead) {
        lead = true;
        pos++;
      }
      let letters = false;
      while (nonHanLetter(pos)) {
        letters = true;
        pos++;
      }
      if (letters || (!lead && nonHanLetter(pos))) {
        if (!letters) pos++;
        while (nonHanLetter(pos)) pos++;
        if (cpt(pos) === 0x27 && pos + 1 < end) pos += isContractionAt(cps, pos, end, true);
        add(pos);
        continue;
      } else if (lead) {
        pos--;
      }
    }
    if (f & CPT_NUMBER) {
      pos = numberRun(k, pos);
      continue;
    }
    const f2 = c === 0x20 ? flags(pos + 1) : f;
    if (!(f2 & (CPT_WHITESPACE | CPT_LETTER | CPT_NUMBER)) && f2) {
      pos = symbolRun(k, pos, c, f2, true);
      continue;
    }
    pos = whitespaceRun(k, pos);
  }
};

/**
 * AFMoE digits (unicode_regex_split_custom_afmoe): a run of digits is cut so the groups of three
 * line up at its end. As in llama.cpp, the text before a run is joined to the run's first group.
 */
const splitAfmoeDigits: Splitter = (cps, ini, end, out) => {
  const { add } = cursor(cps, ini, end, out);
  for (let pos = ini; pos < end;) {
    if (cptFlags(cps[pos]) & CPT_NUMBER) {
      const start = pos;
      while (pos < end && cptFlags(cps[pos]) & CPT_NUMBER) pos++;
      const count = pos - start;
      let cur = start;
      if (count % 3) {
        cur += count % 3;
        add(cur);
      }
      while (cur < start + count) {
        cur += 3;
        add(cur);
      }
      continue;
    }
    pos++;
  }
  add(end);
};

const CUSTOM = new Map<string, Splitter>([
  ["'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)", splitGpt2],
  ["(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", splitLlama3],
  ["(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", splitLlama3],
  ["\\p{Han}+", splitKimiK2],
  ["\\p{AFMoE_digits}", splitAfmoeDigits],
]);

// ---------------------------------------------------------------------------------------------
// General regexes

// unicode.cpp k_ucat_cpt / k_ucat_map: the stand-in character of each category in the collapsed
// text, and the ASCII members of the category (as regex class source).
const FALLBACK_CHAR = '\u00d0';
const WHITESPACE_CHAR = '\u000b';
const CATEGORY_CHAR = new Map<number, string>([
  [CPT_NUMBER, '\u00d1'], [CPT_LETTER, '\u00d2'], [CPT_PUNCTUATION, '\u00d3'], [CPT_MARK, '\u00d4'], [CPT_SYMBOL, '\u00d5'],
]);
const CATEGORY_CLASS: Record<string, string> = {
  N: '\u00d10-9',
  L: '\u00d2A-Za-z',
  Lu: '\u00d2A-Za-z', Ll: '\u00d2A-Za-z', Lt: '\u00d2A-Za-z', Lm: '\u00d2A-Za-z', Lo: '\u00d2A-Za-z',
  P: '\u00d3!-#%-*,-/:-;?-@\\[-\\]_\\{\\}',
  M: '\u00d4',
  S: '\u00d5\\$\\+<->^`\\|',
};
const ASCII_SPACE_CLASS = '\\t\\n\\v\\f\\r ';

interface CompiledRegex {
  collapsed: boolean;
  re: RegExp;
}

/**
 * Rewrite a llama.cpp regex for JavaScript: \p{X} -> the collapsed class (only when `collapsed`),
 * \s and \S -> ASCII whitespace.
 */
export function translateRegex(src: string, collapsed: boolean): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i];
    if (ch === '\\' && i + 1 < src.length) {
      const x = src[i + 1];
      if (x === 'p' && src[i + 2] === '{') {
        const close = src.indexOf('}', i + 3);
        const name = close > 0 ? src.slice(i + 3, close) : '';
        const cls = CATEGORY_CLASS[name];
        if (!collapsed || cls === undefined) {
          throw new ModelError('TOKENIZER_REGEX', `pre-tokenizer regex uses \\p{${name}}, which is not supported`);
        }
        out += inClass ? cls : `[${cls}]`;
        i = close;
        continue;
      }
      if (x === 's') out += inClass ? ASCII_SPACE_CLASS : `[${ASCII_SPACE_CLASS}]`;
      else if (x === 'S') {
        if (inClass) throw new ModelError('TOKENIZER_REGEX', 'pre-tokenizer regex uses \\S inside a class, which is not supported');
        out += `[^${ASCII_SPACE_CLASS}]`;
      } else out += ch + x;
      i++;
      continue;
    }
    if (ch === '[' && !inClass) inClass = true;
    else if (ch === ']' && inClass) inClass = false;
    out += ch;
  }
  return out;
}

const compiled = new Map<string, CompiledRegex>();

function compile(src: string): CompiledRegex {
  let c = compiled.get(src);
  if (!c) {
    const collapsed = /\\p\{/.test(src);
    const js = translateRegex(src, collapsed);
    try {
      c = { collapsed, re: new RegExp(js, collapsed ? 'g' : 'gu') };
    } catch (err) {
      throw new ModelError('TOKENIZER_REGEX', `pre-tokenizer regex ${JSON.stringify(src)} does not compile: ${(err as Error).message}`);
    }
    compiled.set(src, c);
  }
  return c;
}

/** The text as llama.cpp's std::regex sees it: one character per code point, categories collapsed. */
function collapsedText(cps: readonly number[]): string {
  const chars: string[] = new Array(cps.length);
  for (let i = 0; i < cps.length; i++) {
    const cp = cps[i];
    if (cp < 128) chars[i] = String.fromCharCode(cp);
    else {
      const f = cptFlags(cp);
      chars[i] = f & CPT_WHITESPACE ? WHITESPACE_CHAR : CATEGORY_CHAR.get(f & CPT_CATEGORIES) ?? FALLBACK_CHAR;
    }
  }
  return chars.join('');
}

/** The text as llama.cpp's std::wregex sees it: non-ASCII whitespace replaced by U+000B. */
interface WideText {
  text: string;
  /** UTF-16 index of code point i (length cps.length + 1). */
  unitOf: Int32Array;
  /** code point index of UTF-16 index u (length text.length + 1). */
  cpOf: Int32Array;
}

function wideText(cps: readonly number[]): WideText {
  const parts: string[] = new Array(cps.length);
  const unitOf = new Int32Array(cps.length + 1);
  let u = 0;
  for (let i = 0; i < cps.length; i++) {
    const cp = cps[i] > 0x7f && cptFlags(cps[i]) & CPT_WHITESPACE ? 0x0b : cps[i];
    parts[i] = String.fromCodePoint(cp);
    unitOf[i] = u;
    u += parts[i].length;
  }
  unitOf[cps.length] = u;
  const cpOf = new Int32Array(u + 1);
  for (let i = 0; i < cps.length; i++) {
    for (let k = unitOf[i]; k < unitOf[i + 1]; k++) cpOf[k] = i;
  }
  cpOf[u] = cps.length;
  return { text: parts.join(''), unitOf, cpOf };
}

/** Split every piece by `re` (matches and the gaps between them), like unicode_regex_split_stl. */
function regexSplit(subject: string, toUnit: (cp: number) => number, toCp: (unit: number) => number, re: RegExp, pieces: readonly number[]): number[] {
  const out: number[] = [];
  let start = 0;
  for (const len of pieces) {
    const u0 = toUnit(start);
    const seg = subject.slice(u0, toUnit(start + len));
    re.lastIndex = 0;
    let done = 0; // code points of this piece already emitted
    for (let m = re.exec(seg); m !== null; m = re.exec(seg)) {
      const a = toCp(u0 + m.index) - start;
      const b = toCp(u0 + m.index + m[0].length) - start;
      if (a > done) out.push(a - done);
      if (b > a) out.push(b - a); // an empty match only cuts the piece
      done = b;
      if (m[0].length === 0) re.lastIndex += re.unicode && isHighSurrogate(seg.charCodeAt(re.lastIndex)) ? 2 : 1;
    }
    if (done < len) out.push(len - done);
    start += len;
  }
  return out;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

// ---------------------------------------------------------------------------------------------
// Entry point

/**
 * Split `text` into BPE words with the regexes of a pre-tokenizer. With `byteEncode`, each word is
 * returned in the GPT-2 byte alphabet (one character per UTF-8 byte); otherwise as plain text.
 */
export function splitWords(text: string, regexes: readonly string[], byteEncode: boolean): string[] {
  const cps = codepoints(text);
  let pieces: number[] = cps.length ? [cps.length] : [];
  let collapsed: string | undefined;
  let wide: WideText | undefined;
  for (const src of regexes) {
    const custom = CUSTOM.get(src);
    if (custom) {
      const next: number[] = [];
      let start = 0;
      for (const len of pieces) {
        custom(cps, start, start + len, next);
        start += len;
      }
      pieces = next;
      continue;
    }
    const c = compile(src);
    if (c.collapsed) {
      collapsed ??= collapsedText(cps);
      pieces = regexSplit(collapsed, (i) => i, (u) => u, c.re, pieces);
    } else {
      const w = (wide ??= wideText(cps));
      pieces = regexSplit(w.text, (i) => w.unitOf[i], (u) => w.cpOf[u], c.re, pieces);
    }
  }
  const words: string[] = new Array(pieces.length);
  let start = 0;
  const bytes: number[] = [];
  for (let k = 0; k < pieces.length; k++) {
    const end = start + pieces[k];
    if (byteEncode) {
      bytes.length = 0;
      for (let i = start; i < end; i++) pushUtf8(bytes, cps[i]);
      let w = '';
      for (const b of bytes) w += BYTE_TO_CHAR[b];
      words[k] = w;
    } else {
      words[k] = fromCodepoints(cps, start, end);
    }
    start = end;
  }
  return words;
}
