// "Structured output" in the sampling panel: the reply constrained to any JSON object, a pasted
// JSON schema, or a GBNF grammar (llama.cpp's format), by grammar-constrained sampling.

import { useEffect, useState } from 'react';
import { useStructured, type StructuredKind } from '../store/structured.js';

const KINDS: { kind: StructuredKind; label: string }[] = [
  { kind: 'off', label: 'Off (free text)' },
  { kind: 'json', label: 'JSON (any object)' },
  { kind: 'json-schema', label: 'JSON schema' },
  { kind: 'gbnf', label: 'Grammar (GBNF)' },
];

const PLACEHOLDER: Partial<Record<StructuredKind, string>> = {
  'json-schema': '{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}',
  gbnf: 'root ::= "yes" | "no"',
};

export function StructuredOutputField() {
  const { kind, schema, grammar, set } = useStructured();
  const current = kind === 'json-schema' ? schema : kind === 'gbnf' ? grammar : '';
  const [text, setText] = useState(current);
  useEffect(() => setText(current), [current, kind]);
  const commit = (): void => {
    if (kind === 'json-schema') set({ schema: text });
    else if (kind === 'gbnf') set({ grammar: text });
  };
  // a schema that is not JSON is said here, before a reply fails on it
  let problem: string | null = null;
  if (kind === 'json-schema' && text.trim() !== '') {
    try {
      JSON.parse(text);
    } catch {
      problem = 'This is not valid JSON yet.';
    }
  }
  return (
    <div className="field">
      <label htmlFor="structured-kind">Structured output</label>
      <select id="structured-kind" value={kind} title="Constrain the reply with a grammar: every token that cannot continue a valid output is masked" onChange={(e) => set({ kind: e.target.value as StructuredKind })}>
        {KINDS.map((k) => (
          <option key={k.kind} value={k.kind}>
            {k.label}
          </option>
        ))}
      </select>
      {(kind === 'json-schema' || kind === 'gbnf') && (
        <textarea id="structured-text" aria-label={kind === 'gbnf' ? 'GBNF grammar' : 'JSON schema'} rows={5} spellCheck={false} value={text} placeholder={PLACEHOLDER[kind]} onChange={(e) => setText(e.target.value)} onBlur={commit} />
      )}
      {problem && <p className="line line-error">{problem}</p>}
    </div>
  );
}
