// Forced tool calls under their schema's grammar: the grammars accept the calls the format writes
// and refuse arguments outside the schema (hand-written strings), and end to end a random-weight
// model given Qwen3's template (whose tokens are noise) returns, for a named function at
// temperature 1, arguments that parse and match the function's parameters every time, and under
// 'auto' a call the scripted tool caller opens is constrained from its opener on.
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/engine/chat/tools.js';
import { GrammarAutomaton } from '../../src/engine/grammar/automaton.js';
import { parseGbnf } from '../../src/engine/grammar/gbnf.js';
import { readGgufHeaderSync, readTensorBytes, writeGguf } from '../../src/engine/gguf/index.js';
import { kv } from '../../src/engine/gguf/writer.js';
import { LoadedModel } from '../../src/engine/session.js';
import { OpenAiServer } from '../../src/engine/server/server.js';
import { toolCallGrammar } from '../../src/engine/server/tool-grammar.js';
import { HAVE_SHARED, ROOT, sharedModel } from '../helpers.js';
import { writeToolCallerModel } from '../chat/tool-model.js';
import { validate } from '../grammar/validate.js';

const PARAMS = { type: 'object', properties: { city: { type: 'string', maxLength: 12 }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city', 'days'], additionalProperties: false };
const WEATHER: ToolDefinition = { type: 'function', function: { name: 'get_weather', parameters: PARAMS } };
const OTHER: ToolDefinition = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] } } };
const accepts = (g: string, s: string) => new GrammarAutomaton(parseGbnf(g)).accepts(s);

describe('toolCallGrammar', () => {
  it('a named function: its arguments, then what closes the call in each format', () => {
    const hermes = toolCallGrammar('hermes', [WEATHER, OTHER], { name: 'get_weather' })!;
    expect(accepts(hermes, '{"city": "Paris", "days": 3}}\n</tool_call>')).toBe(true);
    expect(accepts(hermes, '{"city": "Paris", "days": 9}}\n</tool_call>')).toBe(false); // maximum 7
    expect(accepts(hermes, '{"zone": "UTC"}}\n</tool_call>')).toBe(false); // another tool's arguments
    expect(accepts(hermes, '{"city": "Paris", "days": 3}')).toBe(false); // the call left open
    expect(accepts(toolCallGrammar('llama3', [WEATHER], { name: 'get_weather' })!, '{"city": "Rome", "days": 1}}')).toBe(true);
    expect(accepts(toolCallGrammar('mistral', [WEATHER], { name: 'get_weather' })!, '{"city": "Rome", "days": 1}}]')).toBe(true);
    expect(accepts(toolCallGrammar('harmony', [WEATHER], { name: 'get_weather' })!, '{"city": "Rome", "days": 1}')).toBe(true);
  });

  it("required: a whole call to one of the tools (Hermes, Mistral); auto and none are free", () => {
    const g = toolCallGrammar('hermes', [WEATHER, OTHER], 'required')!;
    expect(accepts(g, '\n{"name": "get_time", "arguments": {"zone": "UTC"}}\n</tool_call>')).toBe(true);
    expect(accepts(g, '\n{"name": "get_time", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>')).toBe(false);
    expect(accepts(toolCallGrammar('mistral', [WEATHER], 'required')!, '[{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}]')).toBe(true);
    expect(toolCallGrammar('hermes', [WEATHER], 'auto')).toBeUndefined();
    expect(toolCallGrammar('hermes', [WEATHER], 'none')).toBeUndefined();
  });
});

describe.skipIf(!HAVE_SHARED)('a forced call from a random model, through the openai client', () => {
  let model: LoadedModel;
  let server: OpenAiServer;
  let client: OpenAI;

  beforeAll(async () => {
    // tiny-qwen3-s5 (random weights) with Qwen3's chat template, which teaches Hermes <tool_call>.
    const src = sharedModel('tiny-random/tiny-qwen3-s5.gguf');
    const h = readGgufHeaderSync(src);
    const kvs = [...h.metadata.values()].filter((e) => e.key !== 'tokenizer.chat_template').map((e) => ({ key: e.key, type: e.type, value: e.value }));
    kvs.push(kv.str('tokenizer.chat_template', readFileSync(join(ROOT, 'tests', 'chat', 'templates', 'Qwen-Qwen3-0.6B.jinja'), 'utf8')));
    const tensors = h.tensors.map((t) => ({ name: t.name, dims: [...t.dims], type: t.type, data: readTensorBytes(src, h, t.name) }));
    const file = join(mkdtempSync(join(tmpdir(), 'pantheon-toolgrammar-')), 'random-qwen3-tools.gguf');
    writeFileSync(file, writeGguf(kvs, tensors));
    model = await LoadedModel.load(file, { contextSize: 1024 });
    server = await OpenAiServer.start(model, { port: 0 });
    client = new OpenAI({ baseURL: server.url, apiKey: 'none', maxRetries: 0 });
  });

  afterAll(async () => {
    await server?.close();
    model?.dispose();
  });

  it('a named function at temperature 1: the arguments parse and match its schema, seed after seed', async () => {
    for (const seed of [1, 2, 3]) {
      const r = await client.chat.completions.create({
        model: 'random-qwen3-tools', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER, OTHER],
        tool_choice: { type: 'function', function: { name: 'get_weather' } }, temperature: 1, seed, max_tokens: 200,
      });
      expect(r.choices[0].finish_reason).toBe('tool_calls');
      const call = r.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
      expect(call.function.name).toBe('get_weather');
      const args = JSON.parse(call.function.arguments);
      expect(validate(args, PARAMS)).toBeNull();
    }
  }, 120_000);
});


describe('auto: a call the model opens itself is constrained from its opener on', () => {
  // The scripted tool caller (tests/chat/tool-model.ts) always writes
  // <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>. With a schema
  // that allows only Rome or Oslo, the lazy grammar takes over at <tool_call> and the call comes out
  // valid: the model's best allowed city, never Paris.
  const ONLY: ToolDefinition = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { enum: ['Rome', 'Oslo'] } }, required: ['city'], additionalProperties: false } } };
  let caller: LoadedModel;
  let server: OpenAiServer;
  let client: OpenAI;
  beforeAll(async () => {
    caller = await LoadedModel.load(writeToolCallerModel(mkdtempSync(join(tmpdir(), 'pantheon-lazy-'))), { contextSize: 1024 });
    server = await OpenAiServer.start(caller, { port: 0 });
    client = new OpenAI({ baseURL: server.url, apiKey: 'none', maxRetries: 0 });
  });
  afterAll(async () => {
    await server?.close();
    caller?.dispose();
  });

  it('the scripted Paris becomes an allowed city', async () => {
    const ask = [{ role: 'user' as const, content: 'Weather?' }];
    const r = await client.chat.completions.create({ model: 'scripted-tool-caller', messages: ask, tools: [ONLY], temperature: 0 });
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    const call = r.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('get_weather');
    const args = JSON.parse(call.function.arguments);
    expect(validate(args, ONLY.function.parameters as never)).toBeNull();
    expect(['Rome', 'Oslo']).toContain(args.city);
  });
});
