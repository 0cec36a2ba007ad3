// The engine on a reply with reasoning: the scripted thinker (thinker-model.ts, Qwen3's own
// template) through Session.chat, token by token, then the next turn's prompt.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SAMPLING } from '../../src/engine/sample/index.js';
import { LoadedModel, Session, type GenerationEvent } from '../../src/engine/session.js';
import { THINKER_ANSWER, THINKER_REASONING, THINKER_REASONING_TOKENS, writeThinkerModel } from './thinker-model.js';

describe('a reasoning reply through the engine (scripted thinker)', () => {
  let dir: string;
  let lm: LoadedModel;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pantheon-thinker-'));
    lm = await LoadedModel.load(writeThinkerModel(dir), { contextSize: 256, backend: 'scalar' });
  });
  afterAll(() => {
    lm?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('streams the thinking as reasoning and the rest as the answer; the next prompt has the answer only', async () => {
    const session = new Session(lm);
    const events: GenerationEvent[] = [];
    const turn = [{ role: 'user' as const, content: 'Hi!' }];
    for await (const ev of session.chat(turn, { ...DEFAULT_SAMPLING, seed: 1 })) events.push(ev);
    const tokens = events.filter((e) => e.kind === 'token');
    expect(tokens.map((e) => e.reasoning).join('')).toBe(THINKER_REASONING);
    expect(tokens.map((e) => e.text).join('')).toBe(THINKER_ANSWER);
    // <think> and </think> are tokens of their own: neither shows in either part.
    expect(tokens[0]).toMatchObject({ text: '', reasoning: '' });
    expect(tokens[1]).toMatchObject({ text: '', reasoning: 'The' });
    const done = events.at(-1);
    if (done?.kind !== 'done') throw new Error('no done event');
    expect(done.reason).toBe('eos');
    expect(done.stats.reasoningTokens).toBe(THINKER_REASONING_TOKENS);
    expect(done.stats.generatedTokens).toBe(THINKER_REASONING_TOKENS + 8);

    const next: GenerationEvent[] = [];
    const history = [...turn, { role: 'assistant' as const, content: THINKER_ANSWER, reasoning: THINKER_REASONING }, { role: 'user' as const, content: 'Thanks' }];
    for await (const ev of session.chat(history, { ...DEFAULT_SAMPLING, seed: 2 })) next.push(ev);
    const prompt = next[0];
    if (prompt.kind !== 'prompt') throw new Error('no prompt event');
    expect(prompt.text).toBe(`<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n${THINKER_ANSWER}<|im_end|>\n<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n`);
  });
});
