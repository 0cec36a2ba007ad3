// The "Structured output" choice of the sampling panel (off / any JSON object / a pasted JSON
// schema / a GBNF grammar), sent with every generate request; kept for the app session, with the
// texts of both kinds so switching back and forth keeps what was pasted.

import { create } from 'zustand';
import type { StructuredOutput } from '../../shared/contract.js';

export type StructuredKind = StructuredOutput['kind'];

export interface StructuredState {
  kind: StructuredKind;
  schema: string;
  grammar: string;
  set(patch: Partial<Pick<StructuredState, 'kind' | 'schema' | 'grammar'>>): void;
}

export const useStructured = create<StructuredState>()((set) => ({
  kind: 'off',
  schema: '',
  grammar: '',
  set: (patch) => set(patch),
}));

/** What to send with a generate request, or undefined for free text. */
export function structuredRequest(s: Pick<StructuredState, 'kind' | 'schema' | 'grammar'>): StructuredOutput | undefined {
  switch (s.kind) {
    case 'off':
      return undefined;
    case 'json':
      return { kind: 'json' };
    case 'json-schema':
      return { kind: 'json-schema', schema: s.schema };
    case 'gbnf':
      return { kind: 'gbnf', grammar: s.grammar };
  }
}
