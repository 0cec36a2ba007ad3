// A chat as Markdown and JSON, and the JSON back through the chat store's import.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Chat } from '../../src/shared/contract.js';
import { ChatStore } from '../../src/main/services/chat-store.js';
import { chatToJson, chatToMarkdown, exportFileName } from '../../src/renderer/lib/chat-export.js';

const chat: Chat = {
  id: '0123456789abcdef0123456789abcdef',
  title: 'Cats: a "short" story',
  createdAt: Date.UTC(2026, 11, 2, 10, 0, 0),
  updatedAt: Date.UTC(2026, 11, 2, 10, 5, 0),
  systemPrompt: 'Be brief.',
  messages: [
    { id: 'm1', role: 'user', content: 'Tell me about cats.', createdAt: Date.UTC(2026, 11, 2, 10, 1, 0) },
    {
      id: 'm2', role: 'assistant', content: 'Cats purr.', createdAt: Date.UTC(2026, 11, 2, 10, 2, 0), modelName: 'qwen3',
      stats: { promptTokens: 12, generatedTokens: 4, ttftMs: 80.4, tokensPerS: 31.25, promptTokensPerS: 150, stopReason: 'eos' },
      reasoning: { text: 'The user wants cats.', tokens: 7, ms: 1500 },
    },
  ],
};

describe('chat export', () => {
  it('Markdown: front matter, system prompt, turns, folded thinking, stats', () => {
    const md = chatToMarkdown(chat);
    expect(md.split('\n').slice(0, 8)).toEqual([
      '---',
      'title: "Cats: a \\"short\\" story"',
      'created: 2026-12-02T10:00:00.000Z',
      'updated: 2026-12-02T10:05:00.000Z',
      'models: ["qwen3"]',
      'exported-by: Pantheon',
      '---',
      '',
    ]);
    expect(md).toContain('## System\n\nBe brief.\n');
    expect(md).toContain('## User\n\nTell me about cats.\n');
    expect(md).toContain('<details><summary>Thinking (7 tokens, 1.5 s)</summary>\n\nThe user wants cats.\n\n</details>\n\nCats purr.\n');
    expect(md).toContain('*model qwen3 · 12 prompt tokens · 4 generated · 31.3 tok/s · first token 80 ms · ended: eos*');
    expect(md.indexOf('## User')).toBeLessThan(md.indexOf('## Assistant'));
  });

  it('file names from the title', () => {
    expect(exportFileName(chat, 'md')).toBe('Cats-a-short-story.md');
    expect(exportFileName({ ...chat, title: '???' }, 'json')).toBe('chat.json');
  });

  it('JSON imports back as a new chat with the same content', async () => {
    const store = new ChatStore(mkdtempSync(join(tmpdir(), 'pantheon-export-')), () => {});
    const summary = await store.importChat(chatToJson(chat));
    expect(summary.id).not.toBe(chat.id);
    expect(summary.messageCount).toBe(2);
    const back = await store.get(summary.id);
    expect({ ...back, id: chat.id, updatedAt: chat.updatedAt }).toEqual(chat);
  });

  it('a file that is not JSON, or not a chat, is one line that says so', async () => {
    const store = new ChatStore(mkdtempSync(join(tmpdir(), 'pantheon-export-')), () => {});
    await expect(store.importChat('# not json')).rejects.toThrow(/^The file is not JSON; choose a chat exported from Pantheon as JSON\.$/);
    await expect(store.importChat(JSON.stringify({ format: 'pantheon-chat', version: 1, chat: { title: 'x' } }))).rejects.toThrow(/^The file is not a Pantheon chat: .*messages/);
    expect(await store.list()).toEqual([]);
  });
});
