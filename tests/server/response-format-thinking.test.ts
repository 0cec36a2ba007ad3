// A JSON reply from a model that thinks first (issue 20 b): with response_format (the server) or a
// structured-output grammar (Session.chat: the app's Structured output and `pantheon chat
// --json-schema`), the scripted thinkers (tests/chat/thinker-model.ts, Qwen3's and gpt-oss's own
// templates) still write their reasoning word for word, free text that is not JSON, and the answer
// after it, which their script makes prose, comes out as JSON valid for the schema
// (tests/grammar/validate.ts), through the official `openai` client, streamed and not.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonSchemaToGbnf } from '../../src/engine/grammar/json-schema.js';
import { DEFAULT_SAMPLING } from '../../src/engine/sample/params.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { OpenAiServer } from '../../src/engine/server/server.js';
import { HARMONY_ANSWER, HARMONY_REASONING, THINKER_ANSWER, THINKER_REASONING, writeThinkerModel } from '../chat/thinker-model.js';
import { validate } from '../grammar/validate.js';

const SCHEMA = { type: 'object', properties: { answer: { enum: ['yes', 'no'] }, n: { type: 'integer', minimum: 0, maximum: 9 } }, required: ['answer', 'n'], additionalProperties: false };
const FORMAT = { type: 'json_schema' as const, json_schema: { name: 'reply', schema: SCHEMA, strict: true } };

describe.each([
  ['think', false, THINKER_REASONING, THINKER_ANSWER],
  ['harmony', true, HARMONY_REASONING, HARMONY_ANSWER],
] as const)('%s: the reasoning stays free, the answer is the schema\'s JSON', (_format, harmony, reasoning, prose) => {
  let dir: string;
  let model: LoadedModel;
  let server: OpenAiServer;
  let client: OpenAI;
  const id = harmony ? 'scripted-harmony' : 'scripted-thinker';
  const messages = [{ role: 'user' as const, content: 'hello' }];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pantheon-rf-thinking-'));
    model = await LoadedModel.load(writeThinkerModel(dir, harmony), { contextSize: 1024 });
    server = await OpenAiServer.start(model, { port: 0 });
    client = new OpenAI({ baseURL: server.url, apiKey: 'none', maxRetries: 0 });
  });
  afterAll(async () => {
    await server?.close();
    model?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('response_format json_schema through the openai client, streamed and not', async () => {
    // the script's own answer, without a format: prose
    const free = await client.chat.completions.create({ model: id, messages, temperature: 0, max_tokens: 60 });
    expect(free.choices[0].message.content).toBe(prose);

    const r = await client.chat.completions.create({ model: id, messages, temperature: 0, max_tokens: 300, response_format: FORMAT });
    const msg = r.choices[0].message as typeof r.choices[0]['message'] & { reasoning_content?: string };
    expect(msg.reasoning_content?.trim()).toBe(reasoning);
    expect(validate(JSON.parse(msg.content ?? ''), SCHEMA), msg.content ?? '').toBeNull();
    expect(r.choices[0].finish_reason).toBe('stop');

    const stream = await client.chat.completions.create({ model: id, messages, temperature: 0, max_tokens: 300, response_format: FORMAT, stream: true });
    let content = '';
    let thought = '';
    for await (const ch of stream) {
      const d = ch.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      content += d?.content ?? '';
      thought += d?.reasoning_content ?? '';
    }
    expect(thought.trim()).toBe(reasoning);
    expect(content).toBe(msg.content);
  });

  it('json_object: any JSON object after the reasoning', async () => {
    const r = await client.chat.completions.create({ model: id, messages, temperature: 0, max_tokens: 300, response_format: { type: 'json_object' } });
    const msg = r.choices[0].message as typeof r.choices[0]['message'] & { reasoning_content?: string };
    expect(msg.reasoning_content?.trim()).toBe(reasoning);
    const v = JSON.parse(msg.content ?? '') as unknown;
    expect(typeof v === 'object' && v !== null && !Array.isArray(v)).toBe(true);
  });

  it('Session.chat with a grammar (the app\'s Structured output, pantheon chat --json-schema)', async () => {
    const session = new Session(model);
    let thought = '';
    let answer = '';
    for await (const ev of session.chat(messages, { ...DEFAULT_SAMPLING, temperature: 0, maxTokens: 300 }, undefined, { grammar: jsonSchemaToGbnf(SCHEMA) })) {
      if (ev.kind !== 'token') continue;
      thought += ev.reasoning;
      answer += ev.text;
    }
    expect(thought.trim()).toBe(reasoning);
    expect(validate(JSON.parse(answer), SCHEMA), answer).toBeNull();
  });
});
