// `pantheon imatrix MODEL TEXT -o OUT [--chunks N] [--ctx N]`: the importance matrix of a model
// over a text, as llama.cpp's llama-imatrix computes it, written in llama.cpp's imatrix GGUF format
// (or its legacy .dat format with --output-format dat); `pantheon quantize --imatrix` and
// llama-quantize --imatrix both read either.

import { readFileSync } from 'node:fs';
import { UsageError } from '../../shared/errors.js';
import { computeImatrix, IMATRIX_DEFAULT_CTX } from '../../engine/imatrix-run.js';
import { writeImatrix } from '../../engine/quant/imatrix.js';
import { optNumber, optString, parseArgs } from '../args.js';
import type { Command } from '../command.js';

function progressLine(done: number, total: number, seconds: number): string {
  const width = 30;
  const filled = Math.round((done / total) * width);
  const eta = done > 0 ? (seconds / done) * (total - done) : 0;
  return `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] chunk ${done}/${total}, ${seconds.toFixed(0)} s, about ${eta.toFixed(0)} s left`.padEnd(80);
}

export const imatrixCommand: Command = {
  name: 'imatrix',
  usage: 'imatrix MODEL TEXTFILE -o OUT.imatrix [--chunks N] [--ctx N] [--threads N] [--output-format gguf|dat]',
  summary: "compute an importance matrix (llama-imatrix's mean squared activations per matrix column) over a text, for quantize --imatrix",
  async run(argv, io) {
    const args = parseArgs(argv, ['o', 'output', 'chunks', 'ctx', 'threads', 'output-format'], []);
    if (args.positionals.length !== 2) throw new UsageError('imatrix takes MODEL and TEXTFILE');
    const [modelPath, textPath] = args.positionals;
    const outPath = optString(args, 'o') ?? optString(args, 'output');
    if (!outPath) throw new UsageError('imatrix needs -o OUT.imatrix');
    const format = optString(args, 'output-format') ?? 'gguf';
    if (format !== 'gguf' && format !== 'dat') throw new UsageError(`--output-format must be gguf or dat (not "${format}")`);
    const ctx = optNumber(args, 'ctx', IMATRIX_DEFAULT_CTX, { int: true, min: 16, max: 1 << 20 });
    const chunks = args.options.has('chunks') ? optNumber(args, 'chunks', 0, { int: true, min: 1 }) : undefined;
    const threads = optNumber(args, 'threads', 1, { int: true, min: 1, max: 256 });
    let text: string;
    try {
      text = readFileSync(textPath, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read ${textPath}: ${(e as Error).message}`);
    }
    const tty = Boolean(process.stderr.isTTY);
    const t0 = performance.now();
    let im;
    try {
      im = await computeImatrix(modelPath, text, {
        ctx, chunks, threads, dataset: textPath,
        onChunk: (done, total) => {
          if (tty) process.stderr.write(progressLine(done, total, (performance.now() - t0) / 1000));
        },
      });
    } finally {
      if (tty) process.stderr.write(`\r${' '.repeat(80)}\r`);
    }
    writeImatrix(outPath, im, format);
    io.out(`${outPath}: ${im.entries.size} matrices over ${im.chunkCount} chunks of ${ctx} tokens (${format === 'gguf' ? "llama.cpp's imatrix GGUF" : 'legacy .dat'})`);
    return 0;
  },
};
