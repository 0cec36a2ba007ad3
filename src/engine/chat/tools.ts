// Tool calls (OpenAI `tools`): the model writes a call in its own template's format, and this file
// finds it in the output text. The format comes from the chat template (what it teaches the model):
//   hermes   Hermes, Qwen2.5/Qwen3, SmolLM3:  <tool_call>{"name": "f", "arguments": {…}}</tool_call>
//   llama3   Llama 3.1–3.3:                   {"name": "f", "parameters": {…}}  (<|python_tag|> optional)
//   mistral  Mistral v3 / v7:                 [TOOL_CALLS][{"name": "f", "arguments": {…}, "id": "…"}]
//            Mistral v11+ (tekken):           [TOOL_CALLS]f[ARGS]{…}
//   harmony  gpt-oss:                         <|channel|>commentary to=functions.f <|constrain|>json<|message|>{…}<|call|>
// Arguments come back as JSON text (OpenAI's `arguments` is a string). A call whose JSON does not
// parse is left in the text as content, never guessed at.
//
// Constraining a call's arguments to the function's parameter schema needs the grammar engine:
// toolCallSchema gives the JSON schema a call must match, for a grammar to be compiled from.

import type { TemplateInfo } from './types.js';

export type ToolFormat = 'hermes' | 'llama3' | 'mistral' | 'harmony';

/** An OpenAI function tool: {type: "function", function: {name, description?, parameters?}}. */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** A call the model made: the function's name and its arguments as JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** `tool_choice`: let the model decide, never call, call one or more, or call this function. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** The tool-call format the file's template teaches, or null when it takes no tools. */
export function toolFormat(info: TemplateInfo): ToolFormat | null {
  const t = info.template ?? '';
  if (!/\btools\b/.test(t)) return null;
  if (t.includes('<tool_call>')) return 'hermes';
  if (t.includes('[TOOL_CALLS]')) return 'mistral';
  if (t.includes('to=functions.') || t.includes('<|channel|>')) return 'harmony';
  if (t.includes('<|start_header_id|>')) return 'llama3';
  return null;
}

/**
 * Text that opens a call in `format`, appended to the generation prompt when a call is required
 * (tool_choice "required", or one named function): the model continues inside the call.
 */
export function toolCallPrefix(format: ToolFormat, name?: string): string {
  switch (format) {
    case 'hermes':
      return name === undefined ? '<tool_call>' : `<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": `;
    case 'llama3':
      return name === undefined ? '{"name": "' : `{"name": ${JSON.stringify(name)}, "parameters": `;
    case 'mistral':
      return name === undefined ? '[TOOL_CALLS]' : `[TOOL_CALLS][{"name": ${JSON.stringify(name)}, "arguments": `;
    case 'harmony':
      return name === undefined ? '<|channel|>commentary to=functions.' : `<|channel|>commentary to=functions.${name} <|constrain|>json<|message|>`;
  }
}

/**
 * The JSON schema one call's JSON must match in `format` (hermes/mistral `{name, arguments}`,
 * llama3 `{name, parameters}`; harmony: the arguments alone, the name being in the header): the
 * hook for grammar-constrained arguments.
 */
export function toolCallSchema(format: ToolFormat, tools: readonly ToolDefinition[]): Record<string, unknown> {
  const params = (t: ToolDefinition) => t.function.parameters ?? { type: 'object' };
  if (format === 'harmony') return { anyOf: tools.map(params) };
  const key = format === 'llama3' ? 'parameters' : 'arguments';
  return {
    anyOf: tools.map((t) => ({
      type: 'object',
      properties: { name: { const: t.function.name }, [key]: params(t) },
      required: ['name', key],
      additionalProperties: false,
    })),
  };
}

/** Text openers of a call in `format`: while the output could still start with one, a stream holds it back. */
export function toolCallOpeners(format: ToolFormat): string[] {
  switch (format) {
    case 'hermes':
      return ['<tool_call>'];
    case 'llama3':
      // (a call's JSON may put whitespace or "type": "function" before its name)
      return ['<|python_tag|>', '{'];
    case 'mistral':
      return ['[TOOL_CALLS]'];
    case 'harmony':
      return ['<|channel|>commentary to=functions.', '<|start|>assistant to=functions.', ' to=functions.', 'to=functions.'];
  }
}

export interface ParsedToolCalls {
  /** The text outside the calls (trimmed); '' when the output was only calls. */
  content: string;
  calls: ToolCall[];
}

let callCounter = 0;
/** An id for a call: "call_" and 24 characters, as OpenAI's. */
export function newCallId(): string {
  callCounter = (callCounter + 1) % 1e9;
  const rand = Math.random().toString(36).slice(2, 14).padEnd(12, '0');
  return `call_${rand}${callCounter.toString(36).padStart(12, '0')}`;
}

/** JSON.parse, or undefined. */
function tryJson(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Arguments as JSON text: an object is serialised, a string (already JSON) kept when it parses. */
function argumentsText(v: unknown): string | null {
  if (v === undefined) return '{}';
  if (typeof v === 'string') return isObject(tryJson(v)) ? v : null;
  return isObject(v) ? JSON.stringify(v) : null;
}

/** A {name, arguments|parameters} object as a call, or null when it is not one. */
function callFrom(v: unknown, key: 'arguments' | 'parameters'): ToolCall | null {
  if (!isObject(v) || typeof v.name !== 'string' || v.name === '') return null;
  const args = argumentsText(v[key] ?? (key === 'parameters' ? v.arguments : undefined));
  if (args === null) return null;
  return { id: typeof v.id === 'string' && v.id ? v.id : newCallId(), name: v.name, arguments: args };
}

/**
 * The end of the JSON value starting at `text[start]` ('{' or '['), found by bracket depth outside
 * strings; -1 when it does not close.
 */
function jsonEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Find the calls in a model's output `text` written in `format`. */
export function parseToolCalls(format: ToolFormat, text: string): ParsedToolCalls {
  switch (format) {
    case 'hermes':
      return parseHermes(text);
    case 'llama3':
      return parseLlama3(text);
    case 'mistral':
      return parseMistral(text);
    case 'harmony':
      return parseHarmony(text);
  }
}

function parseHermes(text: string): ParsedToolCalls {
  const calls: ToolCall[] = [];
  let content = '';
  let at = 0;
  // <tool_call>JSON</tool_call>, the closing tag optional at the very end (a reply cut at its stop)
  const re = /<tool_call>\s*/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const start = m.index + m[0].length;
    const end = text[start] === '{' ? jsonEnd(text, start) : -1;
    const call = end > 0 ? callFrom(tryJson(text.slice(start, end)), 'arguments') : null;
    if (!call) continue;
    const close = /^\s*<\/tool_call>/.exec(text.slice(end));
    content += text.slice(at, m.index);
    at = end + (close ? close[0].length : 0);
    re.lastIndex = at;
    calls.push(call);
  }
  content += text.slice(at);
  return { content: calls.length ? content.trim() : text, calls };
}

function parseLlama3(text: string): ParsedToolCalls {
  // one or more JSON objects, separated by ';' or whitespace, the whole reply (after <|python_tag|>)
  let s = text.trim();
  if (s.startsWith('<|python_tag|>')) s = s.slice('<|python_tag|>'.length).trim();
  s = s.replace(/<\|eom_id\|>\s*$|<\|eot_id\|>\s*$/, '').trim();
  const calls: ToolCall[] = [];
  let i = 0;
  while (i < s.length) {
    if (s[i] !== '{') return { content: text, calls: [] };
    const end = jsonEnd(s, i);
    const call = end > 0 ? callFrom(tryJson(s.slice(i, end)), 'parameters') : null;
    if (!call) return { content: text, calls: [] };
    calls.push(call);
    i = end;
    while (i < s.length && /[\s;]/.test(s[i])) i++;
  }
  return { content: calls.length ? '' : text, calls };
}

function parseMistral(text: string): ParsedToolCalls {
  const at = text.indexOf('[TOOL_CALLS]');
  if (at < 0) return { content: text, calls: [] };
  const before = text.slice(0, at).trim();
  let s = text.slice(at + '[TOOL_CALLS]'.length).trimStart();
  const calls: ToolCall[] = [];
  if (s.startsWith('[')) {
    // v3/v7: a JSON array of {name, arguments, id?}
    const end = jsonEnd(s, 0);
    const list = end > 0 ? tryJson(s.slice(0, end)) : undefined;
    if (!Array.isArray(list)) return { content: text, calls: [] };
    for (const v of list) {
      const call = callFrom(v, 'arguments');
      if (!call) return { content: text, calls: [] };
      calls.push(call);
    }
    return { content: before, calls };
  }
  // v11+: NAME[ARGS]{json}, repeated (each after its own [TOOL_CALLS] or directly)
  for (;;) {
    const m = /^([A-Za-z0-9_.-]+)\s*\[ARGS\]\s*/.exec(s);
    if (!m || s[m[0].length] !== '{') break;
    const end = jsonEnd(s, m[0].length);
    const args = end > 0 ? argumentsText(s.slice(m[0].length, end)) : null;
    if (args === null) break;
    calls.push({ id: newCallId(), name: m[1], arguments: args });
    s = s.slice(end).trimStart();
    if (s.startsWith('[TOOL_CALLS]')) s = s.slice('[TOOL_CALLS]'.length).trimStart();
  }
  return calls.length ? { content: before, calls } : { content: text, calls: [] };
}

function parseHarmony(text: string): ParsedToolCalls {
  // a message whose header says "to=functions.NAME"; its body runs to <|call|> (or the end)
  const calls: ToolCall[] = [];
  let content = '';
  let at = 0;
  const re = /to=functions\.([A-Za-z0-9_.-]+)[^<]*(?:<\|channel\|>[^<]*)?(?:<\|constrain\|>[^<]*)?<\|message\|>/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const bodyStart = m.index + m[0].length;
    const stop = text.indexOf('<|call|>', bodyStart);
    const bodyEnd = stop < 0 ? text.length : stop;
    const args = argumentsText(text.slice(bodyStart, bodyEnd).trim());
    if (args === null) continue;
    // the message starts at its <|start|> (or <|channel|>) before the header
    const head = text.lastIndexOf('<|start|>', m.index);
    const chan = text.lastIndexOf('<|channel|>', m.index);
    const msgStart = Math.max(at, head >= 0 && head >= at ? head : chan >= at ? chan : m.index);
    content += text.slice(at, msgStart);
    at = stop < 0 ? text.length : stop + '<|call|>'.length;
    re.lastIndex = at;
    calls.push({ id: newCallId(), name: m[1], arguments: args });
  }
  content += text.slice(at);
  return { content: calls.length ? content.trim() : text, calls };
}
