// The vocabulary of a model, read from the `tokenizer.ggml.*` keys of a GGUF header with the
// rules of llama.cpp's llama_vocab::impl::load (src/llama-vocab.cpp): the tokenizer type and its
// defaults, token attributes from token_type, special token ids, add_bos/add_eos, the tokens
// recognised by their text (EOT, EOM, FIM, end-of-generation), and the special-token list that
// encoding splits on first.

import { ModelError } from '../../shared/errors.js';
import { getArray, getBool, getNumber, getString } from '../gguf/keys.js';
import type { GgufHeader, GgufValue } from '../gguf/types.js';
import { preTokenizerSpec, PRE_REGEXES, type PreTokenizerSpec } from './pre-types.js';
import { utf8Length } from './unicode.js';

// ---------------------------------------------------------------------------------------------
// Token attributes (llama.h `enum llama_token_attr`) and GGUF token types (`enum llama_token_type`)

export const ATTR_UNKNOWN = 1 << 0;
export const ATTR_UNUSED = 1 << 1;
export const ATTR_NORMAL = 1 << 2;
export const ATTR_CONTROL = 1 << 3;
export const ATTR_USER_DEFINED = 1 << 4;
export const ATTR_BYTE = 1 << 5;
export const ATTR_LSTRIP = 1 << 7;
export const ATTR_RSTRIP = 1 << 8;

/** token_type value -> attribute: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte. */
const TYPE_TO_ATTR = [0, ATTR_NORMAL, ATTR_UNKNOWN, ATTR_CONTROL, ATTR_USER_DEFINED, ATTR_UNUSED, ATTR_BYTE];

// ---------------------------------------------------------------------------------------------
// The vocabulary

export interface SpecialIds {
  bos: number | null;
  eos: number | null;
  eot: number | null;
  eom: number | null;
  unk: number | null;
  sep: number | null;
  pad: number | null;
  mask: number | null;
  fimPre: number | null;
  fimSuf: number | null;
  fimMid: number | null;
  fimPad: number | null;
  fimRep: number | null;
  fimSep: number | null;
}

export interface Vocab {
  readonly type: 'spm' | 'bpe';
  /** tokenizer.ggml.model */
  readonly model: string;
  /** tokenizer.ggml.pre as read (BPE), or null. */
  readonly pre: string | null;
  /** BPE only: the pre-tokenizer. */
  readonly preSpec: PreTokenizerSpec | null;
  readonly preRegexes: readonly string[];
  /** id -> text (n_tokens) */
  readonly tokens: readonly string[];
  /** id -> score (n_tokens); 0 when the file has none */
  readonly scores: Float64Array;
  /** id -> ATTR_* bits (n_tokens) */
  readonly attrs: Uint16Array;
  readonly tokenToId: ReadonlyMap<string, number>;
  /** BPE: "left right" -> merge rank (the first rank wins for a repeated merge) */
  readonly mergeRanks: ReadonlyMap<string, number>;
  readonly special: Readonly<SpecialIds>;
  readonly addBos: boolean;
  readonly addEos: boolean;
  readonly addSpacePrefix: boolean;
  readonly ignoreMerges: boolean;
  readonly cleanSpaces: boolean;
  readonly escapeWhitespaces: boolean;
  readonly byteEncode: boolean;
  /** End-of-generation ids. */
  readonly eog: ReadonlySet<number>;
  /** Control, user-defined and unknown tokens, longest text (in UTF-8 bytes) first. */
  readonly specialTokens: readonly number[];
  /**
   * SPM: no token has U+2581 after another character, so no merge can cross the start of a run
   * of U+2581 and the text can be merged word by word with the same result.
   */
  readonly spmWordSplit: boolean;
}

// ---------------------------------------------------------------------------------------------
// Loading

const KEY = 'tokenizer.ggml.';

function unsupported(model: string): ModelError {
  const what: Record<string, string> = {
    bert: 'WordPiece (BERT) tokenizers', t5: 'Unigram (T5) tokenizers', rwkv: 'RWKV tokenizers',
    plamo2: 'PLaMo-2 tokenizers', hybriddna: 'the hybrid DNA tokenizer', whitespace: 'the whitespace tokenizer',
    no_vocab: 'models without a vocabulary', none: 'models without a vocabulary',
  };
  return new ModelError('TOKENIZER_UNSUPPORTED', `${what[model] ?? `the tokenizer "${model}"`} ${what[model] ? 'are' : 'is'} not supported (tokenizer.ggml.model = "${model}"); use a model with a SentencePiece ("llama") or byte-level BPE ("gpt2") tokenizer`);
}

function stringArray(h: GgufHeader, key: string): string[] | undefined {
  const items = getArray(h, key);
  if (!items) return undefined;
  for (const v of items) {
    if (typeof v !== 'string') throw new ModelError('TOKENIZER_BAD', `metadata key "${key}" must be an array of strings; the file is corrupt`);
  }
  return items as string[];
}

function numberArray(h: GgufHeader, key: string, n: number): GgufValue[] | undefined {
  const items = getArray(h, key);
  if (!items) return undefined;
  if (items.length < n) throw new ModelError('TOKENIZER_BAD', `metadata key "${key}" has ${items.length} entries for ${n} tokens; the file is corrupt`);
  return items;
}

/** Token texts llama.cpp treats as end of generation (llama-vocab.cpp, special_eog_ids). */
const EOG_TEXTS = [
  '<|eot_id|>', '<|im_end|>', '<|end|>', '<|return|>', '<|call|>', '<|flush|>', '<|calls|>', '<end_of_turn>',
  '<|endoftext|>', '</s>', '<|eom_id|>', '<EOT>', '_<EOT>', '[EOT]', '[EOS]', '<|end_of_text|>',
  '<end_of_utterance>', '<eos>', '<turn|>', '<|tool_response>', '<｜end▁of▁sentence｜>', '[e~[',
];

// Texts that name a special token when the file does not (llama-vocab.cpp auto-detection).
// llama.cpp walks its hash map and takes the first hit, so with two candidates in one vocabulary
// its choice depends on hashing; we take the first in this list's order.
const AUTO_DETECT: ReadonlyArray<[keyof SpecialIds, readonly string[]]> = [
  ['eot', ['<|eot_id|>', '<|im_end|>', '<|end|>', '<end_of_turn>', '<|endoftext|>', '<|end_of_text|>', '<EOT>', '_<EOT>', '[EOT]', '<｜end▁of▁sentence｜>', '<end_of_utterance>']],
  ['eom', ['<|eom_id|>']],
  ['fimPre', ['<|fim_prefix|>', '<fim-prefix>', '<fim_prefix>', '<｜fim▁begin｜>', '<PRE>', '▁<PRE>', '<|code_prefix|>', '<|prefix|>']],
  ['fimSuf', ['<|fim_suffix|>', '<fim-suffix>', '<fim_suffix>', '<｜fim▁hole｜>', '<SUF>', '▁<SUF>', '<|code_suffix|>', '<|suffix|>']],
  ['fimMid', ['<|fim_middle|>', '<fim-middle>', '<fim_middle>', '<｜fim▁end｜>', '<MID>', '▁<MID>', '<|code_middle|>', '<|middle|>']],
  ['fimPad', ['<|fim_pad|>', '<fim-pad>', '<fim_pad>', '<PAD>', '[PAD]']],
  ['fimRep', ['<|fim_repo|>', '<|repo_name|>', '<fim-repo>', '<REPO>', '<reponame>']],
  ['fimSep', ['<|file_sep|>']],
];

// Metadata key of each special id; the deprecated prefix/suffix/middle keys come last and win.
const SPECIAL_KEYS: ReadonlyArray<[string, keyof SpecialIds]> = [
  ['bos_token_id', 'bos'], ['eos_token_id', 'eos'], ['eot_token_id', 'eot'], ['eom_token_id', 'eom'],
  ['unknown_token_id', 'unk'], ['seperator_token_id', 'sep'], ['padding_token_id', 'pad'], ['mask_token_id', 'mask'],
  ['fim_pre_token_id', 'fimPre'], ['fim_suf_token_id', 'fimSuf'], ['fim_mid_token_id', 'fimMid'],
  ['fim_pad_token_id', 'fimPad'], ['fim_rep_token_id', 'fimRep'], ['fim_sep_token_id', 'fimSep'],
  ['prefix_token_id', 'fimPre'], ['suffix_token_id', 'fimSuf'], ['middle_token_id', 'fimMid'],
];

function noSpecials(): SpecialIds {
  return { bos: null, eos: null, eot: null, eom: null, unk: null, sep: null, pad: null, mask: null, fimPre: null, fimSuf: null, fimMid: null, fimPad: null, fimRep: null, fimSep: null };
}

/** Parse "left right" merges into a rank map (llama.cpp splits at the first space after index 0). */
function mergeRankMap(merges: readonly string[]): Map<string, number> {
  const ranks = new Map<string, number>();
  // Backwards, so the first rank of a repeated merge is the one left (one hash per merge).
  for (let i = merges.length - 1; i >= 0; i--) {
    const m = merges[i];
    ranks.set(m.indexOf(' ', 1) > 0 ? m : ' ', i); // no separator: llama.cpp stores ("", "")
  }
  return ranks;
}

/** Read the vocabulary of a GGUF file. Throws ModelError for an unsupported or broken tokenizer. */
export function loadVocab(h: GgufHeader): Vocab {
  const model = getString(h, `${KEY}model`);
  if (model === undefined) throw new ModelError('TOKENIZER_MISSING', 'the file has no tokenizer (metadata key "tokenizer.ggml.model" is missing); it cannot be used for text');
  let pre = getString(h, `${KEY}pre`) ?? null;

  // --- type and defaults
  let type: 'spm' | 'bpe';
  const special = noSpecials();
  let mergeRanks = new Map<string, number>();
  if (model === 'llama') {
    type = 'spm';
    special.bos = 1;
    special.eos = 2;
    special.unk = 0;
  } else if (model === 'gpt2' || model === 'gemma4') {
    type = 'bpe';
    if (model === 'gemma4') pre = 'gemma4';
    const merges = stringArray(h, `${KEY}merges`);
    if (merges) mergeRanks = mergeRankMap(merges);
    else if (pre !== 'kimi-k2') throw new ModelError('TOKENIZER_BAD', 'the BPE tokenizer has no merges (metadata key "tokenizer.ggml.merges" is missing); convert the model again');
    if (model === 'gpt2') {
      special.bos = 11; // llama.cpp's BPE defaults
      special.eos = 11;
    }
  } else {
    throw unsupported(model);
  }

  let preSpec: PreTokenizerSpec | null = null;
  let addSpacePrefix: boolean;
  let addBos: boolean;
  let addEos = false;
  let cleanSpaces: boolean;
  if (type === 'bpe') {
    preSpec = preTokenizerSpec(pre ?? undefined) ?? null;
    if (!preSpec) throw new ModelError('TOKENIZER_UNSUPPORTED', `unknown pre-tokenizer "${pre}" (tokenizer.ggml.pre); this model's tokenizer is newer than Pantheon`);
    addSpacePrefix = false;
    cleanSpaces = preSpec.cleanSpaces;
    addBos = preSpec.addBos;
    if (preSpec.noDefaultBos) special.bos = null;
  } else {
    addSpacePrefix = true;
    cleanSpaces = false;
    addBos = true;
  }
  addSpacePrefix = getBool(h, `${KEY}add_space_prefix`) ?? addSpacePrefix;

  // --- tokens, scores, types
  const texts = stringArray(h, `${KEY}tokens`);
  if (!texts) throw new ModelError('TOKENIZER_BAD', 'the tokenizer has no vocabulary (metadata key "tokenizer.ggml.tokens" is missing); the file is corrupt');
  const n = texts.length;
  const scoreItems = numberArray(h, `${KEY}scores`, n);
  const typeItems = numberArray(h, `${KEY}token_type`, n);
  const tokens: string[] = new Array(n);
  const scores = new Float64Array(n);
  const attrs = new Uint16Array(n);
  const tokenToId = new Map<string, number>();
  for (let i = n - 1; i >= 0; i--) {
    const t = texts[i] === '' ? `[EMPTY_${i}]` : texts[i];
    tokens[i] = t;
    // Backwards, so for a repeated text (llama.cpp refuses the file; it can come from invalid
    // UTF-8 read as U+FFFD) the first id is the one kept.
    tokenToId.set(t, i);
    if (scoreItems) scores[i] = Number(scoreItems[i]);
    attrs[i] = typeItems ? (TYPE_TO_ATTR[Number(typeItems[i])] ?? 0) : ATTR_NORMAL;
  }

  // --- special ids: defaults out of range are dropped; a key out of range keeps the default
  for (const k of Object.keys(special) as (keyof SpecialIds)[]) {
    const id = special[k];
    if (id !== null && id >= n) special[k] = null;
  }
  for (const [key, field] of SPECIAL_KEYS) {
    const v = getNumber(h, `${KEY}${key}`);
    if (v !== undefined && Number.isInteger(v) && v >= 0 && v < n) special[field] = v;
  }
  addBos = getBool(h, `${KEY}add_bos_token`) ?? addBos;
  addEos = getBool(h, `${KEY}add_eos_token`) ?? addEos;
  if (preSpec?.kind === 'gemma4') addBos = true; // llama.cpp forces BOS for Gemma 4
  if (addBos && special.bos === null) throw new ModelError('TOKENIZER_BAD', 'tokenizer.ggml.add_bos_token is true but the file names no BOS token; the file is corrupt');
  if (addEos && special.eos === null) throw new ModelError('TOKENIZER_BAD', 'tokenizer.ggml.add_eos_token is true but the file names no EOS token; the file is corrupt');

  // --- tokens recognised by their text
  for (const [field, candidates] of AUTO_DETECT) {
    if (special[field] !== null) continue;
    for (const text of candidates) {
      const id = tokenToId.get(text);
      if (id !== undefined) {
        special[field] = id;
        attrs[id] |= ATTR_CONTROL;
        break;
      }
    }
  }
  const eog = new Set<number>();
  for (const id of [special.fimPad, special.fimRep, special.fimSep]) if (id !== null) eog.add(id);
  for (const text of EOG_TEXTS) {
    const id = tokenToId.get(text);
    if (id !== undefined) {
      eog.add(id);
      attrs[id] |= ATTR_CONTROL;
    }
  }
  // gpt-oss: these are always rendered
  for (const text of ['<|channel|>', '<|message|>', '<|start|>', '<|constrain|>']) {
    const id = tokenToId.get(text);
    if (id !== undefined) attrs[id] = ATTR_USER_DEFINED;
  }
  for (const id of [special.eos, special.eot, special.eom]) if (id !== null) eog.add(id);
  const eogText = (t: string) => { const id = tokenToId.get(t); return id !== undefined && eog.has(id); };
  // o200k_harmony and solar-open: "<|end|>" ends a message, not the generation
  if (eogText('<|end|>') && ((eogText('<|return|>') && (eogText('<|call|>') || eogText('<|calls|>'))) || ((eogText('<|call|>') || eogText('<|calls|>')) && eogText('<|flush|>')))) {
    const id = tokenToId.get('<|end|>')!;
    eog.delete(id);
    attrs[id] = ATTR_USER_DEFINED;
  }
  // Gemma 4 and PaddleOCR: "</s>" is not an end of generation when "<|tool_response>" is
  if (eogText('<|tool_response>') && eogText('</s>')) {
    const id = tokenToId.get('</s>')!;
    eog.delete(id);
    attrs[id] = ATTR_NORMAL;
  }

  // --- the special tokens encoding splits on, longest first
  const specialTokens: number[] = [];
  for (let id = 0; id < n; id++) {
    if (attrs[id] & (ATTR_CONTROL | ATTR_USER_DEFINED | ATTR_UNKNOWN)) specialTokens.push(id);
  }
  const byteLen = new Map(specialTokens.map((id) => [id, utf8Length(tokens[id])]));
  specialTokens.sort((a, b) => byteLen.get(b)! - byteLen.get(a)! || a - b);

  // --- per-model attributes (llama.cpp sets them by name)
  const name = (getString(h, 'general.name') ?? '').toLowerCase();
  const arch = getString(h, 'general.architecture') ?? '';
  const setAttr = (text: string, bit: number, on: boolean) => {
    const id = tokenToId.get(text);
    if (id !== undefined) attrs[id] = on ? attrs[id] | bit : attrs[id] & ~bit;
  };
  if (['jina-v2-de', 'jina-v2-es', 'jina-v2-code'].some((s) => (pre ?? '').includes(s)) || ['nomic-bert-moe', 'jina-bert-v3'].some((s) => arch.includes(s))) {
    setAttr('<mask>', ATTR_LSTRIP, true);
  } else if (name.includes('phi-3') || name.includes('phi3')) {
    for (const id of specialTokens) attrs[id] |= ATTR_RSTRIP;
    setAttr('</s>', ATTR_RSTRIP, true);
    for (const t of ['<unk>', '<s>', '<|endoftext|>']) setAttr(t, ATTR_RSTRIP, false);
  } else if (name.includes('modern-bert')) {
    setAttr('[MASK]', ATTR_LSTRIP, true);
  }

  return {
    type, model, pre, preSpec,
    preRegexes: preSpec ? PRE_REGEXES[preSpec.kind] : [],
    tokens, scores, attrs, tokenToId, mergeRanks, special,
    addBos, addEos, addSpacePrefix,
    ignoreMerges: preSpec?.ignoreMerges ?? false,
    cleanSpaces,
    escapeWhitespaces: preSpec?.escapeWhitespaces ?? true,
    byteEncode: preSpec?.byteEncode ?? false,
    eog, specialTokens,
    spmWordSplit: type === 'spm' && tokens.every((t) => !t.includes('\u2581') || /^\u2581+[^\u2581]*$/.test(t)),
  };
}
