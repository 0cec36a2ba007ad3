// Benchmark models: realistic shapes with random weights, written by Pantheon's own GGUF writer and
// quantiser, so the speed benchmark (bench/compare.ts) needs no download.
//
//   npm run bench:models [-- --only llama110m|qwen2-0.5b] [--types F16,Q8_0,Q6_K,Q4_K_M,Q4_0] [--force] [--no-check]
//   npm run bench:models -- --only qwen3moe-30b-a3b-4l --types Q8_0    # the MoE shape, on request only
//   npm run bench:models -- --only llama31-8b-4l --types Q4_K_M         # the 8B's shapes, on request only
//   npm run bench:models -- --only llama31-8b --types Q4_K_M --random-blocks   # all 32 layers (4.6 GiB)
//   … --random-blocks: Q4_K_M (or Q5_K_M) as random blocks in ggml's type mix, not quantised (seconds, not an hour)
//
// Writes bench/models/<shape>-<type>.gguf (git-ignored). The F16 file is written once in a stream
// (never the whole model in memory) and every other type is made from it by `pantheon quantize`.
// Each file is then loaded by llama.cpp (bench/child-llama.mjs --check) to prove it is a valid model.
//
// Weights are random normal with std 0.02 (norm weights 1, biases random with the same std), so
// activations stay finite; the text they produce is gibberish, which does not matter for speed.

import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readGgufHeaderSync } from '../src/engine/gguf/file.js';
import { GgmlType, ggmlTypeInfo, ggmlTypeName } from '../src/engine/gguf/ggml-types.js';
import { fileTypeByName, planQuantization } from '../src/engine/quant/recipe.js';
import { quantMix } from '../src/engine/gguf/keys.js';
import { GgufType, isGgufArray } from '../src/engine/gguf/types.js';
import { ggufHeaderFor, tensorBytes, type StreamTensor } from '../src/engine/gguf/stream-writer.js';
import { kv, type WriterKv } from '../src/engine/gguf/writer.js';
import { f16Bytes, fillNormal, fnv1a, tokenizerKvs, uniform } from './random-weights.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
const VOCABS = resolve(ROOT, '..', 'shared', 'models', 'llama.cpp-vocab');
export const MODELS_DIR = join(HERE, 'models');
export const BENCH_TYPES = ['F16', 'Q8_0', 'Q6_K', 'Q4_K_M', 'Q4_0'] as const;

// ---------------------------------------------------------------------------------------------
// The shapes

interface Shape {
  /** File name prefix: bench/models/<name>-<type>.gguf */
  name: string;
  arch: 'llama' | 'qwen2' | 'qwen3moe';
  nLayer: number;
  nEmbd: number;
  nHead: number;
  nHeadKv: number;
  nFf: number;
  nVocab: number;
  /** No output.weight: the LM head is token_embd. */
  tied: boolean;
  /** Biases on q, k, v (qwen2). */
  qkvBias: boolean;
  ropeBase: number;
  rmsEps: number;
  contextLength: number;
  /** Vocab-only GGUF whose tokenizer.* keys are copied. */
  vocabFile: string;
  /** Per-head size when not nEmbd / nHead (attention.key_length / value_length). */
  headDim?: number;
  /** Experts in every layer in place of the dense FFN (qwen3moe: per-head q/k norms too). */
  moe?: { nExpert: number; nUsed: number; nFfExp: number };
}

// The llama2.c "stories110M" shape (dim 768, 12 layers, 12 heads, hidden 2048, vocab 32000) with a
// separate output matrix, as llama-family files have it: 110M parameters in the blocks and the
// embedding, plus 24.6M in output.weight.
const LLAMA_110M: Shape = {
  name: 'llama110m', arch: 'llama', nLayer: 12, nEmbd: 768, nHead: 12, nHeadKv: 12, nFf: 2048, nVocab: 32000,
  tied: false, qkvBias: false, ropeBase: 10000, rmsEps: 1e-5, contextLength: 2048,
  vocabFile: 'ggml-vocab-llama-spm.gguf',
};

// Qwen2-0.5B's config.json (hidden 896, 24 layers, 14 heads, 2 KV heads, intermediate 4864,
// vocab 151936, tie_word_embeddings, rope_theta 1e6, rms_norm_eps 1e-6). No Qwen2 vocabulary GGUF
// is at hand, so the GPT-2 one is padded to 151936 tokens (see qwenTokenizer).
const QWEN2_05B: Shape = {
  name: 'qwen2-0.5b', arch: 'qwen2', nLayer: 24, nEmbd: 896, nHead: 14, nHeadKv: 2, nFf: 4864, nVocab: 151936,
  tied: true, qkvBias: true, ropeBase: 1e6, rmsEps: 1e-6, contextLength: 32768,
  vocabFile: 'ggml-vocab-gpt-2.gguf',
};

// Qwen3-30B-A3B's layer shapes (config.json: hidden 2048, 32 heads of 128, 4 KV heads, 128 experts,
// 8 used, moe_intermediate 768, rope_theta 1e6, rms_norm_eps 1e-6), 4 of its 48 layers, and the
// GPT-2 vocabulary (50257) instead of its 151936 so that the file stays near 2.6 GB in Q8_0.
const QWEN3MOE_30B_A3B_4L: Shape = {
  name: 'qwen3moe-30b-a3b-4l', arch: 'qwen3moe', nLayer: 4, nEmbd: 2048, nHead: 32, nHeadKv: 4, nFf: 6144, nVocab: 50257,
  tied: false, qkvBias: false, ropeBase: 1e6, rmsEps: 1e-6, contextLength: 32768,
  vocabFile: 'ggml-vocab-gpt-2.gguf', headDim: 128, moe: { nExpert: 128, nUsed: 8, nFfExp: 768 },
};

// Llama-3.1-8B's layer shapes (config.json: hidden 4096, 32 heads of 128, 8 KV heads, intermediate
// 14336, vocab 128256, rope_theta 5e5, rms_norm_eps 1e-5) with 4 of its 32 layers: the matrices the
// kernels and the loader meet in the 8B, in a file of about 1.1 GB as Q4_K_M. On request only.
const LLAMA31_8B_4L: Shape = {
  name: 'llama31-8b-4l', arch: 'llama', nLayer: 4, nEmbd: 4096, nHead: 32, nHeadKv: 8, nFf: 14336, nVocab: 128256,
  tied: false, qkvBias: false, ropeBase: 5e5, rmsEps: 1e-5, contextLength: 8192,
  vocabFile: 'ggml-vocab-llama-bpe.gguf',
};

// All 32 of the 8B's layers: the type mix per token of the real model (Q4_K ~74% of the bytes read,
// where the 4-layer file's Q6_K output matrix is 47%), 4.6 GiB as Q4_K_M. On request only.
const LLAMA31_8B: Shape = { ...LLAMA31_8B_4L, name: 'llama31-8b', nLayer: 32 };

export const SHAPES: readonly Shape[] = [LLAMA_110M, QWEN2_05B, QWEN3MOE_30B_A3B_4L, LLAMA31_8B_4L, LLAMA31_8B];
/** Shapes made only when --only names them (several GB each). */
const ON_REQUEST = new Set(['qwen3moe-30b-a3b-4l', 'llama31-8b-4l', 'llama31-8b']);

// ---------------------------------------------------------------------------------------------
// Metadata

/**
 * The GPT-2 vocabulary grown to `nVocab` tokens: the extra ids are "[PAD<id>]" of type 5
 * (LLAMA_TOKEN_TYPE_UNUSED in llama.cpp's llama-vocab.h), which no text ever tokenizes to, just as
 * real Qwen2 files pad 151643 tokens to the 151936 rows of the embedding.
 */
function paddedTokenizer(vocabPath: string, nVocab: number): WriterKv[] {
  const kvs = tokenizerKvs(vocabPath);
  const TOKEN_TYPE_UNUSED = 5;
  return kvs.map((e) => {
    if (e.key === 'tokenizer.ggml.tokens' && isGgufArray(e.value)) {
      const items = e.value.items.slice();
      for (let id = items.length; id < nVocab; id++) items.push(`[PAD${id}]`);
      return kv.arr(e.key, GgufType.STRING, items);
    }
    if (e.key === 'tokenizer.ggml.token_type' && isGgufArray(e.value)) {
      const items = e.value.items.slice();
      while (items.length < nVocab) items.push(TOKEN_TYPE_UNUSED);
      return kv.arr(e.key, e.value.itemType, items);
    }
    if (e.key === 'tokenizer.ggml.scores' && isGgufArray(e.value)) {
      const items = e.value.items.slice();
      while (items.length < nVocab) items.push(0);
      return kv.arr(e.key, e.value.itemType, items);
    }
    return e;
  });
}

const ALIGNMENT = 32; // GGUF_DEFAULT_ALIGNMENT, written out

function shapeKvs(s: Shape): WriterKv[] {
  const a = s.arch;
  const headDim = s.headDim ?? s.nEmbd / s.nHead;
  const kvs: WriterKv[] = [
    kv.str('general.architecture', a),
    kv.str('general.name', `pantheon-bench-${s.name}`),
    kv.u32('general.alignment', ALIGNMENT),
    kv.u32('general.file_type', 1), // LLAMA_FTYPE_MOSTLY_F16
    kv.u32(`${a}.context_length`, s.contextLength),
    kv.u32(`${a}.embedding_length`, s.nEmbd),
    kv.u32(`${a}.block_count`, s.nLayer),
    kv.u32(`${a}.feed_forward_length`, s.nFf),
    kv.u32(`${a}.attention.head_count`, s.nHead),
    kv.u32(`${a}.attention.head_count_kv`, s.nHeadKv),
    kv.f32(`${a}.attention.layer_norm_rms_epsilon`, s.rmsEps),
    kv.f32(`${a}.rope.freq_base`, s.ropeBase),
    kv.u32(`${a}.rope.dimension_count`, headDim),
    kv.u32(`${a}.vocab_size`, s.nVocab),
  ];
  if (s.headDim) kvs.push(kv.u32(`${a}.attention.key_length`, s.headDim), kv.u32(`${a}.attention.value_length`, s.headDim));
  if (s.moe) {
    kvs.push(kv.u32(`${a}.expert_count`, s.moe.nExpert), kv.u32(`${a}.expert_used_count`, s.moe.nUsed), kv.u32(`${a}.expert_feed_forward_length`, s.moe.nFfExp));
  }
  const vocab = join(VOCABS, s.vocabFile);
  return kvs.concat(s.arch === 'qwen2' ? paddedTokenizer(vocab, s.nVocab) : tokenizerKvs(vocab));
}

// ---------------------------------------------------------------------------------------------
// Tensors (llama.cpp LLM_TENSOR_NAMES; dims innermost first)

type Fill = 'normal' | 'ones';
interface PlannedTensor extends StreamTensor { fill: Fill }

function shapeTensors(s: Shape): PlannedTensor[] {
  const headDim = s.headDim ?? s.nEmbd / s.nHead;
  const qDim = s.nHead * headDim;
  const kvDim = s.nHeadKv * headDim;
  const F16 = GgmlType.F16;
  const F32 = GgmlType.F32;
  const m = (name: string, cols: number, rows: number): PlannedTensor => ({ name, dims: [cols, rows], type: F16, fill: 'normal' });
  const v = (name: string, n: number, fill: Fill): PlannedTensor => ({ name, dims: [n], type: F32, fill });
  const out: PlannedTensor[] = [m('token_embd.weight', s.nEmbd, s.nVocab)];
  for (let i = 0; i < s.nLayer; i++) {
    const p = `blk.${i}.`;
    out.push(v(`${p}attn_norm.weight`, s.nEmbd, 'ones'));
    out.push(m(`${p}attn_q.weight`, s.nEmbd, qDim));
    out.push(m(`${p}attn_k.weight`, s.nEmbd, kvDim));
    out.push(m(`${p}attn_v.weight`, s.nEmbd, kvDim));
    if (s.qkvBias) {
      out.push(v(`${p}attn_q.bias`, qDim, 'normal'));
      out.push(v(`${p}attn_k.bias`, kvDim, 'normal'));
      out.push(v(`${p}attn_v.bias`, kvDim, 'normal'));
    }
    if (s.moe) out.push(v(`${p}attn_q_norm.weight`, headDim, 'ones'), v(`${p}attn_k_norm.weight`, headDim, 'ones'));
    out.push(m(`${p}attn_output.weight`, qDim, s.nEmbd));
    out.push(v(`${p}ffn_norm.weight`, s.nEmbd, 'ones'));
    if (s.moe) {
      const { nExpert, nFfExp } = s.moe;
      // the router in F32 (as the converters write it, and as llama.cpp's quantiser keeps it); 3-D experts
      out.push({ name: `${p}ffn_gate_inp.weight`, dims: [s.nEmbd, nExpert], type: F32, fill: 'normal' });
      out.push({ name: `${p}ffn_gate_exps.weight`, dims: [s.nEmbd, nFfExp, nExpert], type: F16, fill: 'normal' });
      out.push({ name: `${p}ffn_up_exps.weight`, dims: [s.nEmbd, nFfExp, nExpert], type: F16, fill: 'normal' });
      out.push({ name: `${p}ffn_down_exps.weight`, dims: [nFfExp, s.nEmbd, nExpert], type: F16, fill: 'normal' });
      continue;
    }
    out.push(m(`${p}ffn_gate.weight`, s.nEmbd, s.nFf));
    out.push(m(`${p}ffn_up.weight`, s.nEmbd, s.nFf));
    out.push(m(`${p}ffn_down.weight`, s.nFf, s.nEmbd));
  }
  out.push(v('output_norm.weight', s.nEmbd, 'ones'));
  if (!s.tied) out.push(m('output.weight', s.nEmbd, s.nVocab));
  return out;
}

/** Std of the random weights (bench/random-weights.ts: one seeded generator per tensor, the same file on every run). */
const WEIGHT_STD = 0.02;

// ---------------------------------------------------------------------------------------------
// Writing the F16 file in a stream

function writeAll(fd: number, b: Uint8Array): void {
  let done = 0;
  while (done < b.length) done += writeSync(fd, b, done, b.length - done);
}

/** Write the F16 model of `s` to `path` without holding more than a few MB of it. */
function writeF16Model(s: Shape, path: string): void {
  const tensors = shapeTensors(s);
  const header = ggufHeaderFor(shapeKvs(s), tensors);
  const alignment = ALIGNMENT;
  const tmp = `${path}.part`;
  const fd = openSync(tmp, 'w');
  try {
    writeAll(fd, header);
    const CHUNK = 1 << 20; // elements per piece
    const f32 = new Float32Array(CHUNK);
    const u16 = new Uint16Array(CHUNK);
    for (const t of tensors) {
      const n = t.dims.reduce((a, b) => a * b, 1);
      const u = uniform(fnv1a(`${s.name}/${t.name}`));
      for (let at = 0; at < n; at += CHUNK) {
        const piece = f32.subarray(0, Math.min(CHUNK, n - at));
        if (t.fill === 'ones') piece.fill(1);
        else fillNormal(piece, WEIGHT_STD, u);
        if (t.type === GgmlType.F32) {
          writeAll(fd, new Uint8Array(piece.buffer, 0, piece.length * 4));
        } else {
          writeAll(fd, f16Bytes(piece, u16));
        }
      }
      const size = tensorBytes(t);
      const pad = (alignment - (size % alignment)) % alignment;
      if (pad) writeAll(fd, new Uint8Array(pad));
    }
    const written = fstatSync(fd).size;
    const data = tensors.reduce((a, t) => a + Math.ceil(tensorBytes(t) / alignment) * alignment, 0);
    if (written !== header.length + data) throw new Error(`wrote ${written} bytes, expected ${header.length + data}`);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

// ---------------------------------------------------------------------------------------------
// Random K-quant blocks (--random-blocks): a Q4_K_M- or Q5_K_M-typed file without quantising

/** The mixes --random-blocks writes (quant/recipe.ts planQuantization picks each tensor's type), and where each of their block types keeps its f16 scales. */
const RANDOM_MIXES = ['Q4_K_M', 'Q5_K_M'];
const SCALES_AT: Record<number, number[]> = { [GgmlType.Q4_K]: [0, 2], [GgmlType.Q5_K]: [0, 2], [GgmlType.Q6_K]: [208] };

/**
 * The Q4_K_M (Q5_K_M) file of `s` as random blocks: random quants and sub-block scales, each block's
 * f16 scale (Q4_K/Q5_K d and dmin, Q6_K d) set small so weights stay near ±0.02. For the loading and
 * speed benchmarks only (what the weights compute is gibberish either way); Pantheon's quantiser
 * took over 40 min for the 8B shapes on a busy 2-core machine, this takes seconds.
 */
function writeRandomKM(s: Shape, path: string, mix: string): void {
  const ft = fileTypeByName(mix)!;
  const plain = shapeTensors(s);
  const model = { arch: s.arch, nLayer: s.nLayer, nHead: s.nHead, nHeadKv: s.nHeadKv, nExpert: s.moe?.nExpert ?? 0 };
  const to = new Map(planQuantization(ft, model, plain).map((p) => [p.name, p.to]));
  const tensors = plain.map((t) => ({ ...t, type: to.get(t.name) ?? t.type }));
  const kvs = shapeKvs(s).map((e) => (e.key === 'general.file_type' ? kv.u32('general.file_type', ft.ftype) : e));
  const header = ggufHeaderFor(kvs, tensors);
  const tmp = `${path}.part`;
  const fd = openSync(tmp, 'w');
  const h16 = (x: number) => f16Bytes(new Float32Array([x]));
  const d4 = h16(0.02 / 16), m4 = h16(0.02 / 16), d6 = h16(0.02 / 2048);
  try {
    writeAll(fd, header);
    for (const t of tensors) {
      const size = tensorBytes(t);
      if (t.type === GgmlType.F32) {
        const n = t.dims.reduce((a, b) => a * b, 1);
        writeAll(fd, new Uint8Array(new Float32Array(n).fill(1).buffer));
      } else {
        const block = ggmlTypeInfo(t.type)!.typeSize, scales = SCALES_AT[t.type];
        if (!scales) throw new Error(`--random-blocks: ${t.name} would be ${ggmlTypeName(t.type)}, which it cannot write`);
        const CHUNK = block * 8192;
        let x = fnv1a(`${s.name}/${t.name}`) | 1;
        for (let at = 0; at < size; at += CHUNK) {
          const n = Math.min(CHUNK, size - at);
          const u32 = new Uint32Array(Math.ceil(n / 4));
          for (let i = 0; i < u32.length; i++) {
            x ^= x << 13; x ^= x >>> 17; x ^= x << 5; // xorshift32
            u32[i] = x >>> 0;
          }
          const b = new Uint8Array(u32.buffer, 0, n);
          for (let o = 0; o < n; o += block) {
            if (scales.length === 2) { b.set(d4, o + scales[0]); b.set(m4, o + scales[1]); } // Q4_K, Q5_K: d, dmin
            else b.set(d6, o + scales[0]); // Q6_K: d
          }
          writeAll(fd, b);
        }
      }
      const pad = (ALIGNMENT - (size % ALIGNMENT)) % ALIGNMENT;
      if (pad) writeAll(fd, new Uint8Array(pad));
    }
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

// ---------------------------------------------------------------------------------------------
// Quantising (pantheon quantize) and checking (llama.cpp)

const QUANTIZE_CMD = join(ROOT, 'src', 'cli', 'commands', 'quantize.ts');

/** Quantise with Pantheon's CLI in a child process; returns an error line or null. */
function quantize(src: string, dst: string, type: string): string | null {
  if (!existsSync(QUANTIZE_CMD)) {
    return `Pantheon's quantiser is not there yet (src/cli/commands/quantize.ts, \`pantheon quantize IN OUT --type ${type}\`): cannot make ${type}`;
  }
  const tmp = `${dst}.part`;
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'pantheon.mjs'), 'quantize', src, tmp, '--type', type], { stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) return `pantheon quantize --type ${type} failed (exit ${r.status}): ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}`;
  renameSync(tmp, dst);
  return null;
}

/** Load the file in llama.cpp and greedily generate a few tokens; returns an error line or null. */
export function checkInLlamaCpp(path: string): string | null {
  const r = spawnSync(process.execPath, [join(HERE, 'child-llama.mjs'), JSON.stringify({ check: true, model: path })], { encoding: 'utf8' });
  const last = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  if (r.status === 0 && last.startsWith('{')) {
    const res = JSON.parse(last) as { tokens: number[]; loadMs: number };
    console.log(`    llama.cpp loads it (${res.loadMs.toFixed(0)} ms) and generates ${JSON.stringify(res.tokens)}`);
    return null;
  }
  return `llama.cpp cannot use ${path}: ${((r.stderr ?? '') + last).trim().split('\n').slice(-4).join(' | ')}`;
}

function describe(path: string): string {
  const h = readGgufHeaderSync(path);
  const mix = quantMix(h).map((m) => `${m.type} ${(100 * m.share).toFixed(0)}%`).join(', ');
  return `${(statSync(path).size / 2 ** 20).toFixed(0)} MiB (${mix})`;
}

// ---------------------------------------------------------------------------------------------
// Main

function parseArgs(argv: string[]): { shapes: Shape[]; types: string[]; force: boolean; check: boolean; randomBlocks: boolean } {
  // the MoE shape (5.4 GB in F16, about 15 min to write here) and the 8B's only when asked for by --only
  let shapes = SHAPES.filter((s) => !ON_REQUEST.has(s.name));
  let types: string[] = BENCH_TYPES.slice();
  let force = false;
  let check = true;
  let randomBlocks = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only') {
      const names = (argv[++i] ?? '').split(',');
      shapes = SHAPES.filter((s) => names.includes(s.name));
      if (!shapes.length) throw new Error(`--only takes ${SHAPES.map((s) => s.name).join(' or ')}`);
    } else if (a === '--types') types = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (a === '--force') force = true;
    else if (a === '--no-check') check = false;
    else if (a === '--random-blocks') randomBlocks = true;
    else throw new Error(`unknown argument ${a}; usage: npm run bench:models [-- --only NAME] [--types F16,Q8_0,…] [--force] [--no-check] [--random-blocks]`);
  }
  return { shapes, types, force, check, randomBlocks };
}

export function modelPath(shape: string, type: string): string {
  return join(MODELS_DIR, `${shape}-${type}.gguf`);
}

function main(): number {
  const opts = parseArgs(process.argv.slice(2));
  mkdirSync(MODELS_DIR, { recursive: true });
  const failures: string[] = [];
  for (const s of opts.shapes) {
    const f16 = modelPath(s.name, 'F16');
    for (const type of opts.types) {
      const path = modelPath(s.name, type);
      const t0 = performance.now();
      let made = false;
      if (opts.force || !existsSync(path)) {
        if (type === 'F16') writeF16Model(s, path);
        else if (RANDOM_MIXES.includes(type) && opts.randomBlocks) writeRandomKM(s, path, type);
        else {
          if (!existsSync(f16)) writeF16Model(s, f16);
          const err = quantize(f16, path, type);
          if (err) { failures.push(err); console.log(`  ${s.name} ${type}: ${err}`); continue; }
        }
        made = true;
      }
      console.log(`  ${s.name} ${type}: ${made ? `written in ${((performance.now() - t0) / 1000).toFixed(1)} s` : 'exists'}, ${describe(path)}`);
      if (opts.check) {
        const err = checkInLlamaCpp(path);
        if (err) { failures.push(err); console.log(`    ${err}`); }
      }
    }
  }
  if (failures.length) {
    console.error(`\n${failures.length} model file(s) missing or not loadable:\n  ${failures.join('\n  ')}`);
    return 1;
  }
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main();
