// `pantheon chat` prints a reasoning model's thinking before its answer: dimmed on a terminal,
// plain text when piped.

import { describe, expect, it } from 'vitest';
import { replyPrinter } from '../../src/cli/commands/chat.js';

function print(tty: boolean, tokens: [string, string][]): string {
  let out = '';
  const p = replyPrinter((t) => (out += t), tty);
  for (const [reasoning, answer] of tokens) p.token(reasoning, answer);
  p.end();
  return out;
}

const reply: [string, string][] = [['', ''], ['The user', ''], [' greets.', ''], ['', ''], ['', 'Hello'], ['', '!']];

describe('pantheon chat: reasoning', () => {
  it('dims the reasoning on a terminal, then a blank line and the answer', () => {
    expect(print(true, reply)).toBe('\x1b[2mThe user greets.\x1b[22m\n\nHello!\n');
  });

  it('prints it plain when stdout is not a terminal', () => {
    expect(print(false, reply)).toBe('The user greets.\n\nHello!\n');
  });

  it('closes the dimming of an unterminated thinking; a reply with no reasoning prints as it is', () => {
    expect(print(true, [['Let me', ''], [' count', '']])).toBe('\x1b[2mLet me count\x1b[22m\n');
    expect(print(true, [['', 'Hi'], ['', ' there']])).toBe('Hi there\n');
  });
});
