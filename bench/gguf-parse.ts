// Benchmark: inspecting a big vocab header (128k tokens, 280k merges). Not a test: prints timings.
// Usage: npm run bench:gguf [-- FILE]
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { readGgufHeader, readGgufHeaderSync } from '../src/engine/gguf/file.js';
import { parseGgufHeader } from '../src/engine/gguf/parse.js';

const file = process.argv[2] ?? resolve(import.meta.dirname ?? '.', '../../shared/models/llama.cpp-vocab/ggml-vocab-llama-bpe.gguf');
const size = statSync(file).size;
const bytes = new Uint8Array(readFileSync(file));

function time(label: string, runs: number, fn: () => unknown): void {
  fn(); // warm-up
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  console.log(`${label.padEnd(34)} median ${t[t.length >> 1].toFixed(1)} ms   min ${t[0].toFixed(1)} ms   (${runs} runs)`);
}

console.log(`${file} (${(size / 1e6).toFixed(1)} MB)`);
time('parse (bytes in memory)', 10, () => parseGgufHeader(bytes, size));
time('readGgufHeaderSync (from disk)', 10, () => readGgufHeaderSync(file));
const t: number[] = [];
for (let i = 0; i < 10; i++) {
  const t0 = performance.now();
  await readGgufHeader(file);
  t.push(performance.now() - t0);
}
t.sort((a, b) => a - b);
console.log(`${'readGgufHeader (async, from disk)'.padEnd(34)} median ${t[5].toFixed(1)} ms   min ${t[0].toFixed(1)} ms   (10 runs)`);
