// OpenAI request bodies (POST /v1/chat/completions, /v1/completions) checked field by field and
// mapped to the engine's shapes: messages for the chat template, SamplingParams for the sampler.
// Unknown fields are ignored, as OpenAI-compatible servers do; a known field of the wrong type is
// a 400 naming it.

import type { ChatMessage } from '../chat/index.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../sample/index.js';
import { responseFormatGrammar } from './response-format.js';

/** An error answered as `{"error": {message, type, param, code}}` with an HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type: string = status === 401 ? 'authentication_error' : status >= 500 ? 'server_error' : 'invalid_request_error',
  ) {
    super(message);
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

type Body = Record<string, unknown>;

const bad = (param: string, want: string): never => {
  throw new ApiError(400, `'${param}' must be ${want}`, param, 'invalid_type');
};

/** Absent and null both mean "not given". */
function num(b: Body, name: string, opts: { int?: boolean; min?: number; max?: number } = {}): number | undefined {
  const v = b[name];
  if (v === undefined || v === null) return undefined;
  const range = opts.min !== undefined && opts.max !== undefined ? ` from ${opts.min} to ${opts.max}` : opts.min !== undefined ? ` of at least ${opts.min}` : '';
  const want = `${opts.int ? 'an integer' : 'a number'}${range}`;
  if (typeof v !== 'number' || !Number.isFinite(v) || (opts.int && !Number.isInteger(v))) return bad(name, want);
  if ((opts.min !== undefined && v < opts.min) || (opts.max !== undefined && v > opts.max)) return bad(name, want);
  return v;
}

function bool(b: Body, name: string): boolean | undefined {
  const v = b[name];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'boolean' ? v : bad(name, 'a boolean');
}

function stopList(b: Body): string[] {
  const v = b.stop;
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v as string[];
  return bad('stop', 'a string or an array of strings');
}

export interface GenerationRequest {
  /** The `model` field, when given. */
  model: string | undefined;
  stream: boolean;
  includeUsage: boolean;
  sampling: SamplingParams;
  /** GBNF from response_format (response-format.ts), or undefined for free text. */
  grammar?: string;
}

export interface ChatRequest extends GenerationRequest {
  messages: ChatMessage[];
}

export interface CompletionRequest extends GenerationRequest {
  prompt: string;
}

function object(v: unknown): Body {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ApiError(400, 'the request body must be a JSON object', null, 'invalid_json');
  return v as Body;
}

/**
 * Fields of the API this server does not implement yet: a 400 naming the field rather than a reply
 * that silently ignores it (an unconstrained reply to a JSON schema, no tool call when one is required).
 */
function unsupported(b: Body): void {
  const no = (param: string) => {
    throw new ApiError(400, `'${param}' is not supported by this server yet`, param, 'unsupported_parameter');
  };
  if (b.logprobs === true || (typeof b.logprobs === 'number' && b.logprobs > 0)) no('logprobs');
  if (typeof b.top_logprobs === 'number' && b.top_logprobs > 0) no('top_logprobs');
  if (typeof b.logit_bias === 'object' && b.logit_bias !== null && Object.keys(b.logit_bias).length > 0) no('logit_bias');
  if (Array.isArray(b.tools) && b.tools.length > 0 && b.tool_choice !== 'none') no('tools');
  if (b.echo === true) no('echo');
  if (typeof b.suffix === 'string' && b.suffix !== '') no('suffix');
}

/** The fields both endpoints share. */
function generation(b: Body, maxTokensField: string): GenerationRequest {
  unsupported(b);
  const model = b.model;
  if (model !== undefined && model !== null && typeof model !== 'string') bad('model', 'a string');
  const n = num(b, 'n', { int: true, min: 1 });
  if (n !== undefined && n !== 1) throw new ApiError(400, "'n' must be 1: one choice per request is supported", 'n', 'unsupported_value');
  const stream = bool(b, 'stream') ?? false;
  const so = b.stream_options;
  let includeUsage = false;
  if (so !== undefined && so !== null) {
    if (typeof so !== 'object' || Array.isArray(so)) bad('stream_options', 'an object');
    const inc = (so as Body).include_usage;
    if (inc !== undefined && inc !== null && typeof inc !== 'boolean') bad('stream_options.include_usage', 'a boolean');
    includeUsage = inc === true;
  }
  const maxTokens = num(b, maxTokensField, { int: true, min: 0 }) ?? num(b, 'max_tokens', { int: true, min: 0 });
  const seed = num(b, 'seed', { int: true });
  const sampling: SamplingParams = {
    ...DEFAULT_SAMPLING,
    temperature: num(b, 'temperature', { min: 0, max: 2 }) ?? DEFAULT_SAMPLING.temperature,
    topP: num(b, 'top_p', { min: 0, max: 1 }) ?? DEFAULT_SAMPLING.topP,
    topK: num(b, 'top_k', { int: true }) ?? DEFAULT_SAMPLING.topK,
    minP: num(b, 'min_p', { min: 0, max: 1 }) ?? DEFAULT_SAMPLING.minP,
    repeatPenalty: num(b, 'repeat_penalty', { min: Number.MIN_VALUE }) ?? DEFAULT_SAMPLING.repeatPenalty,
    presencePenalty: num(b, 'presence_penalty', { min: -2, max: 2 }) ?? DEFAULT_SAMPLING.presencePenalty,
    frequencyPenalty: num(b, 'frequency_penalty', { min: -2, max: 2 }) ?? DEFAULT_SAMPLING.frequencyPenalty,
    // (the sampler's seed is a uint32: an OpenAI seed, any integer, is taken modulo 2^32)
    seed: seed === undefined ? -1 : ((seed % 2 ** 32) + 2 ** 32) % 2 ** 32,
    maxTokens: maxTokens ?? -1,
    stop: stopList(b),
  };
  return { model: typeof model === 'string' ? model : undefined, stream, includeUsage, sampling, grammar: responseFormatGrammar(b.response_format) };
}

/** A message's content: a string, or an array of text parts (joined); null for an assistant turn. */
function content(v: unknown, param: string): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) {
    return v
      .map((p, j) => {
        const part = p as Body;
        if (typeof p !== 'object' || p === null || part.type !== 'text' || typeof part.text !== 'string') {
          return bad(`${param}[${j}]`, 'a text part ({"type": "text", "text": "…"}); other parts are not supported');
        }
        return part.text;
      })
      .join('');
  }
  return bad(param, 'a string or an array of text parts');
}

const ROLES: Record<string, ChatMessage['role']> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant' };

export function parseChatRequest(body: unknown): ChatRequest {
  const b = object(body);
  const g = generation(b, 'max_completion_tokens');
  if (!Array.isArray(b.messages)) return bad('messages', 'an array of messages');
  if (b.messages.length === 0) throw new ApiError(400, "'messages' must hold at least one message", 'messages', 'invalid_value');
  const messages = b.messages.map((m: unknown, i): ChatMessage => {
    const param = `messages[${i}]`;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return bad(param, 'an object with role and content');
    const { role, content: c, reasoning_content: r } = m as Body;
    if (typeof role !== 'string') return bad(`${param}.role`, 'a string');
    const mapped = ROLES[role];
    if (!mapped) throw new ApiError(400, `'${param}.role' is "${role}"; supported roles are system, developer, user and assistant`, `${param}.role`, 'invalid_value');
    const msg: ChatMessage = { role: mapped, content: content(c, `${param}.content`) };
    if (mapped === 'assistant' && typeof r === 'string' && r) msg.reasoning = r;
    return msg;
  });
  return { ...g, messages };
}

export function parseCompletionRequest(body: unknown): CompletionRequest {
  const b = object(body);
  const g = generation(b, 'max_tokens');
  // (the legacy default is 16 tokens)
  if (b.max_tokens === undefined || b.max_tokens === null) g.sampling.maxTokens = 16;
  const p = b.prompt;
  let prompt: string;
  if (typeof p === 'string') prompt = p;
  else if (Array.isArray(p) && p.length === 1 && typeof p[0] === 'string') prompt = p[0];
  else return bad('prompt', 'a string (or an array of one string)');
  if (prompt === '') throw new ApiError(400, "'prompt' is empty", 'prompt', 'invalid_value');
  return { ...g, prompt };
}
