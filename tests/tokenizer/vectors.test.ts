// Every llama.cpp tokenizer vector whose vocabulary GGUF is in ../shared: our ids must equal
// llama.cpp's, string by string.
import { describe, expect, it } from 'vitest';
import { sharedModel } from '../helpers.js';
import { HAVE_VOCABS, loadVectors, tokenizerOf, vocabPath } from './vectors.js';

// vocab file -> the vectors that apply to it
const CASES: [file: string, vectors: string][] = [
  [vocabPath('llama-spm'), 'llama-spm'],
  [vocabPath('phi-3'), 'phi-3'],
  [vocabPath('gpt-2'), 'gpt-2'],
  [vocabPath('starcoder'), 'starcoder'],
  [vocabPath('deepseek-coder'), 'deepseek-coder'],
  [vocabPath('llama-bpe'), 'llama-bpe'],
  // Same vocabulary as ggml-vocab-llama-spm.gguf (SOURCES.md), so the same vectors.
  [sharedModel('llama-2-tiny-random.gguf'), 'llama-spm'],
  // Random weights with tokenizers copied from the vocab files (tiny-random/README.md).
  [sharedModel('tiny-random/tiny-llama-s5.gguf'), 'llama-spm'],
  [sharedModel('tiny-random/tiny-phi3-s5.gguf'), 'phi-3'],
  [sharedModel('tiny-random/tiny-qwen2-s5.gguf'), 'gpt-2'],
];

// Not tested here:
// - qwen2, command-r: their vocab GGUFs are over 4 MiB and are not in ../shared (SOURCES.md), so
//   there is nothing to build the tokenizer from; only the vectors exist.
// - bert-bge: a WordPiece tokenizer, which Pantheon does not support (tested in behaviour.test.ts
//   to fail with a clear ModelError).

describe.skipIf(!HAVE_VOCABS)('llama.cpp tokenizer vectors', () => {
  for (const [file, name] of CASES) {
    it(`${file.slice(file.lastIndexOf('/') + 1)} matches ggml-vocab-${name}.gguf.out`, () => {
      const tok = tokenizerOf(file);
      const vectors = loadVectors(name);
      expect(vectors).toHaveLength(46);
      for (const v of vectors) {
        expect({ text: v.text, ids: tok.encode(v.text) }).toEqual({ text: v.text, ids: v.ids });
      }
    });
  }
});
