// `pantheon stats FILE TENSOR [--json] [--bins N]`: one tensor's statistics over its dequantised
// values: min, max, mean, population standard deviation, zeros, non-finite values, a histogram of
// equal-width bins from min to max, and for block formats the spread of the blocks' scales.

import { closeSync, openSync } from 'node:fs';
import { UsageError } from '../../shared/errors.js';
import { readGgufHeader } from '../../engine/gguf/file.js';
import { findTensor } from '../../engine/inspect/tensor-chunks.js';
import { tensorStats, type Histogram } from '../../engine/inspect/tensor-stats.js';
import { optNumber, parseArgs } from '../args.js';
import type { Command } from '../command.js';

const num = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** One line per bin: its range, a bar scaled to the fullest bin, the count. */
function histogramLines(hist: Histogram, width = 40): string[] {
  const top = Math.max(1, ...hist.counts);
  return hist.counts.map((c, i) => {
    const bar = '#'.repeat(Math.round((c / top) * width));
    return `  [${hist.edges[i].toPrecision(4).padStart(11)}, ${hist.edges[i + 1].toPrecision(4).padStart(11)}${i === hist.counts.length - 1 ? ']' : ')'} ${bar.padEnd(width)} ${c}`;
  });
}

export const statsCommand: Command = {
  name: 'stats',
  usage: 'stats FILE TENSOR [--json] [--bins N]',
  summary: "one tensor's statistics: min, max, mean, std, zeros, non-finite values, a histogram, block scales",
  async run(argv, io) {
    const args = parseArgs(argv, ['bins'], ['json']);
    if (args.positionals.length !== 2) throw new UsageError('stats takes FILE and TENSOR');
    const [file, name] = args.positionals;
    const bins = optNumber(args, 'bins', 64, { int: true, min: 1, max: 4096 });
    const h = await readGgufHeader(file);
    const t = findTensor(h, name);
    const fd = openSync(file, 'r');
    try {
      const s = tensorStats(fd, h, t, { bins });
      if (args.options.has('json')) {
        io.out(JSON.stringify({
          name: s.name, type: s.type, dims: s.dims, elements: s.elements,
          min: num(s.min), max: num(s.max), mean: num(s.mean), std: num(s.std), zeros: s.zeros, nonfinite: s.nonfinite,
          histogram: s.histogram,
          ...(s.scales ? { scales: s.scales } : {}),
        }));
        return 0;
      }
      io.out(`${s.name}: ${s.type} [${s.dims.join(', ')}], ${s.elements} elements`);
      io.out(`  min ${s.min}  max ${s.max}  mean ${s.mean}  std ${s.std}`);
      io.out(`  zeros ${s.zeros}  non-finite ${s.nonfinite}`);
      io.out(`histogram (${bins} bins):`);
      for (const l of histogramLines(s.histogram)) io.out(l);
      if (s.scales) {
        io.out(`block scales: ${s.scales.count} blocks, min ${s.scales.min}, max ${s.scales.max}`);
      }
      return 0;
    } finally {
      closeSync(fd);
    }
  },
};
