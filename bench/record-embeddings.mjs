#!/usr/bin/env node
// Record llama.cpp's embeddings (through node-llama-cpp's embedding context) as a golden for
// Pantheon's /v1/embeddings: for each text, the unnormalised hidden state after the output norm
// at every position, got as the last-token embedding of each prefix (a causal model's position k
// does not see what follows it). node-llama-cpp pools a decoder model's embedding by its last token.
//
//   node bench/record-embeddings.mjs [MODEL.gguf]   # default resources/models/stories260K.gguf
// Writes tests/golden/llama.cpp/<model-basename>.embeddings.json.

import { writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LLAMA_CPP_LABEL, getReference, tokenize } from './llama.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TEXTS = ['Once upon a time', 'The cat sat on the mat.'];
const path = resolve(process.argv[2] ?? join(ROOT, 'resources/models/stories260K.gguf'));

const llama = await getReference();
const model = await llama.loadModel({ modelPath: path, gpuLayers: 0 });
const ctx = await model.createEmbeddingContext({ contextSize: 256, threads: 1 });
const cases = [];
for (const text of TEXTS) {
  const tokens = Array.from(tokenize({ model }, text, { addSpecial: 'auto' }));
  const rows = [];
  for (let k = 1; k <= tokens.length; k++) rows.push(Array.from((await ctx.getEmbeddingFor(tokens.slice(0, k))).vector, (x) => Number(x.toFixed(6))));
  // the text itself (node-llama-cpp adds the BOS) gives the last row
  const whole = Array.from((await ctx.getEmbeddingFor(text)).vector);
  const diff = Math.max(...whole.map((x, i) => Math.abs(x - rows[rows.length - 1][i])));
  if (diff > 1e-4) throw new Error(`${text}: the text's embedding differs from its tokens' by ${diff}`);
  cases.push({ text, tokens, rows });
}
await ctx.dispose();
await model.dispose();
const out = join(ROOT, 'tests/golden/llama.cpp', `${basename(path).replace(/\.gguf$/i, '')}.embeddings.json`);
writeFileSync(out, JSON.stringify({ model: basename(path), llamaCpp: LLAMA_CPP_LABEL, rows: 'per position: the unnormalised output-norm hidden state (last-token embedding of the prefix)', cases }) + '\n');
console.log(`wrote ${out}`);
