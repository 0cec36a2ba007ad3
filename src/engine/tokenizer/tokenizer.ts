// The tokenizer of a GGUF model: llama_vocab::impl::tokenize and detokenize (src/llama-vocab.cpp)
// over the vocabulary, the SPM and BPE sessions and the special-token partition.

import type { GgufHeader } from '../gguf/types.js';
import { BpeSession } from './bpe.js';
import { cleanSpaces, PieceTable } from './decode.js';
import { partitionSpecial } from './partition.js';
import { SpmSession } from './spm.js';
import type { DecodeOptions, EncodeOptions, StreamDecoder, Tokenizer } from './types.js';
import { ATTR_CONTROL, loadVocab, type Vocab } from './vocab.js';

/** One decoder for every whole-text decode: without {stream} it keeps no state between calls, and
 * constructing one per call cost ~10 µs (five per generated token for the top candidates' text). */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

export class GgufTokenizer implements Tokenizer {
  readonly kind: 'spm' | 'bpe';
  readonly vocabSize: number;
  readonly bos: number | null;
  readonly eos: number | null;
  readonly eot: number | null;
  readonly addBos: boolean;
  readonly addEos: boolean;
  private readonly pieces: PieceTable;
  private readonly bpe: BpeSession | null;
  private readonly spm: SpmSession | null;

  constructor(readonly vocab: Vocab) {
    this.kind = vocab.type;
    this.vocabSize = vocab.tokens.length;
    this.bos = vocab.special.bos;
    this.eos = vocab.special.eos;
    this.eot = vocab.special.eot;
    this.addBos = vocab.addBos;
    this.addEos = vocab.addEos;
    this.pieces = new PieceTable(vocab);
    this.bpe = vocab.type === 'bpe' ? new BpeSession(vocab) : null;
    this.spm = vocab.type === 'spm' ? new SpmSession(vocab) : null;
  }

  encode(text: string, opts: EncodeOptions = {}): number[] {
    const v = this.vocab;
    const addSpecial = opts.addSpecial ?? false;
    const out: number[] = [];
    const frags = partitionSpecial(v, text, opts.parseSpecial ?? false);
    if (addSpecial && v.addBos) out.push(v.special.bos!);
    if (v.type === 'spm') {
      // A space goes in front of the text at the start and after every special token.
      let prevSpecial = true;
      for (const f of frags) {
        if (typeof f === 'number') {
          out.push(f);
          prevSpecial = true;
          continue;
        }
        const t = (v.addSpacePrefix && prevSpecial ? ' ' : '') + f;
        this.spm!.tokenize(t.replaceAll(' ', '\u2581'), out);
        prevSpecial = false;
      }
    } else {
      for (const f of frags) {
        if (typeof f === 'number') out.push(f);
        else this.bpe!.tokenize(v.escapeWhitespaces ? f.replaceAll(' ', '\u2581') : f, out);
      }
    }
    if (addSpecial && v.addEos) out.push(v.special.eos!);
    return out;
  }

  decode(ids: readonly number[], opts: DecodeOptions = {}): string {
    const v = this.vocab;
    const removeSpecial = opts.skipSpecial ?? false;
    const special = !removeSpecial;
    let first = 0;
    let end = ids.length;
    let removeSpace = v.addSpacePrefix;
    if (removeSpecial && v.addBos && end > 0 && ids[0] === v.special.bos) {
      removeSpace = false;
      first = 1;
    }
    if (removeSpecial && v.addEos && end > first && ids[end - 1] === v.special.eos) end--;
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (let i = first; i < end; i++) {
      let b = this.pieces.bytes(ids[i], special);
      // the space SPM put in front of the text: strip it from the first token only
      if (removeSpace && b.length > 0 && b[0] === 0x20) b = b.subarray(1);
      removeSpace = false;
      chunks.push(b);
      total += b.length;
    }
    const all = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    const text = UTF8.decode(all);
    return v.cleanSpaces ? cleanSpaces(text) : text;
  }

  piece(id: number): string {
    this.pieces.bytes(id, true); // range check
    return this.vocab.tokens[id];
  }

  bytes(id: number, opts: DecodeOptions = {}): Uint8Array {
    return this.pieces.bytes(id, !(opts.skipSpecial ?? false));
  }

  isEog(id: number): boolean {
    return this.vocab.eog.has(id);
  }

  isControl(id: number): boolean {
    return Number.isInteger(id) && id >= 0 && id < this.vocabSize && (this.vocab.attrs[id] & ATTR_CONTROL) !== 0;
  }

  createStreamDecoder(opts: DecodeOptions = {}): StreamDecoder {
    const special = !(opts.skipSpecial ?? false);
    let decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    return {
      push: (id: number) => decoder.decode(this.pieces.bytes(id, special), { stream: true }),
      flush: () => {
        const rest = decoder.decode();
        decoder = new TextDecoder('utf-8', { ignoreBOM: true });
        return rest;
      },
    };
  }
}

/** The tokenizer of a model file. Throws ModelError for a tokenizer Pantheon does not support. */
export function tokenizerFromGguf(h: GgufHeader): GgufTokenizer {
  return new GgufTokenizer(loadVocab(h));
}
