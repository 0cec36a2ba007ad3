// Typed access to the metadata keys Pantheon uses (names from the seed note and llama.cpp's
// llama-arch.cpp), plus a summary of a file for `inspect` and the model library.

import { GgufError } from '../../shared/errors.js';
import { ggmlTypeName } from './ggml-types.js';
import { arrayLength, isGgufArray, type GgufHeader, type GgufValue } from './types.js';

export type ArchKey =
  | 'embedding_length' | 'block_count' | 'feed_forward_length' | 'context_length'
  | 'attention.head_count' | 'attention.head_count_kv' | 'attention.layer_norm_rms_epsilon'
  | 'attention.layer_norm_epsilon' | 'attention.sliding_window' | 'attention.key_length'
  | 'attention.value_length' | 'rope.freq_base' | 'rope.dimension_count' | 'rope.scaling.type'
  | 'rope.scaling.factor' | 'rope.scaling.original_context_length' | 'vocab_size';

export type TokenizerKey =
  | 'model' | 'pre' | 'tokens' | 'scores' | 'token_type' | 'merges' | 'bos_token_id' | 'eos_token_id'
  | 'eot_token_id' | 'unknown_token_id' | 'padding_token_id' | 'add_bos_token' | 'add_eos_token'
  | 'add_space_prefix';

export type MetadataKey = `general.${string}` | `${string}.${ArchKey}` | `tokenizer.ggml.${TokenizerKey}` | 'tokenizer.chat_template';

export function getValue(h: GgufHeader, key: MetadataKey | string): GgufValue | undefined {
  return h.metadata.get(key)?.value;
}

export function getString(h: GgufHeader, key: string): string | undefined {
  const v = getValue(h, key);
  return typeof v === 'string' ? v : undefined;
}

export function getNumber(h: GgufHeader, key: string): number | undefined {
  const v = getValue(h, key);
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

export function getBool(h: GgufHeader, key: string): boolean | undefined {
  const v = getValue(h, key);
  return typeof v === 'boolean' ? v : undefined;
}

export function getArray(h: GgufHeader, key: string): GgufValue[] | undefined {
  const v = getValue(h, key);
  return isGgufArray(v) ? v.items : undefined;
}

/** Element count of an array value without decoding it, or null. */
export function arrayLengthOf(h: GgufHeader, key: string): number | null {
  const v = getValue(h, key);
  return isGgufArray(v) ? arrayLength(v) : null;
}

export function architecture(h: GgufHeader): string | undefined {
  return getString(h, 'general.architecture');
}

/** The model hyperparameters from the `{arch}.*` keys, with llama.cpp's defaults. */
export interface Hyperparameters {
  arch: string;
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  nFf: number;
  nCtxTrain: number;
  ropeFreqBase: number;
  rmsEps: number;
  slidingWindow?: number;
  nVocab: number;
}

function req(h: GgufHeader, arch: string, key: ArchKey): number {
  const v = getNumber(h, `${arch}.${key}`);
  if (v === undefined) throw new GgufError('GGUF_BAD_VALUE', `metadata key "${arch}.${key}" is missing; the model cannot be run`);
  return v;
}

export function hyperparameters(h: GgufHeader): Hyperparameters {
  const arch = architecture(h);
  if (!arch) throw new GgufError('GGUF_BAD_VALUE', 'metadata key "general.architecture" is missing; this is not a model file');
  const nHead = req(h, arch, 'attention.head_count');
  const tokens = getValue(h, 'tokenizer.ggml.tokens');
  return {
    arch,
    nEmbd: req(h, arch, 'embedding_length'),
    nLayer: req(h, arch, 'block_count'),
    nHead,
    nHeadKv: getNumber(h, `${arch}.attention.head_count_kv`) ?? nHead,
    nFf: getNumber(h, `${arch}.feed_forward_length`) ?? 0,
    nCtxTrain: getNumber(h, `${arch}.context_length`) ?? 0,
    ropeFreqBase: getNumber(h, `${arch}.rope.freq_base`) ?? 10000,
    rmsEps: getNumber(h, `${arch}.attention.layer_norm_rms_epsilon`) ?? getNumber(h, `${arch}.attention.layer_norm_epsilon`) ?? 1e-5,
    slidingWindow: getNumber(h, `${arch}.attention.sliding_window`),
    nVocab: getNumber(h, `${arch}.vocab_size`) ?? (isGgufArray(tokens) ? arrayLength(tokens) : 0),
  };
}

/** Total number of elements across all tensors (the parameter count). */
export function parameterCount(h: GgufHeader): number {
  let n = 0;
  for (const t of h.tensors) n += t.elements;
  return n;
}

/**
 * Parameters a token uses in a mixture-of-experts file: every tensor but the routed experts
 * (ffn_*_exps), plus expert_used_count / expert_count of each expert tensor (per layer when the
 * count is an array). null for a file without expert tensors.
 */
export function activeParameterCount(h: GgufHeader): number | null {
  const arch = architecture(h);
  const nExpert = arch ? getNumber(h, `${arch}.expert_count`) : undefined;
  if (!arch || !nExpert || !h.tensors.some((t) => /_exps\.(weight|bias)$/.test(t.name))) return null;
  const used = getValue(h, `${arch}.expert_used_count`);
  const usedAt = (layer: number): number => {
    if (isGgufArray(used)) return Number(used.items[layer] ?? 0);
    return getNumber(h, `${arch}.expert_used_count`) ?? 0;
  };
  let n = 0;
  for (const t of h.tensors) {
    if (!/_exps\.(weight|bias)$/.test(t.name)) {
      n += t.elements;
      continue;
    }
    const layer = Number(/^blk\.(\d+)\./.exec(t.name)?.[1] ?? 0);
    n += (t.elements * Math.min(usedAt(layer), nExpert)) / nExpert;
  }
  return Math.round(n);
}

export interface QuantMixRow {
  type: string;
  tensors: number;
  bytes: number;
  /** Share of the file's bytes, 0..1. */
  share: number;
}

/** Tensors and bytes per ggml type, biggest first. */
export function quantMix(h: GgufHeader): QuantMixRow[] {
  const rows = new Map<string, QuantMixRow>();
  for (const t of h.tensors) {
    const name = ggmlTypeName(t.type);
    const r = rows.get(name) ?? { type: name, tensors: 0, bytes: 0, share: 0 };
    r.tensors++;
    r.bytes += t.bytes;
    rows.set(name, r);
  }
  const out = [...rows.values()].sort((a, b) => b.bytes - a.bytes);
  for (const r of out) r.share = h.fileSize > 0 ? r.bytes / h.fileSize : 0;
  return out;
}

// general.file_type (llama.h `enum llama_ftype`) names.
const FILE_TYPES: Record<number, string> = {
  0: 'F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 7: 'Q8_0', 8: 'Q5_0', 9: 'Q5_1', 10: 'Q2_K', 11: 'Q3_K_S',
  12: 'Q3_K_M', 13: 'Q3_K_L', 14: 'Q4_K_S', 15: 'Q4_K_M', 16: 'Q5_K_S', 17: 'Q5_K_M', 18: 'Q6_K',
  19: 'IQ2_XXS', 20: 'IQ2_XS', 21: 'Q2_K_S', 22: 'IQ3_XS', 23: 'IQ3_XXS', 24: 'IQ1_S', 25: 'IQ4_NL',
  26: 'IQ3_S', 27: 'IQ3_M', 28: 'IQ2_S', 29: 'IQ2_M', 30: 'IQ4_XS', 31: 'IQ1_M', 32: 'BF16',
  36: 'TQ1_0', 37: 'TQ2_0', 38: 'MXFP4_MOE',
};

/** A one-word name for the file's quantisation: general.file_type if present, else the dominant type. */
export function quantLabel(h: GgufHeader): string {
  const ft = getNumber(h, 'general.file_type');
  if (ft !== undefined && FILE_TYPES[ft]) return FILE_TYPES[ft];
  const mix = quantMix(h);
  return mix.length ? mix[0].type : 'none';
}

/** A short summary of a model file (for the library, the picker and inspect). */
export interface ModelSummary {
  version: number;
  architecture: string | null;
  name: string | null;
  parameters: number;
  /** Parameters per token of a mixture-of-experts file (activeParameterCount), else null. */
  activeParameters: number | null;
  fileSize: number;
  quantization: string;
  tensorCount: number;
  contextLength: number | null;
  vocabSize: number | null;
  tokenizer: string | null;
}

export function summarize(h: GgufHeader): ModelSummary {
  const arch = architecture(h) ?? null;
  return {
    version: h.version,
    architecture: arch,
    name: getString(h, 'general.name') ?? null,
    parameters: parameterCount(h),
    activeParameters: activeParameterCount(h),
    fileSize: h.fileSize,
    quantization: quantLabel(h),
    tensorCount: h.tensors.length,
    contextLength: arch ? getNumber(h, `${arch}.context_length`) ?? null : null,
    vocabSize: arrayLengthOf(h, 'tokenizer.ggml.tokens'),
    tokenizer: getString(h, 'tokenizer.ggml.model') ?? null,
  };
}
