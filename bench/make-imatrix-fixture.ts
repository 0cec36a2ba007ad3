// Writes tests/quant/fixtures/imatrix-quant.gguf: ggml's quantisation WITH an importance matrix of
// the fixture source (../shared/fixtures/quant-reference-iq.gguf `source`, 8 × 512), for the types
// whose quantiser reads one (quantize_q4_0 … quantize_iq4_xs, quantize_iq2_*, quantize_iq1_* in ggml-quants.c). Two matrices:
//   imatrix.mean  mean square of each source column over its rows + 1e-6 (as the shared fixture's IQ types)
//   imatrix.rand  log-normal numbers spanning ~6 decades, as a real imatrix does
// and per type `q.<type>` / `qr.<type>` made by ggml_quantize_chunk with each (and `q0.<type>`
// without one, for the i-quants whose reference quantiser Pantheon has).
// Run: npx tsx bench/make-imatrix-fixture.ts (needs gcc and bench/node_modules).

import { writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readGgufHeaderSync, readTensorBytes } from '../src/engine/gguf/file.js';
import { GgmlType, ggmlTypeName } from '../src/engine/gguf/ggml-types.js';
import { kv, writeGguf, type WriterTensor } from '../src/engine/gguf/writer.js';
import { ggmlQuantize } from './llama-tools.js';
import { fillNormal, fnv1a, uniform } from './random-weights.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SHARED = join(ROOT, '..', 'shared', 'fixtures', 'quant-reference-iq.gguf');
const OUT = join(ROOT, 'tests', 'quant', 'fixtures', 'imatrix-quant.gguf');
const ROWS = 8;
const COLS = 512;

export const IMATRIX_TYPES = [
  GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q5_1, GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K,
  GgmlType.Q6_K, GgmlType.IQ4_NL, GgmlType.IQ4_XS, GgmlType.IQ3_S, GgmlType.IQ3_XXS,
  GgmlType.IQ2_XXS, GgmlType.IQ2_XS, GgmlType.IQ2_S, GgmlType.IQ1_S, GgmlType.IQ1_M,
];

/** The i-quants Pantheon quantises that also run without an importance matrix (`q0.<type>`). */
export const PLAIN_TYPES = [GgmlType.IQ3_S, GgmlType.IQ3_XXS, GgmlType.IQ2_S, GgmlType.IQ1_M];

const h = readGgufHeaderSync(SHARED);
const srcBytes = readTensorBytes(SHARED, h, 'source');
const src = new Float32Array(srcBytes.slice().buffer);

const mean = new Float32Array(COLS);
for (let c = 0; c < COLS; c++) {
  let s = 0;
  for (let r = 0; r < ROWS; r++) s = Math.fround(s + Math.fround(src[r * COLS + c] ** 2));
  mean[c] = Math.fround(Math.fround(s / ROWS) + 1e-6);
}
const rand = fillNormal(new Float32Array(COLS), 2, uniform(fnv1a('imatrix.rand'))).map((v) => Math.exp(v));

const f32 = (a: Float32Array) => new Uint8Array(a.buffer.slice(0));
const tensors: WriterTensor[] = [
  { name: 'source', dims: [COLS, ROWS], type: GgmlType.F32, data: srcBytes },
  { name: 'imatrix.mean', dims: [COLS], type: GgmlType.F32, data: f32(mean) },
  { name: 'imatrix.rand', dims: [COLS], type: GgmlType.F32, data: f32(rand) },
];
for (const type of IMATRIX_TYPES) {
  const name = ggmlTypeName(type).toLowerCase().replace(/_k$/, '_K');
  tensors.push({ name: `q.${name}`, dims: [COLS, ROWS], type, data: ggmlQuantize(type, src, ROWS, COLS, mean).bytes });
  tensors.push({ name: `qr.${name}`, dims: [COLS, ROWS], type, data: ggmlQuantize(type, src, ROWS, COLS, rand).bytes });
  if (PLAIN_TYPES.includes(type)) tensors.push({ name: `q0.${name}`, dims: [COLS, ROWS], type, data: ggmlQuantize(type, src, ROWS, COLS).bytes });
}
writeFileSync(OUT, writeGguf([kv.str('general.architecture', 'quant-fixture'), kv.str('fixture.maker', 'ggml_quantize_chunk with imatrix (node-llama-cpp libggml-base, llama.cpp v0.4.0)')], tensors));
console.log(`wrote ${OUT} (${tensors.length} tensors)`);
