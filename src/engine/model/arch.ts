// The architectures Pantheon runs, as data: what differs between them is a handful of switches
// read by the one forward pass (forward.ts). Facts from llama.cpp: rope types from llama-model.cpp
// llama_model_rope_type, everything else from the graph builders in src/models/<arch>.cpp.

import { ModelError } from '../../shared/errors.js';
import type { RopeMode } from './ops.js';

export type NormKind = 'rms' | 'layer';
/** swiglu: silu(gate)·up; geglu: gelu(gate)·up; gelu: gelu(up) with no gate. */
export type FfnKind = 'swiglu' | 'geglu' | 'gelu';

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
  /** Per-head RMSNorm of q and k before RoPE, attn_q_norm / attn_k_norm (qwen3). */
  readonly qkNorm: boolean;
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
  deltaNet: false,
};

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
  // src/models/qwen35.cpp: 3 of every 4 layers Gated DeltaNet (deltanet.ts), the others qwen3-style
  // attention with a gated q; IMROPE, which for text turns as NEOX (deltanet.ts imropeTextPairs).
  qwen35: arch('qwen35', { rope: 'neox', qkNorm: true, deltaNet: true }),
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
