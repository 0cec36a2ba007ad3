// Tokenizers that reproduce llama.cpp: SentencePiece ("llama") and byte-level BPE ("gpt2"),
// built from a GGUF header.

export type { DecodeOptions, EncodeOptions, StreamDecoder, Tokenizer } from './types.js';
export { tokenizerFromGguf, GgufTokenizer } from './tokenizer.js';
export { knownPreNames } from './pre-types.js';
