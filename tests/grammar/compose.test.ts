// Grammar composition (grammar/compose.ts, grammar/after-reasoning.ts), checked on hand-written
// strings: renamed rules keep literals, classes and comments that spell a rule's name; the
// excluding rules accept exactly the texts without the delimiter (against String.includes over
// every short string of a small alphabet); a thinking model's grammar leaves the reasoning free and
// holds the answer to the grammar.
import { describe, expect, it } from 'vitest';
import { grammarAfterReasoning } from '../../src/engine/grammar/after-reasoning.js';
import { GrammarAutomaton } from '../../src/engine/grammar/automaton.js';
import { excludingRules, grammarAsRule, renameRules } from '../../src/engine/grammar/compose.js';
import { parseGbnf } from '../../src/engine/grammar/gbnf.js';
import { jsonSchemaToGbnf } from '../../src/engine/grammar/json-schema.js';

const accepts = (g: string, s: string) => new GrammarAutomaton(parseGbnf(g)).accepts(s);

describe('renameRules', () => {
  it('renames rule names only, not words inside literals, classes, braces, tokens or comments', () => {
    const g = 'root ::= "root" [root] x{2,3} <[12]> item # root here\nx ::= "a"\nitem ::= x root-2\nroot-2 ::= "b"';
    expect(renameRules(g, (n) => `p-${n}`)).toBe('p-root ::= "root" [root] p-x{2,3} <[12]> p-item # root here\np-x ::= "a"\np-item ::= p-x p-root-2\np-root-2 ::= "b"');
  });

  it('a schema grammar under another name matches what it matched, inside a bigger grammar', () => {
    const schema = { type: 'object', properties: { root: { enum: ['a root b'] } }, required: ['root'] };
    const g = `root ::= "<" args ">"\n${grammarAsRule(jsonSchemaToGbnf(schema), 'args')}`;
    expect(accepts(g, '<{"root": "a root b"}>')).toBe(true);
    expect(accepts(g, '<{"root": "a root"}>')).toBe(false);
  });
});

describe('excludingRules', () => {
  it('accepts exactly the strings without the delimiter (every string of length <= 7 over {a, b, c})', () => {
    for (const d of ['aab', 'abab', 'c', 'abcab']) {
      const g = `root ::= free\n${excludingRules('free', d)}`;
      const a = new GrammarAutomaton(parseGbnf(g));
      const all: string[] = [''];
      for (let len = 1; len <= 7; len++) for (const s of all.filter((x) => x.length === len - 1)) for (const c of 'abc') all.push(s + c);
      for (const s of all) expect(a.accepts(s), `${d} / ${s}`).toBe(!s.includes(d));
    }
  });

  it('then the delimiter: the text up to its first occurrence', () => {
    const g = `root ::= free "</think>" "!"\n${excludingRules('free', '</think>')}`;
    expect(accepts(g, 'a < b </ think </think>!')).toBe(true);
    expect(accepts(g, '<</think>!')).toBe(true);
    expect(accepts(g, 'x</think>y</think>!')).toBe(false);
  });
});

describe('grammarAfterReasoning', () => {
  const json = jsonSchemaToGbnf({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] });
  it('think: an optional <think>…</think> of free text, then the answer', () => {
    const g = grammarAfterReasoning(json, { format: 'think', startsInside: false }, '<|im_start|>assistant\n');
    expect(accepts(g, '<think>Let me see: {not json} </think>\n\n{"n": 1}')).toBe(true);
    expect(accepts(g, '{"n": 1}')).toBe(true);
    expect(accepts(g, '<think>a</think>{"n": "x"}')).toBe(false);
    expect(accepts(g, 'Sure! {"n": 1}')).toBe(false);
    expect(accepts(g, '<think>a</think>b</think>{"n": 1}')).toBe(false);
  });

  it('think, opened by the prompt: the closing tag is required; turned off by the prompt: unchanged', () => {
    const g = grammarAfterReasoning(json, { format: 'think', startsInside: true }, '<|Assistant|><think>\n');
    expect(accepts(g, 'hmm</think>{"n": 2}')).toBe(true);
    expect(accepts(g, '{"n": 2}')).toBe(false);
    expect(grammarAfterReasoning(json, { format: 'think', startsInside: false }, 'assistant\n<think>\n\n</think>\n\n')).toBe(json);
    expect(grammarAfterReasoning(json, { format: 'none', startsInside: false }, '')).toBe(json);
  });

  it('harmony: analysis messages, then the final channel holds the answer', () => {
    const g = grammarAfterReasoning(json, { format: 'harmony', startsInside: false }, '<|start|>assistant');
    expect(accepts(g, '<|channel|>analysis<|message|>Think {x}.<|end|><|start|>assistant<|channel|>final<|message|>{"n": 3}')).toBe(true);
    expect(accepts(g, '<|channel|>final <|constrain|>json<|message|>{"n": 3}')).toBe(true);
    expect(accepts(g, '<|channel|>final<|message|>Three')).toBe(false);
    expect(accepts(g, '<|channel|>analysis<|message|>a<|end|>b<|end|><|start|>assistant<|channel|>final<|message|>{"n": 3}')).toBe(false);
  });
});
