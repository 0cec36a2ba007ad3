// Records llama-imatrix's importance matrices of tiny models over tests/quant/imatrix-text.ts's
// text into tests/golden/llama.cpp/imatrix/<model>.imatrix (GGUF) and <model>.dat (legacy), the
// truth tests/quant/imatrix.test.ts compares Pantheon's `imatrix` with.
// Run: npx tsx bench/record-imatrix-goldens.ts (needs g++, bench/node_modules, the llama.cpp source).

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GOLDEN_CHUNKS, GOLDEN_CTX, GOLDEN_DATASET, imatrixText } from '../tests/quant/imatrix-text.js';
import { llamaImatrix, llamaImatrixBinary } from './llama-tools.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MODELS = join(ROOT, '..', 'shared', 'models', 'tiny-random');
const OUT = join(ROOT, 'tests', 'golden', 'llama.cpp', 'imatrix');
export const IMATRIX_GOLDEN_MODELS = ['tiny-llama-s5', 'tiny-qwen3moe-s1'];

mkdirSync(OUT, { recursive: true });
const dir = dirname(llamaImatrixBinary());
writeFileSync(join(dir, GOLDEN_DATASET), imatrixText());
const here = process.cwd();
process.chdir(dir); // so the dataset is recorded as the bare file name
try {
  for (const m of IMATRIX_GOLDEN_MODELS) {
    for (const [ext, fmt] of [['imatrix', 'gguf'], ['dat', 'dat']] as const) {
      const out = join(OUT, `${m}.${ext}`);
      llamaImatrix(['-m', join(MODELS, `${m}.gguf`), '-f', GOLDEN_DATASET, '-o', out, '-c', String(GOLDEN_CTX), '--chunks', String(GOLDEN_CHUNKS), '-t', '1', '--output-format', fmt]);
      console.log(`wrote ${out}`);
    }
  }
} finally {
  process.chdir(here);
}
