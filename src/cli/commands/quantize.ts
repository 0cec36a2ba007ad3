// `pantheon quantize IN.gguf OUT.gguf --type TYPE`: quantise a model with llama.cpp's recipe (which
// tensors get which type), ggml's reference quantisers, and a summary of what went where.

import { availableParallelism } from 'node:os';
import { GgufError, UsageError } from '../../shared/errors.js';
import { ggmlTypeName } from '../../engine/gguf/ggml-types.js';
import { readImatrix } from '../../engine/quant/imatrix.js';
import { quantizeModelFileThreaded, type QuantizedTensor } from '../../engine/quant/model.js';
import { fileTypeByName, fileTypeNames } from '../../engine/quant/recipe.js';
import { optNumber, optString, parseArgs } from '../args.js';
import type { Command } from '../command.js';
import { formatBytes, table } from '../format.js';
import { scaleKernel } from '../../engine/quant/quant-kernel.js';

function progressLine(done: number, total: number, name: string): string {
  const width = 30;
  const filled = Math.round((done / total) * width);
  return `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${name}`.padEnd(100).slice(0, 100);
}

function summaryTable(tensors: QuantizedTensor[]): string {
  const rows = new Map<string, { tensors: number; bytesIn: number; bytesOut: number }>();
  for (const t of tensors) {
    const key = ggmlTypeName(t.to);
    const r = rows.get(key) ?? { tensors: 0, bytesIn: 0, bytesOut: 0 };
    r.tensors++;
    r.bytesIn += t.bytesIn;
    r.bytesOut += t.bytesOut;
    rows.set(key, r);
  }
  const sorted = [...rows].sort((a, b) => b[1].bytesOut - a[1].bytesOut);
  return table(['type', 'tensors', 'from', 'to'], sorted.map(([type, r]) => [type, String(r.tensors), formatBytes(r.bytesIn), formatBytes(r.bytesOut)]), [1, 2, 3]);
}

export const quantizeCommand: Command = {
  name: 'quantize',
  usage: `quantize IN.gguf OUT.gguf --type ${fileTypeNames().join('|')} [--imatrix FILE] [--threads N]`,
  summary: "quantise a model with llama.cpp's per-tensor recipe (Q3_K, Q4_K, Q5_K mean the _M mixes, as in llama-quantize), weighting by an importance matrix with --imatrix (from `pantheon imatrix` or llama-imatrix, GGUF or .dat), each tensor's rows split over --threads N (default: all cores)",
  async run(argv, io) {
    const args = parseArgs(argv, ['type', 'threads', 'imatrix'], []);
    if (args.positionals.length !== 2) throw new UsageError('quantize takes IN.gguf and OUT.gguf');
    const [inPath, outPath] = args.positionals;
    const typeName = optString(args, 'type');
    if (!typeName) throw new UsageError('quantize needs --type, e.g. --type Q4_K_M');
    const ft = fileTypeByName(typeName);
    if (!ft) throw new UsageError(`--type must be one of ${fileTypeNames().join(', ')} (not "${typeName}")`);
    if (inPath === outPath) throw new UsageError('OUT.gguf must be a different file from IN.gguf');
    const threads = optNumber(args, 'threads', availableParallelism(), { int: true, min: 1, max: 256 });
    const imatrixPath = optString(args, 'imatrix');
    const imatrix = imatrixPath !== undefined ? { imatrix: readImatrix(imatrixPath), path: imatrixPath } : undefined;
    const tty = io.isTty && Boolean(process.stderr.isTTY);
    // the same bytes either way, but the TypeScript reference is several times slower: say so
    if (process.env.PANTHEON_QUANT_WASM !== '0' && !scaleKernel()) io.err('note: the quantiser\'s WebAssembly kernels did not load, so it runs on the slower TypeScript reference (same bytes); run "npm run build:wasm"');
    let summary;
    try {
      summary = await quantizeModelFileThreaded(inPath, outPath, ft, {
        threads,
        imatrix,
        onTensor: (done, total, t) => {
          if (tty) process.stderr.write(progressLine(done, total, t.name));
        },
      });
    } finally {
      if (tty) process.stderr.write(`\r${' '.repeat(100)}\r`);
    }
    if (summary.elements === 0) throw new GgufError('GGUF_BAD_TENSOR', 'the input has no tensors to quantise');
    io.out(`${inPath} → ${outPath} (${ft.name}, general.file_type ${ft.ftype}${imatrix ? `, importance matrix ${imatrixPath}: ${imatrix.imatrix.entries.size} entries` : ''})`);
    io.out(summaryTable(summary.tensors));
    const bpw = (bytes: number) => ((bytes * 8) / summary.elements).toFixed(2);
    io.out(`size ${formatBytes(summary.bytesIn)} (${bpw(summary.bytesIn)} bits/weight) → ${formatBytes(summary.bytesOut)} (${bpw(summary.bytesOut)} bits/weight)`);
    const fallbacks = summary.tensors.filter((t) => t.wanted !== undefined);
    if (fallbacks.length) {
      io.out(`${fallbacks.length} tensor(s) used a fallback type because their rows do not fit the wanted type's blocks:`);
      for (const t of fallbacks) io.out(`  ${t.name}: rows of ${t.dims[0]} do not fit ${ggmlTypeName(t.wanted!)} → ${ggmlTypeName(t.to)}`);
    }
    return 0;
  },
};
