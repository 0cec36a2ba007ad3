// response_format through the official `openai` client against `pantheon serve` on the demo model:
// json_object and json_schema replies parse and satisfy the schema (tests/grammar/validate.ts reads
// the schema, not the grammar) at temperature 0 and 1, streamed and not; bad formats are a 400
// naming the field.
import { join } from 'node:path';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoadedModel } from '../../src/engine/session.js';
import { OpenAiServer } from '../../src/engine/server/server.js';
import { ROOT } from '../helpers.js';
import { validate } from '../grammar/validate.js';

const MODEL = join(ROOT, 'resources/models/stories260K.gguf');
let model: LoadedModel;
let server: OpenAiServer;
let client: OpenAI;

beforeAll(async () => {
  model = await LoadedModel.load(MODEL, { contextSize: 512 });
  server = await OpenAiServer.start(model, { host: '127.0.0.1', port: 0 });
  client = new OpenAI({ baseURL: server.url, apiKey: 'none', maxRetries: 0 });
});

afterAll(async () => {
  await server?.close();
  model?.dispose();
});

const SCHEMA = {
  type: 'object',
  properties: {
    title: { type: 'string', maxLength: 10 },
    rating: { type: 'integer', minimum: 1, maximum: 5 },
    mood: { enum: ['happy', 'sad'] },
    words: { type: 'array', items: { type: 'string', maxLength: 6 }, maxItems: 2 },
  },
  required: ['title', 'rating', 'mood', 'words'],
  additionalProperties: false,
};
const messages = [{ role: 'user' as const, content: 'Tell me about the story as JSON.' }];

describe('pantheon serve: response_format', () => {
  it.each([
    [0, 1],
    [1, 2],
    [1, 3],
  ])('json_schema (strict) at temperature %d seed %d: the reply parses and matches the schema, finish_reason stop', async (temperature, seed) => {
    const r = await client.chat.completions.create({
      model: 'stories260K',
      messages,
      temperature,
      seed,
      max_tokens: 300,
      response_format: { type: 'json_schema', json_schema: { name: 'review', schema: SCHEMA, strict: true } },
    });
    const text = r.choices[0].message.content ?? '';
    expect(validate(JSON.parse(text), SCHEMA), text).toBeNull();
    expect(r.choices[0].finish_reason).toBe('stop');
  });

  it('json_schema streamed: the chunks join to the same reply as the non-streamed one (greedy)', async () => {
    const body = { model: 'stories260K', messages, temperature: 0, max_tokens: 300, response_format: { type: 'json_schema' as const, json_schema: { name: 'review', schema: SCHEMA } } };
    const whole = (await client.chat.completions.create(body)).choices[0].message.content;
    let streamed = '';
    for await (const chunk of await client.chat.completions.create({ ...body, stream: true })) streamed += chunk.choices[0]?.delta?.content ?? '';
    expect(streamed).toBe(whole);
  });

  it('json_object: an object (temperature 1), and on /v1/completions too', async () => {
    const r = await client.chat.completions.create({ model: 'stories260K', messages, temperature: 1, seed: 5, max_tokens: 60, response_format: { type: 'json_object' } });
    const text = r.choices[0].message.content ?? '';
    expect(text.trimStart()[0]).toBe('{');
    if (r.choices[0].finish_reason === 'stop') expect(typeof JSON.parse(text)).toBe('object');
    const c = await client.completions.create({ model: 'stories260K', prompt: 'Once upon a time', max_tokens: 200, temperature: 0, response_format: { type: 'json_schema', json_schema: { name: 'r', schema: SCHEMA } } } as never);
    expect(validate(JSON.parse(c.choices[0].text), SCHEMA)).toBeNull();
  });

  it('a bad response_format is a 400 naming the field', async () => {
    const err = async (rf: unknown) => {
      try {
        await client.chat.completions.create({ model: 'stories260K', messages, max_tokens: 2, response_format: rf as never });
      } catch (e) {
        if (e instanceof APIError) return { status: e.status, param: e.param };
        throw e;
      }
      throw new Error('the request succeeded');
    };
    expect(await err({ type: 'xml' })).toEqual({ status: 400, param: 'response_format.type' });
    expect(await err({ type: 'json_schema' })).toEqual({ status: 400, param: 'response_format.json_schema' });
    expect(await err({ type: 'json_schema', json_schema: { name: 'x', schema: { type: 'wat' } } })).toEqual({ status: 400, param: 'response_format.json_schema.schema' });
    expect(await err({ type: 'json_schema', json_schema: { name: 'x', schema: { $ref: 'https://example.com/s.json' } } })).toEqual({ status: 400, param: 'response_format.json_schema.schema' });
  });
});
