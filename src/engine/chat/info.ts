// TemplateInfo from a parsed GGUF header: the template, the BOS/EOS token texts, the architecture
// and name, and which chat marker and reasoning marker tokens the vocabulary holds.

import { getArray, getNumber, getString } from '../gguf/keys.js';
import type { GgufHeader, GgufValue } from '../gguf/types.js';
import { CHAT_MARKER_TOKENS } from './detect.js';
import { REASONING_MARKER_TOKENS } from './reasoning.js';
import type { TemplateInfo } from './types.js';

function tokenText(tokens: GgufValue[] | undefined, id: number | undefined): string {
  if (!tokens || id === undefined || !Number.isInteger(id) || id < 0 || id >= tokens.length) return '';
  const t = tokens[id];
  return typeof t === 'string' ? t : '';
}

export function templateInfoFromGguf(h: GgufHeader): TemplateInfo {
  const tokens = getArray(h, 'tokenizer.ggml.tokens');
  const wanted = new Set([...CHAT_MARKER_TOKENS, ...REASONING_MARKER_TOKENS]);
  const found: string[] = [];
  if (tokens) {
    for (const t of tokens) if (typeof t === 'string' && wanted.has(t) && !found.includes(t)) found.push(t);
  }
  return {
    template: getString(h, 'tokenizer.chat_template') ?? null,
    bosToken: tokenText(tokens, getNumber(h, 'tokenizer.ggml.bos_token_id')),
    eosToken: tokenText(tokens, getNumber(h, 'tokenizer.ggml.eos_token_id')),
    architecture: getString(h, 'general.architecture') ?? null,
    name: getString(h, 'general.name') ?? null,
    vocabMarkers: found,
  };
}
