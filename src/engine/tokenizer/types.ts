// The tokenizer's public contract (issue 4 §2). Other parts of the engine code against these.

export interface EncodeOptions {
  /** Add BOS/EOS as the model asks (tokenizer.ggml.add_bos_token / add_eos_token). Default false. */
  addSpecial?: boolean;
  /** Turn the text of control tokens ("<|im_start|>") into those tokens. Default false. */
  parseSpecial?: boolean;
}

export interface DecodeOptions {
  /**
   * Leave control and unknown tokens out and drop a leading BOS / trailing EOS the model adds
   * (llama.cpp detokenize with remove_special and without unparse_special). Default false:
   * every token is rendered, control tokens as their text.
   */
  skipSpecial?: boolean;
}

/**
 * Turns a stream of generated ids into text without ever cutting a UTF-8 character in two: the
 * bytes of a character split across tokens are held back until it is complete. Each token is
 * rendered on its own, as llama.cpp's server streams: no leading-space removal and no
 * clean-up of spaces (decode() does both for a whole sequence).
 */
export interface StreamDecoder {
  /** Text that became complete with this token (often '', or several characters). */
  push(id: number): string;
  /** Whatever is held back, with U+FFFD for an incomplete character; the decoder starts afresh. */
  flush(): string;
}

export interface Tokenizer {
  readonly kind: 'spm' | 'bpe';
  readonly vocabSize: number;
  readonly bos: number | null;
  readonly eos: number | null;
  readonly eot: number | null;
  readonly addBos: boolean;
  readonly addEos: boolean;
  /** defaults: addSpecial false, parseSpecial false */
  encode(text: string, opts?: EncodeOptions): number[];
  decode(ids: readonly number[], opts?: DecodeOptions): string;
  /** The raw vocab string of a token ("▁Hello", "Ġworld", "<0x0A>"). */
  piece(id: number): string;
  /**
   * The bytes token `id` adds to the text; may be part of a UTF-8 character; do not modify.
   * `skipSpecial` as in decode (default false: control tokens are rendered; true: they are empty).
   */
  bytes(id: number, opts?: DecodeOptions): Uint8Array;
  /** End of generation: eos, eot, eom and the tokens llama.cpp recognises by text. */
  isEog(id: number): boolean;
  isControl(id: number): boolean;
  /** `skipSpecial` as in decode (default false: control tokens are rendered as text). */
  createStreamDecoder(opts?: DecodeOptions): StreamDecoder;
}
