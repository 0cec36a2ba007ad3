// The engine's per-token log-probabilities (sample/logprobs.ts) in OpenAI's two shapes:
//   chat:        {content: [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}], refusal}
//   completions: {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}
// Tokens collect until take() hands them out (one streamed chunk's worth, or the whole reply).

import type { StepLogprobs } from '../sample/logprobs.js';
import type { Tokenizer } from '../tokenizer/index.js';

/** OpenAI reports a probability that underflowed as -9999 (JSON has no -Infinity). */
const FLOOR = -9999;

const UTF8 = new TextDecoder('utf-8');

export class LogprobsShaper {
  private steps: StepLogprobs[] = [];
  /** Characters of text before the pending tokens (completions' text_offset). */
  private offset = 0;
  private readonly texts = new Map<number, { token: string; bytes: number[] }>();

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly kind: 'chat' | 'completion',
  ) {}

  push(step: StepLogprobs): void {
    this.steps.push(step);
  }

  get pending(): boolean {
    return this.steps.length > 0;
  }

  /** The pending tokens' log-probabilities in the API's shape; they are no longer pending. */
  take(): Record<string, unknown> {
    const steps = this.steps;
    this.steps = [];
    if (this.kind === 'chat') {
      return {
        content: steps.map((s) => ({ ...this.token(s.id, s.logprob), top_logprobs: s.top.map((t) => this.token(t.id, t.logprob)) })),
        refusal: null,
      };
    }
    const offsets: number[] = [];
    for (const s of steps) {
      offsets.push(this.offset);
      this.offset += this.piece(s.id).token.length;
    }
    return {
      tokens: steps.map((s) => this.piece(s.id).token),
      token_logprobs: steps.map((s) => floor(s.logprob)),
      top_logprobs: steps.map((s) => Object.fromEntries(s.top.map((t) => [this.piece(t.id).token, floor(t.logprob)]))),
      text_offset: offsets,
    };
  }

  private token(id: number, logprob: number): { token: string; logprob: number; bytes: number[] } {
    const p = this.piece(id);
    return { token: p.token, logprob: floor(logprob), bytes: p.bytes };
  }

  /** A token's text (its bytes as UTF-8, U+FFFD for a partial character) and bytes, cached. */
  private piece(id: number): { token: string; bytes: number[] } {
    let p = this.texts.get(id);
    if (!p) {
      const bytes = this.tokenizer.bytes(id);
      p = { token: UTF8.decode(bytes), bytes: [...bytes] };
      this.texts.set(id, p);
    }
    return p;
  }
}

function floor(l: number): number {
  return Number.isFinite(l) ? Math.max(FLOOR, l) : FLOOR;
}
