// A chat reply when tools are offered: the model's text is either content or tool calls in its
// template's format (chat/tools.ts). Streamed, the text is held back while it could still be the
// opening of a call; once it is one, everything is held to the end and sent as tool_calls; once it
// cannot be, it streams as content. `prefix` is what the server appended to the prompt to start a
// call (tool_choice "required" or a named function): the reply continues it.

import { parseToolCalls, toolCallOpeners, type ToolCall, type ToolFormat } from '../chat/tools.js';

export class ToolCallStream {
  /** Answer text (and, for Harmony, the raw text with its headers) not yet decided or sent. */
  private held = '';
  private raw = '';
  private mode: 'undecided' | 'call' | 'text';
  private readonly openers: string[];

  constructor(
    private readonly format: ToolFormat,
    private readonly prefix: string,
  ) {
    this.openers = toolCallOpeners(format);
    this.mode = prefix ? 'call' : 'undecided';
    this.raw = prefix;
  }

  /** A piece of answer text (and its raw text); returns the content that may be streamed now. */
  push(answer: string, raw: string): string {
    this.raw += raw;
    if (this.mode === 'text') return answer;
    this.held += answer;
    if (this.mode === 'call') return '';
    // Harmony's calls are in the headers, which the answer text does not show
    const seen = (this.format === 'harmony' ? this.raw : this.held).trimStart();
    if (this.openers.some((o) => seen.startsWith(o))) {
      this.mode = 'call';
      return '';
    }
    if (seen === '' || this.openers.some((o) => o.startsWith(seen))) return '';
    this.mode = 'text';
    const out = this.held;
    this.held = '';
    return out;
  }

  /** At the end: the calls made (none: `content` is the rest of the text to send). */
  finish(): { content: string; calls: ToolCall[] } {
    if (this.mode === 'text') return { content: '', calls: [] };
    const parsed = parseToolCalls(this.format, this.format === 'harmony' ? this.raw : this.prefix + this.held);
    if (parsed.calls.length === 0) return { content: this.held, calls: [] };
    // (Harmony's answer text shows a call's arguments as a message body: not content)
    let content = this.format === 'harmony' ? this.held : parsed.content;
    if (this.format === 'harmony') for (const c of parsed.calls) content = content.replace(c.arguments, '');
    return { content: content.trim(), calls: parsed.calls };
  }
}

/** Whole replies: the calls in the text, and the content outside them. */
export function splitToolCalls(format: ToolFormat, prefix: string, answer: string, raw: string): { content: string; calls: ToolCall[] } {
  const s = new ToolCallStream(format, prefix);
  const now = s.push(answer, raw);
  const end = s.finish();
  return { content: now + end.content, calls: end.calls };
}

/** The calls in OpenAI's shape: [{id, type: "function", function: {name, arguments}}] (+ index when streamed). */
export function apiToolCalls(calls: ToolCall[], streamed: boolean): Record<string, unknown>[] {
  return calls.map((c, index) => ({ ...(streamed ? { index } : {}), id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
}
