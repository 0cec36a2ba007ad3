// The architectures Pantheon runs, as data: what differs between them is a handful of switches
// read by the one forward pass (forward.ts). Facts from llama.cpp: rope types from llama-model.cpp
// llama_model_rope_type, everything else from the graph builders in src/models/<arch>.cpp.

import { ModelError } from '../../shared/errors.js';
import type { RopeMode } from './ops.js';
import { swigluOai } from './swiglu-oai.js';

export type NormKind = 'rms' | 'layer';
/** swiglu: silu(gate)·up; geglu: gelu(gate)·up; gelu: gelu(up) with no gate. */
export type FfnKind = 'swiglu' | 'geglu' | 'gelu';

/**
 * How a mixture-of-experts FFN routes (llama-graph.cpp build_moe_ffn's gating_op): 'softmax' over
 * every expert's router logit, 'sigmoid' of each, or 'softmaxTopK': the top k logits themselves,
 * softmaxed over the chosen k only (gpt-oss, LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT).
 */
export type MoeGating = 'softmax' | 'sigmoid' | 'softmaxTopK';

/**
 * out[i] = act(gate[i], up[i]) for i < n: a mixture-of-experts activation other than SwiGLU
 * (gpt-oss's clamped SwiGLU). Without one the experts run silu(gate)·up, which a backend may fuse.
 */
export type MoeActivation = (out: Float32Array, gate: Float32Array, up: Float32Array, n: number, outOff: number, gateOff: number, upOff: number) => void;

/** The mixture-of-experts switches of an architecture (model/moe.ts runs them). */
export interface MoeArch {
  gating: MoeGating;
  /** Chosen weights divided by their sum (build_moe_ffn's norm_w, hard-coded per graph builder). */
  normW: boolean;
  /**
   * The experts' FFN width: 'exp' {arch}.expert_feed_forward_length, per layer, defaulting to
   * n_ff / n_expert_used (qwen2moe, qwen3moe); 'expRequired' the same key, required (llama4);
   * 'ff' {arch}.feed_forward_length itself (olmoe reads no expert key).
   */
  ffExp: 'exp' | 'expRequired' | 'ff';
  /**
   * A shared expert beside the routed ones (ffn_{gate,up,down}_shexp): 'gated' scaled by
   * sigmoid(ffn_gate_inp_shexp · x), its width {arch}.expert_shared_feed_forward_length or n_ff
   * (qwen2moe); 'plain' always added, as wide as an expert (llama4); 'none'.
   */
  shared: 'none' | 'gated' | 'plain';
  /** The chosen weights multiply each expert's input, not its output (llama4). */
  weightBeforeFfn: boolean;
  /** Experts only on layers l with (l + 1) % {arch}.interleave_moe_layer_step == 0, dense FFNs elsewhere (llama4). */
  interleaved: boolean;
  /** Choose the top k by the router logits rather than the gated probabilities (llama4; build_moe_ffn's selection_probs). */
  selectLogits?: boolean;
  /** The experts' activation when not SwiGLU. */
  act?: MoeActivation;
}

export interface ArchSpec {
  readonly name: string;
  /** 'norm' pairs neighbours (llama); 'neox' pairs i with i + n_rot/2. */
  readonly rope: RopeMode;
  readonly norm: NormKind;
  readonly ffn: FfnKind;
  /** ffn_up holds [gate; up] stacked, gate first (phi3: ggml_swiglu on the fused tensor). */
  readonly fusedGateUp: boolean;
  /** Attention and FFN both read attn_norm's output; x += attn + ffn (phi2). */
  readonly parallel: boolean;
  /** Token embeddings multiplied by sqrt(n_embd) (gemma). */
  readonly embedScale: boolean;
  /** q multiplied by 1/sqrt(head_dim) after RoPE, attention scale 1 (gemma, phi2, phi3). */
  readonly scaleQ: boolean;
  /** RMSNorm of q and k before RoPE, attn_q_norm / attn_k_norm: per head (true, qwen3), or over the whole projection ('full', olmoe). */
  readonly qkNorm: boolean | 'full';
  /** Honour {arch}.attention.sliding_window (llama.cpp reads it for none of these but mistral-style files). */
  readonly slidingWindow: boolean;
  /**
   * Per-dimension RoPE frequency divisors the graph passes to ggml_rope_ext (model.get_rope_factors):
   * 'freqs' reads rope_freqs.weight (Llama 3.1), or rope_factors_long/short.weight when
   * rope.scaling.type is "longrope"; 'longShort' always reads rope_factors_long/short (phi3);
   * 'none' passes no factors (qwen2, qwen3, phi2 and gemma call ggml_rope_ext with nullptr).
   */
  readonly ropeFactors: 'freqs' | 'longShort' | 'none';
  /** Metadata key of the norm epsilon. */
  readonly epsKey: 'attention.layer_norm_rms_epsilon' | 'attention.layer_norm_epsilon';
  /** attn_norm / ffn_norm before attention and FFN (false: olmo2 has only post-norms). */
  readonly preNorms: boolean;
  /** post_attention_norm / post_ffw_norm on the attention and FFN outputs before the residual (gemma2, gemma3, olmo2). */
  readonly postNorms: boolean;
  /**
   * Sliding window on a layer pattern (llama_hparams::set_swa_pattern): every `period`-th layer is
   * global, the rest see {arch}.attention.sliding_window positions (period from
   * attention.sliding_window_pattern when the file has it). `window` is the default when the key is
   * absent (0: no sliding window then). null: no pattern.
   */
  readonly swa: { readonly period: number; readonly window: number } | null;
  /**
   * RoPE of the sliding-window layers (llama_model::get_rope_freq_base/scale): 'inherit' the
   * global base and scale unless rope.freq_base_swa is set (gemma2); 'base10k' base 10000 unless
   * set, scale 1 (gemma3); 'plain' the global base, scale 1 and no YaRN (olmo2's graph).
   */
  readonly swaRope: 'inherit' | 'base10k' | 'plain';
  /** Every n-th layer (1-based) has no RoPE (smollm3: 4); 0 for none. */
  readonly noRopeStep: number;
  /**
   * q is scaled by 1/sqrt(head_dim), or 1/sqrt(n_embd / n_head) for the 27B shape (this block
   * count), ignoring attention.scale (gemma2, gemma3: f_attention_scale in their load_arch_hparams).
   */
  readonly gemmaQueryScale: number;
  /** The output matrix is always token_embd (gemma, gemma2: llama.cpp never reads output.weight). */
  readonly alwaysTied: boolean;
  /** Reads attn_logit_softcapping / final_logit_softcapping (llama.cpp defaults 50 / 30; gemma2). */
  readonly softcaps: boolean;
  /** Reads final_logit_softcapping alone (default 0: none; gemma3). */
  readonly finalSoftcap: boolean;
  /** Reads embedding_scale, residual_scale and logit_scale (granite). */
  readonly graniteScales: boolean;
  /** Reads attention.temperature_scale: q × log(⌊pos / n_ctx_orig⌋ + 1)·scale + 1 (mistral3). */
  readonly attnTemperature: boolean;
  /** Reads rope.scaling.yarn_beta_fast / yarn_beta_slow / yarn_log_multiplier (mistral3). */
  readonly yarnKeys: boolean;
  /** Per-head attention sinks, blk.N.attn_sinks [nHead] (gpt-oss; attention.ts). */
  readonly sinks?: boolean;
  /** The FFN's input norm tensor: ffn_norm, or post_attention_norm (gpt-oss's attn_post_norm, used as the FFN norm). */
  readonly ffnNormName?: 'ffn_norm' | 'post_attention_norm';
  /** Llama 4's attention layout: NoPE layers, chunked attention, temperature tuning, q/k norm after RoPE (layer-attention.ts). */
  readonly llama4Attention: boolean;
  /** Mixture-of-experts FFNs (router ffn_gate_inp, experts ffn_*_exps), or null for dense FFNs. */
  readonly moe: MoeArch | null;
  /**
   * Hybrid Qwen3.5: gated linear-attention layers (deltanet.ts) between full-attention ones whose q
   * projection carries a sigmoid output gate per head ([q; gate] per head), and the FFN's norm named
   * post_attention_norm.
   */
  readonly deltaNet: boolean;
}

const BASE: Omit<ArchSpec, 'name'> = {
  rope: 'norm', norm: 'rms', ffn: 'swiglu', fusedGateUp: false, parallel: false, embedScale: false,
  scaleQ: false, qkNorm: false, slidingWindow: false, ropeFactors: 'none', epsKey: 'attention.layer_norm_rms_epsilon',
  moe: null, preNorms: true, postNorms: false, swa: null, swaRope: 'inherit', noRopeStep: 0, gemmaQueryScale: 0,
  alwaysTied: false, softcaps: false, finalSoftcap: false, graniteScales: false, attnTemperature: false, yarnKeys: false,
  llama4Attention: false, deltaNet: false,
};

const MOE: MoeArch = { gating: 'softmax', normW: false, ffExp: 'exp', shared: 'none', weightBeforeFfn: false, interleaved: false };

function arch(name: string, over: Partial<ArchSpec>): ArchSpec {
  return { ...BASE, name, ...over };
}

export const ARCHITECTURES: Readonly<Record<string, ArchSpec>> = {
  // llama.cpp src/models/llama.cpp: RMSNorm, SwiGLU, normal RoPE; GQA by head_count_kv.
  llama: arch('llama', { ropeFactors: 'freqs' }),
  // Mistral files are converted as "llama"; a file that says "mistral" is read the same way, and its
  // sliding window (Mistral 7B v0.1: 4096) is applied.
  mistral: arch('mistral', { slidingWindow: true, ropeFactors: 'freqs' }),
  // src/models/qwen2.cpp: llama plus q/k/v biases (loaded when present), NEOX RoPE.
  qwen2: arch('qwen2', { rope: 'neox' }),
  // src/models/qwen3.cpp: per-head q/k RMSNorm before RoPE, NEOX RoPE.
  qwen3: arch('qwen3', { rope: 'neox', qkNorm: true }),
  // src/models/phi3.cpp: fused attn_qkv, ffn_up = [gate; up], q scaled before attention. llama.cpp
  // disables Phi-3's sliding window ("Phi SWA is currently disabled"), so it is not applied here.
  // Phi-3 128k: rope_factors_long/short, chosen by context size (weights.ts ropeFactorsFor).
  phi3: arch('phi3', { rope: 'neox', fusedGateUp: true, scaleQ: true, ropeFactors: 'longShort' }),
  // src/models/phi2.cpp: LayerNorm with bias, fused qkv + bias, GELU MLP with biases, parallel
  // attention and MLP, partial rotary (rope.dimension_count), output bias.
  phi2: arch('phi2', { rope: 'neox', norm: 'layer', ffn: 'gelu', parallel: true, scaleQ: true, epsKey: 'attention.layer_norm_epsilon' }),
  // src/models/gemma.cpp: embeddings × sqrt(n_embd), GELU-gated FFN, output tied to token_embd.
  // The RMSNorm weights need no +1: convert_hf_to_gguf.py (GemmaModel.modify_tensors) adds the 1
  // when it writes the file.
  gemma: arch('gemma', { rope: 'neox', ffn: 'geglu', embedScale: true, scaleQ: true, alwaysTied: true }),
  // src/models/gemma2.cpp: gemma plus post-attention and post-FFN norms, sliding window (default
  // 4096) on every other layer, tanh soft-capping of attention logits and of the final logits.
  gemma2: arch('gemma2', {
    rope: 'neox', ffn: 'geglu', embedScale: true, scaleQ: true, alwaysTied: true, postNorms: true,
    swa: { period: 2, window: 4096 }, swaRope: 'inherit', gemmaQueryScale: 46, softcaps: true,
  }),
  // src/models/gemma3.cpp: gemma2's sandwich norms, per-head q/k norms, 5 local layers to 1 global
  // (when the file has a sliding window), local RoPE base 10000, optional final soft-capping.
  gemma3: arch('gemma3', {
    rope: 'neox', ffn: 'geglu', embedScale: true, scaleQ: true, postNorms: true, qkNorm: true,
    swa: { period: 6, window: 0 }, swaRope: 'base10k', gemmaQueryScale: 62, finalSoftcap: true,
  }),
  // src/models/olmo2.cpp: no pre-norms, post-attention and post-FFN norms, q/k RMSNorm over all
  // heads at once, attention scale 1/sqrt(head_dim); OLMo 3's sliding window (period 4) when present.
  olmo2: arch('olmo2', { rope: 'neox', preNorms: false, postNorms: true, qkNorm: 'full', swa: { period: 4, window: 0 }, swaRope: 'plain' }),
  // src/models/smollm3.cpp: llama with no RoPE on every 4th layer.
  smollm3: arch('smollm3', { noRopeStep: 4 }),
  // src/models/granite.cpp: llama with embedding, residual and logit multipliers.
  granite: arch('granite', { ropeFactors: 'freqs', graniteScales: true }),
  // src/models/mistral3.cpp: llama with the file's YaRN settings and Llama 4's attention temperature.
  mistral3: arch('mistral3', { ropeFactors: 'freqs', attnTemperature: true, yarnKeys: true }),
  // src/models/qwen3moe.cpp: qwen3 with a mixture of experts in every layer: softmax routing, the
  // chosen weights normalised (build_moe_ffn norm_w = true), no shared expert.
  qwen3moe: arch('qwen3moe', { rope: 'neox', qkNorm: true, moe: { ...MOE, normW: true } }),
  // src/models/qwen2moe.cpp: qwen2 (q/k/v biases, NEOX RoPE) with experts in every layer, softmax
  // routing without normalisation, and a shared expert scaled by sigmoid(ffn_gate_inp_shexp · x).
  qwen2moe: arch('qwen2moe', { rope: 'neox', moe: { ...MOE, shared: 'gated' } }),
  // src/models/olmoe.cpp: RMSNorm of q and k over the whole projection before RoPE, NEOX RoPE,
  // experts as wide as feed_forward_length, softmax routing without normalisation.
  // src/models/llama4.cpp: normal RoPE with rope_freqs, experts on every interleave_moe_layer_step-th
  // layer (dense FFNs between): sigmoid of the top-k logits multiplied into each expert's input,
  // plus an always-on shared expert as wide as an expert; the attention layout of layer-attention.ts.
  llama4: arch('llama4', {
    ropeFactors: 'freqs', llama4Attention: true,
    moe: { ...MOE, gating: 'sigmoid', selectLogits: true, weightBeforeFfn: true, shared: 'plain', ffExp: 'expRequired', interleaved: true },
  }),
  olmoe: arch('olmoe', { rope: 'neox', qkNorm: 'full', moe: { ...MOE, ffExp: 'ff' } }),
  // src/models/openai-moe.cpp (LLM_ARCH_OPENAI_MOE): biases on q/k/v/o, attention sinks, the
  // sliding window on even layers (set_swa_pattern(2) unless sliding_window_pattern says), NEOX RoPE
  // (YaRN from the file), post_attention_norm before the FFN; experts on every layer with
  // softmax over the top k logits (LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT), router and
  // expert biases, ggml_swiglu_oai; expert_feed_forward_length required.
  'gpt-oss': arch('gpt-oss', {
    rope: 'neox', swa: { period: 2, window: 0 }, sinks: true, ffnNormName: 'post_attention_norm',
    moe: { ...MOE, gating: 'softmaxTopK', ffExp: 'expRequired', act: swigluOai },
  }),
  // src/models/qwen35.cpp: 3 of every 4 layers Gated DeltaNet (deltanet.ts), the others qwen3-style
  // attention with a gated q; IMROPE, which for text turns as NEOX (deltanet.ts imropeTextPairs).
  qwen35: arch('qwen35', { rope: 'neox', qkNorm: true, deltaNet: true, ffnNormName: 'post_attention_norm' }),
  // src/models/qwen35moe.cpp: qwen35 with experts in every layer (softmax routing, the chosen weights
  // normalised) and a shared expert scaled by sigmoid(ffn_gate_inp_shexp · x).
  qwen35moe: arch('qwen35moe', { rope: 'neox', qkNorm: true, deltaNet: true, ffnNormName: 'post_attention_norm', moe: { ...MOE, normW: true, shared: 'gated' } }),
};

export const SUPPORTED_ARCHITECTURES: readonly string[] = Object.keys(ARCHITECTURES);

/** The spec for `name`, or a ModelError naming it and the supported ones. */
export function archSpec(name: string | undefined): ArchSpec {
  if (!name) throw new ModelError('NO_ARCHITECTURE', 'the file has no general.architecture key, so it is not a model Pantheon can run');
  const spec = ARCHITECTURES[name];
  if (!spec) {
    throw new ModelError('UNSUPPORTED_ARCHITECTURE', `architecture "${name}" is not supported; Pantheon runs ${SUPPORTED_ARCHITECTURES.join(', ')}`);
  }
  return spec;
}
