// Small random-weight gpt-oss models of Pantheon's own, beside ../shared's tiny-gpt-oss-*-s1 files,
// with other sizes and another sliding-window pattern:
//
//   node bin/run-ts.mjs bench/make-gpt-oss-models.ts [outDir]   # default outDir bench/models/gpt-oss
//   node bench/record-goldens.mjs bench/models/gpt-oss/*.gguf    # llama.cpp's goldens
//
// gpt-oss-v2: 64 wide, 3 layers, 8 query heads of 16 over 2 KV heads (q 128 wide, not n_embd),
// attention sinks and q/k/v/o biases, sliding window 4 on layers 0 and 1 of every 3
// (attention.sliding_window_pattern = 3: layer l windowed when l % 3 < 2), YaRN × 8 over an
// original context of 64 (rope base 10000), 6 experts / 3 used, expert FFN 96 in MXFP4 (ggml's
// reference quantiser, Pantheon's copy), router and expert biases; the 512-token vocabulary of
// stories260K (llama SPM), so the file is 0.4 MB. Deterministic (bench/random-weights.ts):
// tests/model/gpt-oss.test.ts rebuilds it and checks its sha256 against the golden llama.cpp ran.

import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GgmlType } from '../src/engine/gguf/ggml-types.js';
import { kv, writeGguf, type WriterKv, type WriterTensor } from '../src/engine/gguf/writer.js';
import { quantizeRows } from '../src/engine/quant/index.js';
import { f16Bytes, fillNormal, fnv1a, tokenizerKvs, uniform, vocabSize, writeModelsWhenRun } from './random-weights.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const VOCAB = resolve(HERE, '..', '..', 'shared', 'models', 'stories260K.gguf');

interface GptOssModel {
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  headDim: number;
  nExpert: number;
  nUsed: number;
  nFfExp: number;
  window: number;
  /** attention.sliding_window_pattern (absent: llama.cpp's default 2). */
  swaPattern: number;
  yarnFactor: number;
  origContext: number;
  ropeBase: number;
}

export const GPT_OSS_MODELS: Readonly<Record<string, GptOssModel>> = {
  'gpt-oss-v2': { nEmbd: 64, nLayer: 3, nHead: 8, nHeadKv: 2, headDim: 16, nExpert: 6, nUsed: 3, nFfExp: 96, window: 4, swaPattern: 3, yarnFactor: 8, origContext: 64, ropeBase: 10000 },
};

// Widths chosen as in make-rope-models.ts: peaked attention, clear greedy winners.
const STD_EMBD = 0.3;
const STD_MAT = 0.15;
const STD_BIAS = 0.05;

function normal(name: string, n: number, std: number): Float32Array {
  return fillNormal(new Float32Array(n), std, uniform(fnv1a(name)));
}

function metadata(name: string, m: GptOssModel): WriterKv[] {
  const a = 'gpt-oss';
  return [
    kv.str('general.architecture', a),
    kv.str('general.name', `pantheon-${name}`),
    kv.u32('general.file_type', 38), // LLAMA_FTYPE_MOSTLY_MXFP4_MOE
    kv.u32(`${a}.context_length`, 4096),
    kv.u32(`${a}.embedding_length`, m.nEmbd),
    kv.u32(`${a}.block_count`, m.nLayer),
    kv.u32(`${a}.feed_forward_length`, m.nFfExp),
    kv.u32(`${a}.attention.head_count`, m.nHead),
    kv.u32(`${a}.attention.head_count_kv`, m.nHeadKv),
    kv.u32(`${a}.attention.key_length`, m.headDim),
    kv.u32(`${a}.attention.value_length`, m.headDim),
    kv.f32(`${a}.attention.layer_norm_rms_epsilon`, 1e-5),
    kv.u32(`${a}.attention.sliding_window`, m.window),
    kv.u32(`${a}.attention.sliding_window_pattern`, m.swaPattern),
    kv.f32(`${a}.rope.freq_base`, m.ropeBase),
    kv.str(`${a}.rope.scaling.type`, 'yarn'),
    kv.f32(`${a}.rope.scaling.factor`, m.yarnFactor),
    kv.u32(`${a}.rope.scaling.original_context_length`, m.origContext),
    kv.u32(`${a}.expert_count`, m.nExpert),
    kv.u32(`${a}.expert_used_count`, m.nUsed),
    kv.u32(`${a}.expert_feed_forward_length`, m.nFfExp),
    ...tokenizerKvs(VOCAB),
  ];
}

function tensors(name: string, m: GptOssModel, nVocab: number): WriterTensor[] {
  const E = m.nEmbd;
  const qDim = m.nHead * m.headDim;
  const kvDim = m.nHeadKv * m.headDim;
  const f16 = (t: string, cols: number, rows: number, std = STD_MAT): WriterTensor =>
    ({ name: t, dims: [cols, rows], type: GgmlType.F16, data: f16Bytes(normal(`${name}/${t}`, cols * rows, std)) });
  const f32 = (t: string, dims: number[], v: Float32Array): WriterTensor => ({ name: t, dims, type: GgmlType.F32, data: new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength)) });
  const randF32 = (t: string, dims: number[], std: number, mean = 0) => f32(t, dims, normal(`${name}/${t}`, dims.reduce((x, y) => x * y, 1), std).map((x) => x + mean));
  // [cols, rows, nExpert] experts, quantised to MXFP4 row by row
  const experts = (t: string, cols: number, rows: number): WriterTensor =>
    ({ name: t, dims: [cols, rows, m.nExpert], type: GgmlType.MXFP4, data: quantizeRows(GgmlType.MXFP4, normal(`${name}/${t}`, cols * rows * m.nExpert, STD_MAT), rows * m.nExpert, cols) });
  const out: WriterTensor[] = [f16('token_embd.weight', E, nVocab, STD_EMBD)];
  for (let i = 0; i < m.nLayer; i++) {
    const p = `blk.${i}.`;
    out.push(
      randF32(`${p}attn_norm.weight`, [E], 0.1, 1),
      f16(`${p}attn_q.weight`, E, qDim), f16(`${p}attn_k.weight`, E, kvDim), f16(`${p}attn_v.weight`, E, kvDim),
      randF32(`${p}attn_q.bias`, [qDim], STD_BIAS), randF32(`${p}attn_k.bias`, [kvDim], STD_BIAS), randF32(`${p}attn_v.bias`, [kvDim], STD_BIAS),
      f16(`${p}attn_output.weight`, qDim, E), randF32(`${p}attn_output.bias`, [E], STD_BIAS),
      randF32(`${p}attn_sinks.weight`, [m.nHead], 1),
      randF32(`${p}post_attention_norm.weight`, [E], 0.1, 1),
      randF32(`${p}ffn_gate_inp.weight`, [E, m.nExpert], 0.3), randF32(`${p}ffn_gate_inp.bias`, [m.nExpert], 0.3),
      experts(`${p}ffn_gate_exps.weight`, E, m.nFfExp), experts(`${p}ffn_up_exps.weight`, E, m.nFfExp), experts(`${p}ffn_down_exps.weight`, m.nFfExp, E),
      randF32(`${p}ffn_gate_exps.bias`, [m.nFfExp, m.nExpert], STD_BIAS), randF32(`${p}ffn_up_exps.bias`, [m.nFfExp, m.nExpert], STD_BIAS),
      randF32(`${p}ffn_down_exps.bias`, [E, m.nExpert], STD_BIAS),
    );
  }
  out.push(randF32('output_norm.weight', [E], 0.1, 1), f16('output.weight', E, nVocab));
  return out;
}

/** Write the model `name` (a key of GPT_OSS_MODELS) to `path`. */
export function writeGptOssModel(name: string, path: string): void {
  const m = GPT_OSS_MODELS[name];
  if (!m) throw new Error(`unknown gpt-oss model ${name}`);
  const kvs = metadata(name, m);
  const nVocab = vocabSize(kvs);
  writeFileSync(path, writeGguf(kvs, tensors(name, m, nVocab)));
}

writeModelsWhenRun(import.meta.url, 'gpt-oss', Object.keys(GPT_OSS_MODELS), (name, path) => writeGptOssModel(name, path));
