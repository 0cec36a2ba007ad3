// The SPM session merges word by word (with a cache) when the vocabulary allows it; it must give
// exactly what one merge run over the whole text gives (llama.cpp's way).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpmSession, spmTokenize } from '../../src/engine/tokenizer/spm.js';
import { HAVE_VOCABS, loadVectors, tokenizerOf, vocabPath } from './vectors.js';

describe.skipIf(!HAVE_VOCABS)('SPM word splitting', () => {
  const vocab = () => tokenizerOf(vocabPath('llama-spm')).vocab;

  it('the llama vocabulary allows it', () => {
    expect(vocab().spmWordSplit).toBe(true);
  });

  const whole = (text: string) => {
    const out: number[] = [];
    spmTokenize(vocab(), text, out);
    return out;
  };
  const split = (text: string) => {
    const out: number[] = [];
    new SpmSession(vocab()).tokenize(text, out);
    return out;
  };

  it('matches one whole-text merge on the test strings, joined and alone', () => {
    const texts = loadVectors('llama-spm').map((v) => ` ${v.text}`.replaceAll(' ', '▁'));
    for (const t of texts) expect(split(t)).toEqual(whole(t));
    const all = texts.join('');
    expect(split(all)).toEqual(whole(all));
  });

  it('matches on random text', () => {
    const chunk = fc.constantFrom('▁', '▁▁', 'the', 'a', 'ing', 'Hello', 'é', '中', '🦙', '\n', '1', '.', 'x');
    fc.assert(fc.property(fc.array(chunk, { maxLength: 30 }), (parts) => {
      const t = parts.join('');
      expect(split(t)).toEqual(whole(t));
    }), { numRuns: 300 });
  });
});
