// Tool calls in Llama 3.x's JSON and gpt-oss's Harmony format under their grammars (issue 20):
// - the grammars accept the calls each format writes and refuse a name outside the tools or
//   arguments outside the function's schema (hand-written strings);
// - the lazy grammar's triggers fire where llama.cpp's do, and take the text since the trigger;
// - end to end through the official `openai` client, random-weight models given Llama 3.2's and
//   gpt-oss's templates (their tokens are noise) return, for tool_choice 'required' and a named
//   function at temperature 1, a call to one of the tools whose arguments parse and match its
//   schema (tests/grammar/validate.ts), seed after seed, while the same prompts and seeds without
//   a grammar do not;
// - under 'auto', scripted callers (tests/chat/tool-model.ts) that always write city "Paris" are
//   held, from their call's opener on, to a schema that allows only Rome or Oslo.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderChat } from '../../src/engine/chat/index.js';
import { parseToolCalls, toolCallPrefix, type ToolDefinition, type ToolFormat } from '../../src/engine/chat/tools.js';
import { GrammarAutomaton } from '../../src/engine/grammar/automaton.js';
import { parseGbnf } from '../../src/engine/grammar/gbnf.js';
import { LazyGrammarWatch } from '../../src/engine/grammar/lazy.js';
import { GrammarMatcher, compileGrammar } from '../../src/engine/grammar/matcher.js';
import { readGgufHeaderSync, readTensorBytes, writeGguf } from '../../src/engine/gguf/index.js';
import { kv } from '../../src/engine/gguf/writer.js';
import { DEFAULT_SAMPLING } from '../../src/engine/sample/params.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { OpenAiServer } from '../../src/engine/server/server.js';
import { lazyToolCallGrammar, toolCallGrammar } from '../../src/engine/server/tool-grammar.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { template } from '../chat/thinker-model.js';
import { writeScriptedCaller } from '../chat/tool-model.js';
import { validate } from '../grammar/validate.js';

const PARAMS = { type: 'object', properties: { city: { type: 'string', maxLength: 12 }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city', 'days'], additionalProperties: false };
const ZONE = { type: 'object', properties: { zone: { enum: ['UTC', 'CET'] } }, required: ['zone'], additionalProperties: false };
const WEATHER: ToolDefinition = { type: 'function', function: { name: 'get_weather', parameters: PARAMS } };
const TIME: ToolDefinition = { type: 'function', function: { name: 'get_time', parameters: ZONE } };
const TOOLS = [WEATHER, TIME];
const SCHEMAS: Record<string, object> = { get_weather: PARAMS, get_time: ZONE };
const accepts = (g: string, s: string) => new GrammarAutomaton(parseGbnf(g)).accepts(s);

describe('Llama 3 and Harmony call grammars', () => {
  it("llama3 'required': the rest of a call after the prompt's {\"name\": \"", () => {
    const g = toolCallGrammar('llama3', TOOLS, 'required')!;
    expect(accepts(g, 'get_weather", "parameters": {"city": "Paris", "days": 3}}')).toBe(true);
    expect(accepts(g, 'get_time",\n"parameters": {"zone": "UTC"} }')).toBe(true);
    expect(accepts(g, 'get_weather", "parameters": {"city": "Paris", "days": 9}}')).toBe(false); // maximum 7
    expect(accepts(g, 'get_weather", "parameters": {"zone": "UTC"}}')).toBe(false); // another tool's arguments
    expect(accepts(g, 'get_date", "parameters": {}}')).toBe(false); // no such tool
  });

  it("llama3 'auto': a whole call, \"type\": \"function\" optional", () => {
    const g = lazyToolCallGrammar('llama3', TOOLS)!.grammar;
    expect(accepts(g, '{"name": "get_time", "parameters": {"zone": "CET"}}')).toBe(true);
    expect(accepts(g, '{"type": "function", "name": "get_time", "parameters": {"zone": "CET"}}')).toBe(true);
    expect(accepts(g, '{"name": "get_time", "parameters": {"zone": "EST"}}')).toBe(false);
  });

  it("harmony 'required': the name after the prompt's to=functions., the header's end, the arguments", () => {
    const g = toolCallGrammar('harmony', TOOLS, 'required')!;
    expect(accepts(g, 'get_weather <|constrain|>json<|message|>{"city": "Oslo", "days": 2}')).toBe(true);
    expect(accepts(g, 'get_time<|message|>{"zone": "UTC"}')).toBe(true);
    expect(accepts(g, 'get_weather<|message|>{"zone": "UTC"}')).toBe(false);
    expect(accepts(g, 'get_weather <|constrain|>json<|message|>{"city": "Oslo", "days": 2} and more')).toBe(false);
  });

  it("harmony 'auto': the recipient in the channel header or in the role header", () => {
    const g = lazyToolCallGrammar('harmony', TOOLS)!.grammar;
    expect(accepts(g, '<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{"zone": "UTC"}')).toBe(true);
    expect(accepts(g, ' to=functions.get_time<|channel|>commentary json<|message|>{"zone": "UTC"}')).toBe(true);
    expect(accepts(g, '<|channel|>commentary to=functions.get_date<|message|>{}')).toBe(false);
  });
});

describe('LazyGrammarWatch: the triggers, and the text since them', () => {
  // a byte-level vocabulary: token b is byte b, 256 ends the generation
  const vocab = { size: 257, bytes: (id: number) => (id < 256 ? Uint8Array.of(id) : new Uint8Array(0)), isEog: (id: number) => id === 256 };
  const watch = (f: ToolFormat) => new LazyGrammarWatch(lazyToolCallGrammar(f, TOOLS)!, (g) => new GrammarMatcher(compileGrammar(g), vocab));
  const feed = (w: LazyGrammarWatch, pieces: string[]) => pieces.map((p) => w.push(p));

  it('llama3: at the reply\'s start only, once {"name": " shows; the grammar takes it from the {', () => {
    const got = feed(watch('llama3'), ['{"na', 'me": "get_t', 'ime", "param']);
    expect(got.slice(0, 1)).toEqual([null]);
    const m = got[1]!;
    expect(m).not.toBeNull();
    expect(m.acceptText('ime", "parameters": {"zone": "UTC"}}')).toBe(true);
    expect(m.complete).toBe(true);
    // prose first: never a call
    expect(feed(watch('llama3'), ['Sure. ', '{"name": "get_time"'])).toEqual([null, null]);
    // a call to no tool: the trigger fires, the grammar refuses the name, the text stays free
    expect(feed(watch('llama3'), ['{"name": "get_date', '", "parameters": {}}'])).toEqual([null, null]);
  });

  it('harmony: after <|start|>assistant, in either header, from its start', () => {
    const [a, b] = feed(watch('harmony'), ['<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>comm', 'entary to=functions.get_ti']);
    expect(a).toBeNull();
    expect(b!.acceptText('me<|message|>{"zone": "CET"}')).toBe(true);
    const [c] = feed(watch('harmony'), [' to=functions.get_time<|channel|>commentary']);
    expect(c!.acceptText(' json<|message|>{"zone": "UTC"}')).toBe(true);
    expect(feed(watch('harmony'), ['<|channel|>final<|message|>I will call to=functions.x later'])).toEqual([null]);
  });
});

/** The tiny random model `file` with the chat template `templateFile`, written into `dir`. */
function withTemplate(file: string, templateFile: string, dir: string, name: string): string {
  const src = sharedModel(`tiny-random/${file}`);
  const h = readGgufHeaderSync(src);
  const kvs = [...h.metadata.values()].filter((e) => e.key !== 'tokenizer.chat_template').map((e) => ({ key: e.key, type: e.type, value: e.value }));
  kvs.push(kv.str('tokenizer.chat_template', template(templateFile)));
  const tensors = h.tensors.map((t) => ({ name: t.name, dims: [...t.dims], type: t.type, data: readTensorBytes(src, h, t.name) }));
  const path = join(dir, `${name}.gguf`);
  writeFileSync(path, writeGguf(kvs, tensors));
  return path;
}

/** A call to one of TOOLS whose arguments match its schema, or why not. */
function checkCall(c: { name: string; arguments: string } | undefined): string | null {
  if (!c) return 'no call';
  if (!(c.name in SCHEMAS)) return `no tool ${c.name}`;
  let args: unknown;
  try {
    args = JSON.parse(c.arguments);
  } catch {
    return `arguments not JSON: ${c.arguments}`;
  }
  return validate(args, SCHEMAS[c.name] as never);
}

const RANDOM: [ToolFormat, string, string][] = [
  ['llama3', 'tiny-llama-s5.gguf', 'meta-llama-Llama-3.2-3B-Instruct.jinja'],
  ['harmony', 'tiny-gpt-oss-s1.gguf', 'openai-gpt-oss-120b.jinja'],
];

describe.skipIf(!HAVE_SHARED).each(RANDOM)('%s: forced calls from a random model, through the openai client', (format, file, templateFile) => {
  let model: LoadedModel;
  let server: OpenAiServer;
  let client: OpenAI;
  const id = `random-${format}-tools`;
  const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];

  beforeAll(async () => {
    model = await LoadedModel.load(withTemplate(file, templateFile, mkdtempSync(join(tmpdir(), 'pantheon-toolformats-')), id), { contextSize: 2048 });
    server = await OpenAiServer.start(model, { port: 0 });
    client = new OpenAI({ baseURL: server.url, apiKey: 'none', maxRetries: 0 });
  });
  afterAll(async () => {
    await server?.close();
    model?.dispose();
  });

  it("'required' and a named function at temperature 1: a tool's name, arguments that match its schema", async () => {
    for (const choice of ['required', { type: 'function', function: { name: 'get_weather' } }] as const) {
      for (const seed of [1, 2, 3]) {
        const r = await client.chat.completions.create({ model: id, messages, tools: TOOLS, tool_choice: choice, temperature: 1, seed, max_tokens: 200 });
        expect(r.choices[0].finish_reason).toBe('tool_calls');
        const call = r.choices[0].message.tool_calls?.[0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall | undefined;
        expect(checkCall(call?.function), JSON.stringify(r.choices[0].message)).toBeNull();
        if (typeof choice === 'object') expect(call!.function.name).toBe('get_weather');
      }
    }
  }, 300_000);

  it('without a grammar the same prompts and seeds make no valid call in their first 80 tokens', async () => {
    const rendered = renderChat(model.templateInfo, messages, { tools: TOOLS });
    const prefix = toolCallPrefix(format);
    const tokens = model.tokenizer.encode(rendered.text + prefix, { addSpecial: !rendered.startsWithBos, parseSpecial: true });
    const session = new Session(model);
    for (const seed of [1, 2, 3]) {
      let text = '';
      for await (const e of session.generate(tokens, { ...DEFAULT_SAMPLING, temperature: 1, seed, maxTokens: 80 }, undefined, { stopStrings: rendered.stopStrings })) if (e.kind === 'token') text += e.raw;
      const calls = parseToolCalls(format, prefix + text).calls;
      expect(checkCall(calls[0]), text).not.toBeNull();
    }
  }, 300_000);
});

describe.each(['llama3', 'harmony'] as const)("%s 'auto': a call the scripted caller opens is held to the schema from its opener on", (format) => {
  const ONLY: ToolDefinition = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { enum: ['Rome', 'Oslo'] } }, required: ['city'], additionalProperties: false } } };
  let caller: LoadedModel;
  let server: OpenAiServer;
  let client: OpenAI;
  beforeAll(async () => {
    caller = await LoadedModel.load(writeScriptedCaller(mkdtempSync(join(tmpdir(), 'pantheon-lazy-')), format), { contextSize: 2048 });
    server = await OpenAiServer.start(caller, { port: 0 });
    client = new OpenAI({ baseURL: server.url, apiKey: 'none', maxRetries: 0 });
  });
  afterAll(async () => {
    await server?.close();
    caller?.dispose();
  });

  it('without tools the script writes Paris; with them the call comes out inside the enum', async () => {
    const ask = [{ role: 'user' as const, content: 'Weather?' }];
    const free = await client.chat.completions.create({ model: `scripted-${format}-caller`, messages: ask, temperature: 0, max_tokens: 40 });
    expect(free.choices[0].message.content ?? '').toContain('Paris');
    for (const stream of [false, true]) {
      let calls: { name: string; arguments: string }[] = [];
      let finish: string | null = null;
      if (stream) {
        const s = await client.chat.completions.create({ model: `scripted-${format}-caller`, messages: ask, tools: [ONLY], temperature: 0, max_tokens: 300, stream: true });
        for await (const ch of s) {
          for (const tc of ch.choices[0]?.delta.tool_calls ?? []) calls.push({ name: tc.function!.name!, arguments: tc.function!.arguments! });
          finish = ch.choices[0]?.finish_reason ?? finish;
        }
      } else {
        const r = await client.chat.completions.create({ model: `scripted-${format}-caller`, messages: ask, tools: [ONLY], temperature: 0, max_tokens: 300 });
        finish = r.choices[0].finish_reason;
        calls = (r.choices[0].message.tool_calls ?? []).map((c) => (c as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall).function);
      }
      expect(finish).toBe('tool_calls');
      expect(calls).toHaveLength(1);
      expect(calls[0].name).toBe('get_weather');
      const args = JSON.parse(calls[0].arguments);
      expect(validate(args, ONLY.function.parameters as never)).toBeNull();
      expect(['Rome', 'Oslo']).toContain(args.city);
    }
  });
});
