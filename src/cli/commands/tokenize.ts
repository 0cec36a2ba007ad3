// `pantheon tokenize MODEL TEXT [--json] [--add-special] [--parse-special]`: the token ids of a
// text under a model's tokenizer, each with its vocab piece, as llama.cpp would produce them.

import { UsageError } from '../../shared/errors.js';
import { readGgufHeader } from '../../engine/gguf/file.js';
import { tokenizerFromGguf } from '../../engine/tokenizer/index.js';
import { parseArgs } from '../args.js';
import type { Command } from '../command.js';

export const tokenizeCommand: Command = {
  name: 'tokenize',
  usage: 'tokenize MODEL TEXT [--json] [--add-special] [--parse-special]',
  summary: 'print the token ids of TEXT with their vocab pieces (--add-special: BOS/EOS as the model asks; --parse-special: "<|im_start|>" etc. become tokens)',
  async run(argv, io) {
    const args = parseArgs(argv, [], ['json', 'add-special', 'parse-special']);
    if (args.positionals.length !== 2) throw new UsageError('tokenize takes a MODEL file and one TEXT argument (quote it)');
    const [path, text] = args.positionals;
    const tok = tokenizerFromGguf(await readGgufHeader(path));
    const ids = tok.encode(text, { addSpecial: args.options.has('add-special'), parseSpecial: args.options.has('parse-special') });
    const pieces = ids.map((id) => tok.piece(id));
    if (args.options.has('json')) io.out(JSON.stringify({ tokens: ids, pieces }));
    else io.out(ids.map((id, i) => `${id}\t${JSON.stringify(pieces[i])}`).join('\n'));
    return 0;
  },
};
