// Reasoning output: models that think before they answer write the thinking into the same text
// stream as the answer. Two formats are in use:
//   think    Qwen3, DeepSeek-R1 and its distills, SmolLM3, QwQ: "<think>…</think>answer". Templates
//            that open the thinking in the prompt (R1's generation prompt ends "<think>\n") leave
//            only the closing "</think>" in the output.
//   harmony  gpt-oss (OpenAI Harmony): "<|channel|>analysis<|message|>…<|end|>
//            <|start|>assistant<|channel|>final<|message|>answer<|return|>"; the analysis channel is
//            the reasoning, every other channel (final, commentary) is shown as the answer.
// ReasoningSplitter takes the streamed text piece by piece and returns each piece's reasoning and
// answer parts. A marker may straddle pieces: text that could be the start of one is held back
// until it is decided. Which format applies comes from the model's template and vocabulary
// (reasoningFormat), and whether the output starts inside the thinking from the prompt's end
// (reasoningSetup).

import type { TemplateInfo } from './types.js';

export type ReasoningFormat = 'none' | 'think' | 'harmony';

/** Vocabulary tokens that say a model writes reasoning (collected into TemplateInfo.vocabMarkers). */
export const REASONING_MARKER_TOKENS: readonly string[] = ['<think>', '</think>', '<|channel|>'];

const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';

export function reasoningFormat(info: TemplateInfo): ReasoningFormat {
  const t = info.template ?? '';
  const vocab = info.vocabMarkers ?? [];
  if (t.includes('<|channel|>') || vocab.includes('<|channel|>')) return 'harmony';
  if (t.includes(THINK_CLOSE) || vocab.includes(THINK_CLOSE)) return 'think';
  return 'none';
}

export interface ReasoningSetup {
  format: ReasoningFormat;
  /** The prompt already opened the thinking (it ends with "<think>"): the output starts inside it. */
  startsInside: boolean;
}

/** The format of a model, and for a prompt rendered with it whether the output starts thinking. */
export function reasoningSetup(info: TemplateInfo, promptText: string): ReasoningSetup {
  const format = reasoningFormat(info);
  return { format, startsInside: format === 'think' && promptText.trimEnd().endsWith(THINK_OPEN) };
}

export interface ReasoningPiece {
  reasoning: string;
  answer: string;
}

/** Length of the longest tail of `s` that is a proper prefix of `marker`. */
function partialTail(s: string, marker: string): number {
  for (let n = Math.min(s.length, marker.length - 1); n > 0; n--) {
    if (marker.startsWith(s.slice(s.length - n))) return n;
  }
  return 0;
}

/** Where the trailing whitespace of `s` starts. */
function trailingSpace(s: string): number {
  let i = s.length;
  while (i > 0 && /\s/.test(s[i - 1])) i--;
  return i;
}

// Harmony's markers (o200k_harmony special tokens): a message is "<|start|>{header}<|message|>{body}"
// ended by <|end|>, <|return|> or <|call|>; the header names the channel after <|channel|>.
const H_MESSAGE = '<|message|>';
const H_ENDS = ['<|end|>', '<|return|>', '<|call|>'];
const H_START = '<|start|>';
/** A header longer than this without <|message|> is not a header: the text is shown as the answer. */
const MAX_HEADER = 256;

type State =
  | 'start' //       think: nothing decided yet (leading whitespace, maybe part of "<think>")
  | 'reasoning' //   inside the thinking (think) / an analysis message body (harmony)
  | 'answer' //      the answer (think: after "</think>", or a reply with no thinking)
  | 'header' //      harmony: between messages, reading a header up to <|message|>
  | 'final'; //      harmony: a body of a non-analysis channel

export class ReasoningSplitter {
  private state: State;
  /** Text held back: it may be the start of a marker, or whitespace before one. */
  private held = '';
  /** Drop whitespace at the start of the next reasoning / answer text. */
  private trimNext = true;
  /** Put before the next text: a blank line between two Harmony messages of one part. */
  private sep = '';
  /** True once any reasoning has begun (the reply has a thinking part). */
  sawReasoning = false;
  /** True once the answer has begun (the thinking, if any, is over). */
  answering = false;

  constructor(readonly format: ReasoningFormat, startsInside = false) {
    if (format === 'none') this.state = 'answer';
    else if (format === 'harmony') this.state = 'header';
    else this.state = startsInside ? 'reasoning' : 'start';
    if (this.state === 'reasoning') this.sawReasoning = true;
    if (this.state === 'answer') {
      this.answering = true;
      this.trimNext = false;
    }
  }

  /** The next piece of streamed text → what of it (and of text held before) is now decided. */
  push(text: string): ReasoningPiece {
    const out: ReasoningPiece = { reasoning: '', answer: '' };
    if (this.format === 'none') {
      out.answer = text;
      return out;
    }
    let buf = this.held + text;
    this.held = '';
    // Each pass either consumes all of buf (emitting or holding it) or moves past a marker.
    while (buf) {
      switch (this.state) {
        case 'start': {
          const s = buf.trimStart();
          if (s.startsWith(THINK_OPEN)) {
            this.enter('reasoning');
            buf = s.slice(THINK_OPEN.length);
          } else if (THINK_OPEN.startsWith(s)) {
            this.held = buf; // whitespace, or a part of "<think>"
            buf = '';
          } else {
            this.enter('answer');
          }
          break;
        }
        case 'reasoning':
          if (this.format === 'think') buf = this.body(buf, out, [THINK_CLOSE], () => this.enter('answer'));
          else buf = this.body(buf, out, H_ENDS, () => this.enter('header'));
          break;
        case 'answer':
          this.emit(out, 'answer', buf);
          buf = '';
          break;
        case 'header': {
          const at = buf.indexOf(H_MESSAGE);
          if (at >= 0) {
            const channel = /<\|channel\|>\s*([A-Za-z_]+)/.exec(buf.slice(0, at))?.[1] ?? 'final';
            this.enter(channel === 'analysis' ? 'reasoning' : 'final');
            buf = buf.slice(at + H_MESSAGE.length);
          } else if (buf.length > MAX_HEADER) {
            this.enter('final');
          } else {
            this.held = buf;
            buf = '';
          }
          break;
        }
        case 'final':
          buf = this.body(buf, out, [...H_ENDS, H_START], () => this.enter('header'));
          break;
      }
    }
    return out;
  }

  /** The stream ended: release what was held (an unterminated thinking stays reasoning). */
  flush(): ReasoningPiece {
    const out: ReasoningPiece = { reasoning: '', answer: '' };
    const rest = this.held;
    this.held = '';
    if (!rest) return out;
    switch (this.state) {
      case 'start':
        if (rest.trim()) this.emit(out, 'answer', rest.trimStart()); // a lone "<thi": text after all
        else this.answering = true;
        break;
      case 'reasoning':
        this.emit(out, 'reasoning', rest.trimEnd());
        break;
      case 'answer':
      case 'final':
        this.emit(out, 'answer', rest);
        break;
      case 'header':
        if (!rest.includes('<|')) this.emit(out, 'answer', rest); // plain text, never a header
        break;
    }
    return out;
  }

  private enter(state: State): void {
    if ((state === 'reasoning' && this.sawReasoning) || (state === 'final' && this.answering)) this.sep = '\n\n';
    this.state = state;
    this.trimNext = true;
    if (state === 'reasoning') this.sawReasoning = true;
    if (state === 'answer' || state === 'final') this.answering = true;
  }

  private emit(out: ReasoningPiece, part: keyof ReasoningPiece, text: string): void {
    if (this.trimNext) {
      text = text.trimStart();
      if (!text) return;
      this.trimNext = false;
      text = this.sep + text;
      this.sep = '';
    }
    out[part] += text;
  }

  /**
   * A body that ends at one of `ends`: emit up to the first end marker and call `after`, returning
   * what follows it; with no end marker, emit all but a tail that may begin one (and, in the
   * thinking, trailing whitespace, so the thinking never ends in the blank line before its close).
   */
  private body(buf: string, out: ReasoningPiece, ends: readonly string[], after: () => void): string {
    const part: keyof ReasoningPiece = this.state === 'reasoning' ? 'reasoning' : 'answer';
    let at = -1;
    let end = '';
    for (const e of ends) {
      const i = buf.indexOf(e);
      if (i >= 0 && (at < 0 || i < at)) {
        at = i;
        end = e;
      }
    }
    if (at >= 0) {
      this.emit(out, part, part === 'reasoning' ? buf.slice(0, at).trimEnd() : buf.slice(0, at));
      after();
      return buf.slice(at + end.length);
    }
    let keep = Math.max(...ends.map((e) => partialTail(buf, e)));
    if (part === 'reasoning') keep = Math.max(keep, buf.length - trailingSpace(buf.slice(0, buf.length - keep)));
    this.emit(out, part, buf.slice(0, buf.length - keep));
    this.held = buf.slice(buf.length - keep);
    return '';
  }
}
