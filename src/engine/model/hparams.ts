// Model hyperparameters from the `{arch}.*` metadata keys, with llama.cpp's defaults
// (llama-model.cpp llama_model_base::load_hparams): head dims default to n_embd / n_head, n_rot to
// the key head dim, rope base to 10000, head_count_kv to head_count. RoPE scaling is resolved the
// way llama_context's constructor turns hparams into the cparams its graph passes to ggml_rope_ext
// (llama-context.cpp: freq_scale, yarn_ext_factor, yarn_attn_factor).

import { ModelError } from '../../shared/errors.js';
import { getNumber, getString, getValue } from '../gguf/keys.js';
import { isGgufArray, type GgufHeader } from '../gguf/types.js';
import { archSpec, type ArchSpec } from './arch.js';
import { deltaNetHparams, mtpLayers, type DeltaNetHparams } from './deltanet.js';
import { llama4Attention, type LayerAttention } from './layer-attention.js';
import { moeHparams, type MoeHparams } from './moe.js';

/** {arch}.rope.scaling.type (llama.cpp LLAMA_ROPE_SCALING_TYPES). */
export type RopeScaling = 'none' | 'linear' | 'yarn' | 'longrope';
const ROPE_SCALINGS: readonly RopeScaling[] = ['none', 'linear', 'yarn', 'longrope'];

/** ggml_rope_ext's scaling parameters, as llama.cpp's graph passes them. */
export interface RopeParams {
  /** {arch}.rope.freq_base. */
  freqBase: number;
  /** 1 / rope.scaling.factor (1 without a factor, and always 1 for "none"). */
  freqScale: number;
  /** YaRN's extrapolation mix: 1 for "yarn", else 0 (plain interpolation by freqScale). */
  extFactor: number;
  /** Multiplies cos and sin (so q·k by its square): YaRN's mscale correction times rope.scaling.attn_factor. */
  attnFactor: number;
  /** YaRN's ramp ends, in rotations over the original context (llama.cpp defaults 32 and 1). */
  betaFast: number;
  betaSlow: number;
  /** rope.scaling.original_context_length (default context_length): YaRN's ramp and longrope's long/short choice. */
  nCtxOrig: number;
}

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
  /** FFN width of layer 0; 0 when the file does not say (then taken from ffn_down). */
  nFf: number;
  /** FFN width per layer ({arch}.feed_forward_length may be one value or one per layer). */
  nFfLayer: number[];
  nCtxTrain: number;
  /** Rotated dims per head ({arch}.rope.dimension_count); the rest pass through. */
  nRot: number;
  ropeScaling: RopeScaling;
  rope: RopeParams;
  normEps: number;
  /** Attention sees the last `slidingWindow` positions; 0 for all. */
  slidingWindow: number;
  /** Scale of q·k (llama: 1/sqrt(head_dim) unless {arch}.attention.scale says otherwise). */
  kqScale: number;
  /** Per layer: the sliding window (last n positions seen), 0 for all positions. */
  layerWindow: number[];
  /** Per layer: which RoPE it applies, 'main' (rope), 'swa' (ropeSwa) or 'none' (NoPE layers). */
  layerRope: ('main' | 'swa' | 'none')[];
  /** RoPE of the sliding-window layers (arch.ts swaRope). */
  ropeSwa: RopeParams;
  /** Attention logits → cap·tanh(logit/cap) when > 0 (gemma2). */
  attnSoftcap: number;
  /** Final logits → cap·tanh(logit/cap) when > 0 (gemma2, gemma3). */
  finalSoftcap: number;
  /** Token embeddings multiplied by this when > 0 (gemma: sqrt(n_embd); granite: embedding_scale). */
  embedScale: number;
  /** Attention and FFN outputs multiplied by this before the residual when > 0 (granite). */
  residualScale: number;
  /** Logits divided by this when > 0 (granite logit_scale). */
  logitScale: number;
  /** q × (log(⌊pos / nCtxOrig⌋ + 1)·attnTempScale + 1) after RoPE when > 0 (mistral3). */
  attnTempScale: number;
  /** The gated linear-attention layers' sizes and which layers they are (qwen35), else null. */
  deltaNet: DeltaNetHparams | null;
  /** Mixture-of-experts keys (moe.ts), or null for a dense model. */
  moe: MoeHparams | null;
  /** Per-layer RoPE / chunked attention / q temperature (llama4, layer-attention.ts), or null. */
  layerAttn: LayerAttention | null;
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

/**
 * A key that may hold one value or one per layer (llama_model_loader::get_key_or_arr): an array
 * must have exactly nLayer numbers; a scalar applies to every layer. undefined when absent.
 */
function perLayer(h: GgufHeader, key: string, nLayer: number): number[] | undefined {
  const v = getValue(h, key);
  if (v === undefined) return undefined;
  if (isGgufArray(v)) {
    if (v.items.length !== nLayer) throw new ModelError('BAD_KEY', `metadata key "${key}" has ${v.items.length} values, expected one per layer (${nLayer})`);
    return v.items.map((x, i) => {
      const n = typeof x === 'bigint' ? Number(x) : x;
      if (typeof n !== 'number') throw new ModelError('BAD_KEY', `metadata key "${key}"[${i}] is not a number`);
      return n;
    });
  }
  const n = getNumber(h, key);
  if (n === undefined) throw new ModelError('BAD_KEY', `metadata key "${key}" is not a number`);
  return new Array<number>(nLayer).fill(n);
}

/**
 * A per-layer size the forward pass takes as one number. llama.cpp's builders for these
 * architectures also size every layer's tensors by layer 0 (LLAMA_LOAD_LOCALS: hparams.n_head()),
 * so a file whose layers differ is refused by both.
 */
function uniform(key: string, values: number[], arch: string): number {
  const v = values[0];
  const i = values.findIndex((x) => x !== v);
  if (i >= 0) throw new ModelError('UNSUPPORTED_KEY', `metadata key "${key}" differs between layers (layer 0: ${v}, layer ${i}: ${values[i]}); per-layer attention sizes are not supported for ${arch}`);
  return v;
}

/**
 * The RoPE parameters llama.cpp computes for these architectures. The yarn_* keys
 * (rope.scaling.yarn_ext_factor, yarn_attn_factor, yarn_beta_fast, yarn_beta_slow,
 * yarn_log_multiplier) are read by llama.cpp only for grok, mistral3, deepseek2 and a few others
 * (src/models/<arch>.cpp load_arch_hparams), none of which Pantheon runs; for llama, qwen, phi and
 * gemma llama.cpp ignores them and uses its defaults (ext 1 for yarn, attn 1, beta 32 / 1, log_mul 0),
 * and so does Pantheon. Float rounding follows llama-context.cpp.
 */
function ropeParams(h: GgufHeader, k: (key: string) => string, scaling: RopeScaling, nCtxTrain: number, yarnKeys: boolean): RopeParams {
  const f = Math.fround;
  const factor = getNumber(h, k('rope.scaling.factor')) ?? getNumber(h, k('rope.scale_linear')) ?? 0;
  const freqScale = scaling === 'none' || factor === 0 ? 1 : f(1 / f(factor));
  const extFactor = scaling === 'yarn' ? 1 : 0;
  // mistral3 reads these keys (its load_arch_hparams); the rest keep llama.cpp's defaults
  const logMul = yarnKeys ? getNumber(h, k('rope.scaling.yarn_log_multiplier')) ?? 0 : 0;
  const mscale = (sc: number, m: number) => (sc <= 1 ? 1 : f(f(f(f(0.1) * f(m)) * f(Math.log(sc))) + 1));
  let attnFactor = 1;
  if (extFactor !== 0) {
    // get_mscale(factor, 1) = 0.1·ln(factor) + 1 (or its ratio to get_mscale(factor, log_mul) when
    // the file has yarn_log_multiplier), then divided by 0.1·ln(factor) + 1, which ggml's rope_yarn
    // multiplies in again (llama.cpp PR 17945).
    const s = f(1 / freqScale);
    attnFactor = logMul !== 0 ? f(mscale(s, 1) / mscale(s, logMul)) : mscale(s, 1);
    attnFactor = f(attnFactor * f(1 / f(1 + f(f(0.1) * f(Math.log(s))))));
  }
  attnFactor = f(attnFactor * f(getNumber(h, k('rope.scaling.attn_factor')) ?? 1));
  const nCtxOrig = getNumber(h, k('rope.scaling.original_context_length')) || nCtxTrain;
  const betaFast = yarnKeys ? getNumber(h, k('rope.scaling.yarn_beta_fast')) ?? 32 : 32;
  const betaSlow = yarnKeys ? getNumber(h, k('rope.scaling.yarn_beta_slow')) ?? 1 : 1;
  return { freqBase: getNumber(h, k('rope.freq_base')) ?? 10000, freqScale, extFactor, attnFactor, betaFast, betaSlow, nCtxOrig };
}

/** Which layers slide and how far (llama_hparams::set_swa_pattern without dense_first). */
function layerWindows(h: GgufHeader, k: (key: string) => string, spec: ArchSpec, nLayer: number): number[] {
  const key = getNumber(h, k('attention.sliding_window'));
  if (!spec.swa) return new Array<number>(nLayer).fill(spec.slidingWindow ? key ?? 0 : 0);
  const window = key ?? spec.swa.window;
  if (!Number.isInteger(window) || window < 0) throw new ModelError('BAD_KEY', `metadata key "${k('attention.sliding_window')}" = ${window} is not a usable window`);
  if (window === 0) return new Array<number>(nLayer).fill(0);
  // the pattern key may be a period or one flag per layer (get_key_or_arr)
  const pattern = perLayer(h, k('attention.sliding_window_pattern'), nLayer);
  const raw = getValue(h, k('attention.sliding_window_pattern'));
  if (pattern && raw !== undefined && isGgufArray(raw)) return pattern.map((swa) => (swa ? window : 0));
  const period = pattern?.[0] ?? spec.swa.period;
  return Array.from({ length: nLayer }, (_, il) => (period === 0 || il % period < period - 1 ? window : 0));
}

/** Hyperparameters of the model in `h`; nVocab is taken from the token_embd tensor. */
export function modelHparams(h: GgufHeader, spec: ArchSpec = archSpec(getString(h, 'general.architecture'))): ModelHparams {
  const a = getString(h, 'general.architecture')!;
  const k = (key: string) => `${a}.${key}`;
  const nEmbd = positiveInt(k('embedding_length'), need(h, k('embedding_length')));
  const nLayer = positiveInt(k('block_count'), need(h, k('block_count')));
  const heads = perLayer(h, k('attention.head_count'), nLayer);
  if (!heads) throw new ModelError('MISSING_KEY', `metadata key "${k('attention.head_count')}" is missing or not a number; the model cannot be run`);
  const nHead = positiveInt(k('attention.head_count'), uniform(k('attention.head_count'), heads, a));
  const nHeadKv = positiveInt(k('attention.head_count_kv'), uniform(k('attention.head_count_kv'), perLayer(h, k('attention.head_count_kv'), nLayer) ?? heads, a));
  if (nHead % nHeadKv !== 0) throw new ModelError('BAD_KEY', `${nHead} attention heads cannot be shared among ${nHeadKv} KV heads`);
  const nFfLayer = perLayer(h, k('feed_forward_length'), nLayer) ?? new Array<number>(nLayer).fill(0);
  for (const n of nFfLayer) if (n !== 0) positiveInt(k('feed_forward_length'), n);
  const headDimK = positiveInt(k('attention.key_length'), getNumber(h, k('attention.key_length')) ?? nEmbd / nHead);
  const headDimV = positiveInt(k('attention.value_length'), getNumber(h, k('attention.value_length')) ?? nEmbd / nHead);
  const nRot = getNumber(h, k('rope.dimension_count')) ?? headDimK;
  if (!Number.isInteger(nRot) || nRot <= 0 || nRot > headDimK || nRot % 2 !== 0) {
    throw new ModelError('BAD_KEY', `${k('rope.dimension_count')} = ${nRot} does not fit a head of ${headDimK}`);
  }
  const scaling = getString(h, k('rope.scaling.type')) ?? 'linear';
  if (!(ROPE_SCALINGS as readonly string[]).includes(scaling)) {
    throw new ModelError('UNSUPPORTED_ROPE', `${k('rope.scaling.type')} = "${scaling}" is not a RoPE scaling Pantheon knows; it runs ${ROPE_SCALINGS.join(', ')}`);
  }
  const embd = h.tensors.find((t) => t.name === 'token_embd.weight');
  const nVocab = embd?.dims[1] ?? getNumber(h, k('vocab_size')) ?? 0;
  const attnScale = getNumber(h, k('attention.scale')) ?? 0;
  const nCtxTrain = getNumber(h, k('context_length')) ?? 0;
  const rope = ropeParams(h, k, scaling as RopeScaling, nCtxTrain, spec.yarnKeys);
  const moe = moeHparams(h, spec, a, nLayer, nFfLayer);
  const layerWindow = layerWindows(h, k, spec, nLayer);
  const swaBase = getNumber(h, k('rope.freq_base_swa'));
  const ropeSwa: RopeParams =
    spec.swaRope === 'inherit' ? { ...rope, freqBase: swaBase ?? rope.freqBase }
    : spec.swaRope === 'base10k' ? { ...rope, freqBase: swaBase ?? 10000, freqScale: 1 }
    : { ...rope, freqScale: 1, extFactor: 0, attnFactor: 1 };
  // the sliding layers' own RoPE only where it differs from the global one
  const swaDiffers = (Object.keys(rope) as (keyof RopeParams)[]).some((key) => rope[key] !== ropeSwa[key]);
  const layerRope = layerWindow.map((w, il): ModelHparams['layerRope'][number] =>
    spec.noRopeStep > 0 && (il + 1) % spec.noRopeStep === 0 ? 'none' : spec.swa && w > 0 && swaDiffers ? 'swa' : 'main');
  const f = Math.fround;
  // gemma2/gemma3: f_attention_scale by the 27B rule; others: attention.scale or 1/sqrt(head_dim)
  const kqScale = spec.gemmaQueryScale > 0
    ? f(1 / f(Math.sqrt(nLayer === spec.gemmaQueryScale ? Math.floor(nEmbd / nHead) : headDimK)))
    : spec.name === 'olmo2' || attnScale === 0 ? f(1 / f(Math.sqrt(headDimK))) : attnScale; // 1.0f/sqrtf(n_embd_head)
  const softcap = (key: string, dflt: number) => getNumber(h, k(key)) ?? dflt;
  const num = (key: string) => getNumber(h, k(key)) ?? 0;
  if (spec.graniteScales && !num('logit_scale')) throw new ModelError('MISSING_KEY', `metadata key "${k('logit_scale')}" is missing or zero; a granite model needs it`);
  if (spec.attnTemperature && num('attention.temperature_scale') !== 0 && rope.nCtxOrig === 0) {
    throw new ModelError('BAD_KEY', `${k('attention.temperature_scale')} needs rope.scaling.original_context_length (or context_length), which is missing`);
  }
  return {
    arch: a,
    nVocab,
    nEmbd,
    nLayer: spec.deltaNet ? nLayer - mtpLayers(h, a, nLayer) : nLayer, // qwen35: the MTP blocks are not run
    nHead,
    nHeadKv,
    headDimK,
    headDimV,
    nFf: nFfLayer[0],
    nFfLayer,
    nCtxTrain,
    nRot,
    ropeScaling: scaling as RopeScaling,
    rope,
    normEps: getNumber(h, k(spec.epsKey)) ?? 1e-5,
    slidingWindow: Math.max(...layerWindow),
    kqScale,
    layerWindow,
    layerRope,
    ropeSwa,
    attnSoftcap: spec.softcaps ? softcap('attn_logit_softcapping', 50) : 0,
    finalSoftcap: spec.softcaps ? softcap('final_logit_softcapping', 30) : spec.finalSoftcap ? softcap('final_logit_softcapping', 0) : 0,
    embedScale: spec.embedScale ? f(Math.sqrt(nEmbd)) : spec.graniteScales ? num('embedding_scale') : 0,
    residualScale: spec.graniteScales ? num('residual_scale') : 0,
    logitScale: spec.graniteScales ? num('logit_scale') : 0,
    attnTempScale: spec.attnTemperature ? num('attention.temperature_scale') : 0,
    deltaNet: spec.deltaNet ? deltaNetHparams(h, a, nLayer) : null,
    moe,
    layerAttn: spec.llama4Attention ? llama4Attention(h, a, nLayer, moe?.nExpert ?? 0, rope.freqBase) : null,
  };
}
