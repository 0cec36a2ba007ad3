// `--json-schema FILE` / `--grammar FILE` of `pantheon run` and `chat`: the GBNF the output must
// match (a JSON schema is compiled as llama.cpp's json-schema-to-grammar does). Checked before the
// model loads, so a bad file is one line, not a load then a failure.

import { readFileSync } from 'node:fs';
import { UsageError } from '../shared/errors.js';
import { compileGrammar } from '../engine/grammar/matcher.js';
import { jsonSchemaToGbnf } from '../engine/grammar/json-schema.js';
import { optString, type ParsedArgs } from './args.js';

export const GRAMMAR_OPTIONS = ['json-schema', 'grammar'];

function readText(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read --${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** The GBNF from --json-schema or --grammar, or undefined for neither. Throws UsageError. */
export function grammarOption(args: ParsedArgs): string | undefined {
  const schemaFile = optString(args, 'json-schema');
  const grammarFile = optString(args, 'grammar');
  if (schemaFile !== undefined && grammarFile !== undefined) throw new UsageError('give --json-schema or --grammar, not both');
  let gbnf: string | undefined;
  if (schemaFile !== undefined) {
    let schema: unknown;
    try {
      schema = JSON.parse(readText('json-schema', schemaFile));
    } catch (err) {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`--json-schema ${schemaFile} is not JSON: ${(err as Error).message}`);
    }
    gbnf = jsonSchemaToGbnf(schema);
  } else if (grammarFile !== undefined) gbnf = readText('grammar', grammarFile);
  if (gbnf !== undefined) compileGrammar(gbnf); // parse errors now
  return gbnf;
}
