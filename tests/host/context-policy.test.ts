// The context policies: which turns stay (hand-worked on a message count), and through the engine
// host on the demo model, a conversation longer than its context runs with the oldest turns left
// out and says how many, where 'stop' refuses it with the context-full error.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerationEvent, SamplingSettings } from '../../src/shared/contract.js';
import { fitMessages, type ChatMessage } from '../../src/engine/chat/index.js';
import { loadSessionModel } from '../../src/engine/host/engine.js';
import { ROOT } from '../helpers.js';

const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');
const SAMPLING: SamplingSettings = {
  temperature: 0, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1, presencePenalty: 0, frequencyPenalty: 0,
  penaltyLastN: 64, seed: 7, maxTokens: 4, stop: [],
};

const u = (content: string): ChatMessage => ({ role: 'user', content });
const a = (content: string): ChatMessage => ({ role: 'assistant', content });
const conversation: ChatMessage[] = [{ role: 'system', content: 's' }, u('u1'), a('a1'), u('u2'), a('a2'), u('u3'), a('a3'), u('u4')];
/** A stand-in for the rendered prompt's tokens: one per message. */
const count = (m: ChatMessage[]) => m.length;
const texts = (m: ChatMessage[]) => m.map((x) => x.content);

describe('fitMessages', () => {
  it('stop: everything, whatever its length', () => {
    expect(fitMessages(conversation, count, 3, 'stop')).toEqual({ messages: conversation, dropped: 0 });
  });

  it('everything that fits stays', () => {
    expect(fitMessages(conversation, count, 8, 'rolling').dropped).toBe(0);
  });

  it('rolling: the system prompt, then the newest whole turns that fit', () => {
    const r = fitMessages(conversation, count, 5, 'rolling');
    expect(texts(r.messages)).toEqual(['s', 'u3', 'a3', 'u4']);
    expect(r.dropped).toBe(4);
  });

  it('truncate-middle: the system prompt and the first exchange, then the newest turns', () => {
    const r = fitMessages(conversation, count, 6, 'truncate-middle');
    expect(texts(r.messages)).toEqual(['s', 'u1', 'a1', 'u3', 'a3', 'u4']);
    expect(r.dropped).toBe(2);
  });

  it('the last turn always stays, even when it alone is too long', () => {
    expect(texts(fitMessages(conversation, count, 1, 'rolling').messages)).toEqual(['s', 'u4']);
    expect(texts(fitMessages(conversation, count, 1, 'truncate-middle').messages)).toEqual(['s', 'u1', 'a1', 'u4']);
  });
});

describe('context policy through the engine host', () => {
  it('a long conversation: rolling drops the oldest turns and says so; stop refuses it', async () => {
    const model = await loadSessionModel({ path: DEMO, contextSize: 96, threads: 1, signal: new AbortController().signal, onProgress: () => {} });
    try {
      const long: ChatMessage[] = [];
      for (let i = 0; i < 12; i++) long.push(u(`Once upon a time there was a cat number ${i}.`), a('The cat was happy and played all day.'));
      long.push(u('What happened next?'));
      expect(model.countTokens(long)).toBeGreaterThan(96);
      const events: GenerationEvent[] = [];
      for await (const e of model.chat(long, SAMPLING, new AbortController().signal, { policy: 'rolling' })) events.push(e);
      const prompt = events.find((e) => e.kind === 'prompt');
      if (prompt?.kind !== 'prompt') throw new Error('no prompt event');
      expect(prompt.dropped).toBeGreaterThan(0);
      expect(prompt.dropped! % 2).toBe(0); // whole turns
      // What was kept is the newest turns: their count fits beside the reply's room (4 tokens).
      const kept = long.slice(prompt.dropped);
      expect(prompt.tokens.length).toBe(model.countTokens(kept));
      expect(prompt.tokens.length).toBeLessThanOrEqual(96 - 4);
      expect(model.countTokens(long.slice(prompt.dropped! - 2))).toBeGreaterThan(96 - 4);
      expect(events.at(-1)?.kind).toBe('done');

      await expect(async () => {
        for await (const e of model.chat(long, SAMPLING, new AbortController().signal, { policy: 'stop' })) void e;
      }).rejects.toThrow(/context/i);
    } finally {
      model.dispose();
    }
  });
});
