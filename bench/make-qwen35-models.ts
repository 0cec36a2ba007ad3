// Small random-weight Qwen3.5 hybrids (gated DeltaNet + gated full attention), to check Pantheon's
// linear-attention layers against llama.cpp beyond the shared tiny-qwen35-s1.gguf:
//
//   node bin/run-ts.mjs bench/make-qwen35-models.ts [outDir]     # default outDir bench/models/qwen35
//   node bench/record-goldens.mjs bench/models/qwen35/*.gguf      # llama.cpp's goldens
//
// - qwen35-alt: 64 wide, 4 layers alternating linear / full attention (full_attention_interval 2),
//   one key head shared by 4 value heads (ssm.group_count 1, time_step_rank 4) of 16, a 3-tap
//   convolution, 4 attention heads of 16 with 1 KV head, 8 of 16 dims rotated, and M-RoPE sections
//   [1, 1, 0, 1] so that one rotated pair takes the fourth (text: zero) position component.
// - qwen35-lin: 3 layers, the first two linear, written with attention.recurrent_layers instead of
//   the interval, 2 key heads for 4 value heads of 8 (head mapping h mod nKHead), conv kernel 4.
// - qwen35-mtp: 2 trunk layers (linear, full) and one multi-token-prediction block after them
//   (nextn_predict_layers 1, as Qwen3.5 converters write it) that neither engine's main pass runs.
// - qwen35moe-alt: qwen35moe, 3 layers (full_attention_interval 3), experts in every layer: 6 experts
//   of width 32, 2 used, a shared expert of width 48 scaled by sigmoid(ffn_gate_inp_shexp · x).
// Everything is deterministic (bench/random-weights.ts): tests/model/qwen35.test.ts rebuilds each file
// and checks its sha256 against the golden llama.cpp ran.

import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GgmlType } from '../src/engine/gguf/ggml-types.js';
import { GgufType } from '../src/engine/gguf/types.js';
import { kv, writeGguf, type WriterKv, type WriterTensor } from '../src/engine/gguf/writer.js';
import { fillNormal, fnv1a, normalF16, tokenizerKvs, uniform, vocabSize, writeModelsWhenRun } from './random-weights.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const VOCAB = resolve(HERE, '..', '..', 'shared', 'models', 'llama.cpp-vocab', 'ggml-vocab-gpt-2.gguf');

interface Qwen35Model {
  arch?: 'qwen35moe';
  /** Multi-token-prediction blocks after the trunk (nextn_predict_layers; nLayer counts them). */
  mtp?: number;
  /** Experts in every layer (qwen35moe): count, used, width, shared expert's width. */
  moe?: { nExpert: number; nUsed: number; nFfExp: number; nFfShexp: number };
  nEmbd: number;
  nLayer: number;
  nFf: number;
  nHead: number;
  nHeadKv: number;
  headDim: number;
  nRot: number;
  sections: number[];
  dConv: number;
  dState: number;
  nKHead: number;
  nVHead: number;
  /** Which layers are linear attention: by interval (full_attention_interval) or written as an array. */
  recurrent: { interval: number } | { layers: boolean[] };
}

export const QWEN35_MODELS: Readonly<Record<string, Qwen35Model>> = {
  'qwen35-alt': { nEmbd: 64, nLayer: 4, nFf: 128, nHead: 4, nHeadKv: 1, headDim: 16, nRot: 8, sections: [1, 1, 0, 1], dConv: 3, dState: 16, nKHead: 1, nVHead: 4, recurrent: { interval: 2 } },
  'qwen35moe-alt': {
    arch: 'qwen35moe', moe: { nExpert: 6, nUsed: 2, nFfExp: 32, nFfShexp: 48 },
    nEmbd: 64, nLayer: 3, nFf: 128, nHead: 4, nHeadKv: 2, headDim: 16, nRot: 8, sections: [2, 1, 1, 0], dConv: 4, dState: 16, nKHead: 2, nVHead: 4, recurrent: { interval: 3 },
  },
  'qwen35-mtp': { mtp: 1, nEmbd: 64, nLayer: 3, nFf: 128, nHead: 4, nHeadKv: 2, headDim: 16, nRot: 8, sections: [2, 1, 1, 0], dConv: 4, dState: 16, nKHead: 2, nVHead: 4, recurrent: { interval: 2 } },
  'qwen35-lin': { nEmbd: 64, nLayer: 3, nFf: 96, nHead: 2, nHeadKv: 2, headDim: 32, nRot: 16, sections: [3, 3, 2, 0], dConv: 4, dState: 8, nKHead: 2, nVHead: 4, recurrent: { layers: [true, true, false] } },
};

const STD_EMBD = 0.3;
const STD_MAT = 0.15;

function isRecurrent(m: Qwen35Model, l: number): boolean {
  if (l >= m.nLayer - (m.mtp ?? 0)) return false; // an MTP block is attention-only
  return 'interval' in m.recurrent ? (l + 1) % m.recurrent.interval !== 0 : m.recurrent.layers[l];
}

function metadata(name: string, m: Qwen35Model): WriterKv[] {
  const a = m.arch ?? 'qwen35';
  return [
    kv.str('general.architecture', a),
    kv.str('general.name', `pantheon-${name}`),
    kv.u32('general.file_type', 1), // LLAMA_FTYPE_MOSTLY_F16
    kv.u32(`${a}.context_length`, 4096),
    kv.u32(`${a}.embedding_length`, m.nEmbd),
    kv.u32(`${a}.block_count`, m.nLayer),
    kv.u32(`${a}.feed_forward_length`, m.nFf),
    kv.u32(`${a}.attention.head_count`, m.nHead),
    kv.u32(`${a}.attention.head_count_kv`, m.nHeadKv),
    kv.f32(`${a}.attention.layer_norm_rms_epsilon`, 1e-6),
    kv.f32(`${a}.rope.freq_base`, 1e7),
    kv.u32(`${a}.attention.key_length`, m.headDim),
    kv.u32(`${a}.attention.value_length`, m.headDim),
    kv.u32(`${a}.rope.dimension_count`, m.nRot),
    kv.arr(`${a}.rope.dimension_sections`, GgufType.INT32, m.sections),
    kv.u32(`${a}.ssm.conv_kernel`, m.dConv),
    kv.u32(`${a}.ssm.state_size`, m.dState),
    kv.u32(`${a}.ssm.group_count`, m.nKHead),
    kv.u32(`${a}.ssm.time_step_rank`, m.nVHead),
    kv.u32(`${a}.ssm.inner_size`, m.nVHead * m.dState),
    'interval' in m.recurrent
      ? kv.u32(`${a}.full_attention_interval`, m.recurrent.interval)
      : kv.arr(`${a}.attention.recurrent_layers`, GgufType.BOOL, m.recurrent.layers),
    ...(m.mtp ? [kv.u32(`${a}.nextn_predict_layers`, m.mtp)] : []),
    ...(m.moe
      ? [kv.u32(`${a}.expert_count`, m.moe.nExpert), kv.u32(`${a}.expert_used_count`, m.moe.nUsed), kv.u32(`${a}.expert_feed_forward_length`, m.moe.nFfExp), kv.u32(`${a}.expert_shared_feed_forward_length`, m.moe.nFfShexp)]
      : []),
    ...tokenizerKvs(VOCAB),
  ];
}

function tensors(name: string, m: Qwen35Model, nVocab: number): WriterTensor[] {
  const mat = (t: string, cols: number, rows: number, std = STD_MAT): WriterTensor =>
    ({ name: t, dims: [cols, rows], type: GgmlType.F16, data: normalF16(`${name}/${t}`, cols * rows, std) });
  const f32 = (t: string, dims: number[], v: Float32Array): WriterTensor => ({ name: t, dims, type: GgmlType.F32, data: new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength)) });
  const normal = (t: string, n: number, std: number, mean = 0) => fillNormal(new Float32Array(n), std, uniform(fnv1a(`${name}/${t}`))).map((x) => x + mean);
  const ones = (t: string, n = m.nEmbd) => f32(t, [n], normal(t, n, 0.1, 1));
  const keyDim = m.nKHead * m.dState;
  const valueDim = m.nVHead * m.dState;
  const convDim = 2 * keyDim + valueDim;
  const out: WriterTensor[] = [mat('token_embd.weight', m.nEmbd, nVocab, STD_EMBD)];
  for (let l = 0; l < m.nLayer; l++) {
    const p = `blk.${l}.`;
    out.push(ones(`${p}attn_norm.weight`), ones(`${p}post_attention_norm.weight`));
    if (isRecurrent(m, l)) {
      out.push(
        mat(`${p}attn_qkv.weight`, m.nEmbd, convDim),
        mat(`${p}attn_gate.weight`, m.nEmbd, valueDim),
        f32(`${p}ssm_conv1d.weight`, [m.dConv, convDim], normal(`${p}ssm_conv1d.weight`, m.dConv * convDim, 0.5)),
        f32(`${p}ssm_dt.bias`, [m.nVHead], normal(`${p}ssm_dt.bias`, m.nVHead, 0.5)),
        // −exp(A_log) with A_log ~ N(0, 0.5), as convert_hf_to_gguf.py writes ssm_a
        f32(`${p}ssm_a`, [m.nVHead], normal(`${p}ssm_a`, m.nVHead, 0.5).map((x) => -Math.exp(x))),
        mat(`${p}ssm_beta.weight`, m.nEmbd, m.nVHead),
        mat(`${p}ssm_alpha.weight`, m.nEmbd, m.nVHead),
        ones(`${p}ssm_norm.weight`, m.dState),
        mat(`${p}ssm_out.weight`, valueDim, m.nEmbd),
      );
    } else {
      const qDim = m.nHead * m.headDim;
      out.push(
        mat(`${p}attn_q.weight`, m.nEmbd, 2 * qDim),
        mat(`${p}attn_k.weight`, m.nEmbd, m.nHeadKv * m.headDim),
        mat(`${p}attn_v.weight`, m.nEmbd, m.nHeadKv * m.headDim),
        mat(`${p}attn_output.weight`, qDim, m.nEmbd),
        ones(`${p}attn_q_norm.weight`, m.headDim),
        ones(`${p}attn_k_norm.weight`, m.headDim),
      );
    }
    if (l >= m.nLayer - (m.mtp ?? 0)) {
      // the MTP block's own tensors (llama_model_qwen35 load_block_mtp)
      out.push(mat(`${p}nextn.eh_proj.weight`, 2 * m.nEmbd, m.nEmbd), ones(`${p}nextn.enorm.weight`), ones(`${p}nextn.hnorm.weight`));
    }
    if (m.moe) {
      const { nExpert, nFfExp, nFfShexp } = m.moe;
      // 3-D expert tensors as the converters write them: [n_embd, n_ff_exp, n_expert], [n_ff_exp, n_embd, n_expert]
      const exps = (t: string, cols: number, rows: number): WriterTensor => ({ name: t, dims: [cols, rows, nExpert], type: GgmlType.F16, data: normalF16(`${name}/${t}`, cols * rows * nExpert, STD_MAT) });
      out.push(
        f32(`${p}ffn_gate_inp.weight`, [m.nEmbd, nExpert], normal(`${p}ffn_gate_inp.weight`, m.nEmbd * nExpert, 0.5)),
        exps(`${p}ffn_gate_exps.weight`, m.nEmbd, nFfExp),
        exps(`${p}ffn_up_exps.weight`, m.nEmbd, nFfExp),
        exps(`${p}ffn_down_exps.weight`, nFfExp, m.nEmbd),
        f32(`${p}ffn_gate_inp_shexp.weight`, [m.nEmbd], normal(`${p}ffn_gate_inp_shexp.weight`, m.nEmbd, 0.3)),
        mat(`${p}ffn_gate_shexp.weight`, m.nEmbd, nFfShexp),
        mat(`${p}ffn_up_shexp.weight`, m.nEmbd, nFfShexp),
        mat(`${p}ffn_down_shexp.weight`, nFfShexp, m.nEmbd),
      );
    } else {
      out.push(mat(`${p}ffn_gate.weight`, m.nEmbd, m.nFf), mat(`${p}ffn_up.weight`, m.nEmbd, m.nFf), mat(`${p}ffn_down.weight`, m.nFf, m.nEmbd));
    }
  }
  out.push(ones('output_norm.weight'), mat('output.weight', m.nEmbd, nVocab));
  return out;
}

/** Write the model `name` (a key of QWEN35_MODELS) to `path`. */
export function writeQwen35Model(name: string, path: string): void {
  const m = QWEN35_MODELS[name];
  if (!m) throw new Error(`unknown qwen35 model ${name}`);
  const kvs = metadata(name, m);
  const nVocab = vocabSize(kvs);
  writeFileSync(path, writeGguf(kvs, tensors(name, m, nVocab)));
}

writeModelsWhenRun(import.meta.url, 'qwen35', Object.keys(QWEN35_MODELS), (name, path) => writeQwen35Model(name, path));
