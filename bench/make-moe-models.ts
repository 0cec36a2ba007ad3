// Small random-weight mixture-of-experts models, to check Pantheon's MoE FFN (src/engine/model/moe.ts)
// against llama.cpp's build_moe_ffn:
//
//   node bin/run-ts.mjs bench/make-moe-models.ts [outDir]      # default outDir bench/models/moe
//   node bench/record-goldens.mjs bench/models/moe/*.gguf       # llama.cpp's goldens (3 prompts × 32)
//
// Each file is 64 wide, 4 heads of 16, F16 matrices, F32 router and norms, with a real
// vocabulary, and 3-D expert tensors ffn_{gate,up,down}_exps as the converters write them
// (GGUF dims [n_embd, n_ff_exp, n_expert] and [n_ff_exp, n_embd, n_expert]):
// - moe-qwen3moe: 2 KV heads, 2 layers, 8 experts / 3 used (three slots summed), expert FFN 32, per-head q/k
//   norms, expert_used_count written as a per-layer array.
// - moe-qwen2moe: 2 KV heads, 2 layers, 6 experts / 2 used, q/k/v biases, a shared expert of width 48 scaled by
//   sigmoid(ffn_gate_inp_shexp · x), no expert_feed_forward_length key (width n_ff / n_used = 32).
// - moe-llama4: 4 layers, all with experts (interleave_moe_layer_step 1), 4 experts / 1 used (one
//   slot: llama.cpp's ggml_cont path), expert FFN 48, sigmoid gating into the expert input, a shared
//   expert, no rope_freqs; NoPE on layer 3. (With attention.sliding_window = 0, the unchunked
//   layout, this llama.cpp aborts: llm_graph_input_attn_temp asserts f_attn_temp_scale != 0.)
// - moe-olmoe: 2 layers, 8 experts / 2 used, 4 KV heads, q/k RMSNorm over the whole projection
//   (attn_q_norm [n_embd], weights around 1).
// Weights are wider than 1/sqrt(n_embd) (as make-rope-models.ts) and the router wider still, so
// that routing has clear winners. Everything is deterministic (bench/random-weights.ts):
// tests/model/moe.test.ts rebuilds each file and checks its sha256 against the golden llama.cpp ran.

import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GgmlType } from '../src/engine/gguf/ggml-types.js';
import { GgufType } from '../src/engine/gguf/types.js';
import { kv, writeGguf, type WriterKv, type WriterTensor } from '../src/engine/gguf/writer.js';
import { fillNormal, fnv1a, normalF16, tokenizerKvs, uniform, vocabSize, writeModelsWhenRun } from './random-weights.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const VOCABS = resolve(HERE, '..', '..', 'shared', 'models', 'llama.cpp-vocab');

const N_EMBD = 64;
const N_HEAD = 4;
const HEAD_DIM = N_EMBD / N_HEAD;
const STD_EMBD = 0.3;
const STD_MAT = 0.15;
const STD_ROUTER = 0.5;

export interface MoeModel {
  arch: 'qwen3moe' | 'qwen2moe' | 'olmoe' | 'llama4';
  vocab: string;
  nLayer: number;
  nExpert: number;
  nUsed: number;
  /** feed_forward_length. */
  nFf: number;
  /** expert_feed_forward_length (written when set) and the experts' width. */
  nFfExp: number;
  /** Shared expert width (qwen2moe), written as expert_shared_feed_forward_length. */
  nFfShexp?: number;
  ropeBase: number;
  /** KV heads (olmoe: as many as query heads, its k norm is n_embd long). */
  nHeadKv: number;
  qkvBias?: boolean;
  qkNorm: 'head' | 'full' | 'none';
  /** Extra keys (with the prefix). */
  keys?: (a: string) => WriterKv[];
  /** Write expert_used_count as a per-layer array. */
  usedArray?: boolean;
  /** llama4: interleave_moe_layer_step (dense FFNs of width nFf on the other layers), shared expert as wide as an expert. */
  interleave?: number;
}

export const MOE_MODELS: Readonly<Record<string, MoeModel>> = {
  'moe-qwen3moe': {
    arch: 'qwen3moe', vocab: 'ggml-vocab-deepseek-coder.gguf', nLayer: 2, nExpert: 8, nUsed: 3, nFf: 96, nFfExp: 32,
    ropeBase: 1e6, nHeadKv: 2, qkNorm: 'head', usedArray: true,
  },
  'moe-qwen2moe': {
    arch: 'qwen2moe', vocab: 'ggml-vocab-gpt-2.gguf', nLayer: 2, nExpert: 6, nUsed: 2, nFf: 64, nFfExp: 0, nFfShexp: 48,
    ropeBase: 1e6, nHeadKv: 2, qkvBias: true, qkNorm: 'none',
  },
  'moe-llama4': {
    arch: 'llama4', vocab: 'ggml-vocab-llama-spm.gguf', nLayer: 4, nExpert: 4, nUsed: 1, nFf: 96, nFfExp: 48,
    ropeBase: 500000, nHeadKv: 2, qkNorm: 'none', interleave: 1,
    keys: (a) => [kv.u32(`${a}.interleave_moe_layer_step`, 1), kv.u32(`${a}.rope.dimension_count`, HEAD_DIM)],
  },
  'moe-olmoe': {
    arch: 'olmoe', vocab: 'ggml-vocab-deepseek-coder.gguf', nLayer: 2, nExpert: 8, nUsed: 2, nFf: 32, nFfExp: 0,
    ropeBase: 10000, nHeadKv: 4, qkNorm: 'full',
  },
};

function metadata(name: string, m: MoeModel): WriterKv[] {
  const a = m.arch;
  const out: WriterKv[] = [
    kv.str('general.architecture', a),
    kv.str('general.name', `pantheon-${name}`),
    kv.u32('general.file_type', 1), // LLAMA_FTYPE_MOSTLY_F16
    kv.u32(`${a}.context_length`, 4096),
    kv.u32(`${a}.embedding_length`, N_EMBD),
    kv.u32(`${a}.block_count`, m.nLayer),
    kv.u32(`${a}.feed_forward_length`, m.nFf),
    kv.u32(`${a}.attention.head_count`, N_HEAD),
    kv.u32(`${a}.attention.head_count_kv`, m.nHeadKv),
    kv.f32(`${a}.attention.layer_norm_rms_epsilon`, 1e-6),
    kv.f32(`${a}.rope.freq_base`, m.ropeBase),
    kv.u32(`${a}.expert_count`, m.nExpert),
    m.usedArray ? kv.arr(`${a}.expert_used_count`, GgufType.INT32, new Array<number>(m.nLayer).fill(m.nUsed)) : kv.u32(`${a}.expert_used_count`, m.nUsed),
  ];
  if (m.nFfExp) out.push(kv.u32(`${a}.expert_feed_forward_length`, m.nFfExp));
  if (m.nFfShexp) out.push(kv.u32(`${a}.expert_shared_feed_forward_length`, m.nFfShexp));
  out.push(...(m.keys?.(a) ?? []), ...tokenizerKvs(join(VOCABS, m.vocab)));
  return out;
}

function tensors(name: string, m: MoeModel, nVocab: number): WriterTensor[] {
  const kvDim = m.nHeadKv * HEAD_DIM;
  // olmoe's experts are feed_forward_length wide; qwen2moe's default to n_ff / n_used
  const nFfExp = m.arch === 'olmoe' ? m.nFf : m.nFfExp || Math.floor(m.nFf / m.nUsed);
  const half = (t: string, dims: number[], std = STD_MAT): WriterTensor =>
    ({ name: t, dims, type: GgmlType.F16, data: normalF16(`${name}/${t}`, dims.reduce((x, y) => x * y, 1), std) });
  const f32 = (t: string, v: Float32Array, dims = [v.length]): WriterTensor => ({ name: t, dims, type: GgmlType.F32, data: new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength)) });
  const normal = (t: string, n: number, std: number) => fillNormal(new Float32Array(n), std, uniform(fnv1a(`${name}/${t}`)));
  const ones = (t: string, n = N_EMBD) => f32(t, new Float32Array(n).fill(1));
  const out: WriterTensor[] = [half('token_embd.weight', [N_EMBD, nVocab], STD_EMBD)];
  for (let i = 0; i < m.nLayer; i++) {
    const p = `blk.${i}.`;
    out.push(ones(`${p}attn_norm.weight`));
    out.push(half(`${p}attn_q.weight`, [N_EMBD, N_EMBD]), half(`${p}attn_k.weight`, [N_EMBD, kvDim]), half(`${p}attn_v.weight`, [N_EMBD, kvDim]));
    if (m.qkvBias) out.push(f32(`${p}attn_q.bias`, normal(`${p}attn_q.bias`, N_EMBD, 0.1)), f32(`${p}attn_k.bias`, normal(`${p}attn_k.bias`, kvDim, 0.1)), f32(`${p}attn_v.bias`, normal(`${p}attn_v.bias`, kvDim, 0.1)));
    if (m.qkNorm === 'head') out.push(ones(`${p}attn_q_norm.weight`, HEAD_DIM), ones(`${p}attn_k_norm.weight`, HEAD_DIM));
    if (m.qkNorm === 'full') out.push(f32(`${p}attn_q_norm.weight`, normal(`${p}attn_q_norm.weight`, N_EMBD, 0.2).map((x) => 1 + x)), f32(`${p}attn_k_norm.weight`, normal(`${p}attn_k_norm.weight`, kvDim, 0.2).map((x) => 1 + x)));
    out.push(half(`${p}attn_output.weight`, [N_EMBD, N_EMBD]), ones(`${p}ffn_norm.weight`));
    if (m.interleave && (i + 1) % m.interleave !== 0) {
      out.push(half(`${p}ffn_gate.weight`, [N_EMBD, m.nFf]), half(`${p}ffn_up.weight`, [N_EMBD, m.nFf]), half(`${p}ffn_down.weight`, [m.nFf, N_EMBD]));
      continue;
    }
    out.push(f32(`${p}ffn_gate_inp.weight`, normal(`${p}ffn_gate_inp.weight`, N_EMBD * m.nExpert, STD_ROUTER), [N_EMBD, m.nExpert]));
    out.push(
      half(`${p}ffn_gate_exps.weight`, [N_EMBD, nFfExp, m.nExpert]),
      half(`${p}ffn_up_exps.weight`, [N_EMBD, nFfExp, m.nExpert]),
      half(`${p}ffn_down_exps.weight`, [nFfExp, N_EMBD, m.nExpert]),
    );
    if (m.arch === 'llama4') {
      out.push(half(`${p}ffn_gate_shexp.weight`, [N_EMBD, nFfExp]), half(`${p}ffn_up_shexp.weight`, [N_EMBD, nFfExp]), half(`${p}ffn_down_shexp.weight`, [nFfExp, N_EMBD]));
    }
    if (m.nFfShexp) {
      out.push(
        f32(`${p}ffn_gate_inp_shexp.weight`, normal(`${p}ffn_gate_inp_shexp.weight`, N_EMBD, STD_ROUTER)),
        half(`${p}ffn_gate_shexp.weight`, [N_EMBD, m.nFfShexp]),
        half(`${p}ffn_up_shexp.weight`, [N_EMBD, m.nFfShexp]),
        half(`${p}ffn_down_shexp.weight`, [m.nFfShexp, N_EMBD]),
      );
    }
  }
  out.push(ones('output_norm.weight'), half('output.weight', [N_EMBD, nVocab]));
  return out;
}

/** The model `name` (a key of MOE_MODELS, or given as `m`) as GGUF bytes. */
export function moeModelBytes(name: string, m: MoeModel | undefined = MOE_MODELS[name]): Uint8Array {
  if (!m) throw new Error(`unknown MoE model ${name}`);
  const kvs = metadata(name, m);
  const nVocab = vocabSize(kvs);
  return writeGguf(kvs, tensors(name, m, nVocab));
}

/** Write the model `name` (or `m` under that name) to `path`. */
export function writeMoeModel(name: string, path: string, m?: MoeModel): void {
  writeFileSync(path, moeModelBytes(name, m ?? MOE_MODELS[name]));
}

writeModelsWhenRun(import.meta.url, 'moe', Object.keys(MOE_MODELS), (name, path) => writeMoeModel(name, path));
