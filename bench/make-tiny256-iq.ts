// tiny256 (bench/make-tiny256.ts) quantised by llama.cpp's own quantiser to i-quant file types,
// which Pantheon cannot quantise to yet, for tests/model/quantized.test.ts:
//
//   node bin/run-ts.mjs bench/make-tiny256-iq.ts [outDir] [--types IQ3_XXS,IQ3_S,IQ3_M,IQ2_M]
//   node bench/record-goldens.mjs --logprob-cases=1 bench/models/quantized/tiny256.IQ*.gguf
//
// llama.cpp needs an importance matrix for the lowest-bit types; bench/llama-quantize.mjs gives it a
// made-up one (bench/native/llama-quantize-imatrix.c) for every matrix, so all four are made the
// same way. The result: IQ3_XXS → IQ3_XXS/IQ3_S/IQ2_S layers + Q5_K embedding; IQ3_S → IQ3_S + Q6_K;
// IQ3_M → IQ3_S/Q4_K + Q6_K; IQ2_M → IQ2_S/IQ3_S + Q5_K. Default outDir bench/models/quantized.

import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readGgufHeaderSync } from '../src/engine/gguf/file.js';
// @ts-expect-error: a plain ES module without types
import { llamaQuantize } from './llama-quantize.mjs';
import { writeTiny256 } from './make-tiny256.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** llama.cpp's llama_ftype numbers (llama.h). */
const FTYPES: Record<string, number> = { IQ2_XXS: 19, IQ2_XS: 20, IQ3_XS: 22, IQ3_XXS: 23, IQ1_S: 24, IQ3_S: 26, IQ3_M: 27, IQ2_S: 28, IQ2_M: 29, IQ1_M: 31 };

const args = process.argv.slice(2);
const typesArg = args.indexOf('--types');
const types = typesArg >= 0 ? args[typesArg + 1].split(',') : ['IQ3_XXS', 'IQ3_S', 'IQ3_M', 'IQ2_M'];
const dir = resolve(args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--types') ?? join(HERE, 'models', 'quantized'));
mkdirSync(dir, { recursive: true });
const f16 = join(dir, 'tiny256.gguf');
writeTiny256(f16);
// The importance matrix covers every matrix: name and column count.
const specs = readGgufHeaderSync(f16).tensors.filter((t) => t.dims.length === 2).map((t) => `${t.name}:${t.dims[0]}`);
for (const t of types) {
  if (FTYPES[t] === undefined) throw new Error(`unknown i-quant file type ${t}`);
  const out = join(dir, `tiny256.${t}.gguf`);
  const t0 = Date.now();
  llamaQuantize(f16, out, FTYPES[t], specs);
  console.log(`${out} (${Date.now() - t0} ms)`);
}
