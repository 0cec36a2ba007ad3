// Checks for payloads that arrive from the page (over IPC, a MessagePort or the harness WebSocket).
// The page is untrusted input: every field is checked for type and range before use, and a bad
// payload fails with one UsageError line naming the field. Used by the engine host (generation
// requests) and by main's request handlers (src/main/services/validate.ts).

import { UsageError } from '../../shared/errors.js';
import type { ChatRole, GenerateRequest, RequestMessage, SamplingSettings, StructuredOutput } from '../../shared/contract.js';
import { CONTEXT_POLICIES } from '../chat/context-policy.js';

export type Fields = Record<string, unknown>;

export function record(v: unknown, what: string): Fields {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new UsageError(`${what} must be an object.`);
  return v as Fields;
}

export function string(v: unknown, what: string, maxLength: number): string {
  if (typeof v !== 'string') throw new UsageError(`${what} must be a string.`);
  if (v.length > maxLength) throw new UsageError(`${what} is too long (${v.length} characters; at most ${maxLength}).`);
  return v;
}

export function number(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new UsageError(`${what} must be a finite number.`);
  if (v < min || v > max) throw new UsageError(`${what} must be between ${min} and ${max} (got ${v}).`);
  return v;
}

export function integer(v: unknown, what: string, min: number, max: number): number {
  const n = number(v, what, min, max);
  if (!Number.isInteger(n)) throw new UsageError(`${what} must be a whole number (got ${n}).`);
  return n;
}

export function oneOf<T extends string>(v: unknown, what: string, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw new UsageError(`${what} must be one of ${allowed.map((a) => `"${a}"`).join(', ')}.`);
  }
  return v as T;
}

export function array(v: unknown, what: string, maxItems: number): unknown[] {
  if (!Array.isArray(v)) throw new UsageError(`${what} must be an array.`);
  if (v.length > maxItems) throw new UsageError(`${what} has too many items (${v.length}; at most ${maxItems}).`);
  return v;
}

// Limits: generous for real use, small enough that a hostile page cannot make us allocate much.
export const MAX_MESSAGE_CHARS = 4_000_000;
export const MAX_MESSAGES = 10_000;
export const MAX_STOP_STRINGS = 16;
export const MAX_STOP_CHARS = 256;

const ROLES: readonly ChatRole[] = ['system', 'user', 'assistant'];

export function chatMessages(v: unknown, what = 'messages'): RequestMessage[] {
  return array(v, what, MAX_MESSAGES).map((m, i) => {
    const r = record(m, `${what}[${i}]`);
    const out: RequestMessage = { role: oneOf(r.role, `${what}[${i}].role`, ROLES), content: string(r.content, `${what}[${i}].content`, MAX_MESSAGE_CHARS) };
    if (r.reasoning !== undefined) out.reasoning = string(r.reasoning, `${what}[${i}].reasoning`, MAX_MESSAGE_CHARS);
    return out;
  });
}

/** Every sampling field, checked; ranges follow what llama.cpp's samplers accept sensibly. */
export function samplingSettings(v: unknown, what = 'sampling'): SamplingSettings {
  const s = record(v, what);
  return {
    temperature: number(s.temperature, `${what}.temperature`, 0, 100),
    topK: integer(s.topK, `${what}.topK`, 0, 1 << 24),
    topP: number(s.topP, `${what}.topP`, 0, 1),
    minP: number(s.minP, `${what}.minP`, 0, 1),
    repeatPenalty: number(s.repeatPenalty, `${what}.repeatPenalty`, 0, 100),
    presencePenalty: number(s.presencePenalty, `${what}.presencePenalty`, -100, 100),
    frequencyPenalty: number(s.frequencyPenalty, `${what}.frequencyPenalty`, -100, 100),
    penaltyLastN: integer(s.penaltyLastN, `${what}.penaltyLastN`, -1, 1 << 24),
    seed: integer(s.seed, `${what}.seed`, -1, 0xffffffff),
    maxTokens: integer(s.maxTokens, `${what}.maxTokens`, -1, 1 << 24),
    stop: array(s.stop, `${what}.stop`, MAX_STOP_STRINGS).map((x, i) => string(x, `${what}.stop[${i}]`, MAX_STOP_CHARS)),
  };
}

export function generateRequest(v: unknown): GenerateRequest {
  const r = record(v, 'generate request');
  const messages = chatMessages(r.messages);
  if (messages.length === 0) throw new UsageError('messages must hold at least one message.');
  const policy = r.contextPolicy === undefined ? {} : { contextPolicy: oneOf(r.contextPolicy, 'contextPolicy', CONTEXT_POLICIES) };
  const structured = r.structured === undefined ? undefined : structuredOutput(r.structured);
  return { messages, sampling: samplingSettings(r.sampling), ...policy, ...(structured ? { structured } : {}) };
}

const MAX_GRAMMAR_CHARS = 1 << 20;

export function structuredOutput(v: unknown): StructuredOutput {
  const s = record(v, 'structured');
  switch (s.kind) {
    case 'off':
    case 'json':
      return { kind: s.kind };
    case 'json-schema':
      return { kind: 'json-schema', schema: string(s.schema, 'structured.schema', MAX_GRAMMAR_CHARS) };
    case 'gbnf':
      return { kind: 'gbnf', grammar: string(s.grammar, 'structured.grammar', MAX_GRAMMAR_CHARS) };
    default:
      throw new UsageError('structured.kind must be off, json, json-schema or gbnf.');
  }
}
