// renderChat: a conversation → the prompt text. The model file's own Jinja template is used when it
// renders; otherwise a built-in template of the detected family, with a note saying why.

import { Template } from '@huggingface/jinja';
import { UsageError } from '../../shared/errors.js';
import { TEMPLATE_LIMITS, TemplateLimitError, withTemplateBudget, type TemplateLimits } from './budget.js';
import { BUILTIN_TEMPLATES } from './builtin.js';
import { detectFamily, type DetectedFamily } from './detect.js';
import type { ToolDefinition } from './tools.js';
import type { ChatMessage, RenderedChat, TemplateInfo } from './types.js';

/** A tool call's JSON arguments as the templates read them (an object; the text if it is not JSON). */
function parsedArguments(args: string): unknown {
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

/** A message in the shape Hugging Face chat templates read (tool_calls, tool_call_id, reasoning). */
function templateMessage(m: ChatMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  // A reply's reasoning under the names the templates read: Qwen3 `reasoning_content`, gpt-oss
  // `thinking`. Both show it only for a reply after the last user message, never for earlier turns.
  if (m.reasoning) {
    out.reasoning_content = m.reasoning;
    out.thinking = m.reasoning;
  }
  if (m.toolCalls?.length) out.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: parsedArguments(c.arguments) } }));
  if (m.toolCallId !== undefined) out.tool_call_id = m.toolCallId;
  if (m.name !== undefined) out.name = m.name;
  return out;
}

export interface RenderOptions {
  /** Append the opening of the assistant's turn (default true). */
  addGenerationPrompt?: boolean;
  /** Limits on the file's template (default TEMPLATE_LIMITS); past one, the built-in is used. */
  limits?: TemplateLimits;
  /** OpenAI function tools, given to the file's template as `tools` (chat/tools.ts). */
  tools?: readonly ToolDefinition[];
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

// Parsing a template costs more than rendering it; keep the last few parsed ones.
const parsedTemplates = new Map<string, Template>();
const MAX_PARSED = 8;

function parseTemplate(source: string): Template {
  let t = parsedTemplates.get(source);
  if (!t) {
    t = new Template(source);
    if (parsedTemplates.size >= MAX_PARSED) parsedTemplates.delete(parsedTemplates.keys().next().value!);
    parsedTemplates.set(source, t);
  }
  return t;
}

function checkMessages(messages: readonly ChatMessage[]): void {
  messages.forEach((m, i) => {
    if (!m || !ROLES.has(m.role)) throw new UsageError(`Message ${i} has role ${JSON.stringify(m?.role)}; use "system", "user", "assistant" or "tool".`);
    if (typeof m.content !== 'string') throw new UsageError(`Message ${i} has no text content; give each message a string "content".`);
  });
}

function stopStringsFor(family: DetectedFamily, eos: string): string[] {
  const stops = [...BUILTIN_TEMPLATES[family.name].stops];
  if (eos && !stops.includes(eos)) stops.push(eos);
  return stops;
}

// How a notice names a built-in template.
const BUILTIN_LABELS: Partial<Record<RenderedChat['family'], string>> = {
  chatml: 'ChatML', llama2: 'the Llama 2 format', llama3: 'the Llama 3 format', phi3: 'the Phi-3 format', gemma: 'the Gemma format', plain: 'plain text',
};

function describeFamily(f: DetectedFamily): string {
  return f.source === 'default' ? `"${f.name}"` : `"${f.name}" (detected from the ${f.source})`;
}

/**
 * Render with the file's template (TemplateInfo.template) via @huggingface/jinja, under `limits`.
 * Throws on failure (TemplateLimitError past a limit).
 */
export function renderGgufTemplate(
  source: string, info: TemplateInfo, messages: readonly ChatMessage[], addGenerationPrompt: boolean, limits: TemplateLimits = TEMPLATE_LIMITS,
  tools?: readonly ToolDefinition[],
): string {
  const template = parseTemplate(source);
  return withTemplateBudget(limits, () => template.render({
    messages: messages.map(templateMessage),
    ...(tools?.length ? { tools } : {}),
    add_generation_prompt: addGenerationPrompt,
    bos_token: info.bosToken,
    eos_token: info.eosToken,
    // raise_exception and strftime_now are globals of @huggingface/jinja.
  }));
}

export function renderChat(info: TemplateInfo, messages: ChatMessage[], opts: RenderOptions = {}): RenderedChat {
  checkMessages(messages);
  const addGen = opts.addGenerationPrompt ?? true;
  const family = detectFamily(info);
  const notes: string[] = [];
  let notice: string | undefined;
  const finish = (text: string, templateName: RenderedChat['templateName']): RenderedChat => ({
    text,
    templateName,
    stopStrings: stopStringsFor(family, info.eosToken),
    startsWithBos: info.bosToken !== '' && text.startsWith(info.bosToken),
    family: family.name,
    notes,
    ...(notice !== undefined ? { notice } : {}),
  });

  if (info.template) {
    let text: string | null = null;
    try {
      text = renderGgufTemplate(info.template, info, messages, addGen, opts.limits, opts.tools);
    } catch (err) {
      if (err instanceof TemplateLimitError) {
        const name = BUILTIN_TEMPLATES[family.name].name;
        notice = `The file's chat template was too ${err.kind === 'time' ? 'slow' : 'big'} (${err.message}); using ${BUILTIN_LABELS[name] ?? name}.`;
        notes.push(notice);
      } else {
        const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
        notes.push(`The model's chat template failed to render (${why}); using the built-in ${describeFamily(family)} template instead.`);
      }
    }
    if (text !== null && text === '' && messages.length > 0) {
      notes.push(`The model's chat template rendered nothing for ${messages.length} message(s); using the built-in ${describeFamily(family)} template instead.`);
      text = null;
    }
    if (text !== null) {
      const dropped = messages.filter((m) => m.role !== 'tool' && m.content.trim() !== '' && !text!.includes(m.content.trim()));
      for (const role of new Set(dropped.map((m) => m.role))) {
        notes.push(`The model's chat template left out the ${role} message(s); the model will not see them.`);
      }
      return finish(text, 'gguf');
    }
  } else {
    notes.push(`The model file has no chat template; using the built-in ${describeFamily(family)} template.`);
  }
  const builtin = BUILTIN_TEMPLATES[family.name];
  // (the built-ins know no tool role: a tool's result is shown as a user turn)
  const plain = messages.map((m): ChatMessage => (m.role === 'tool' ? { role: 'user', content: m.content } : m));
  return finish(builtin.render(plain, info.bosToken, info.eosToken, addGen), builtin.name);
}
