// Model hyperparameters from the `{arch}.*` metadata keys, with llama.cpp's defaults
// (llama-model.cpp llama_model_base::load_hparams): head dims default to n_embd / n_head, n_rot to
// the key head dim, rope base to 10000, head_count_kv to head_count.

import { ModelError } from '../../shared/errors.js';
import { getNumber, getString } from '../gguf/keys.js';
import type { GgufHeader } from '../gguf/types.js';
import { archSpec, type ArchSpec } from './arch.js';

export interface ModelHparams {
  arch: string;
  nVocab: number;
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  /** Per-head size of q and k ({arch}.attention.key_length). */
  headDimK: number;
  /** Per-head size of v ({arch}.attention.value_length). */
  headDimV: number;
  nFf: number;
  nCtxTrain: number;
  /** Rotated dims per head ({arch}.rope.dimension_count); the rest pass through. */
  nRot: number;
  ropeFreqBase: number;
  /** 1 / rope.scaling.factor for linear scaling, else 1. */
  ropeFreqScale: number;
  normEps: number;
  /** Attention sees the last `slidingWindow` positions; 0 for all. */
  slidingWindow: number;
  /** Scale of q·k (llama: 1/sqrt(head_dim) unless {arch}.attention.scale says otherwise). */
  kqScale: number;
}

function need(h: GgufHeader, key: string): number {
  const v = getNumber(h, key);
  if (v === undefined || !Number.isFinite(v)) throw new ModelError('MISSING_KEY', `metadata key "${key}" is missing or not a number; the model cannot be run`);
  return v;
}

function positiveInt(key: string, v: number): number {
  if (!Number.isInteger(v) || v <= 0 || v > 1 << 24) throw new ModelError('BAD_KEY', `metadata key "${key}" = ${v} is not a usable size`);
  return v;
}

/** Hyperparameters of the model in `h`; nVocab is taken from the token_embd tensor. */
export function modelHparams(h: GgufHeader, spec: ArchSpec = archSpec(getString(h, 'general.architecture'))): ModelHparams {
  const a = getString(h, 'general.architecture')!;
  const k = (key: string) => `${a}.${key}`;
  const nEmbd = positiveInt(k('embedding_length'), need(h, k('embedding_length')));
  const nLayer = positiveInt(k('block_count'), need(h, k('block_count')));
  const nHead = positiveInt(k('attention.head_count'), need(h, k('attention.head_count')));
  const nHeadKv = positiveInt(k('attention.head_count_kv'), getNumber(h, k('attention.head_count_kv')) ?? nHead);
  if (nHead % nHeadKv !== 0) throw new ModelError('BAD_KEY', `${nHead} attention heads cannot be shared among ${nHeadKv} KV heads`);
  const headDimK = positiveInt(k('attention.key_length'), getNumber(h, k('attention.key_length')) ?? nEmbd / nHead);
  const headDimV = positiveInt(k('attention.value_length'), getNumber(h, k('attention.value_length')) ?? nEmbd / nHead);
  const nRot = getNumber(h, k('rope.dimension_count')) ?? headDimK;
  if (!Number.isInteger(nRot) || nRot <= 0 || nRot > headDimK || nRot % 2 !== 0) {
    throw new ModelError('BAD_KEY', `${k('rope.dimension_count')} = ${nRot} does not fit a head of ${headDimK}`);
  }
  const scalingType = getString(h, k('rope.scaling.type')) ?? 'linear';
  if (scalingType !== 'linear' && scalingType !== 'none') {
    throw new ModelError('UNSUPPORTED_ROPE', `RoPE scaling "${scalingType}" is not supported yet (linear only)`);
  }
  const factor = getNumber(h, k('rope.scaling.factor')) ?? getNumber(h, k('rope.scale_linear')) ?? 0;
  const embd = h.tensors.find((t) => t.name === 'token_embd.weight');
  const nVocab = embd?.dims[1] ?? getNumber(h, k('vocab_size')) ?? 0;
  const attnScale = getNumber(h, k('attention.scale')) ?? 0;
  return {
    arch: a,
    nVocab,
    nEmbd,
    nLayer,
    nHead,
    nHeadKv,
    headDimK,
    headDimV,
    nFf: getNumber(h, k('feed_forward_length')) ?? 0,
    nCtxTrain: getNumber(h, k('context_length')) ?? 0,
    nRot,
    ropeFreqBase: getNumber(h, k('rope.freq_base')) ?? 10000,
    ropeFreqScale: scalingType === 'none' || factor === 0 ? 1 : 1 / factor,
    normEps: getNumber(h, k(spec.epsKey)) ?? 1e-5,
    slidingWindow: spec.slidingWindow ? getNumber(h, k('attention.sliding_window')) ?? 0 : 0,
    kqScale: attnScale !== 0 ? attnScale : Math.fround(1 / Math.fround(Math.sqrt(headDimK))), // 1.0f/sqrtf(n_embd_head)
  };
}
