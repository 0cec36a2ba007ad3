// Tool calls (src/engine/chat/tools.ts): each format parsed from hand-written model outputs as the
// formats' own documentation writes them (Hermes/Qwen2.5 <tool_call>, Llama 3.1's JSON tool calling,
// Mistral's [TOOL_CALLS] v3 and v11, OpenAI Harmony's commentary channel), the format found from the
// chat template, tools and tool results rendered through real templates, and the streaming holder.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderChat, type ChatMessage, type TemplateInfo } from '../../src/engine/chat/index.js';
import { parseToolCalls, toolCallPrefix, toolCallSchema, toolFormat, type ToolDefinition } from '../../src/engine/chat/tools.js';
import { splitToolCalls, ToolCallStream } from '../../src/engine/server/tool-stream.js';
import { ROOT } from '../helpers.js';

const calls = (format: Parameters<typeof parseToolCalls>[0], text: string) => {
  const r = parseToolCalls(format, text);
  return { content: r.content, calls: r.calls.map((c) => ({ name: c.name, args: JSON.parse(c.arguments) as unknown })) };
};

describe('parseToolCalls', () => {
  it('hermes: one or more <tool_call> blocks, text around them kept as content', () => {
    expect(calls('hermes', '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>')).toEqual({
      content: '', calls: [{ name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } }],
    });
    expect(calls('hermes', 'Let me check both.\n<tool_call>\n{"name": "a", "arguments": {"x": "}"}}\n</tool_call>\n<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call>')).toEqual({
      content: 'Let me check both.', calls: [{ name: 'a', args: { x: '}' } }, { name: 'b', args: {} }],
    });
    // the closing tag cut off by the end of the reply; arguments given as a JSON string
    expect(calls('hermes', '<tool_call>{"name": "f", "arguments": "{\\"n\\": 1}"}').calls).toEqual([{ name: 'f', args: { n: 1 } }]);
    // not JSON, or no name: not a call, the text stays content
    const bad = '<tool_call>\n{"name": "f", "arguments": {"x": </tool_call>';
    expect(parseToolCalls('hermes', bad)).toEqual({ content: bad, calls: [] });
    expect(parseToolCalls('hermes', '<tool_call>{"arguments": {}}</tool_call>').calls).toEqual([]);
    expect(parseToolCalls('hermes', 'Just text.')).toEqual({ content: 'Just text.', calls: [] });
  });

  it('llama3: the reply is one JSON object {name, parameters} (or several, ; separated), <|python_tag|> optional', () => {
    expect(calls('llama3', '{"name": "get_weather", "parameters": {"city": "Paris"}}')).toEqual({ content: '', calls: [{ name: 'get_weather', args: { city: 'Paris' } }] });
    expect(calls('llama3', '<|python_tag|>{"name": "a", "parameters": {"q": 1}}; {"name": "b", "parameters": {}}<|eom_id|>').calls).toEqual([{ name: 'a', args: { q: 1 } }, { name: 'b', args: {} }]);
    // prose, or prose after the JSON: an answer, not a call
    expect(parseToolCalls('llama3', 'The weather is {"nice": true}').calls).toEqual([]);
    expect(parseToolCalls('llama3', '{"name": "a", "parameters": {}} and more').calls).toEqual([]);
    expect(parseToolCalls('llama3', '{"city": "Paris"}').calls).toEqual([]);
  });

  it('mistral: [TOOL_CALLS] then a JSON array (v3/v7), or NAME[ARGS]{…} (v11), ids kept', () => {
    const v3 = parseToolCalls('mistral', '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abc123def"}, {"name": "b", "arguments": {}}]');
    expect(v3.calls.map((c) => [c.id, c.name, JSON.parse(c.arguments)])).toEqual([['abc123def', 'get_weather', { city: 'Paris' }], [v3.calls[1].id, 'b', {}]]);
    expect(v3.calls[1].id).toMatch(/^call_\w{24}$/);
    expect(calls('mistral', '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]b[ARGS]{}')).toEqual({ content: '', calls: [{ name: 'get_weather', args: { city: 'Paris' } }, { name: 'b', args: {} }] });
    expect(calls('mistral', 'Sure.[TOOL_CALLS]f[ARGS]{"a": [1, {"b": "]"}]}').content).toBe('Sure.');
    expect(parseToolCalls('mistral', '[TOOL_CALLS] not json').calls).toEqual([]);
  });

  it('harmony: a commentary message to=functions.NAME, in either header order, after the analysis', () => {
    const a = '<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>';
    expect(calls('harmony', a)).toEqual({ content: '<|channel|>analysis<|message|>Need the weather.<|end|>', calls: [{ name: 'get_weather', args: { city: 'Paris' } }] });
    const b = '<|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>{"q": "x"}<|call|>';
    expect(calls('harmony', b).calls).toEqual([{ name: 'lookup', args: { q: 'x' } }]);
    // the body cut at the end (the <|call|> stop not in the text)
    expect(calls('harmony', '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"n": 2}').calls).toEqual([{ name: 'f', args: { n: 2 } }]);
    expect(parseToolCalls('harmony', '<|channel|>final<|message|>Hello').calls).toEqual([]);
  });
});

const info = (template: string | null): TemplateInfo => ({ template, bosToken: '', eosToken: '', architecture: null, name: null });
const template = (name: string) => readFileSync(join(ROOT, 'tests', 'chat', 'templates', name), 'utf8');

describe('toolFormat, toolCallPrefix, toolCallSchema', () => {
  it('reads the format from the template; a template without tools has none', () => {
    expect(toolFormat(info(template('Qwen-Qwen3-0.6B.jinja')))).toBe('hermes');
    expect(toolFormat(info(template('openai-gpt-oss-120b.jinja')))).toBe('harmony');
    expect(toolFormat(info('{% if tools %}[AVAILABLE_TOOLS]{{ tools|tojson }}[/AVAILABLE_TOOLS]{% endif %}[TOOL_CALLS]'))).toBe('mistral');
    expect(toolFormat(info('{% if tools %}{{ tools }}{% endif %}<|start_header_id|>ipython<|end_header_id|>'))).toBe('llama3');
    expect(toolFormat(info('{% for m in messages %}<|im_start|>{{ m.content }}{% endfor %}'))).toBeNull();
    expect(toolFormat(info(null))).toBeNull();
  });

  it('the prefix of a required or named call parses once the model closes it', () => {
    for (const f of ['hermes', 'llama3', 'mistral', 'harmony'] as const) {
      const rest = { hermes: '{"city": "Paris"}}</tool_call>', llama3: '{"city": "Paris"}}', mistral: '{"city": "Paris"}}]', harmony: '{"city": "Paris"}<|call|>' }[f];
      expect(calls(f, toolCallPrefix(f, 'get_weather') + rest).calls, f).toEqual([{ name: 'get_weather', args: { city: 'Paris' } }]);
    }
  });

  it('the schema a call must match: its name a constant, its arguments the function\'s parameters', () => {
    const tools: ToolDefinition[] = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { n: { type: 'integer' } } } } }];
    expect(toolCallSchema('hermes', tools)).toEqual({ anyOf: [{ type: 'object', properties: { name: { const: 'f' }, arguments: tools[0].function.parameters }, required: ['name', 'arguments'], additionalProperties: false }] });
    expect((toolCallSchema('llama3', tools).anyOf as { required: string[] }[])[0].required).toEqual(['name', 'parameters']);
    expect(toolCallSchema('harmony', tools)).toEqual({ anyOf: [tools[0].function.parameters] });
  });
});

const WEATHER: ToolDefinition = { type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const TURNS: ChatMessage[] = [
  { role: 'user', content: 'Weather in Paris?' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city": "Paris"}' }] },
  { role: 'tool', content: '{"temp": 21}', toolCallId: 'call_1', name: 'get_weather' },
];

describe('tools through the templates', () => {
  it('Qwen3: tools in the system turn, the call as <tool_call>, the result as <tool_response>', () => {
    const r = renderChat(info(template('Qwen-Qwen3-0.6B.jinja')), TURNS, { tools: [WEATHER] });
    expect(r.templateName).toBe('gguf');
    expect(r.text).toContain('<tools>');
    expect(r.text).toContain('"name": "get_weather"');
    expect(r.text).toContain('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>');
    expect(r.text).toContain('<tool_response>\n{"temp": 21}\n</tool_response>');
    expect(r.text.endsWith('<|im_start|>assistant\n')).toBe(true);
  });

  it('gpt-oss: the functions namespace in the developer turn, the call and its result as Harmony messages', () => {
    const r = renderChat(info(template('openai-gpt-oss-120b.jinja')), TURNS, { tools: [WEATHER] });
    expect(r.templateName).toBe('gguf');
    expect(r.text).toContain('namespace functions');
    expect(r.text).toContain('type get_weather = (_: {');
    expect(r.text).toContain('<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>');
    // (the template writes the tool's result as a JSON string)
    expect(r.text).toContain('<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"{\\"temp\\": 21}"<|end|>');
  });
});

describe('ToolCallStream', () => {
  it('streams plain text at once, holds a call to the end, and continues a forced prefix', () => {
    const s = new ToolCallStream('hermes', '');
    expect(['Hel', 'lo', ' there'].map((p) => s.push(p, p))).toEqual(['Hel', 'lo', ' there']);
    expect(s.finish()).toEqual({ content: '', calls: [] });
    const c = new ToolCallStream('hermes', '');
    const pieces = [' <tool', '_call>', '{"name": "f", ', '"arguments": {}}', '</tool_call>'];
    expect(pieces.map((p) => c.push(p, p))).toEqual(['', '', '', '', '']);
    expect(c.finish().calls.map((x) => x.name)).toEqual(['f']);
    // "<to" might open a call: held, then let go as text when it does not
    const t = new ToolCallStream('hermes', '');
    expect([t.push('<to', '<to'), t.push('day>', 'day>')]).toEqual(['', '<today>']);
    const f = splitToolCalls('hermes', '<tool_call>', '{"name": "f", "arguments": {"a": 1}}</tool_call>', '');
    expect(f.calls.map((x) => [x.name, x.arguments])).toEqual([['f', '{"a":1}']]);
    // a forced call the model did not complete: its text comes back as content
    expect(splitToolCalls('hermes', '<tool_call>', 'no json here', '')).toEqual({ content: 'no json here', calls: [] });
    // harmony reads the raw text, with the headers the answer text does not show
    const h = splitToolCalls('harmony', '', '{"city":"Paris"}', '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>');
    expect(h).toEqual({ content: '', calls: [expect.objectContaining({ name: 'get_weather', arguments: '{"city":"Paris"}' })] });
  });
});
