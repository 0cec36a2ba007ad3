// The app's "Structured output" setting (contract StructuredOutput) as GBNF for the session.

import { UsageError } from '../../shared/errors.js';
import type { StructuredOutput } from '../../shared/contract.js';
import { JSON_OBJECT_GBNF, jsonSchemaToGbnf } from './json-schema.js';

/** The grammar for a structured-output setting, or undefined for free text. Throws UsageError. */
export function structuredGrammar(s: StructuredOutput | undefined): string | undefined {
  switch (s?.kind) {
    case undefined:
    case 'off':
      return undefined;
    case 'json':
      return JSON_OBJECT_GBNF;
    case 'json-schema': {
      let schema: unknown;
      try {
        schema = JSON.parse(s.schema);
      } catch (err) {
        throw new UsageError(`The structured-output schema is not JSON: ${(err as Error).message}`);
      }
      return jsonSchemaToGbnf(schema);
    }
    case 'gbnf':
      return s.grammar;
  }
}
