// `pantheon diff A.gguf B.gguf [--json]`: metadata keys added, removed and changed; tensors added,
// removed, retyped or reshaped; and per common tensor whose bytes differ, the relative RMS
// difference ‖a − b‖₂ / ‖a‖₂ of the dequantised values and the largest |a − b|.

import { closeSync, openSync } from 'node:fs';
import { UsageError } from '../../shared/errors.js';
import { readGgufHeader } from '../../engine/gguf/file.js';
import { diffModels } from '../../engine/inspect/model-diff.js';
import { parseArgs } from '../args.js';
import type { Command } from '../command.js';
import { table } from '../format.js';

export const diffCommand: Command = {
  name: 'diff',
  usage: 'diff A.gguf B.gguf [--json]',
  summary: 'what differs between two files: metadata, tensors, and how far apart the common tensors are',
  async run(argv, io) {
    const args = parseArgs(argv, [], ['json']);
    if (args.positionals.length !== 2) throw new UsageError('diff takes two files, A and B');
    const [fileA, fileB] = args.positionals;
    const a = await readGgufHeader(fileA);
    const b = await readGgufHeader(fileB);
    const fdA = openSync(fileA, 'r');
    try {
      const fdB = openSync(fileB, 'r');
      try {
        const progress = io.isTty && !args.options.has('json')
          ? (done: number, total: number) => process.stderr.write(`\rcomparing tensors ${done}/${total}${done === total ? '\n' : ''}`)
          : undefined;
        const d = diffModels(fdA, a, fdB, b, { onProgress: progress });
        if (args.options.has('json')) {
          const { unchanged: _unchanged, ...tensors } = d.tensors;
          io.out(JSON.stringify({ metadata: d.metadata, tensors }));
          return 0;
        }
        const list = (label: string, xs: string[]) => { if (xs.length) io.out(`${label} (${xs.length}): ${xs.join(', ')}`); };
        list('metadata added', d.metadata.added);
        list('metadata removed', d.metadata.removed);
        list('metadata changed', d.metadata.changed);
        list('tensors added', d.tensors.added);
        list('tensors removed', d.tensors.removed);
        if (d.tensors.changed.length) {
          const rows = [...d.tensors.changed]
            .sort((x, y) => (y.relRms ?? Infinity) - (x.relRms ?? Infinity))
            .map((c) => [c.name, c.a.type === c.b.type ? c.a.type : `${c.a.type} → ${c.b.type}`,
              c.a.dims.join('×') === c.b.dims.join('×') ? c.a.dims.join('×') : `${c.a.dims.join('×')} → ${c.b.dims.join('×')}`,
              c.relRms === null ? '-' : c.relRms.toExponential(3), c.maxAbs === null ? '-' : c.maxAbs.toExponential(3)]);
          io.out(table(['tensor', 'type', 'dims', 'rel RMS', 'max |Δ|'], rows, [3, 4]));
        }
        io.out(`${d.tensors.changed.length} tensors differ, ${d.tensors.unchanged} identical`);
        return 0;
      } finally {
        closeSync(fdB);
      }
    } finally {
      closeSync(fdA);
    }
  },
};
