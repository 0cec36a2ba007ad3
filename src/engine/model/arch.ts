// The architectures Pantheon runs, as data: what differs between them is a handful of switches
// read by the one forward pass (forward.ts). Facts from llama.cpp: rope types from llama-model.cpp
// llama_model_rope_type, everything else from the graph builders in src/models/<arch>.cpp.

import { ModelError } from '../../shared/errors.js';
import type { RopeMode } from './ops.js';

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
  scaleQ: false, qkNorm: false, slidingWindow: false, ropeFactors: 'none', epsKey: 'attention.layer_norm_rms_epsilon', llama4Attention: false, moe: null,
  deltaNet: false,
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
  gemma: arch('gemma', { rope: 'neox', ffn: 'geglu', embedScale: true, scaleQ: true }),
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
  // src/models/qwen35.cpp: 3 of every 4 layers Gated DeltaNet (deltanet.ts), the others qwen3-style
  // attention with a gated q; IMROPE, which for text turns as NEOX (deltanet.ts imropeTextPairs).
  qwen35: arch('qwen35', { rope: 'neox', qkNorm: true, deltaNet: true }),
  // src/models/qwen35moe.cpp: qwen35 with experts in every layer (softmax routing, the chosen weights
  // normalised) and a shared expert scaled by sigmoid(ffn_gate_inp_shexp · x).
  qwen35moe: arch('qwen35moe', { rope: 'neox', qkNorm: true, deltaNet: true, moe: { ...MOE, normW: true, shared: 'gated' } }),
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
