// Small random-weight models with RoPE scaling, to check Pantheon's RoPE against llama.cpp's:
//
//   node bin/run-ts.mjs bench/make-rope-models.ts [outDir]      # default outDir bench/models/rope
//   node bench/record-goldens.mjs bench/models/rope/*.gguf       # llama.cpp's goldens (rope-* cases)
//
// Each file is 64 wide, 2 layers, 4 heads of 16 (2 KV heads), F16 matrices, with a real vocabulary,
// and one RoPE feature as real converters write it (llama.cpp conversion/*.py):
// - rope-llama3: Llama 3.1's rope_freqs.weight (conversion/llama.py generate_extra_tensors with
//   factor 8, low/high freq factors 1/4, original context 64), and head_count, head_count_kv,
//   feed_forward_length written as per-layer arrays (llama_model_loader::get_key_or_arr).
// - rope-linear: rope.scaling.type linear, factor 4.
// - rope-yarn-qwen2: rope.scaling.type yarn, factor 4, original context 256 (NEOX rope), plus
//   yarn_beta_fast / yarn_log_multiplier keys that llama.cpp does not read for qwen2.
// - rope-longrope-phi3 / rope-longrope-phi3-short: Phi-3's rope_factors_long/short and
//   rope.scaling.attn_factor (conversion/phi.py), original context 32 (a 512 context takes the long
//   factors) or 512 (it takes the short ones).
// - ffn-per-layer: feed_forward_length = [128, 96], a per-layer array whose values differ, which
//   Pantheon runs layer by layer; llama.cpp sizes every layer by layer 0 and refuses the file.
//   ffn-per-layer-padded is the same model with layer 1's FFN zero-padded to 128 (gate/up rows and
//   down columns of zeros add exactly nothing), which llama.cpp runs: its golden is the truth for both.
// Everything is deterministic (bench/random-weights.ts): tests/model/rope-scaling.test.ts rebuilds
// each file and checks its sha256 against the golden llama.cpp ran.

import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GgmlType } from '../src/engine/gguf/ggml-types.js';
import { GgufType } from '../src/engine/gguf/types.js';
import { kv, writeGguf, type WriterKv, type WriterTensor } from '../src/engine/gguf/writer.js';
import { normalF16, tokenizerKvs, vocabSize, writeModelsWhenRun } from './random-weights.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const VOCABS = resolve(HERE, '..', '..', 'shared', 'models', 'llama.cpp-vocab');

const N_EMBD = 64;
const N_LAYER = 2;
const N_HEAD = 4;
const N_HEAD_KV = 2;
const HEAD_DIM = N_EMBD / N_HEAD;
const N_FF = 128;
// Matrices a little wider than 1/sqrt(n_embd) so that attention is peaked and depends on positions;
// embeddings wide enough for clear greedy winners (as in make-tiny256.ts).
const STD_EMBD = 0.3;
const STD_MAT = 0.15;

interface RopeModel {
  arch: 'llama' | 'qwen2' | 'phi3';
  vocab: string;
  ropeBase: number;
  contextLength: number;
  /** Extra {arch}.* keys (without the prefix). */
  keys: (a: string) => WriterKv[];
  /** Per-layer arrays for head_count, head_count_kv, feed_forward_length. */
  arrays?: boolean;
  /** FFN width per layer (feed_forward_length written as this array), and the width its tensors are zero-padded to. */
  ffn?: { widths: number[]; padTo?: number };
  /** Extra F32 tensors [HEAD_DIM/2] (rope factors). */
  factors?: Record<string, Float32Array>;
}

/** conversion/llama.py: Llama 3.1's per-frequency divisors. */
export function llama3RopeFreqs(base: number, dim: number, factor: number, lowFreqFactor: number, highFreqFactor: number, oldContext: number): Float32Array {
  const out = new Float32Array(dim / 2);
  const lowWavelen = oldContext / lowFreqFactor;
  const highWavelen = oldContext / highFreqFactor;
  for (let i = 0; i < dim / 2; i++) {
    const freq = 1 / Math.pow(base, (2 * i) / dim);
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < highWavelen) out[i] = 1;
    else if (wavelen > lowWavelen) out[i] = factor;
    else {
      const smooth = (oldContext / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
      out[i] = 1 / ((1 - smooth) / factor + smooth);
    }
  }
  return out;
}

/** conversion/phi.py: attn_factor = sqrt(1 + ln(scale) / ln(original context)) for longrope. */
function phi3AttnFactor(maxPos: number, origPos: number): number {
  const scale = maxPos / origPos;
  return scale > 1 ? Math.sqrt(1 + Math.log(scale) / Math.log(origPos)) : 1;
}

// Long factors grow towards the low frequencies as Phi-3's do (1 … ~20); short ones stay near 1.
const PHI3_LONG = Float32Array.from({ length: HEAD_DIM / 2 }, (_, i) => 1 + 0.3 * i * i);
const PHI3_SHORT = Float32Array.from({ length: HEAD_DIM / 2 }, (_, i) => 1 + 0.05 * i);

const phi3 = (orig: number): RopeModel => ({
  arch: 'phi3', vocab: 'ggml-vocab-phi-3.gguf', ropeBase: 10000, contextLength: 4 * orig,
  keys: (a) => [kv.u32(`${a}.rope.scaling.original_context_length`, orig), kv.f32(`${a}.rope.scaling.attn_factor`, phi3AttnFactor(4 * orig, orig))],
  factors: { 'rope_factors_long.weight': PHI3_LONG, 'rope_factors_short.weight': PHI3_SHORT },
});

export const ROPE_MODELS: Readonly<Record<string, RopeModel>> = {
  'rope-llama3': {
    arch: 'llama', vocab: 'ggml-vocab-llama-spm.gguf', ropeBase: 500000, contextLength: 512, arrays: true,
    keys: () => [],
    factors: { 'rope_freqs.weight': llama3RopeFreqs(500000, HEAD_DIM, 8, 1, 4, 64) },
  },
  'rope-linear': {
    arch: 'llama', vocab: 'ggml-vocab-llama-spm.gguf', ropeBase: 10000, contextLength: 512,
    keys: (a) => [kv.str(`${a}.rope.scaling.type`, 'linear'), kv.f32(`${a}.rope.scaling.factor`, 4)],
  },
  'rope-yarn-qwen2': {
    arch: 'qwen2', vocab: 'ggml-vocab-gpt-2.gguf', ropeBase: 10000, contextLength: 1024,
    keys: (a) => [
      kv.str(`${a}.rope.scaling.type`, 'yarn'),
      kv.f32(`${a}.rope.scaling.factor`, 4),
      kv.u32(`${a}.rope.scaling.original_context_length`, 256),
      kv.f32(`${a}.rope.scaling.yarn_beta_fast`, 8),
      kv.f32(`${a}.rope.scaling.yarn_log_multiplier`, 0.1),
    ],
  },
  'ffn-per-layer': {
    arch: 'llama', vocab: 'ggml-vocab-llama-spm.gguf', ropeBase: 10000, contextLength: 512, keys: () => [],
    ffn: { widths: [N_FF, 96] },
  },
  'ffn-per-layer-padded': {
    arch: 'llama', vocab: 'ggml-vocab-llama-spm.gguf', ropeBase: 10000, contextLength: 512, keys: () => [],
    ffn: { widths: [N_FF, 96], padTo: N_FF },
  },
  'rope-longrope-phi3': phi3(32),
  'rope-longrope-phi3-short': phi3(512),
};

function metadata(name: string, m: RopeModel): WriterKv[] {
  const a = m.arch;
  const perLayer = (key: string, v: number) => (m.arrays ? kv.arr(key, GgufType.INT32, new Array<number>(N_LAYER).fill(v)) : kv.u32(key, v));
  return [
    kv.str('general.architecture', a),
    kv.str('general.name', `pantheon-${name}`),
    kv.u32('general.file_type', 1), // LLAMA_FTYPE_MOSTLY_F16
    kv.u32(`${a}.context_length`, m.contextLength),
    kv.u32(`${a}.embedding_length`, N_EMBD),
    kv.u32(`${a}.block_count`, N_LAYER),
    m.ffn && !m.ffn.padTo ? kv.arr(`${a}.feed_forward_length`, GgufType.INT32, m.ffn.widths) : perLayer(`${a}.feed_forward_length`, m.ffn?.padTo ?? N_FF),
    perLayer(`${a}.attention.head_count`, N_HEAD),
    perLayer(`${a}.attention.head_count_kv`, N_HEAD_KV),
    kv.f32(`${a}.attention.layer_norm_rms_epsilon`, 1e-5),
    kv.f32(`${a}.rope.freq_base`, m.ropeBase),
    kv.u32(`${a}.rope.dimension_count`, HEAD_DIM),
    ...m.keys(a),
    ...tokenizerKvs(join(VOCABS, m.vocab)),
  ];
}

function tensors(name: string, m: RopeModel, nVocab: number): WriterTensor[] {
  const kvDim = N_HEAD_KV * HEAD_DIM;
  // seeded by the tensor name under the model's seed name (the padded FFN model shares its weights)
  const seed = name.replace(/-padded$/, '');
  const mat = (t: string, cols: number, rows: number, std = STD_MAT): WriterTensor =>
    ({ name: t, dims: [cols, rows], type: GgmlType.F16, data: normalF16(`${seed}/${t}`, cols * rows, std) });
  /** A [rows, cols] F16 matrix zero-padded to [padRows, padCols] (F16 zero is 0x0000). */
  const padded = (t: string, cols: number, rows: number, padCols: number, padRows: number): WriterTensor => {
    const src = new Uint16Array(mat(t, cols, rows).data.slice().buffer);
    const dst = new Uint16Array(padCols * padRows);
    for (let r = 0; r < rows; r++) dst.set(src.subarray(r * cols, (r + 1) * cols), r * padCols);
    return { name: t, dims: [padCols, padRows], type: GgmlType.F16, data: new Uint8Array(dst.buffer) };
  };
  const f32 = (t: string, v: Float32Array): WriterTensor => ({ name: t, dims: [v.length], type: GgmlType.F32, data: new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength)) });
  const ones = (t: string) => f32(t, new Float32Array(N_EMBD).fill(1));
  const out: WriterTensor[] = [mat('token_embd.weight', N_EMBD, nVocab, STD_EMBD)];
  for (const [t, v] of Object.entries(m.factors ?? {})) out.push(f32(t, v));
  for (let i = 0; i < N_LAYER; i++) {
    const p = `blk.${i}.`;
    out.push(ones(`${p}attn_norm.weight`));
    if (m.arch === 'phi3') {
      out.push(mat(`${p}attn_qkv.weight`, N_EMBD, N_EMBD + 2 * kvDim));
    } else {
      out.push(mat(`${p}attn_q.weight`, N_EMBD, N_EMBD), mat(`${p}attn_k.weight`, N_EMBD, kvDim), mat(`${p}attn_v.weight`, N_EMBD, kvDim));
    }
    out.push(mat(`${p}attn_output.weight`, N_EMBD, N_EMBD), ones(`${p}ffn_norm.weight`));
    const nFf = m.ffn?.widths[i] ?? N_FF;
    const pad = m.ffn?.padTo ?? nFf;
    if (m.arch === 'phi3') out.push(mat(`${p}ffn_up.weight`, N_EMBD, 2 * nFf));
    else out.push(padded(`${p}ffn_gate.weight`, N_EMBD, nFf, N_EMBD, pad), padded(`${p}ffn_up.weight`, N_EMBD, nFf, N_EMBD, pad));
    out.push(padded(`${p}ffn_down.weight`, nFf, N_EMBD, pad, N_EMBD));
  }
  out.push(ones('output_norm.weight'), mat('output.weight', N_EMBD, nVocab));
  return out;
}

/** Write the model `name` (a key of ROPE_MODELS) to `path`. */
export function writeRopeModel(name: string, path: string): void {
  const m = ROPE_MODELS[name];
  if (!m) throw new Error(`unknown rope model ${name}`);
  const kvs = metadata(name, m);
  const nVocab = vocabSize(kvs);
  writeFileSync(path, writeGguf(kvs, tensors(name, m, nVocab)));
}

writeModelsWhenRun(import.meta.url, 'rope', Object.keys(ROPE_MODELS), (name, path) => writeRopeModel(name, path));
