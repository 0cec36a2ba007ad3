// Payload checks for every request channel of the contract. Electron's IPC handlers and the
// harness's WebSocket both pass the page's payload through `validateRequest` before any service
// sees it, so a service can trust its argument's shape.

import type { RequestChannel, RequestOf } from '../../shared/contract.js';
import { UsageError } from '../../shared/errors.js';
import { MAX_MESSAGES, array, chatMessages, integer, record, string } from '../../engine/host/validate.js';
import { chatId, validateChat } from './chat-store.js';
import { MAX_CONTEXT, MAX_THREADS, MIN_CONTEXT, validateSettingsPatch } from './settings.js';

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
  'server:start': (v) => {
    const r = record(v, 'request');
    const key = r.apiKey === undefined || r.apiKey === null || r.apiKey === '' ? undefined : string(r.apiKey, 'apiKey', 256);
    return { port: integer(r.port, 'port', 0, 65535), ...(key === undefined ? {} : { apiKey: key }) };
  },
  'server:stop': none,
  'server:state': none,
  'chats:list': none,
  'chats:get': (v) => ({ id: chatId(record(v, 'request').id) }),
  'chats:create': (v) => {
    if (v === undefined || v === null) return {};
    const r = record(v, 'request');
    return {
      ...(r.title === undefined ? {} : { title: string(r.title, 'title', 200) }),
      ...(r.systemPrompt === undefined ? {} : { systemPrompt: string(r.systemPrompt, 'systemPrompt', 100_000) }),
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
    return { id: chatId(r.id), title: string(r.title, 'title', 200) };
  },
  'chats:delete': (v) => ({ id: chatId(record(v, 'request').id) }),
  'chats:import': (v) => ({ text: string(record(v, 'request').text, 'text', 64 * 1024 * 1024) }),
  'settings:get': none,
  'settings:set': (v) => ({ settings: validateSettingsPatch(record(v, 'request').settings) }),
};

export function isRequestChannel(v: unknown): v is RequestChannel {
  return typeof v === 'string' && Object.prototype.hasOwnProperty.call(validators, v);
}

/** The payload, checked and copied into the channel's request type; UsageError otherwise. */
export function validateRequest<C extends RequestChannel>(channel: C, payload: unknown): RequestOf<C> {
  return (validators[channel] as (v: unknown) => RequestOf<C>)(payload);
}
