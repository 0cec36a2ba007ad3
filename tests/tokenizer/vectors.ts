// llama.cpp's tokenizer test vectors (models/ggml-vocab-*.gguf.{inp,out}, see SOURCES.md):
// .inp holds strings each followed by "\n__ggml_vocab_test__\n"; line i of .out holds the ids
// llama.cpp produced for string i (no BOS/EOS, special tokens not parsed).
import { existsSync, readFileSync } from 'node:fs';
import { readGgufHeaderSync } from '../../src/engine/gguf/file.js';
import { tokenizerFromGguf, type GgufTokenizer } from '../../src/engine/tokenizer/tokenizer.js';
import { sharedModel } from '../helpers.js';

export const VOCAB_DIR = sharedModel('llama.cpp-vocab');

export function vocabPath(name: string): string {
  return `${VOCAB_DIR}/ggml-vocab-${name}.gguf`;
}

export interface Vector {
  text: string;
  ids: number[];
}

export function loadVectors(name: string): Vector[] {
  const inp = readFileSync(`${vocabPath(name)}.inp`, 'utf8').split('\n__ggml_vocab_test__\n');
  inp.pop(); // after the last separator
  const out = readFileSync(`${vocabPath(name)}.out`, 'utf8').split('\n');
  return inp.map((text, i) => ({ text, ids: out[i].trim() === '' ? [] : out[i].trim().split(/\s+/).map(Number) }));
}

/** The llama.cpp ids of one test string. */
export function idsOf(vectors: Vector[], text: string): number[] {
  const v = vectors.find((x) => x.text === text);
  if (!v) throw new Error(`no vector for ${JSON.stringify(text)}`);
  return v.ids;
}

const cache = new Map<string, GgufTokenizer>();
export function tokenizerOf(path: string): GgufTokenizer {
  let t = cache.get(path);
  if (!t) {
    t = tokenizerFromGguf(readGgufHeaderSync(path));
    cache.set(path, t);
  }
  return t;
}

export const HAVE_VOCABS = existsSync(VOCAB_DIR);
