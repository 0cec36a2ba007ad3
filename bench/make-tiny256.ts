// tiny256: a small llama model 256 wide, so that K-quants (256-element super-blocks) appear in its
// quantised variants; the tiny-random models are 64 wide and fall back to legacy types.
//
//   node bin/run-ts.mjs bench/make-tiny256.ts [outDir] [--types Q4_K_M,Q6_K,...]
//
// Writes <outDir>/tiny256.gguf (F16 matrices, F32 norms, tied output) and tiny256.<TYPE>.gguf made by Pantheon's
// quantiser (default outDir bench/models/quantized). Everything is deterministic: one seeded
// generator per tensor, Pantheon's GGUF writer, the reference quantisers. tests/model/quantized.test.ts
// calls writeTiny256 to rebuild the file and checks its sha256 against the llama.cpp golden
// (recorded with: node bench/record-goldens.mjs --logprob-cases=1 bench/models/quantized/tiny256.*.gguf).

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GgmlType } from '../src/engine/gguf/ggml-types.js';
import { isGgufArray } from '../src/engine/gguf/types.js';
import { kv, writeGguf, type WriterKv, type WriterTensor } from '../src/engine/gguf/writer.js';
import { quantizeModelFile } from '../src/engine/quant/model.js';
import { fileTypeByName } from '../src/engine/quant/recipe.js';
import { normalF16, tokenizerKvs } from './random-weights.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const VOCAB = resolve(HERE, '..', '..', 'shared', 'models', 'llama.cpp-vocab', 'ggml-vocab-llama-spm.gguf');

export const TINY256_TYPES = ['Q4_K_M', 'Q6_K', 'Q4_K_S', 'Q5_K_M', 'Q3_K_M', 'Q2_K'] as const;

// The shape: llama, GQA 4 heads / 2 KV heads (head dim 64), SPM vocabulary of 32000 tokens.
const N_EMBD = 256;
const N_LAYER = 2;
const N_HEAD = 4;
const N_HEAD_KV = 2;
const N_FF = 512;
const N_CTX = 512;
const HEAD_DIM = N_EMBD / N_HEAD;

// The output is tied (no output.weight: token_embd is the LM head, as llama.cpp allows for llama),
// which halves the time to quantise the two 32000-row matrices, the bulk of the file. Standard
// deviations: matrices about 1/sqrt(n_embd) so activations stay of order one through the blocks,
// and an embedding wide enough that the logits (std about 0.3·sqrt(256) ≈ 5) have clear winners
// (greedy decoding on near-uniform logits would test only near-ties).
const STD_EMBD = 0.3;
const STD_MAT = 0.08;

// ---------------------------------------------------------------------------------------------
// The file (random weights: bench/random-weights.ts, one generator per tensor seeded by its name)

function onesF32(n: number): Uint8Array {
  return new Uint8Array(new Float32Array(n).fill(1).buffer);
}

function metadata(): WriterKv[] {
  const a = 'llama';
  return [
    kv.str('general.architecture', a),
    kv.str('general.name', 'pantheon-tiny256'),
    kv.u32('general.file_type', 1), // LLAMA_FTYPE_MOSTLY_F16
    kv.u32(`${a}.context_length`, N_CTX),
    kv.u32(`${a}.embedding_length`, N_EMBD),
    kv.u32(`${a}.block_count`, N_LAYER),
    kv.u32(`${a}.feed_forward_length`, N_FF),
    kv.u32(`${a}.attention.head_count`, N_HEAD),
    kv.u32(`${a}.attention.head_count_kv`, N_HEAD_KV),
    kv.f32(`${a}.attention.layer_norm_rms_epsilon`, 1e-5),
    kv.f32(`${a}.rope.freq_base`, 10000),
    kv.u32(`${a}.rope.dimension_count`, HEAD_DIM),
    ...tokenizerKvs(VOCAB),
  ];
}

function tensors(nVocab: number): WriterTensor[] {
  const kvDim = N_HEAD_KV * HEAD_DIM;
  const m = (name: string, cols: number, rows: number, std: number): WriterTensor =>
    ({ name, dims: [cols, rows], type: GgmlType.F16, data: normalF16(name, cols * rows, std) });
  const norm = (name: string): WriterTensor => ({ name, dims: [N_EMBD], type: GgmlType.F32, data: onesF32(N_EMBD) });
  const out: WriterTensor[] = [m('token_embd.weight', N_EMBD, nVocab, STD_EMBD)];
  for (let i = 0; i < N_LAYER; i++) {
    const p = `blk.${i}.`;
    out.push(
      norm(`${p}attn_norm.weight`),
      m(`${p}attn_q.weight`, N_EMBD, N_EMBD, STD_MAT),
      m(`${p}attn_k.weight`, N_EMBD, kvDim, STD_MAT),
      m(`${p}attn_v.weight`, N_EMBD, kvDim, STD_MAT),
      m(`${p}attn_output.weight`, N_EMBD, N_EMBD, STD_MAT),
      norm(`${p}ffn_norm.weight`),
      m(`${p}ffn_gate.weight`, N_EMBD, N_FF, STD_MAT),
      m(`${p}ffn_up.weight`, N_EMBD, N_FF, STD_MAT),
      m(`${p}ffn_down.weight`, N_FF, N_EMBD, STD_MAT),
    );
  }
  out.push(norm('output_norm.weight'));
  return out;
}

/** Write the F16 model to `path`. */
export function writeTiny256(path: string): void {
  const kvs = metadata();
  const tokens = kvs.find((e) => e.key === 'tokenizer.ggml.tokens')!.value;
  const nVocab = isGgufArray(tokens) ? tokens.items.length : 0;
  writeFileSync(path, writeGguf(kvs, tensors(nVocab)));
}

/** Quantise the F16 model at `src` to `dst` with a llama.cpp file type name (Q4_K_M, …). */
export function quantizeTiny256(src: string, dst: string, type: string): void {
  const ft = fileTypeByName(type);
  if (!ft) throw new Error(`unknown file type ${type}`);
  quantizeModelFile(src, dst, ft);
}

// ---------------------------------------------------------------------------------------------
// CLI

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const typesArg = args.indexOf('--types');
  const types = typesArg >= 0 ? args[typesArg + 1].split(',') : [...TINY256_TYPES];
  const dir = resolve(args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--types') ?? join(HERE, 'models', 'quantized'));
  mkdirSync(dir, { recursive: true });
  const f16 = join(dir, 'tiny256.gguf');
  writeTiny256(f16);
  console.log(f16);
  for (const t of types) {
    const out = join(dir, `tiny256.${t}.gguf`);
    const t0 = Date.now();
    quantizeTiny256(f16, out, t);
    console.log(`${out} (${Date.now() - t0} ms)`);
  }
}
