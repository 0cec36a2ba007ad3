// OpenAI request bodies (POST /v1/chat/completions, /v1/completions) checked field by field and
// mapped to the engine's shapes: messages for the chat template, SamplingParams for the sampler.
// Unknown fields are ignored, as OpenAI-compatible servers do; a known field of the wrong type is
// a 400 naming it.

import type { ChatMessage } from '../chat/index.js';
import type { ToolChoice, ToolDefinition } from '../chat/tools.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../sample/index.js';
import { MAX_TOP_LOGPROBS } from '../sample/logprobs.js';
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
  /** Log-probabilities wanted: how many best per token (0..20); undefined for none. */
  topLogprobs: number | undefined;
  /** logit_bias: token id → bias added to its logit (-100 bans it: -Infinity); undefined for none. */
  logitBias: Map<number, number> | undefined;
  /** GBNF from response_format (response-format.ts), or undefined for free text. */
  grammar?: string;
}

export interface ChatRequest extends GenerationRequest {
  messages: ChatMessage[];
  /** Function tools offered, and how the model may use them ('none' when no tools are given). */
  tools: ToolDefinition[];
  toolChoice: ToolChoice;
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
  if (b.echo === true) no('echo');
  if (typeof b.suffix === 'string' && b.suffix !== '') no('suffix');
}

/** `logit_bias`: {"TOKEN_ID": bias from -100 to 100}; ids are checked against the vocabulary later. */
function logitBias(b: Body): Map<number, number> | undefined {
  const v = b.logit_bias;
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) return bad('logit_bias', 'an object mapping token ids to biases from -100 to 100');
  const out = new Map<number, number>();
  for (const [k, x] of Object.entries(v as Body)) {
    if (!/^\d+$/.test(k)) return bad('logit_bias', `an object whose keys are token ids (not "${k}")`);
    if (typeof x !== 'number' || !Number.isFinite(x) || x < -100 || x > 100) return bad(`logit_bias.${k}`, 'a number from -100 to 100');
    out.set(Number(k), x <= -100 ? -Infinity : x);
  }
  return out.size > 0 ? out : undefined;
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
  return { model: typeof model === 'string' ? model : undefined, stream, includeUsage, sampling, topLogprobs: undefined, logitBias: logitBias(b), grammar: responseFormatGrammar(b.response_format) };
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

const ROLES: Record<string, ChatMessage['role']> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant', tool: 'tool' };

/** `tools`: an array of {type: "function", function: {name, description?, parameters?}}. */
function tools(b: Body): ToolDefinition[] {
  const v = b.tools;
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) return bad('tools', 'an array of function tools');
  return v.map((t: unknown, i): ToolDefinition => {
    const param = `tools[${i}]`;
    const tb = t as Body;
    if (typeof t !== 'object' || t === null || tb.type !== 'function') return bad(`${param}.type`, '"function"');
    const f = tb.function as Body;
    if (typeof f !== 'object' || f === null) return bad(`${param}.function`, 'an object with a name');
    if (typeof f.name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(f.name)) return bad(`${param}.function.name`, 'a name of letters, digits, _ . or - (at most 64)');
    if (f.description !== undefined && typeof f.description !== 'string') bad(`${param}.function.description`, 'a string');
    if (f.parameters !== undefined && (typeof f.parameters !== 'object' || f.parameters === null || Array.isArray(f.parameters))) bad(`${param}.function.parameters`, 'a JSON schema object');
    const fn: ToolDefinition['function'] = { name: f.name };
    if (typeof f.description === 'string') fn.description = f.description;
    if (f.parameters !== undefined) fn.parameters = f.parameters as Record<string, unknown>;
    if (typeof f.strict === 'boolean') fn.strict = f.strict;
    return { type: 'function', function: fn };
  });
}

/** `tool_choice`: "auto" | "none" | "required" | {type: "function", function: {name}}. */
function toolChoice(b: Body, offered: ToolDefinition[]): ToolChoice {
  const v = b.tool_choice;
  if (v === undefined || v === null) return offered.length ? 'auto' : 'none';
  if (v === 'auto' || v === 'none' || v === 'required') {
    if (v !== 'none' && offered.length === 0) throw new ApiError(400, `'tool_choice' is "${v}" but no 'tools' are given`, 'tool_choice', 'invalid_value');
    return v;
  }
  const name = typeof v === 'object' && !Array.isArray(v) ? ((v as Body).function as Body | undefined)?.name : undefined;
  if (typeof name !== 'string') return bad('tool_choice', '"auto", "none", "required" or {"type": "function", "function": {"name": …}}');
  if (!offered.some((t) => t.function.name === name)) throw new ApiError(400, `'tool_choice' names the function '${name}', which is not among 'tools'`, 'tool_choice', 'invalid_value');
  return { name };
}

/** An assistant message's `tool_calls`: [{id, type: "function", function: {name, arguments}}]. */
function toolCalls(v: unknown, param: string): NonNullable<ChatMessage['toolCalls']> {
  if (!Array.isArray(v)) return bad(param, 'an array of tool calls');
  return v.map((c: unknown, j) => {
    const cb = c as Body;
    const f = (typeof c === 'object' && c !== null ? cb.function : undefined) as Body | undefined;
    if (!f || typeof f.name !== 'string') return bad(`${param}[${j}].function.name`, 'a string');
    const args = f.arguments;
    if (args !== undefined && typeof args !== 'string') return bad(`${param}[${j}].function.arguments`, 'a string of JSON');
    return { id: typeof cb.id === 'string' ? cb.id : `call_${j}`, name: f.name, arguments: typeof args === 'string' ? args : '{}' };
  });
}

export function parseChatRequest(body: unknown): ChatRequest {
  const b = object(body);
  const g = generation(b, 'max_completion_tokens');
  if (!Array.isArray(b.messages)) return bad('messages', 'an array of messages');
  if (b.messages.length === 0) throw new ApiError(400, "'messages' must hold at least one message", 'messages', 'invalid_value');
  const messages = b.messages.map((m: unknown, i): ChatMessage => {
    const param = `messages[${i}]`;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return bad(param, 'an object with role and content');
    const { role, content: c, reasoning_content: r, tool_calls: tc, tool_call_id: tcId, name } = m as Body;
    if (typeof role !== 'string') return bad(`${param}.role`, 'a string');
    const mapped = ROLES[role];
    if (!mapped) throw new ApiError(400, `'${param}.role' is "${role}"; supported roles are system, developer, user, assistant and tool`, `${param}.role`, 'invalid_value');
    const msg: ChatMessage = { role: mapped, content: content(c, `${param}.content`) };
    if (mapped === 'assistant' && typeof r === 'string' && r) msg.reasoning = r;
    if (mapped === 'assistant' && tc !== undefined && tc !== null) msg.toolCalls = toolCalls(tc, `${param}.tool_calls`);
    if (mapped === 'tool') {
      if (typeof tcId !== 'string') return bad(`${param}.tool_call_id`, 'a string (the id of the call this answers)');
      msg.toolCallId = tcId;
      // the function's name, from the call it answers when not given (templates show it)
      const call = (b.messages as unknown[]).flatMap((x) => ((x as Body)?.tool_calls as Body[] | undefined) ?? []).find((x: Body) => x?.id === tcId);
      const fname = typeof name === 'string' ? name : ((call?.function as Body | undefined)?.name as string | undefined);
      if (fname !== undefined) msg.name = fname;
    }
    return msg;
  });
  // logprobs: true, and top_logprobs (0..20) only with it
  const top = num(b, 'top_logprobs', { int: true, min: 0, max: MAX_TOP_LOGPROBS });
  if (bool(b, 'logprobs') === true) g.topLogprobs = top ?? 0;
  else if (top !== undefined && top > 0) throw new ApiError(400, "'top_logprobs' needs 'logprobs': true", 'top_logprobs', 'invalid_value');
  const offered = tools(b);
  return { ...g, messages, tools: offered, toolChoice: toolChoice(b, offered) };
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
  // (the legacy logprobs is the number of best tokens per position)
  g.topLogprobs = num(b, 'logprobs', { int: true, min: 0, max: MAX_TOP_LOGPROBS });
  if (prompt === '') throw new ApiError(400, "'prompt' is empty", 'prompt', 'invalid_value');
  return { ...g, prompt };
}

export interface EmbeddingRequest {
  model: string | undefined;
  /** Each input: text, or token ids as given. */
  inputs: (string | number[])[];
  encoding: 'float' | 'base64';
}

/** POST /v1/embeddings: input is a string, an array of strings, an array of token ids, or of arrays of ids. */
export function parseEmbeddingRequest(body: unknown): EmbeddingRequest {
  const b = object(body);
  const model = b.model;
  if (model !== undefined && model !== null && typeof model !== 'string') bad('model', 'a string');
  const v = b.input;
  const isIds = (x: unknown): x is number[] => Array.isArray(x) && x.length > 0 && x.every((t) => Number.isInteger(t) && (t as number) >= 0);
  let inputs: (string | number[])[];
  if (typeof v === 'string') inputs = [v];
  else if (isIds(v)) inputs = [v];
  else if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string' || isIds(x))) inputs = v as (string | number[])[];
  else return bad('input', 'a string, an array of strings, or token ids (an array of integers, or an array of such arrays)');
  inputs.forEach((x, i) => {
    if (x === '') throw new ApiError(400, `'input${inputs.length > 1 ? `[${i}]` : ''}' is empty`, 'input', 'invalid_value');
  });
  const f = b.encoding_format;
  if (f !== undefined && f !== null && f !== 'float' && f !== 'base64') bad('encoding_format', '"float" or "base64"');
  if (b.dimensions !== undefined && b.dimensions !== null) throw new ApiError(400, "'dimensions' is not supported: the embedding has the model's width", 'dimensions', 'unsupported_parameter');
  return { model: typeof model === 'string' ? model : undefined, inputs, encoding: f === 'base64' ? 'base64' : 'float' };
}
