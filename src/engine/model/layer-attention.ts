// Llama 4's attention layout (llama.cpp src/models/llama4.cpp, llama-hparams.cpp): which layers
// rotate q and k (NoPE on every n_no_rope_layer_step-th), which attend within fixed chunks of
// positions (LLAMA_SWA_TYPE_CHUNKED: a query at p sees keys from floor(p / chunk)·chunk on), the
// temperature tuning of q on NoPE layers, and the weightless q/k RMSNorm after RoPE.

import { ModelError } from '../../shared/errors.js';
import { getNumber, getValue } from '../gguf/keys.js';
import type { GgufHeader } from '../gguf/types.js';
import { rmsnorm } from './ops.js';

export interface LayerAttention {
  /** Per layer: RoPE on q and k (false: NoPE). */
  rope: boolean[];
  /** Chunk size of chunked attention (0: none), on the layers where chunked[l]. */
  chunk: number;
  chunked: boolean[];
  /** q × (log(floor((p + offset) / floorScale) + 1) · scale + 1) on NoPE layers (llm_graph_input_attn_temp), or null. */
  temp: { floorScale: number; scale: number; offset: number } | null;
  /** RMSNorm of q and k per head without a weight, after RoPE, on RoPE layers (Llama4TextL2Norm). */
  kqNorm: boolean;
}

/**
 * llama4's load_arch_hparams: with attention.sliding_window present and 0, no chunking and RoPE on
 * all layers but the last (n_no_rope_layer_step = n_layer); otherwise chunks of 8192 (whatever the
 * key says) on 3 layers of every attention.sliding_window_pattern (default 4), the 4th full and
 * NoPE, temperature tuning (floor 8192, scale 0.1, offset 1). q/k norm unless 128 experts
 * (LLM_TYPE_17B_128E). rope.freq_base_swa (the chunked layers' base) must equal rope.freq_base.
 * (llama.cpp v0.4.0 builds the temperature input for every llama4 graph and asserts its scale is
 * set, so it aborts on a file with sliding_window = 0; Pantheon runs that layout as written.)
 */
export function llama4Attention(h: GgufHeader, arch: string, nLayer: number, nExpert: number, freqBase: number): LayerAttention {
  const k = (key: string) => `${arch}.${key}`;
  const swa = getValue(h, k('attention.sliding_window')) !== undefined ? getNumber(h, k('attention.sliding_window')) : undefined;
  const kqNorm = nExpert !== 128;
  if (swa === 0) {
    return { rope: Array.from({ length: nLayer }, (_, l) => (l + 1) % nLayer !== 0), chunk: 0, chunked: new Array<boolean>(nLayer).fill(false), temp: null, kqNorm };
  }
  const period = getNumber(h, k('attention.sliding_window_pattern')) ?? 4;
  const baseSwa = getNumber(h, k('rope.freq_base_swa')) ?? freqBase;
  if (baseSwa !== freqBase) throw new ModelError('UNSUPPORTED_KEY', `${k('rope.freq_base_swa')} = ${baseSwa} differs from rope.freq_base (${freqBase}); a RoPE base per layer is not supported`);
  return {
    rope: Array.from({ length: nLayer }, (_, l) => (l + 1) % 4 !== 0), // n_no_rope_layer_step's default, 4
    chunk: 8192,
    chunked: Array.from({ length: nLayer }, (_, l) => period === 0 || l % period < period - 1), // set_swa_pattern
    temp: { floorScale: 8192, scale: 0.1, offset: 1 },
    kqNorm,
  };
}

/**
 * After RoPE for token t at position p of layer l: on a NoPE layer q × the temperature scale, on
 * a RoPE layer the weightless per-head RMSNorm of q and k (in place, on the batch arrays).
 */
export function afterRope(A: LayerAttention, l: number, p: number, q: Float32Array, qOff: number, k: Float32Array, kOff: number, nHead: number, nHeadKv: number, hd: number, eps: number): void {
  if (!A.rope[l]) {
    if (!A.temp) return;
    // computed in double, stored as float (llm_graph_input_attn_temp::set_input), then ggml_mul
    const s = Math.fround(Math.log(Math.floor((p + A.temp.offset) / A.temp.floorScale) + 1) * A.temp.scale + 1);
    for (let i = 0; i < nHead * hd; i++) q[qOff + i] = Math.fround(q[qOff + i] * s);
    return;
  }
  if (!A.kqNorm) return;
  for (let h = 0; h < nHead; h++) rmsnorm(q, q, null, eps, hd, qOff + h * hd, qOff + h * hd);
  for (let h = 0; h < nHeadKv; h++) rmsnorm(k, k, null, eps, hd, kOff + h * hd, kOff + h * hd);
}

/** The window that chunked attention gives the query at p: from its chunk's start to p. */
export function chunkWindow(chunk: number, p: number): number {
  return p - Math.floor(p / chunk) * chunk + 1;
}
