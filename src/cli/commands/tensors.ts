// `pantheon tensors FILE [--filter REGEX] [--sort name|size|offset|type]`: the tensor table.

import { UsageError } from '../../shared/errors.js';
import { readGgufHeader } from '../../engine/gguf/file.js';
import { ggmlTypeName } from '../../engine/gguf/ggml-types.js';
import type { GgufTensorInfo } from '../../engine/gguf/types.js';
import { optString, parseArgs } from '../args.js';
import type { Command } from '../command.js';
import { formatBytes, table } from '../format.js';

const SORTS: Record<string, (a: GgufTensorInfo, b: GgufTensorInfo) => number> = {
  name: (a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }),
  size: (a, b) => b.bytes - a.bytes || a.offset - b.offset,
  offset: (a, b) => a.offset - b.offset,
  type: (a, b) => ggmlTypeName(a.type).localeCompare(ggmlTypeName(b.type)) || a.offset - b.offset,
};

export const tensorsCommand: Command = {
  name: 'tensors',
  usage: 'tensors FILE [--filter REGEX] [--sort name|size|offset|type]',
  summary: 'list the tensor table: name, type, shape, elements, bytes, offset',
  async run(argv, io) {
    const args = parseArgs(argv, ['filter', 'sort'], []);
    if (args.positionals.length !== 1) throw new UsageError('tensors takes one FILE');
    const sort = optString(args, 'sort') ?? 'offset';
    if (!SORTS[sort]) throw new UsageError(`--sort must be one of name, size, offset, type (not "${sort}")`);
    const filterText = optString(args, 'filter');
    let filter: RegExp | undefined;
    if (filterText !== undefined) {
      try {
        filter = new RegExp(filterText);
      } catch {
        throw new UsageError(`--filter "${filterText}" is not a valid regular expression`);
      }
    }
    const h = await readGgufHeader(args.positionals[0]);
    const list = h.tensors.filter((t) => !filter || filter.test(t.name)).sort(SORTS[sort]);
    const rows = list.map((t) => [t.name, ggmlTypeName(t.type), `[${t.dims.join(', ')}]`, String(t.elements), formatBytes(t.bytes), String(t.offset)]);
    io.out(table(['name', 'type', 'dims', 'elements', 'bytes', 'offset'], rows, [3, 4, 5]));
    io.out(`${list.length} of ${h.tensors.length} tensors, ${formatBytes(list.reduce((a, t) => a + t.bytes, 0))}`);
    return 0;
  },
};
