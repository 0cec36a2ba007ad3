// The BPE pre-tokenizers: hand-worked splits, the hand-written splitters against the same regex
// run by the general regex path (llama.cpp keeps both and treats them as equal), and every regex
// set of every `tokenizer.ggml.pre` name compiling and splitting without losing text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { knownPreNames } from '../../src/engine/tokenizer/index.js';
import { PRE_REGEXES, preTokenizerSpec } from '../../src/engine/tokenizer/pre-types.js';
import { splitWords } from '../../src/engine/tokenizer/pre-tokenize.js';
import { HAVE_VOCABS, loadVectors } from './vectors.js';

const split = (text: string, kind: keyof typeof PRE_REGEXES) => splitWords(text, PRE_REGEXES[kind], false);

describe('hand-worked splits', () => {
  it('GPT-2: contractions, " ?\\p{L}+", " ?\\p{N}+", trailing spaces', () => {
    expect(split("Hello world's 12345", 'gpt2')).toEqual(['Hello', ' world', "'s", ' 12345']);
    expect(split('a  b', 'gpt2')).toEqual(['a', ' ', ' b']); // \s+(?!\S) leaves one space to the word
    expect(split('a\u3000b', 'gpt2')).toEqual(['a', '\u3000', 'b']); // ideographic space is \s
  });

  it('Llama 3: digits in threes, case-insensitive contractions, newlines', () => {
    expect(split("Hello world's 12345", 'llama3')).toEqual(['Hello', ' world', "'s", ' ', '123', '45']);
    expect(split("I'M", 'llama3')).toEqual(['I', "'M"]);
    expect(split('a\n\n b', 'llama3')).toEqual(['a', '\n\n', ' b']);
  });

  it('Qwen2: single digits (general regex path)', () => {
    expect(split('x 2024', 'qwen2')).toEqual(['x', ' ', '2', '0', '2', '4']);
  });

  it('deepseek-coder: its five regexes one after the other', () => {
    expect(split('a1 b', 'deepseek-coder')).toEqual(['a', '1', ' b']);
  });

  it('superbpe: empty lookahead matches cut digit runs in threes from the right', () => {
    expect(split('1234567', 'superbpe')).toEqual(['1', '234', '567']);
  });

  it('collapsed categories: every non-ASCII letter is both "not a-z" and "not A-Z", as in llama.cpp', () => {
    // GPT-4o's camel-case rule splits ASCII words but not accented ones.
    expect(split('HelloWorld', 'gpt4o')).toEqual(['Hello', 'World']);
    expect(split('ÉtéÉté', 'gpt4o')).toEqual(['ÉtéÉté']);
  });

  it('U+FEFF is not whitespace (it is in JavaScript\'s \\s, not in llama.cpp\'s list)', () => {
    expect(split('a\uFEFFb', 'qwen2')).toEqual(['a', '\uFEFFb']);
  });

  it('byte encoding maps each UTF-8 byte to the GPT-2 alphabet', () => {
    expect(splitWords(' é\n', PRE_REGEXES.gpt2, true)).toEqual(['ĠÃ©', 'Ċ']);
  });
});

// The same regex text wrapped in a group no longer matches the hand-written splitter's key, so it
// runs through the general (collapsed) regex path.
const GPT2_GENERAL = `(?:${PRE_REGEXES.gpt2[0]})`;
const LLAMA3_GENERAL = `(?:${PRE_REGEXES.llama3[0]})`;

const interesting = fc.constantFrom(
  ' ', '  ', '\t', '\n', '\r\n', '\u3000', '\u00a0', '\uFEFF', "'", "'s", "'LL", "'re", 'a', 'Z', 'é', 'Ж', '中', '1', '٣', '½',
  '!', '?', '.', '😀', '\u0301', '-', '_', '$',
);
const texts = fc.array(interesting, { maxLength: 24 }).map((a) => a.join(''));

describe('hand-written splitters agree with the regexes they stand for', () => {
  it.skipIf(!HAVE_VOCABS)('on llama.cpp\'s test strings', () => {
    for (const { text } of loadVectors('llama-bpe')) {
      expect(splitWords(text, [PRE_REGEXES.gpt2[0]], false)).toEqual(splitWords(text, [GPT2_GENERAL], false));
      expect(splitWords(text, [PRE_REGEXES.llama3[0]], false)).toEqual(splitWords(text, [LLAMA3_GENERAL], false));
    }
  });

  it('on random mixes of letters, digits, marks, spaces and apostrophes', () => {
    fc.assert(fc.property(texts, (text) => {
      expect(splitWords(text, [PRE_REGEXES.gpt2[0]], false)).toEqual(splitWords(text, [GPT2_GENERAL], false));
      expect(splitWords(text, [PRE_REGEXES.llama3[0]], false)).toEqual(splitWords(text, [LLAMA3_GENERAL], false));
    }), { numRuns: 300 });
  });
});

describe('every pre-tokenizer', () => {
  const sample = "Hello, y'all! 12345 Été 中文 \t\n🦙 <sentinel:1> IMGIMGABZ 'RE ½٣ - _";

  it('knows the names llama.cpp lists', () => {
    for (const name of ['default', 'llama-bpe', 'deepseek-llm', 'deepseek-coder', 'falcon', 'mpt', 'starcoder', 'gpt-2', 'refact',
      'command-r', 'qwen2', 'stablelm2', 'olmo', 'dbrx', 'smaug-bpe', 'poro-chat', 'chatglm-bpe', 'viking', 'jais', 'tekken',
      'smollm', 'codeshell', 'bloom', 'gpt3-finnish', 'exaone', 'chameleon', 'minerva-7b', 'deepseek-v3', 'gpt-4o', 'superbpe',
      'trillion', 'bailingmoe', 'llama4', 'pixtral', 'seed-coder', 'kimi-k2']) {
      expect(preTokenizerSpec(name), name).toBeDefined();
    }
    expect(preTokenizerSpec('no-such-pre')).toBeUndefined();
  });

  for (const name of knownPreNames()) {
    it(`${name}: splits without losing or adding text`, () => {
      const spec = preTokenizerSpec(name)!;
      const regexes = PRE_REGEXES[spec.kind];
      expect(splitWords(sample, regexes, false).join('')).toBe(sample);
      fc.assert(fc.property(texts, (text) => {
        const words = splitWords(text, regexes, false);
        expect(words.join('')).toBe(text);
        for (const w of words) expect(w.length).toBeGreaterThan(0);
      }), { numRuns: 40 });
    });
  }
});
