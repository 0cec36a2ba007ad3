// Random-weight variants of the 2026 dense architectures, made with Pantheon's own GGUF writer, so
// that the tests check more than the one shared tiny file per architecture (other sizes, layer
// counts, window patterns, GQA ratios, tied or untied output, other multipliers):
//
//   node bin/run-ts.mjs bench/make-arch-models.ts [outDir]     # default outDir bench/models/arch
//   node bench/record-goldens.mjs bench/models/arch/*.gguf      # llama.cpp's goldens (3 prompts × 32)
//
// Every file is deterministic (bench/random-weights.ts): tests/model/arch-variants.test.ts rebuilds
// each one and checks its sha256 against the golden llama.cpp ran.

import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GgmlType } from '../src/engine/gguf/ggml-types.js';
import { kv, writeGguf, type WriterKv, type WriterTensor } from '../src/engine/gguf/writer.js';
import { fillNormal, fnv1a, normalF16, tokenizerKvs, uniform, vocabSize, writeModelsWhenRun } from './random-weights.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const VOCABS = resolve(HERE, '..', '..', 'shared', 'models', 'llama.cpp-vocab');

const N_EMBD = 64;
const HEAD_DIM = 16;
const STD_EMBD = 0.3;
const STD_MAT = 0.15;

interface ArchModel {
  arch: string;
  vocab: string;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  nFf: number;
  ropeBase: number;
  /** Write output.weight (else the output is tied to token_embd). */
  untied: boolean;
  /** attn_norm / ffn_norm before the blocks (olmo2 has none). */
  preNorms: boolean;
  /** post_attention_norm / post_ffw_norm after them (gemma2, gemma3, olmo2). */
  postNorms: boolean;
  /** attn_q_norm / attn_k_norm: per head, over all heads (olmo2), or none. */
  qkNorm: 'head' | 'full' | 'none';
  /** Extra {arch}.* keys (without the prefix). */
  keys: (a: string) => WriterKv[];
  /** Token embedding spread (default STD_EMBD; gemma's × sqrt(n_embd) and tied output repeat one token at 0.3). */
  stdEmbd?: number;
  /** Width and head size (default N_EMBD, HEAD_DIM); 256-wide models hold K-quant blocks (Q4_K_M variants). */
  nEmbd?: number;
  headDim?: number;
}

export const ARCH_MODELS: Readonly<Record<string, ArchModel>> = {
  // 5 layers, window 5 on layers 0, 2, 4, softcaps 8 / 40, GQA 4:1
  'arch-gemma2-v': {
    arch: 'gemma2', vocab: 'ggml-vocab-gpt-2.gguf', nLayer: 5, nHead: 4, nHeadKv: 1, nFf: 96, ropeBase: 10000,
    untied: false, preNorms: true, postNorms: true, qkNorm: 'none', stdEmbd: 0.05,
    keys: (a) => [kv.u32(`${a}.attention.sliding_window`, 5), kv.f32(`${a}.attn_logit_softcapping`, 8), kv.f32(`${a}.final_logit_softcapping`, 40)],
  },
  // 7 layers: 0-4 and 6 local (window 6, base 10000 by default), 5 global (base 1e6); final softcap 12; untied
  'arch-gemma3-v': {
    arch: 'gemma3', vocab: 'ggml-vocab-llama-spm.gguf', nLayer: 7, nHead: 4, nHeadKv: 2, nFf: 96, ropeBase: 1e6,
    untied: true, preNorms: true, postNorms: true, qkNorm: 'head',
    keys: (a) => [kv.u32(`${a}.attention.sliding_window`, 6), kv.f32(`${a}.final_logit_softcapping`, 12)],
  },
  // OLMo 3 style: window 6 on layers 0-2 and 4 (period 4), GQA 2:1 (k norm over the KV heads)
  'arch-olmo2-v': {
    arch: 'olmo2', vocab: 'ggml-vocab-deepseek-coder.gguf', nLayer: 5, nHead: 4, nHeadKv: 2, nFf: 128, ropeBase: 500000,
    untied: true, preNorms: false, postNorms: true, qkNorm: 'full',
    keys: (a) => [kv.u32(`${a}.attention.sliding_window`, 6)],
  },
  // 8 layers: NoPE on layers 3 and 7
  'arch-smollm3-v': {
    arch: 'smollm3', vocab: 'ggml-vocab-gpt-2.gguf', nLayer: 8, nHead: 4, nHeadKv: 2, nFf: 96, ropeBase: 2e6,
    untied: true, preNorms: true, postNorms: false, qkNorm: 'none', keys: () => [],
  },
  // other multipliers, MHA, untied
  'arch-granite-v': {
    arch: 'granite', vocab: 'ggml-vocab-starcoder.gguf', nLayer: 3, nHead: 4, nHeadKv: 4, nFf: 128, ropeBase: 10000,
    untied: true, preNorms: true, postNorms: false, qkNorm: 'none',
    keys: (a) => [kv.f32(`${a}.embedding_scale`, 6), kv.f32(`${a}.residual_scale`, 0.5), kv.f32(`${a}.attention.scale`, 0.1), kv.f32(`${a}.logit_scale`, 4)],
  },
  // 256 wide with heads of 64 and the 512-token stories260K vocabulary, so that Q4_K_M holds real
  // Q4_K / Q6_K blocks (tests/model/arch-variants.test.ts quantises them); 2 local : 1 global layers
  'arch-gemma3-k': {
    arch: 'gemma3', vocab: '../stories260K.gguf', nLayer: 3, nHead: 4, nHeadKv: 2, nFf: 512, ropeBase: 1e6, nEmbd: 256, headDim: 64,
    untied: true, preNorms: true, postNorms: true, qkNorm: 'head', stdEmbd: 0.05,
    keys: (a) => [kv.u32(`${a}.attention.sliding_window`, 6), kv.u32(`${a}.attention.sliding_window_pattern`, 3)],
  },
  // the same for smollm3: 4 layers, NoPE on the last, GQA 4:1
  'arch-smollm3-k': {
    arch: 'smollm3', vocab: '../stories260K.gguf', nLayer: 4, nHead: 4, nHeadKv: 1, nFf: 512, ropeBase: 2e6, nEmbd: 256, headDim: 64,
    untied: true, preNorms: true, postNorms: false, qkNorm: 'none', keys: () => [],
  },
  // attention temperature over an original context of 8 (no YaRN), tied
  'arch-mistral3-v': {
    arch: 'mistral3', vocab: 'ggml-vocab-llama-spm.gguf', nLayer: 3, nHead: 4, nHeadKv: 2, nFf: 96, ropeBase: 1e6,
    untied: false, preNorms: true, postNorms: false, qkNorm: 'none',
    keys: (a) => [kv.u32(`${a}.rope.scaling.original_context_length`, 8), kv.f32(`${a}.attention.temperature_scale`, 0.3)],
  },
};

function metadata(name: string, m: ArchModel): WriterKv[] {
  const a = m.arch;
  const nEmbd = m.nEmbd ?? N_EMBD;
  const headDim = m.headDim ?? HEAD_DIM;
  return [
    kv.str('general.architecture', a),
    kv.str('general.name', `pantheon-${name}`),
    kv.u32('general.file_type', 1), // LLAMA_FTYPE_MOSTLY_F16
    kv.u32(`${a}.context_length`, 4096),
    kv.u32(`${a}.embedding_length`, nEmbd),
    kv.u32(`${a}.block_count`, m.nLayer),
    kv.u32(`${a}.feed_forward_length`, m.nFf),
    kv.u32(`${a}.attention.head_count`, m.nHead),
    kv.u32(`${a}.attention.head_count_kv`, m.nHeadKv),
    kv.u32(`${a}.attention.key_length`, headDim),
    kv.u32(`${a}.attention.value_length`, headDim),
    kv.f32(`${a}.attention.layer_norm_rms_epsilon`, 1e-6),
    kv.f32(`${a}.rope.freq_base`, m.ropeBase),
    kv.u32(`${a}.rope.dimension_count`, headDim),
    ...m.keys(a),
    ...tokenizerKvs(join(VOCABS, m.vocab)),
  ];
}

function tensors(name: string, m: ArchModel, nVocab: number): WriterTensor[] {
  const nEmbd = m.nEmbd ?? N_EMBD;
  const headDim = m.headDim ?? HEAD_DIM;
  const qDim = m.nHead * headDim;
  const kvDim = m.nHeadKv * headDim;
  const mat = (t: string, cols: number, rows: number, std = STD_MAT): WriterTensor =>
    ({ name: t, dims: [cols, rows], type: GgmlType.F16, data: normalF16(`${name}/${t}`, cols * rows, std) });
  // norm weights near 1 (F32), seeded by name like the matrices
  const norm = (t: string, n: number): WriterTensor => {
    const v = fillNormal(new Float32Array(n), 0.1, uniform(fnv1a(`${name}/${t}`))).map((x) => 1 + x);
    return { name: t, dims: [n], type: GgmlType.F32, data: new Uint8Array(v.buffer) };
  };
  const out: WriterTensor[] = [mat('token_embd.weight', nEmbd, nVocab, m.stdEmbd ?? STD_EMBD)];
  for (let i = 0; i < m.nLayer; i++) {
    const p = `blk.${i}.`;
    if (m.preNorms) out.push(norm(`${p}attn_norm.weight`, nEmbd));
    out.push(mat(`${p}attn_q.weight`, nEmbd, qDim), mat(`${p}attn_k.weight`, nEmbd, kvDim), mat(`${p}attn_v.weight`, nEmbd, kvDim));
    if (m.qkNorm !== 'none') out.push(norm(`${p}attn_q_norm.weight`, m.qkNorm === 'full' ? qDim : headDim), norm(`${p}attn_k_norm.weight`, m.qkNorm === 'full' ? kvDim : headDim));
    out.push(mat(`${p}attn_output.weight`, qDim, nEmbd));
    if (m.postNorms) out.push(norm(`${p}post_attention_norm.weight`, nEmbd));
    if (m.preNorms) out.push(norm(`${p}ffn_norm.weight`, nEmbd));
    out.push(mat(`${p}ffn_gate.weight`, nEmbd, m.nFf), mat(`${p}ffn_up.weight`, nEmbd, m.nFf), mat(`${p}ffn_down.weight`, m.nFf, nEmbd));
    if (m.postNorms) out.push(norm(`${p}post_ffw_norm.weight`, nEmbd));
  }
  out.push(norm('output_norm.weight', nEmbd));
  if (m.untied) out.push(mat('output.weight', nEmbd, nVocab));
  return out;
}

/** Write the model `name` (a key of ARCH_MODELS) to `path`. */
export function writeArchModel(name: string, path: string): void {
  const m = ARCH_MODELS[name];
  if (!m) throw new Error(`unknown architecture variant ${name}`);
  const kvs = metadata(name, m);
  const nVocab = vocabSize(kvs);
  writeFileSync(path, writeGguf(kvs, tensors(name, m, nVocab)));
}

writeModelsWhenRun(import.meta.url, 'arch', Object.keys(ARCH_MODELS), (name, path) => writeArchModel(name, path));
