// Building grammars out of grammars: a GBNF text's rules renamed (so that several can be merged
// into one, each under its own name), and a rule for free text that never contains a given string
// (llama.cpp common/peg-parser.cpp gbnf_excluding_grammar, there over several strings with an
// Aho-Corasick automaton; here for one string, whose automaton is the KMP table).

/**
 * `gbnf` with every rule name passed through `rename`. In GBNF a bare word outside string
 * literals, character classes, token references, repetition braces and comments is always a rule
 * name, so this is exact.
 */
export function renameRules(gbnf: string, rename: (name: string) => string): string {
  let out = '';
  let i = 0;
  const n = gbnf.length;
  const skipDelimited = (close: string): void => {
    // from the opening character through the closing one, backslash escapes included
    const start = i++;
    while (i < n && gbnf[i] !== close) i += gbnf[i] === '\\' ? 2 : 1;
    i = Math.min(n, i + 1);
    out += gbnf.slice(start, i);
  };
  while (i < n) {
    const c = gbnf[i];
    if (c === '"') skipDelimited('"');
    else if (c === '[') skipDelimited(']');
    else if (c === '{') skipDelimited('}');
    else if (c === '<') skipDelimited('>');
    else if (c === '#') {
      const end = gbnf.indexOf('\n', i);
      const stop = end < 0 ? n : end;
      out += gbnf.slice(i, stop);
      i = stop;
    } else if (/[a-zA-Z0-9-]/.test(c)) {
      const start = i;
      while (i < n && /[a-zA-Z0-9-]/.test(gbnf[i])) i++;
      out += rename(gbnf.slice(start, i));
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** `gbnf` (its start rule `root`) as rules that start at `name`, the others prefixed `name-`. */
export function grammarAsRule(gbnf: string, name: string): string {
  return renameRules(gbnf, (r) => (r === 'root' ? name : `${name}-${r}`));
}

/** A GBNF character class of these code points (`negate`: every other character). */
function charClass(chars: readonly number[], negate: boolean): string {
  const hex = (c: number) => (c <= 0xffff ? `\\u${c.toString(16).padStart(4, '0')}` : `\\U${c.toString(16).padStart(8, '0')}`);
  return `[${negate ? '^' : ''}${chars.map(hex).join('')}]`;
}

/**
 * GBNF rules, starting at `name`, for any text (the empty one too) in which `delimiter` does not
 * occur: what runs up to a closing marker, e.g. the thinking before "</think>". State i of the
 * rule set is "the text ends with the first i characters of the delimiter"; the character that
 * would complete it has no transition.
 */
export function excludingRules(name: string, delimiter: string): string {
  const d = Array.from(delimiter, (c) => c.codePointAt(0)!);
  if (d.length === 0) throw new Error('excludingRules needs a delimiter');
  // KMP failure function: fail[i] = length of the longest proper border of d[0..i]
  const fail = new Array<number>(d.length).fill(0);
  for (let i = 1, k = 0; i < d.length; i++) {
    while (k > 0 && d[i] !== d[k]) k = fail[k - 1];
    if (d[i] === d[k]) k++;
    fail[i] = k;
  }
  const next = (state: number, c: number): number => {
    let k = state;
    while (k > 0 && d[k] !== c) k = fail[k - 1];
    return d[k] === c ? k + 1 : 0;
  };
  const distinct = [...new Set(d)];
  const state = (i: number) => (i === 0 ? name : `${name}-${i}`);
  const rules: string[] = [];
  for (let i = 0; i < d.length; i++) {
    const byTarget = new Map<number, number[]>();
    for (const c of distinct) {
      const t = next(i, c);
      if (t === d.length) continue; // would complete the delimiter
      byTarget.set(t, [...(byTarget.get(t) ?? []), c]);
    }
    const alts = [...byTarget].map(([t, cs]) => `${charClass(cs, false)} ${state(t)}`);
    alts.push(`${charClass(distinct, true)} ${name}`);
    rules.push(`${state(i)} ::= | ${alts.join(' | ')}`);
  }
  return rules.join('\n');
}
