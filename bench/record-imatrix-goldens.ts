// Records llama.cpp's importance matrices and imatrix quantisations, the truth of
// tests/quant/imatrix.test.ts and tests/quant/imatrix-model.test.ts:
//   tests/golden/llama.cpp/imatrix/<model>.imatrix / .dat  llama-imatrix over tests/quant/imatrix-text.ts
//     (tiny-llama-s5, tiny-qwen3moe-s1: GGUF and legacy .dat; tiny256: GGUF)
//   tests/golden/llama.cpp/imatrix/quantized.json  llama-quantize --imatrix tiny256.imatrix of
//     tiny256 (bench/make-tiny256.ts) to each file type: every blk.* tensor's type and the sha256
//     of its first GOLDEN_ROWS rows (rows are quantised independently; the test stays fast)
// Run: npx tsx bench/record-imatrix-goldens.ts (needs g++, bench/node_modules, the llama.cpp source).
// With --types=IQ2_M,IQ1_M only those file types are quantised (with the committed tiny256.imatrix)
// and merged into quantized.json; the importance matrices are left as they are.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readGgufHeaderSync, readTensorBytes } from '../src/engine/gguf/file.js';
import { ggmlTypeName } from '../src/engine/gguf/ggml-types.js';
import { GOLDEN_CHUNKS, GOLDEN_CTX, GOLDEN_DATASET, GOLDEN_ROWS, IMATRIX_QUANT_TYPES, imatrixText } from '../tests/quant/imatrix-text.js';
import { llamaTool, llamaToolBinary } from './llama-tools.js';
import { writeTiny256 } from './make-tiny256.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MODELS = join(ROOT, '..', 'shared', 'models', 'tiny-random');
const OUT = join(ROOT, 'tests', 'golden', 'llama.cpp', 'imatrix');

const only = process.argv.find((a) => a.startsWith('--types='))?.slice('--types='.length).split(',');
mkdirSync(OUT, { recursive: true });
const dir = dirname(llamaToolBinary('imatrix'));
writeFileSync(join(dir, GOLDEN_DATASET), imatrixText());
const tiny256 = join(dir, 'tiny256.gguf');
writeTiny256(tiny256);
const imatrixArgs = (model: string, out: string, fmt: string) => ['-m', model, '-f', GOLDEN_DATASET, '-o', out, '-c', String(GOLDEN_CTX), '--chunks', String(GOLDEN_CHUNKS), '-t', '1', '--output-format', fmt];
const here = process.cwd();
process.chdir(dir); // so the dataset is recorded as the bare file name
try {
  for (const m of only ? [] : ['tiny-llama-s5', 'tiny-qwen3moe-s1']) {
    for (const [ext, fmt] of [['imatrix', 'gguf'], ['dat', 'dat']] as const) {
      const out = join(OUT, `${m}.${ext}`);
      llamaTool('imatrix', imatrixArgs(join(MODELS, `${m}.gguf`), out, fmt));
      console.log(`wrote ${out}`);
    }
  }
  const im = join(OUT, 'tiny256.imatrix');
  if (!only) {
    llamaTool('imatrix', imatrixArgs(tiny256, im, 'gguf'));
    console.log(`wrote ${im}`);
  }
  const golden: Record<string, Record<string, { type: string; sha256: string }>> = only ? JSON.parse(readFileSync(join(OUT, 'quantized.json'), 'utf8')).types : {};
  for (const type of only ?? IMATRIX_QUANT_TYPES) {
    const out = join(dir, `tiny256.${type}.gguf`);
    llamaTool('quantize', ['--imatrix', im, tiny256, out, type, '1']);
    const h = readGgufHeaderSync(out);
    golden[type] = {};
    for (const t of h.tensors.filter((x) => x.name.startsWith('blk.'))) {
      const bytes = readTensorBytes(out, h, t.name);
      const rows = bytes.subarray(0, (bytes.length / t.dims[1]) * Math.min(GOLDEN_ROWS, t.dims[1]));
      golden[type][t.name] = { type: ggmlTypeName(t.type), sha256: createHash('sha256').update(rows).digest('hex') };
    }
  }
  writeFileSync(join(OUT, 'quantized.json'), `${JSON.stringify({ llamaCpp: 'llama-quantize (llama.cpp v0.4.0 via node-llama-cpp 3.21.1 libraries)', model: 'tiny256 (bench/make-tiny256.ts)', rows: GOLDEN_ROWS, imatrix: 'tiny256.imatrix', types: golden }, null, 1)}\n`);
  console.log(`wrote ${join(OUT, 'quantized.json')}`);
} finally {
  process.chdir(here);
}
