// What a valid request of the contract is (contract.ts): one validator per request channel, plus
// the generation request, the chat and the settings they carry. Main's handlers, the dev harness
// and the engine host all check the page's payloads here, so a field has one rule wherever it
// arrives; each returns a copy in the contract's type, or throws one UsageError line naming the field.

import type {
  Chat, ChatRole, GenerateRequest, ReplyPrompt, ReplyReasoning, ReplyStats, RequestChannel, RequestMessage, RequestOf, SamplingSettings, Settings, StoredMessage,
  ReplyVersion, StoredToken, StructuredOutput, GpuLayersSetting,
} from './contract.js';
import { COMPUTE_BACKENDS, CONTEXT_POLICIES, DEFAULT_SAMPLING, MAX_GPU_LAYERS } from './contract.js';
import { UsageError } from './errors.js';
import {
  MAX_CONTEXT, MAX_MESSAGE_CHARS, MAX_MESSAGES, MAX_STOP_CHARS, MAX_STOP_STRINGS, MAX_SYSTEM_PROMPT, MAX_THREADS, MAX_TITLE, MIN_CONTEXT,
  array, bool, integer, number, oneOf, positive, record, string,
} from './validate.js';

// ----------------------------------------------------------------------------------------------
// Generation

const ROLES: readonly ChatRole[] = ['system', 'user', 'assistant'];

export function chatMessages(v: unknown, what = 'messages'): RequestMessage[] {
  return array(v, what, MAX_MESSAGES).map((m, i) => {
    const r = record(m, `${what}[${i}]`);
    const out: RequestMessage = { role: oneOf(r.role, `${what}[${i}].role`, ROLES), content: string(r.content, `${what}[${i}].content`, MAX_MESSAGE_CHARS) };
    if (r.reasoning !== undefined) out.reasoning = string(r.reasoning, `${what}[${i}].reasoning`, MAX_MESSAGE_CHARS);
    return out;
  });
}

/**
 * Every sampling field, checked; ranges follow what llama.cpp's samplers accept sensibly. The
 * engine's Sampler checks its parameters with this too (sample/params.ts validateSampling).
 */
export function samplingSettings(v: unknown, what = 'sampling'): SamplingSettings {
  const s = record(v, what);
  return {
    temperature: number(s.temperature, `${what}.temperature`, 0, 100),
    topK: integer(s.topK, `${what}.topK`, -(2 ** 31), 1 << 24), // 0 or less: off
    topP: number(s.topP, `${what}.topP`, 0, 1),
    minP: number(s.minP, `${what}.minP`, 0, 1),
    repeatPenalty: positive(s.repeatPenalty, `${what}.repeatPenalty`, 100), // 1: off
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
  const probabilities = r.probabilities === undefined ? {} : { probabilities: bool(r.probabilities, 'probabilities') };
  const prefix = r.replyPrefix === undefined ? {} : { replyPrefix: string(r.replyPrefix, 'replyPrefix', MAX_MESSAGE_CHARS) };
  const profile = r.profile === undefined ? {} : { profile: bool(r.profile, 'profile') };
  return { messages, sampling: samplingSettings(r.sampling), ...policy, ...(structured ? { structured } : {}), ...probabilities, ...prefix, ...profile };
}

const MAX_GRAMMAR_CHARS = 1 << 20;

/** Structured output: off, any JSON object, a JSON schema's text, or a GBNF grammar. */
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

// ----------------------------------------------------------------------------------------------
// Chats

const CHAT_ID = /^[a-z0-9-]{1,64}$/;
const MAX_TEMPLATE_NAME = 200;
export const DEFAULT_TITLE = 'New chat';
const STOP_REASONS = ['eos', 'length', 'stop', 'cancelled', 'context', 'error'] as const;

/** True when s has a chat id's form (a file name in the chats folder). */
export function isChatId(s: string): boolean {
  return CHAT_ID.test(s);
}

/** A chat id from the page: checked so it can never name a file outside the chats folder. */
export function chatId(v: unknown, what = 'id'): string {
  const id = string(v, what, 64);
  if (!CHAT_ID.test(id)) throw new UsageError(`${what} is not a chat id.`);
  return id;
}

export function chatTitle(v: unknown): string {
  const t = string(v, 'title', MAX_TITLE).trim();
  return t === '' ? DEFAULT_TITLE : t;
}

function replyStats(v: unknown, what: string): ReplyStats {
  const s = record(v, what);
  const big = Number.MAX_SAFE_INTEGER;
  const out: ReplyStats = {
    promptTokens: integer(s.promptTokens, `${what}.promptTokens`, 0, big),
    generatedTokens: integer(s.generatedTokens, `${what}.generatedTokens`, 0, big),
    ttftMs: number(s.ttftMs, `${what}.ttftMs`, 0, big),
    tokensPerS: number(s.tokensPerS, `${what}.tokensPerS`, 0, big),
    promptTokensPerS: number(s.promptTokensPerS, `${what}.promptTokensPerS`, 0, big),
    stopReason: oneOf(s.stopReason, `${what}.stopReason`, STOP_REASONS),
  };
  if (s.reasoningTokens !== undefined) out.reasoningTokens = integer(s.reasoningTokens, `${what}.reasoningTokens`, 0, big);
  if (s.reasoningMs !== undefined) out.reasoningMs = number(s.reasoningMs, `${what}.reasoningMs`, 0, big);
  return out;
}

/** A reply's reasoning: as long as a message may be, with its token count and time. */
function replyReasoning(v: unknown, what: string): ReplyReasoning {
  const r = record(v, what);
  return {
    text: string(r.text, `${what}.text`, MAX_MESSAGE_CHARS),
    tokens: integer(r.tokens, `${what}.tokens`, 0, Number.MAX_SAFE_INTEGER),
    ms: number(r.ms, `${what}.ms`, 0, Number.MAX_SAFE_INTEGER),
  };
}

function replyPrompt(v: unknown, what: string): ReplyPrompt {
  const p = record(v, what);
  return {
    // The whole conversation after the template: as long as the longest message may be.
    text: string(p.text, `${what}.text`, MAX_MESSAGE_CHARS),
    tokens: integer(p.tokens, `${what}.tokens`, 0, Number.MAX_SAFE_INTEGER),
    templateName: string(p.templateName, `${what}.templateName`, MAX_TEMPLATE_NAME),
  };
}

/** A whole chat from the page (chats:save) or from disk: every field checked. */
const MAX_STORED_TOKENS = 16_384;
/** Earlier versions a reply keeps (the oldest go first past this). */
export const MAX_VERSIONS = 32;
const MAX_ALTS = 20;
const MAX_PIECE = 1024;

function storedTokens(v: unknown, what: string): StoredToken[] {
  const lp = (x: unknown, w: string) => number(x, w, -Infinity, 0);
  return array(v, what, MAX_STORED_TOKENS).map((x, i) => {
    const r = record(x, `${what}[${i}]`);
    return {
      t: string(r.t, `${what}[${i}].t`, MAX_PIECE),
      p: number(r.p, `${what}[${i}].p`, 0, 1),
      lp: lp(r.lp, `${what}[${i}].lp`),
      alts: array(r.alts, `${what}[${i}].alts`, MAX_ALTS).map((a, k) => {
        const q = record(a, `${what}[${i}].alts[${k}]`);
        return { t: string(q.t, `${what}[${i}].alts[${k}].t`, MAX_PIECE), p: number(q.p, `${what}[${i}].alts[${k}].p`, 0, 1), lp: lp(q.lp, `${what}[${i}].alts[${k}].lp`) };
      }),
    };
  });
}

export function validateChat(v: unknown): Chat {
  const c = record(v, 'chat');
  const raw = array(c.messages, 'chat.messages', MAX_MESSAGES);
  const messages: StoredMessage[] = raw.map((m, i) => {
    const what = `chat.messages[${i}]`;
    const r = record(m, what);
    const out: StoredMessage = {
      id: string(r.id, `${what}.id`, 64),
      role: oneOf(r.role, `${what}.role`, ['system', 'user', 'assistant'] as const),
      content: string(r.content, `${what}.content`, MAX_MESSAGE_CHARS),
      createdAt: number(r.createdAt, `${what}.createdAt`, 0, Number.MAX_SAFE_INTEGER),
    };
    if (r.stats !== undefined) out.stats = replyStats(r.stats, `${what}.stats`);
    if (r.modelName !== undefined) out.modelName = string(r.modelName, `${what}.modelName`, 1000);
    if (r.prompt !== undefined) out.prompt = replyPrompt(r.prompt, `${what}.prompt`);
    if (r.reasoning !== undefined) out.reasoning = replyReasoning(r.reasoning, `${what}.reasoning`);
    if (r.tokens !== undefined) out.tokens = storedTokens(r.tokens, `${what}.tokens`);
    if (r.versions !== undefined) {
      out.versions = array(r.versions, `${what}.versions`, MAX_VERSIONS).map((x, k) => {
        const w = `${what}.versions[${k}]`;
        const q = record(x, w);
        const v: ReplyVersion = { content: string(q.content, `${w}.content`, MAX_MESSAGE_CHARS), createdAt: number(q.createdAt, `${w}.createdAt`, 0, Number.MAX_SAFE_INTEGER) };
        if (q.stats !== undefined) v.stats = replyStats(q.stats, `${w}.stats`);
        if (q.modelName !== undefined) v.modelName = string(q.modelName, `${w}.modelName`, 1000);
        if (q.reasoning !== undefined) v.reasoning = replyReasoning(q.reasoning, `${w}.reasoning`);
        return v;
      });
    }
    return out;
  });
  return {
    id: chatId(c.id, 'chat.id'),
    title: chatTitle(c.title),
    createdAt: number(c.createdAt, 'chat.createdAt', 0, Number.MAX_SAFE_INTEGER),
    updatedAt: number(c.updatedAt, 'chat.updatedAt', 0, Number.MAX_SAFE_INTEGER),
    systemPrompt: string(c.systemPrompt, 'chat.systemPrompt', MAX_SYSTEM_PROMPT),
    messages,
  };
}

// ----------------------------------------------------------------------------------------------
// Settings

/** 'auto', or a whole number of layers from 0 to MAX_GPU_LAYERS (above the model's blocks means all). */
export function gpuLayers(v: unknown, what: string): GpuLayersSetting {
  if (v === 'auto') return v;
  if (typeof v !== 'number') throw new UsageError(`${what} must be "auto" or a whole number of layers.`);
  return integer(v, what, 0, MAX_GPU_LAYERS);
}

/**
 * Check a partial settings object from the page. `modelsFolder` is not settable this way: the page
 * never chooses paths (library.chooseFolder() sets it through a native dialog).
 */
export function validateSettingsPatch(v: unknown): Partial<Settings> {
  const p = record(v, 'settings');
  const out: Partial<Settings> = {};
  for (const key of Object.keys(p)) {
    switch (key) {
      case 'sampling': out.sampling = samplingSettings({ ...DEFAULT_SAMPLING, stop: [], ...record(p.sampling, 'settings.sampling') }, 'settings.sampling'); break;
      case 'systemPrompt': out.systemPrompt = string(p.systemPrompt, 'settings.systemPrompt', MAX_SYSTEM_PROMPT); break;
      case 'contextSize': out.contextSize = integer(p.contextSize, 'settings.contextSize', MIN_CONTEXT, MAX_CONTEXT); break;
      case 'threads': out.threads = integer(p.threads, 'settings.threads', 0, MAX_THREADS); break;
      case 'computeBackend': out.computeBackend = oneOf(p.computeBackend, 'settings.computeBackend', COMPUTE_BACKENDS); break;
      case 'gpuLayers': out.gpuLayers = gpuLayers(p.gpuLayers, 'settings.gpuLayers'); break;
      case 'theme': out.theme = oneOf(p.theme, 'settings.theme', ['system', 'light', 'dark'] as const); break;
      case 'showProbabilities': out.showProbabilities = bool(p.showProbabilities, 'settings.showProbabilities'); break;
      case 'showProfile': out.showProfile = bool(p.showProfile, 'settings.showProfile'); break;
      case 'contextPolicy': out.contextPolicy = oneOf(p.contextPolicy, 'settings.contextPolicy', CONTEXT_POLICIES); break;
      case 'modelsFolder': throw new UsageError('settings.modelsFolder is chosen with library.chooseFolder(), not set directly.');
      default: throw new UsageError(`settings.${key} is not a setting.`);
    }
  }
  return out;
}

// ----------------------------------------------------------------------------------------------
// Request channels

const MODEL_ID = /^[0-9a-f]{16}$/;

function modelId(v: unknown): string {
  const id = string(v, 'id', 64);
  if (!MODEL_ID.test(id)) throw new UsageError('id is not a model id from the library.');
  return id;
}

function none(v: unknown): void {
  if (v !== undefined && v !== null) throw new UsageError('this request takes no arguments.');
}

type Validators = { [C in RequestChannel]: (v: unknown) => RequestOf<C> };

const validators: Validators = {
  'app:info': none,
  'library:get': none,
  'library:chooseFolder': none,
  'library:forgetRecent': (v) => ({ id: modelId(record(v, 'request').id) }),
  'model:openDialog': none,
  'model:open': (v) => ({ id: modelId(record(v, 'request').id) }),
  'model:openDropped': (v) => ({ path: string(record(v, 'request').path, 'path', 4096) }),
  'model:close': none,
  'model:metaArray': (v) => {
    const r = record(v, 'request');
    return {
      key: string(r.key, 'key', 1024),
      offset: integer(r.offset, 'offset', 0, Number.MAX_SAFE_INTEGER),
      limit: integer(r.limit, 'limit', 0, 100_000),
      ...(r.query === undefined || r.query === null ? {} : { query: string(r.query, 'query', 1024) }),
    };
  },
  'model:tensorStats': (v) => ({ name: string(record(v, 'request').name, 'name', 4096) }),
  'model:compare': (v) => {
    if (v === undefined || v === null) return {};
    const r = record(v, 'request');
    return r.id === undefined ? {} : { id: modelId(r.id) };
  },
  'model:cancelInspect': none,
  'engine:load': (v) => {
    const r = record(v, 'request');
    return {
      id: modelId(r.id),
      ...(r.contextSize === undefined ? {} : { contextSize: integer(r.contextSize, 'contextSize', MIN_CONTEXT, MAX_CONTEXT) }),
      ...(r.threads === undefined ? {} : { threads: integer(r.threads, 'threads', 0, MAX_THREADS) }),
    };
  },
  'engine:cancelLoad': none,
  'engine:unload': none,
  'engine:state': none,
  'engine:gpuAdapter': none,
  'engine:countTokens': (v) => ({ messages: chatMessages(record(v, 'request').messages) }),
  'remote:list': none,
  'remote:add': (v) => {
    const r = record(v, 'request');
    return { baseUrl: string(r.baseUrl, 'baseUrl', 2048), ...(r.apiKey === undefined || r.apiKey === null || r.apiKey === '' ? {} : { apiKey: string(r.apiKey, 'apiKey', 4096) }) };
  },
  'remote:remove': (v) => ({ id: modelId(record(v, 'request').id) }),
  'remote:refresh': (v) => ({ id: modelId(record(v, 'request').id) }),
  'remote:open': (v) => {
    const r = record(v, 'request');
    return { id: modelId(r.id), model: string(r.model, 'model', 1024) };
  },
  'chats:list': none,
  'chats:get': (v) => ({ id: chatId(record(v, 'request').id) }),
  'chats:create': (v) => {
    if (v === undefined || v === null) return {};
    const r = record(v, 'request');
    return {
      ...(r.title === undefined ? {} : { title: string(r.title, 'title', MAX_TITLE) }),
      ...(r.systemPrompt === undefined ? {} : { systemPrompt: string(r.systemPrompt, 'systemPrompt', MAX_SYSTEM_PROMPT) }),
    };
  },
  'chats:save': (v) => {
    const r = record(v, 'request');
    const chat = validateChat(r.chat);
    if (r.keepPrompts === undefined) return { chat };
    return { chat, keepPrompts: array(r.keepPrompts, 'keepPrompts', MAX_MESSAGES).map((id, i) => string(id, `keepPrompts[${i}]`, 64)) };
  },
  'chats:rename': (v) => {
    const r = record(v, 'request');
    return { id: chatId(r.id), title: string(r.title, 'title', MAX_TITLE) };
  },
  'chats:delete': (v) => ({ id: chatId(record(v, 'request').id) }),
  'chats:import': (v) => ({ text: string(record(v, 'request').text, 'text', 64 * 1024 * 1024) }),
  'settings:get': none,
  'settings:set': (v) => ({ settings: validateSettingsPatch(record(v, 'request').settings) }),
  'server:start': (v) => {
    const r = record(v, 'request');
    const key = r.apiKey === undefined || r.apiKey === null || r.apiKey === '' ? undefined : string(r.apiKey, 'apiKey', 256);
    return { port: integer(r.port, 'port', 0, 65535), ...(key === undefined ? {} : { apiKey: key }) };
  },
  'server:stop': none,
  'server:state': none,
};

export function isRequestChannel(v: unknown): v is RequestChannel {
  return typeof v === 'string' && Object.prototype.hasOwnProperty.call(validators, v);
}

/** The payload, checked and copied into the channel's request type; UsageError otherwise. */
export function validateRequest<C extends RequestChannel>(channel: C, payload: unknown): RequestOf<C> {
  return (validators[channel] as (v: unknown) => RequestOf<C>)(payload);
}
