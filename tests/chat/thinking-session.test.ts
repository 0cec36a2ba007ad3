// The engine on replies with reasoning: the scripted models (thinker-model.ts) with Qwen3's and
// gpt-oss's own templates through Session.chat, token by token, then the next turn's prompt.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SAMPLING } from '../../src/engine/sample/index.js';
import type { GenerationEvent } from '../../src/shared/contract.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HARMONY_ANSWER, HARMONY_REASONING, HARMONY_REASONING_TOKENS, THINKER_ANSWER, THINKER_REASONING, THINKER_REASONING_TOKENS, writeThinkerModel } from './thinker-model.js';

describe('a reasoning reply through the engine (scripted thinker)', () => {
  let dir: string;
  let lm: LoadedModel;
  let harmony: LoadedModel;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pantheon-thinker-'));
    lm = await LoadedModel.load(writeThinkerModel(dir), { contextSize: 256, backend: 'scalar' });
    harmony = await LoadedModel.load(writeThinkerModel(dir, true), { contextSize: 512, backend: 'scalar' });
  });
  afterAll(() => {
    lm?.dispose();
    harmony?.dispose();
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
    expect(done.stats.stopReason).toBe('eos');
    expect(done.stats.reasoningTokens).toBe(THINKER_REASONING_TOKENS);
    expect(done.stats.generatedTokens).toBe(THINKER_REASONING_TOKENS + 8);
    // the contract's events, as the engine host streams them: the cache's use, the template's name
    expect([done.contextUsed, done.contextSize]).toEqual([session.used, 256]);
    const first = events[0];
    expect(first.kind === 'prompt' && first.templateName).toBe(lm.encodeChat(turn).rendered.templateName);
    expect(first.kind === 'prompt' && first.tokens).toEqual(lm.encodeChat(turn).tokens);

    const next: GenerationEvent[] = [];
    const history = [...turn, { role: 'assistant' as const, content: THINKER_ANSWER, reasoning: THINKER_REASONING }, { role: 'user' as const, content: 'Thanks' }];
    for await (const ev of session.chat(history, { ...DEFAULT_SAMPLING, seed: 2 })) next.push(ev);
    const prompt = next[0];
    if (prompt.kind !== 'prompt') throw new Error('no prompt event');
    expect(prompt.text).toBe(`<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n${THINKER_ANSWER}<|im_end|>\n<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n`);
  });

  it('Harmony (gpt-oss): the analysis channel is the reasoning, the final channel the answer; the next prompt drops the analysis', async () => {
    const session = new Session(harmony);
    const events: GenerationEvent[] = [];
    const turn = [{ role: 'user' as const, content: 'Hi!' }];
    for await (const ev of session.chat(turn, { ...DEFAULT_SAMPLING, seed: 1 })) events.push(ev);
    const prompt = events[0];
    if (prompt.kind !== 'prompt') throw new Error('no prompt event');
    expect(prompt.text.endsWith('<|start|>user<|message|>Hi!<|end|><|start|>assistant')).toBe(true);
    const tokens = events.filter((e) => e.kind === 'token');
    expect(tokens.map((e) => e.reasoning).join('')).toBe(HARMONY_REASONING);
    expect(tokens.map((e) => e.text).join('')).toBe(HARMONY_ANSWER);
    const done = events.at(-1);
    if (done?.kind !== 'done') throw new Error('no done event');
    expect(done.stats.stopReason).toBe('eos'); // <|return|>; <|end|> between the channels did not stop it
    expect(done.stats.reasoningTokens).toBe(HARMONY_REASONING_TOKENS);

    const next: GenerationEvent[] = [];
    const history = [...turn, { role: 'assistant' as const, content: HARMONY_ANSWER, reasoning: HARMONY_REASONING }, { role: 'user' as const, content: 'Thanks' }];
    for await (const ev of session.chat(history, { ...DEFAULT_SAMPLING, seed: 2 })) next.push(ev);
    const p2 = next[0];
    if (p2.kind !== 'prompt') throw new Error('no prompt event');
    expect(p2.text).toContain(`<|start|>user<|message|>Hi!<|end|><|start|>assistant<|channel|>final<|message|>${HARMONY_ANSWER}<|end|><|start|>user<|message|>Thanks<|end|><|start|>assistant`);
    expect(p2.text).not.toContain(HARMONY_REASONING);
  });
});
