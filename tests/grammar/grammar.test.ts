// The grammar engine against llama.cpp's own truths: its grammars (grammars/*.gbnf, copied into
// fixtures), its JSON-schema converter's expected grammars (tests/test-json-schema-to-grammar.cpp)
// and its matcher's passing/failing strings (tests/test-grammar-integration.cpp), extracted by
// bench/extract-grammar-cases.mjs; and the token mask against hand-worked vocabularies.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRng, DEFAULT_SAMPLING, Sampler, type SamplingParams } from '../../src/engine/sample/index.js';
import { describe, expect, it } from 'vitest';
import { ConstrainedSampler, compileGrammar, DEAD, GrammarAutomaton, GrammarMatcher, JSON_OBJECT_GBNF, jsonSchemaToGbnf, parseGbnf, printGrammar, type GrammarVocab } from '../../src/engine/grammar/index.js';

const FIX = join(__dirname, 'fixtures');
const enc = new TextEncoder();

interface SchemaCase { status: 'SUCCESS' | 'FAILURE'; name: string; schema: string; grammar: string }
interface IntegrationCase { kind: 'grammar' | 'schema'; name: string; text: string; pass: (string | (string | number)[])[]; fail: (string | (string | number)[])[] }

const schemaCases = JSON.parse(readFileSync(join(FIX, 'json-schema-cases.json'), 'utf8')) as SchemaCase[];
const integrationCases = JSON.parse(readFileSync(join(FIX, 'grammar-integration-cases.json'), 'utf8')) as IntegrationCase[];
const trim = (s: string) => s.trim().replace(/(^|\n)[ \t]+/g, '$1');

/** test-grammar-integration's match_string: each code point a piece of token 0, token(N) as <[N]>. */
function matchString(a: GrammarAutomaton, input: string | (string | number)[]): boolean {
  let s = a.start;
  for (const p of typeof input === 'string' ? [input] : input) {
    const pieces = typeof p === 'number' ? [[p, `<[${p}]>`] as const] : Array.from(p, (c) => [0, c] as const);
    for (const [id, text] of pieces) {
      s = a.acceptToken(s, id, enc.encode(text));
      if (s === DEAD) return false;
    }
  }
  return a.states[s].accepting;
}

describe('GBNF parser', () => {
  const files = readdirSync(FIX).filter((f) => f.endsWith('.gbnf'));
  it.each(files)('parses llama.cpp grammars/%s', (f) => {
    const g = parseGbnf(readFileSync(join(FIX, f), 'utf8'));
    expect(g.ids.has('root')).toBe(true);
    expect(() => new GrammarAutomaton(g)).not.toThrow();
  });

  it('rewrites repetitions and groups as llama.cpp does (hand-worked)', () => {
    // llama_grammar_parser on `root ::= "a"{2,3} ("b" | "c")?`: a a then a generated rule for the
    // optional third a, one for the group and one for its optional use, named <rule>_<id>.
    const g = parseGbnf('root ::= "a"{2,3} ("b" | "c")?\n');
    expect(printGrammar(g)).toBe('root ::= [a] [a] root_1 root_3 \nroot_1 ::= [a] | \nroot_2 ::= [b] | [c] \nroot_3 ::= root_2 | \n');
  });

  it('json.gbnf accepts JSON and rejects near misses', () => {
    const a = new GrammarAutomaton(parseGbnf(readFileSync(join(FIX, 'json.gbnf'), 'utf8')));
    for (const s of ['{}', '{"a": [1, 2.5, -3e4, "x\\n", true, null]}', '{"k":{"n":{}}}']) expect(a.accepts(s)).toBe(true);
    for (const s of ['[]', '{"a" 1}', '{"a": 01}', '{"a": "\u0001"}', '{']) expect(a.accepts(s)).toBe(false);
  });

  it('refuses malformed grammars with a one-line UsageError', () => {
    // test-grammar-integration: missing reference, left recursion, missing root
    expect(() => parseGbnf('root ::= expr\nexpr ::= term ("+" term)*\nterm ::= numero\nnumber ::= [0-9]+')).toThrow(/Undefined rule identifier 'numero'/);
    for (const g of ['root ::= "a" | root "a"', 'root ::= asdf\nasdf ::= "a" | asdf "a"\n', 'root ::= asdf\nasdf ::= "a" | foo "b"\nfoo ::= "c" | asdf "d" | "e"', 'root ::= asdf\nasdf ::= "a" | foo "b"\nfoo ::= "c" | empty asdf "d" | "e"\nempty ::= "blah" | ']) {
      expect(() => new GrammarAutomaton(parseGbnf(g))).toThrow(/left-recursive/);
    }
    expect(() => new GrammarAutomaton(parseGbnf('rot ::= expr\nexpr ::= [0-9]+'))).toThrow(/no rule 'root'/);
    expect(() => new GrammarAutomaton(parseGbnf('foobar ::= "foobar"'), 'foobar')).not.toThrow();
    expect(() => parseGbnf('root ::= "abc')).toThrow(/unexpected end of input/);
    expect(() => parseGbnf('root ::= [a-')).toThrow(/unexpected end of input/);
    expect(() => parseGbnf('root = "a"')).toThrow(/expecting ::=/);
  });
});

describe('JSON schema → GBNF (llama.cpp test-json-schema-to-grammar)', () => {
  it.each(schemaCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    if (c.status === 'FAILURE') {
      expect(() => jsonSchemaToGbnf(JSON.parse(c.schema))).toThrow();
      return;
    }
    const got = jsonSchemaToGbnf(JSON.parse(c.schema));
    expect(trim(got)).toBe(c.grammar);
    // and the expected grammar parses with our parser (verify_expectation_parseable)
    expect(parseGbnf(c.grammar).ids.has('root')).toBe(true);
  });
});

describe('matcher (llama.cpp test-grammar-integration)', () => {
  it.each(integrationCases.map((c, i) => [`${c.kind} ${i}: ${c.name}`, c] as const))('%s', (_name, c) => {
    const a = new GrammarAutomaton(parseGbnf(c.kind === 'schema' ? jsonSchemaToGbnf(JSON.parse(c.text)) : c.text));
    for (const s of c.pass) expect(matchString(a, s), `should accept ${JSON.stringify(s)}`).toBe(true);
    for (const s of c.fail) expect(matchString(a, s), `should reject ${JSON.stringify(s)}`).toBe(false);
  });
});

// A hand-made vocabulary: ids 0..n-1 with these byte strings; EOS = the last id.
function fakeVocab(pieces: (string | Uint8Array)[], eog: number[]): GrammarVocab {
  const bytes = pieces.map((p) => (typeof p === 'string' ? enc.encode(p) : p));
  return { size: bytes.length, bytes: (id) => bytes[id], isEog: (id) => eog.includes(id) };
}
const allowedIds = (m: Uint8Array) => [...m].flatMap((v, i) => (v ? [i] : []));

describe('token mask', () => {
  const pieces = ['{', '}', '{"', '"', 'a', 'ab', '":', ' ', '1', '12', '"a"', '<ctl>', '', new Uint8Array([0xc3]), new Uint8Array([0xa9]), 'é', '</s>'];
  const vocab = fakeVocab(pieces, [16]);

  it('allows exactly the tokens that continue the grammar (hand-worked)', () => {
    const g = compileGrammar('root ::= "{" ( "\\"" [a-zé]+ "\\":" " "? [0-9]+ )? "}"');
    const m = new GrammarMatcher(g, vocab);
    // start: only '{' and '{"'
    expect(allowedIds(m.mask())).toEqual([0, 2]);
    m.accept(2); // {"
    // a key: a, ab, é, and the first byte of é (0xc3); not the lone continuation byte 0xa9
    expect(allowedIds(m.mask())).toEqual([4, 5, 13, 15]);
    m.accept(13); // half of é
    expect(allowedIds(m.mask())).toEqual([14]);
    m.accept(14);
    expect(allowedIds(m.mask())).toEqual([3, 4, 5, 6, 13, 15]); // more key, or the closing quote (alone or with the colon)
    m.accept(6); // ":
    expect(allowedIds(m.mask())).toEqual([7, 8, 9]);
    m.accept(9);
    expect(m.accepting).toBe(false);
    expect(allowedIds(m.mask())).toEqual([1, 8, 9]);
    m.accept(1);
    // complete: only EOS
    expect(m.complete).toBe(true);
    expect(allowedIds(m.mask())).toEqual([16]);
  });

  it('allows(id) agrees with the mask at every step of a walk', () => {
    const g = compileGrammar(JSON_OBJECT_GBNF);
    const m = new GrammarMatcher(g, vocab);
    for (const t of [2, 4, 6, 7, 10, 1]) {
      const mask = m.mask();
      for (let id = 0; id < vocab.size; id++) expect(m.allows(id), `token ${id}`).toBe(mask[id] === 1);
      expect(mask[t]).toBe(1);
      m.accept(t);
    }
    expect(m.accepting).toBe(true);
    expect(() => m.accept(0)).toThrow(/does not allow/);
  });

  it('starting a fresh automaton when the old one grows too big keeps the parse where it was', () => {
    const saved = GrammarMatcher.maxStates;
    GrammarMatcher.maxStates = 4;
    try {
      const g = compileGrammar('root ::= "{" ( "\\"" [a-z]+ "\\":" " "? [0-9]+ )? "}" # rebase\n');
      const m = new GrammarMatcher(g, vocab);
      const before = g.automaton;
      for (const t of [2, 4, 5, 6]) m.accept(t); // {"aab":
      expect(g.automaton).not.toBe(before);
      expect(allowedIds(m.mask())).toEqual([7, 8, 9]);
      m.accept(8);
      m.accept(1);
      expect(m.complete).toBe(true);
    } finally {
      GrammarMatcher.maxStates = saved;
    }
  });
});

describe('constrained sampling', () => {
  // 6000 random tokens over a JSON-ish alphabet, and EOS (large enough for the checking path)
  const rnd = createRng(9);
  const alphabet = ['{', '}', '"', ':', ',', ' ', 'a', 'b', '1', '2', '[', ']', 'é', '\n'];
  const pieces: string[] = [];
  for (let i = 0; i < 6000; i++) {
    let t = '';
    const len = 1 + Math.floor(rnd() * 4);
    for (let j = 0; j < len; j++) t += alphabet[Math.floor(rnd() * alphabet.length)];
    pieces.push(t);
  }
  pieces.push('</s>');
  const vocab = fakeVocab(pieces, [6000]);
  const gbnf = jsonSchemaToGbnf({ type: 'object', properties: { ab: { type: 'array', items: { type: 'integer' }, minItems: 6 }, b: { type: 'string', minLength: 20 } }, required: ['ab', 'b'] });

  /** llama.cpp's way: draw; if rejected, mask every rejected token and draw again. */
  function reference(p: SamplingParams, steps: number, seed: number): number[] {
    const sampler = new Sampler(p);
    const m = new GrammarMatcher(compileGrammar(gbnf), vocab);
    const r = createRng(seed);
    const out: number[] = [];
    for (let s = 0; s < steps && !m.complete; s++) {
      const logits = Float32Array.from({ length: vocab.size }, () => (r() - 0.5) * 12);
      let id = sampler.sample(logits, []).id;
      if (!m.allows(id)) {
        const mask = m.mask();
        id = sampler.sample(logits.map((l, i) => (mask[i] ? l : -Infinity)), []).id;
      }
      m.accept(id);
      out.push(id);
    }
    return out;
  }

  it.each([
    ['greedy', { ...DEFAULT_SAMPLING, temperature: 0 }],
    ['top-k 40, temperature 1', { ...DEFAULT_SAMPLING, temperature: 1, seed: 5 }],
    ['top-k 4, top-p 0.5', { ...DEFAULT_SAMPLING, temperature: 0.7, topK: 4, topP: 0.5, seed: 6 }],
    ['top-k off (whole mask)', { ...DEFAULT_SAMPLING, temperature: 1, topK: 0, seed: 7 }],
    ['repeat penalty (whole mask)', { ...DEFAULT_SAMPLING, temperature: 1, repeatPenalty: 1.3, seed: 8 }],
  ] as const)('%s: the same tokens as masking the whole vocabulary every time', (_name, p) => {
    const want = reference(p, 80, 3);
    const cs = new ConstrainedSampler(new Sampler(p), new GrammarMatcher(compileGrammar(gbnf), vocab));
    const r = createRng(3);
    const got: number[] = [];
    for (let s = 0; s < want.length; s++) got.push(cs.sample(Float32Array.from({ length: vocab.size }, () => (r() - 0.5) * 12), [], null).id);
    expect(got).toEqual(want);
    expect(cs.redrawn).toBeGreaterThan(10);
    if (p.topK > 0 && p.repeatPenalty === 1) expect(cs.masks).toBeLessThan(cs.redrawn);
  });
});
