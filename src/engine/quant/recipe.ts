// Which type each tensor gets when a model is quantised to a file type: llama.cpp's rules
// (src/llama-quant.cpp: tensor_allows_quantization, llama_tensor_get_type_impl,
// tensor_type_fallback, llama_ftype_get_default_type, tensor_requires_imatrix).

import { GgmlType, ggmlTypeInfo } from '../gguf/ggml-types.js';

/** A file type: its llama.h `enum llama_ftype` number (general.file_type) and its default tensor type. */
export interface FileType {
  name: string;
  ftype: number;
  base: number;
}

// llama.h enum llama_ftype; defaults from llama_ftype_get_default_type.
const FILE_TYPES: FileType[] = [
  { name: 'F32', ftype: 0, base: GgmlType.F32 },
  { name: 'F16', ftype: 1, base: GgmlType.F16 },
  { name: 'BF16', ftype: 32, base: GgmlType.BF16 },
  { name: 'Q4_0', ftype: 2, base: GgmlType.Q4_0 },
  { name: 'Q4_1', ftype: 3, base: GgmlType.Q4_1 },
  { name: 'Q8_0', ftype: 7, base: GgmlType.Q8_0 },
  { name: 'Q5_0', ftype: 8, base: GgmlType.Q5_0 },
  { name: 'Q5_1', ftype: 9, base: GgmlType.Q5_1 },
  { name: 'Q2_K', ftype: 10, base: GgmlType.Q2_K },
  { name: 'Q3_K_S', ftype: 11, base: GgmlType.Q3_K },
  { name: 'Q3_K_M', ftype: 12, base: GgmlType.Q3_K },
  { name: 'Q3_K_L', ftype: 13, base: GgmlType.Q3_K },
  { name: 'Q4_K_S', ftype: 14, base: GgmlType.Q4_K },
  { name: 'Q4_K_M', ftype: 15, base: GgmlType.Q4_K },
  { name: 'Q5_K_S', ftype: 16, base: GgmlType.Q5_K },
  { name: 'Q5_K_M', ftype: 17, base: GgmlType.Q5_K },
  { name: 'Q6_K', ftype: 18, base: GgmlType.Q6_K },
  { name: 'Q2_K_S', ftype: 21, base: GgmlType.Q2_K },
  { name: 'IQ2_XXS', ftype: 19, base: GgmlType.IQ2_XXS },
  { name: 'IQ2_XS', ftype: 20, base: GgmlType.IQ2_XS },
  { name: 'IQ3_XS', ftype: 22, base: GgmlType.IQ3_S },
  { name: 'IQ3_XXS', ftype: 23, base: GgmlType.IQ3_XXS },
  { name: 'IQ1_S', ftype: 24, base: GgmlType.IQ1_S },
  { name: 'IQ4_NL', ftype: 25, base: GgmlType.IQ4_NL },
  { name: 'IQ3_S', ftype: 26, base: GgmlType.IQ3_S },
  { name: 'IQ3_M', ftype: 27, base: GgmlType.IQ3_S },
  { name: 'IQ2_S', ftype: 28, base: GgmlType.IQ2_XS },
  { name: 'IQ2_M', ftype: 29, base: GgmlType.IQ2_S },
  { name: 'IQ4_XS', ftype: 30, base: GgmlType.IQ4_XS },
  { name: 'IQ1_M', ftype: 31, base: GgmlType.IQ1_M },
  { name: 'TQ1_0', ftype: 36, base: GgmlType.TQ1_0 },
  { name: 'TQ2_0', ftype: 37, base: GgmlType.TQ2_0 },
  { name: 'MXFP4_MOE', ftype: 38, base: GgmlType.MXFP4 },
];

/** llama-quantize's short names (tools/quantize/quantize.cpp QUANT_OPTIONS): Q3_K, Q4_K, Q5_K mean the _M mixes. */
const ALIASES: Record<string, string> = { Q3_K: 'Q3_K_M', Q4_K: 'Q4_K_M', Q5_K: 'Q5_K_M' };

const F = Object.fromEntries(FILE_TYPES.map((t) => [t.name, t.ftype])) as Record<string, number>;

export function fileTypeNames(): string[] {
  return [...FILE_TYPES.map((t) => t.name), ...Object.keys(ALIASES)];
}

/** The file type for a name such as "Q4_K_M" (case-insensitive), or undefined. */
export function fileTypeByName(name: string): FileType | undefined {
  const upper = name.toUpperCase();
  const canonical = ALIASES[upper] ?? upper;
  return FILE_TYPES.find((t) => t.name === canonical);
}

/** What the recipe needs to know about the model (llama_hparams). */
export interface RecipeModel {
  arch: string;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  /** Experts per MoE layer (0 or 1 for dense models). */
  nExpert: number;
}

export interface RecipeTensor {
  name: string;
  /** GGUF order, innermost first. */
  dims: readonly number[];
  type: number;
}

export interface TensorPlan {
  name: string;
  from: number;
  to: number;
  /** Set when the recipe's choice did not fit the row length and llama.cpp's fallback was used. */
  wanted?: number;
}

type Category = 'token_embd' | 'attn_q' | 'attn_v' | 'attn_k' | 'attn_qkv' | 'attn_kv_b' | 'attn_output' | 'ffn_up' | 'ffn_gate' | 'ffn_down' | 'output' | 'other';

/** llama-quant.cpp tensor_get_category (broad categories by substring, in this order). */
function categoryOf(name: string): Category {
  if (name === 'output.weight') return 'output';
  if (name === 'token_embd.weight' || name === 'per_layer_token_embd.weight') return 'token_embd';
  const subs: [string, Category][] = [
    ['attn_qkv.weight', 'attn_qkv'], ['attn_kv_b.weight', 'attn_kv_b'], ['attn_v.weight', 'attn_v'], ['attn_k.weight', 'attn_k'],
    ['attn_q.weight', 'attn_q'], ['attn_output.weight', 'attn_output'], ['ffn_up', 'ffn_up'], ['ffn_gate', 'ffn_gate'], ['ffn_down', 'ffn_down'],
  ];
  for (const [s, c] of subs) if (name.includes(s)) return c;
  return 'other';
}

const isAttnV = (c: Category) => c === 'attn_v' || c === 'attn_qkv' || c === 'attn_kv_b';

/** Substrings of tensors llama.cpp never quantises (tensor_allows_quantization). */
const KEEP = [
  '_norm.weight', 'ffn_gate_inp.weight', 'ffn_gate_tid2eid.weight', 'altup', 'laurel', 'per_layer_model_proj', 'ssm_conv1d',
  'shortconv.conv.weight', 'indexer.k_proj.weight', 'indexer.q_proj.weight', 'time_mix_first.weight', 'time_mix_w0.weight',
  'time_mix_w1.weight', 'time_mix_w2.weight', 'time_mix_v0.weight', 'time_mix_v1.weight', 'time_mix_v2.weight', 'time_mix_a0.weight',
  'time_mix_a1.weight', 'time_mix_a2.weight', 'time_mix_g1.weight', 'time_mix_g2.weight', 'time_mix_decay_w1.weight',
  'time_mix_decay_w2.weight', 'time_mix_lerp_fused.weight', 'attn_rel_b.weight', '.position_embd', 'sam.pos_embd', 'sam.neck.',
  'sam.net_', '.rel_pos', '.patch_embd', '.patch_merger', 'a.rvq.codebook', 'mm.a.code_embd',
];

/** llama-quant.cpp tensor_allows_quantization: 2-D+ tensors named *weight, minus norms and small special tensors. */
export function allowsQuantization(t: RecipeTensor): boolean {
  let nDims = t.dims.length; // ggml_n_dims: trailing dimensions of 1 do not count
  while (nDims > 1 && t.dims[nDims - 1] === 1) nDims--;
  if (nDims < 2) return false;
  if (!t.name.endsWith('weight')) return false;
  if (t.name === 'position_embd.weight' || t.name === 'token_types.weight') return false;
  return !KEEP.some((s) => t.name.includes(s));
}

/** llama-quant.cpp use_more_bits: the first and last eighth of the layers, and every third one between. */
export function useMoreBits(iLayer: number, nLayers: number): boolean {
  const e = Math.trunc(nLayers / 8);
  return iLayer < e || iLayer >= Math.trunc((7 * nLayers) / 8) || (iLayer - e) % 3 === 2;
}

/** The layer number in "blk.N.…", or -1 (llama-model-loader weight_name_comparer). */
function layerOf(name: string): number {
  const m = /^blk\.(\d+)\./.exec(name);
  return m ? Number(m[1]) : -1;
}

/** llama.cpp's tensor order: by layer (non-layer tensors first), then by name. */
export function llamaTensorOrder<T extends { name: string }>(tensors: readonly T[]): T[] {
  return [...tensors].sort((a, b) => layerOf(a.name) - layerOf(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** tensor_type_fallback: a type whose block does not divide the row length falls back. */
const FALLBACK: Partial<Record<number, number>> = {
  [GgmlType.IQ4_XS]: GgmlType.IQ4_NL, [GgmlType.IQ1_S]: GgmlType.IQ4_NL, [GgmlType.IQ1_M]: GgmlType.IQ4_NL,
  [GgmlType.IQ2_XXS]: GgmlType.IQ4_NL, [GgmlType.IQ2_XS]: GgmlType.IQ4_NL, [GgmlType.IQ2_S]: GgmlType.IQ4_NL,
  [GgmlType.IQ3_XXS]: GgmlType.IQ4_NL, [GgmlType.IQ3_S]: GgmlType.IQ4_NL,
  [GgmlType.Q2_K]: GgmlType.Q4_0, [GgmlType.Q3_K]: GgmlType.Q4_0, [GgmlType.TQ1_0]: GgmlType.Q4_0, [GgmlType.TQ2_0]: GgmlType.Q4_0,
  [GgmlType.Q4_K]: GgmlType.Q5_0, [GgmlType.Q5_K]: GgmlType.Q5_1, [GgmlType.Q6_K]: GgmlType.Q8_0,
};

function blockSize(type: number): number {
  return ggmlTypeInfo(type)!.blockSize;
}

export interface PlanOptions {
  /** An importance matrix is given (llama.cpp's qs.has_imatrix changes a few choices). */
  hasImatrix?: boolean;
}

/**
 * The type of every tensor when quantising to `ft`, in llama.cpp's tensor order. Layer counters
 * (attn_v, ffn_down…) advance in that order, as in llama_model_quantize_impl.
 */
export function planQuantization(ft: FileType, model: RecipeModel, tensors: readonly RecipeTensor[], opts: PlanOptions = {}): TensorPlan[] {
  const ordered = llamaTensorOrder(tensors);
  const ftype = ft.ftype;
  const quantized = (ggmlTypeInfo(ft.base)?.blockSize ?? 1) > 1;
  const nGqa = model.nHeadKv > 0 ? model.nHead / model.nHeadKv : 1;
  const nExpert = Math.max(1, model.nExpert);
  const isFalcon = model.arch === 'falcon';
  const is70B = model.arch === 'llama' && model.nLayer === 80 && model.nHead !== model.nHeadKv;
  const tiedEmbeddings = !ordered.some((t) => t.name === 'output.weight');
  const nAttnV = ordered.filter((t) => isAttnV(categoryOf(t.name))).length;
  let iAttnV = 0;
  let iFfnDown = 0;

  const layerInfo = (counter: number, name: string): number => (nExpert > 1 ? Math.max(0, layerOf(name)) : counter);

  const isIq12 = [F.IQ2_XXS, F.IQ2_XS, F.IQ1_S, F.IQ2_S, F.IQ2_M, F.IQ1_M].includes(ftype);
  const iq2s = ftype === F.IQ2_S || ftype === F.IQ2_M;
  const hasIm = opts.hasImatrix ?? false;
  let iFfnGate = 0;
  let iFfnUp = 0;

  // llama_tensor_get_type_impl, for the file types in FILE_TYPES (in its order of cases).
  const choose = (t: RecipeTensor, c: Category): number => {
    let type = ft.base;
    const n = model.nLayer;
    if (c === 'output' || (tiedEmbeddings && c === 'token_embd')) {
      if (ftype === F.MXFP4_MOE) type = GgmlType.Q8_0;
      else if (isFalcon || t.dims[0] % blockSize(type) !== 0) type = GgmlType.Q8_0;
      else if ([F.IQ2_XXS, F.IQ2_XS, F.IQ3_XXS, F.IQ1_S, F.IQ2_S, F.IQ2_M, F.IQ1_M].includes(ftype)) type = GgmlType.Q5_K;
      else if (type !== GgmlType.Q8_0) type = GgmlType.Q6_K;
    } else if (ftype === F.MXFP4_MOE) {
      // expert tensors MXFP4, the rest Q8_0
      type = (t.dims[2] ?? 1) > 1 ? GgmlType.MXFP4 : GgmlType.Q8_0;
    } else if (c === 'token_embd') {
      if ([F.IQ2_XXS, F.IQ2_XS, F.IQ1_S, F.IQ1_M].includes(ftype)) type = GgmlType.Q2_K;
      else if (iq2s || ftype === F.IQ3_XXS) type = GgmlType.IQ3_S;
      else if (ftype === F.TQ1_0 || ftype === F.TQ2_0) type = GgmlType.Q4_K;
    } else if (isIq12) {
      if (isAttnV(c)) {
        if (nGqa >= 4 || model.nExpert >= 4) type = GgmlType.Q4_K;
        else type = iq2s ? GgmlType.IQ3_S : GgmlType.Q2_K;
        iAttnV++;
      } else if (model.nExpert === 8 && c === 'attn_k') {
        type = GgmlType.Q4_K;
      } else if (c === 'ffn_down') {
        if (iFfnDown < Math.trunc(n / 8)) type = iq2s ? GgmlType.IQ3_S : GgmlType.Q2_K;
        iFfnDown++;
      } else if (c === 'attn_output') {
        if (model.nExpert === 8) type = GgmlType.Q5_K;
        else if (ftype === F.IQ1_S || ftype === F.IQ1_M) type = GgmlType.IQ2_XXS;
        else if (iq2s) type = GgmlType.IQ3_S;
      }
    } else if (isAttnV(c)) {
      if (ftype === F.Q2_K) type = nGqa >= 4 ? GgmlType.Q4_K : GgmlType.Q3_K;
      else if (ftype === F.Q2_K_S && nGqa >= 4) type = GgmlType.Q4_K;
      else if (ftype === F.IQ3_XXS) type = nGqa >= 4 ? GgmlType.Q4_K : !hasIm ? GgmlType.IQ3_S : GgmlType.IQ3_XXS;
      else if ((ftype === F.IQ3_XS || ftype === F.IQ3_S) && nGqa >= 4) type = GgmlType.Q4_K;
      else if (ftype === F.IQ3_M) type = GgmlType.Q4_K;
      else if (ftype === F.Q3_K_M) type = iAttnV < 2 ? GgmlType.Q5_K : GgmlType.Q4_K;
      else if (ftype === F.Q3_K_L) type = GgmlType.Q5_K;
      else if ((ftype === F.IQ4_NL || ftype === F.IQ4_XS) && nGqa >= 4) type = GgmlType.Q5_K;
      else if ((ftype === F.Q4_K_M || ftype === F.Q5_K_M) && useMoreBits(iAttnV, nAttnV)) type = GgmlType.Q6_K;
      else if (ftype === F.Q4_K_S && iAttnV < 4) type = GgmlType.Q5_K;
      if (is70B && (type === GgmlType.Q3_K || type === GgmlType.Q4_K)) type = GgmlType.Q5_K;
      if (model.nExpert === 8) type = GgmlType.Q8_0;
      iAttnV++;
    } else if (c === 'attn_k') {
      if (model.nExpert === 8) type = GgmlType.Q8_0;
      else if (ftype === F.IQ3_XS) type = GgmlType.IQ3_XXS;
      else if (ftype === F.IQ3_XXS) type = GgmlType.IQ2_S;
    } else if (c === 'attn_q') {
      if (ftype === F.IQ3_XS) type = GgmlType.IQ3_XXS;
      else if (ftype === F.IQ3_XXS) type = GgmlType.IQ2_S;
    } else if (c === 'ffn_down') {
      const i = layerInfo(iFfnDown, t.name);
      const e8 = Math.trunc(n / 8);
      if (ftype === F.Q2_K) type = GgmlType.Q3_K;
      else if (ftype === F.Q2_K_S) {
        if (i < e8) type = GgmlType.Q4_K;
      } else if (ftype === F.IQ3_XXS && !hasIm) type = i < e8 ? GgmlType.Q4_K : GgmlType.Q3_K;
      else if (ftype === F.Q3_K_M) type = i < Math.trunc(n / 16) ? GgmlType.Q5_K : !isFalcon || useMoreBits(i, n) ? GgmlType.Q4_K : GgmlType.Q3_K;
      else if (ftype === F.IQ3_M && (i < e8 || (model.nExpert === 8 && useMoreBits(i, n)))) type = GgmlType.Q4_K;
      else if (ftype === F.Q3_K_L) type = isFalcon ? GgmlType.Q4_K : GgmlType.Q5_K;
      else if (ftype === F.Q4_K_M) {
        if (isFalcon) type = i < Math.trunc(n / 16) ? GgmlType.Q6_K : useMoreBits(i, n) ? GgmlType.Q5_K : GgmlType.Q4_K;
        else if (useMoreBits(i, n)) type = GgmlType.Q6_K;
      } else if (i < e8 && (ftype === F.IQ4_NL || ftype === F.IQ4_XS) && !hasIm) type = GgmlType.Q5_K;
      else if (ftype === F.Q5_K_M && useMoreBits(i, n)) type = GgmlType.Q6_K;
      else if (ftype === F.Q4_K_S && !isFalcon && i < e8) type = GgmlType.Q5_K;
      else if ((ftype === F.Q4_0 || ftype === F.Q5_0) && hasIm && i < e8) type = ftype === F.Q4_0 ? GgmlType.Q4_1 : GgmlType.Q5_1;
      iFfnDown++;
    } else if (c === 'attn_output') {
      if (!isFalcon) {
        if (model.nExpert === 8) {
          if ([F.Q2_K, F.IQ3_XS, F.IQ3_XXS, F.Q3_K_S, F.Q3_K_M, F.IQ4_NL, F.Q4_K_S, F.Q4_K_M, F.IQ3_S, F.IQ3_M, F.IQ4_XS].includes(ftype)) type = GgmlType.Q5_K;
        } else if (ftype === F.Q2_K) type = GgmlType.Q3_K;
        else if (ftype === F.IQ3_XXS) type = GgmlType.IQ3_S;
        else if (ftype === F.Q3_K_M) type = GgmlType.Q4_K;
        else if (ftype === F.Q3_K_L) type = GgmlType.Q5_K;
        else if (ftype === F.IQ3_M) type = GgmlType.Q4_K;
      } else if (ftype === F.Q3_K_L) type = GgmlType.Q4_K;
    } else if (c === 'ffn_gate' || c === 'ffn_up') {
      const i = layerInfo(c === 'ffn_gate' ? iFfnGate : iFfnUp, t.name);
      if (ftype === F.IQ3_XS && i >= Math.trunc(n / 8) && i < Math.trunc((7 * n) / 8)) type = GgmlType.IQ3_XXS;
      if (c === 'ffn_gate') iFfnGate++;
      else iFfnUp++;
    }
    return type;
  };

  return ordered.map((t): TensorPlan => {
    if (!allowsQuantization(t)) return { name: t.name, from: t.type, to: t.type };
    if (!quantized) return { name: t.name, from: t.type, to: ft.base };
    const wanted = choose(t, categoryOf(t.name));
    if (t.dims[0] % blockSize(wanted) === 0) return { name: t.name, from: t.type, to: wanted };
    // llama.cpp stops when a 32-element type does not fit; Pantheon keeps going with F16, as llama.cpp
    // does when a fallback type does not fit either.
    let to = FALLBACK[wanted] ?? GgmlType.F16;
    if (t.dims[0] % blockSize(to) !== 0) to = GgmlType.F16;
    return { name: t.name, from: t.type, to, wanted };
  });
}

/**
 * tensor_requires_imatrix: the i-quants below 3 bits (and Q2_K in a Q2_K_S file) are unusable
 * without an importance matrix; token_embd and output never need one.
 */
export function requiresImatrix(name: string, type: number, ft: FileType): boolean {
  if (name === 'token_embd.weight' || name === 'per_layer_token_embd.weight' || name === 'output.weight') return false;
  if ([GgmlType.IQ3_XXS, GgmlType.IQ2_XXS, GgmlType.IQ2_XS, GgmlType.IQ2_S, GgmlType.IQ1_M, GgmlType.IQ1_S].includes(type)) return true;
  return type === GgmlType.Q2_K && ft.ftype === F.Q2_K_S;
}
