// A llama file with Llama-3.1-8B's layer shapes (4096 wide, 32 heads, 8 KV heads, FFN 14336) as
// F16, NLAYER layers and the llama SPM vocabulary (32000 rows), for a load that needs more than
// one 4 GiB WebAssembly memory per thread (pool.ts shards). Each tensor is one random chunk of
// normal values (std 0.02) repeated from a per-tensor offset: fast to write, finite activations.
//
//   node bin/run-ts.mjs bench/make-wide-f16.ts OUT.gguf [NLAYER=10]   (10 layers: 4.9 GiB)

import { closeSync, openSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GgmlType } from '../src/engine/gguf/ggml-types.js';
import { ggufHeaderFor, tensorBytes, type StreamTensor } from '../src/engine/gguf/stream-writer.js';
import { kv } from '../src/engine/gguf/writer.js';
import { f16Bytes, fillNormal, fnv1a, tokenizerKvs, uniform } from './random-weights.js';

const [out, layersArg] = process.argv.slice(2);
if (!out) throw new Error('usage: make-wide-f16.ts OUT.gguf [NLAYER]');
const nLayer = Number(layersArg ?? 10);
const [nEmbd, nHead, nHeadKv, nFf, nVocab] = [4096, 32, 8, 14336, 32000];
const kvDim = (nEmbd / nHead) * nHeadKv;
const kvs = [
  kv.str('general.architecture', 'llama'),
  kv.str('general.name', `pantheon-wide-${nLayer}`),
  kv.u32('general.alignment', 32),
  kv.u32('general.file_type', 1),
  kv.u32('llama.context_length', 4096),
  kv.u32('llama.embedding_length', nEmbd),
  kv.u32('llama.block_count', nLayer),
  kv.u32('llama.feed_forward_length', nFf),
  kv.u32('llama.attention.head_count', nHead),
  kv.u32('llama.attention.head_count_kv', nHeadKv),
  kv.f32('llama.attention.layer_norm_rms_epsilon', 1e-5),
  kv.f32('llama.rope.freq_base', 500000),
  kv.u32('llama.rope.dimension_count', nEmbd / nHead),
  kv.u32('llama.vocab_size', nVocab),
  ...tokenizerKvs(join(resolve(import.meta.dirname, '..', '..', 'shared', 'models', 'llama.cpp-vocab'), 'ggml-vocab-llama-spm.gguf')),
];
const m = (name: string, cols: number, rows: number): StreamTensor => ({ name, dims: [cols, rows], type: GgmlType.F16 });
const v = (name: string): StreamTensor => ({ name, dims: [nEmbd], type: GgmlType.F32 });
const tensors: StreamTensor[] = [m('token_embd.weight', nEmbd, nVocab)];
for (let i = 0; i < nLayer; i++) {
  const p = `blk.${i}.`;
  tensors.push(v(`${p}attn_norm.weight`), m(`${p}attn_q.weight`, nEmbd, nEmbd), m(`${p}attn_k.weight`, nEmbd, kvDim), m(`${p}attn_v.weight`, nEmbd, kvDim));
  tensors.push(m(`${p}attn_output.weight`, nEmbd, nEmbd), v(`${p}ffn_norm.weight`), m(`${p}ffn_gate.weight`, nEmbd, nFf), m(`${p}ffn_up.weight`, nEmbd, nFf), m(`${p}ffn_down.weight`, nFf, nEmbd));
}
tensors.push(v('output_norm.weight'), m('output.weight', nEmbd, nVocab));

const CHUNK = 1 << 22; // halves in the random chunk
const chunk = f16Bytes(fillNormal(new Float32Array(CHUNK + 4096), 0.02, uniform(fnv1a('wide'))));
const ones = new Uint8Array(new Float32Array(nEmbd).fill(1).buffer);
const fd = openSync(out, 'w');
const write = (b: Uint8Array) => {
  for (let done = 0; done < b.length; ) done += writeSync(fd, b, done, b.length - done);
};
write(ggufHeaderFor(kvs, tensors));
for (const t of tensors) {
  const size = tensorBytes(t);
  if (t.type === GgmlType.F32) write(ones);
  else {
    const start = 2 * (fnv1a(t.name) % 4096);
    for (let at = 0; at < size; at += 2 * CHUNK) write(chunk.subarray(start, start + Math.min(2 * CHUNK, size - at)));
  }
  if (size % 32) write(new Uint8Array(32 - (size % 32)));
}
closeSync(fd);
console.log(`${out}: ${nLayer} layers`);
