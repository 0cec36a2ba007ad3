// The main-side services the Electron app and the harness share: library, opened model, chat store,
// settings, the renderer's path check, and the supervisor's exit reasons. Expected values are worked
// out by hand from the inputs the tests write.

import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync, copyFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GgufType, kv, parseGgufHeader, writeGguf } from '../../src/engine/gguf/index.js';
import { LibraryService, MAX_RECENT, modelId } from '../../src/main/services/library.js';
import { ARRAY_INLINE_MAX, metaArraySlice, shortestFloat32, toMetaValue, layerOf, runnability } from '../../src/main/services/opened-model.js';
import { ChatStore } from '../../src/main/services/chat-store.js';
import { writeFileAtomic } from '../../src/main/services/atomic-file.js';
import { DEFAULT_SETTINGS, SettingsStore } from '../../src/main/services/settings.js';
import { validateRequest, validateSettingsPatch } from '../../src/shared/requests.js';
import { fileInside, realFileInside } from '../../src/main/services/web-content.js';
import { crashMessage } from '../../src/main/services/engine-supervisor.js';
import { exitReason } from '../../src/main/services/node-engine-transport.js';
import { ROOT } from '../helpers.js';
import type { StoredMessage } from '../../src/shared/contract.js';

const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'pantheon-services-'));
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function tinyGguf(arch: string, tokens: string[] = ['<unk>', '<s>', '</s>']): Uint8Array {
  return writeGguf([
    kv.str('general.architecture', arch),
    kv.str('general.name', `tiny ${arch}`),
    kv.u32(`${arch}.context_length`, 128),
    kv.arr('tokenizer.ggml.tokens', GgufType.STRING, tokens),
  ], [{ name: 'token_embd.weight', dims: [4, tokens.length], type: 0, data: new Uint8Array(16 * tokens.length) }]);
}

describe('library', () => {
  it('scans a folder recursively: .gguf only, any depth, corrupt files listed with their error', async () => {
    const root = join(tmp, 'models');
    mkdirSync(join(root, 'a', 'b', 'c'), { recursive: true });
    mkdirSync(join(root, '.hidden'));
    writeFileSync(join(root, 'top.gguf'), tinyGguf('llama'));
    writeFileSync(join(root, 'a', 'b', 'c', 'deep.GGUF'), tinyGguf('qwen2'));
    writeFileSync(join(root, 'a', 'broken.gguf'), new Uint8Array([0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0]));
    writeFileSync(join(root, 'a', 'readme.txt'), 'not a model');
    writeFileSync(join(root, '.hidden', 'skip.gguf'), tinyGguf('llama'));
    symlinkSync(root, join(root, 'a', 'loop')); // a symlink loop must not hang the scan
    const lib = new LibraryService(join(tmp, 'user'), null, () => {});
    const r = await lib.setFolder(root);
    expect(r.scanning).toBe(false);
    expect(r.folderModels.map((m) => m.fileName)).toEqual(['deep.GGUF', 'broken.gguf', 'top.gguf']);
    const deep = r.folderModels[0];
    expect(deep).toMatchObject({ architecture: 'qwen2', name: 'tiny qwen2', parameters: 12, quantization: 'F32', source: 'folder', error: null });
    const broken = r.folderModels[1];
    expect(broken.architecture).toBeNull();
    expect(broken.error).toMatch(/truncated|ended/i);
    expect(broken.error).not.toContain('\n');
  });

  it('gives each path a stable id (sha-256 of the resolved path)', () => {
    expect(modelId('/x/y.gguf')).toBe(modelId('/x/./z/../y.gguf'));
    expect(modelId('/x/y.gguf')).not.toBe(modelId('/x/z.gguf'));
    expect(modelId('/x/y.gguf')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('keeps at most 20 recent models, newest first, persisted across instances', async () => {
    const user = join(tmp, 'user');
    mkdirSync(user);
    const files: string[] = [];
    for (let i = 0; i < MAX_RECENT + 3; i++) {
      const f = join(tmp, `m${i}.gguf`);
      copyFileSync(DEMO, f);
      files.push(f);
    }
    const lib = new LibraryService(user, DEMO, () => {});
    for (const f of files) await lib.addRecent(f);
    await lib.addRecent(files[5]); // opened again: moves to the top, no duplicate
    const again = new LibraryService(user, DEMO, () => {});
    await again.load();
    const r = await again.get();
    expect(r.recent).toHaveLength(MAX_RECENT);
    expect(r.recent[0].path).toBe(resolve(files[5]));
    expect(r.recent[1].path).toBe(resolve(files[MAX_RECENT + 2]));
    expect(r.recent.filter((e) => e.path === resolve(files[5]))).toHaveLength(1);
    expect(r.demo).toMatchObject({ source: 'demo', architecture: 'llama' });
    const forgotten = await again.forgetRecent(r.recent[0].id);
    expect(forgotten.recent.map((e) => e.path)).not.toContain(resolve(files[5]));
  });

  it('accepts only existing .gguf files from outside the page, with one-line messages', async () => {
    const lib = new LibraryService(join(tmp, 'user'), null, () => {});
    writeFileSync(join(tmp, 'x.txt'), 'hello');
    await expect(lib.checkModelPath(join(tmp, 'x.txt'))).rejects.toThrow('x.txt is not a .gguf model file.');
    await expect(lib.checkModelPath(join(tmp, 'gone.gguf'))).rejects.toThrow('gone.gguf does not exist (it may have been moved or deleted).');
    mkdirSync(join(tmp, 'dir.gguf'));
    await expect(lib.checkModelPath(join(tmp, 'dir.gguf'))).rejects.toThrow('dir.gguf is a folder, not a .gguf model file.');
  });
});

describe('opened model', () => {
  it('shows float32 values as their shortest decimal, bigints as strings', () => {
    expect(shortestFloat32(Math.fround(1e-5))).toBe(1e-5);
    expect(shortestFloat32(Math.fround(0.1))).toBe(0.1);
    expect(shortestFloat32(Math.fround(10000))).toBe(10000);
    expect(toMetaValue(Math.fround(1e-6), GgufType.FLOAT32)).toBe(1e-6);
    expect(toMetaValue(2n ** 60n, GgufType.UINT64)).toBe('1152921504606846976');
    expect(toMetaValue(0.1, GgufType.FLOAT64)).toBe(0.1);
  });

  it('sends short arrays whole and summarises long ones', () => {
    const short = { itemType: GgufType.INT32, items: [1, 2, 3] };
    expect(toMetaValue(short, GgufType.ARRAY)).toEqual([1, 2, 3]);
    const items = Array.from({ length: 40 }, (_, i) => `t${i}`);
    const long = toMetaValue({ itemType: GgufType.STRING, items }, GgufType.ARRAY);
    expect(long).toEqual({ array: true, itemType: 'STRING', length: 40, head: items.slice(0, ARRAY_INLINE_MAX) });
  });

  it('finds the layer of a tensor by its blk.N prefix', () => {
    expect(layerOf('blk.0.attn_q.weight')).toBe(0);
    expect(layerOf('blk.17.ffn_down.weight')).toBe(17);
    expect(layerOf('output.weight')).toBeNull();
    expect(layerOf('token_embd.weight')).toBeNull();
  });

  it('slices and searches an array: "#N" by index, digits by index then text, text with ▁/Ġ for spaces', () => {
    const tokens = ['<unk>', '<s>', '</s>', '▁the', 'the', 'Ġthe', 'The', 'x12', '12'];
    const h = parseGgufHeader(tinyGguf('llama', tokens));
    const q = (query?: string, offset = 0, limit = 100) => metaArraySlice(h, 'tokenizer.ggml.tokens', offset, limit, query);
    expect(q(undefined, 2, 3).items).toEqual([{ index: 2, value: '</s>' }, { index: 3, value: '▁the' }, { index: 4, value: 'the' }]);
    expect(q('#3')).toMatchObject({ items: [{ index: 3, value: '▁the' }], matches: 1 });
    expect(q('#99').items).toEqual([]);
    // "2": index 2 first, then items containing "2".
    expect(q('2').items.map((x) => x.index)).toEqual([2, 7, 8]);
    // Case-insensitive text search.
    expect(q('the').items.map((x) => x.index)).toEqual([3, 4, 5, 6]);
    // " the" (with a space) is how a person types a word-initial token.
    expect(q(' the').items.map((x) => x.index)).toEqual([3, 5]);
    expect(q('the', 1, 2)).toMatchObject({ items: [{ index: 4 }, { index: 5 }], matches: 4 });
    expect(() => metaArraySlice(h, 'general.name', 0, 10)).toThrow('The model has no array metadata key "general.name".');
  });

  it('says why a file cannot chat', () => {
    expect(runnability(parseGgufHeader(tinyGguf('llama')), ['llama'])).toEqual({ runnable: true, notRunnableReason: null });
    expect(runnability(parseGgufHeader(tinyGguf('mamba')), ['llama', 'qwen2']).notRunnableReason)
      .toBe('Pantheon cannot chat with this model: it does not run the "mamba" architecture yet (it runs llama, qwen2); its metadata and tensors can still be read.');
    const vocabOnly = writeGguf([kv.str('general.architecture', 'llama'), kv.arr('tokenizer.ggml.tokens', GgufType.STRING, ['<unk>'])], []);
    expect(runnability(parseGgufHeader(vocabOnly), ['llama'])).toEqual({
      runnable: false,
      notRunnableReason: 'Pantheon cannot chat with this file: it holds a vocabulary but no weights (a vocabulary-only GGUF); its metadata can still be read.',
    });
    const noTokens = writeGguf([kv.str('general.architecture', 'llama')], [{ name: 'token_embd.weight', dims: [4, 1], type: 0, data: new Uint8Array(16) }]);
    expect(runnability(parseGgufHeader(noTokens), ['llama']).notRunnableReason).toMatch(/^Pantheon cannot chat with this model: it has no tokenizer/);
    expect(runnability(parseGgufHeader(writeGguf([], [])), ['llama']).notRunnableReason).toMatch(/^Pantheon cannot chat with this file: it has no general.architecture key/);
  });
});

describe('chat store', () => {
  it('creates, saves, lists newest first, and leaves no temp files', async () => {
    const store = new ChatStore(tmp, () => {});
    const a = await store.create({ title: 'A' });
    const b = await store.create({});
    expect(b.title).toBe('New chat');
    expect(a.id).toMatch(/^[0-9a-f]{16}$/);
    expect(a.id).not.toBe(b.id);
    await store.save({ ...a, updatedAt: Date.now() + 1000, messages: [{ id: 'm', role: 'user', content: 'hi', createdAt: 1 }] });
    const list = await store.list();
    expect(list.map((c) => c.id)).toEqual([a.id, b.id]);
    expect(list[0].messageCount).toBe(1);
    expect(readdirSync(join(tmp, 'chats')).sort()).toEqual(['.index.json', `${a.id}.json`, `${b.id}.json`].sort());
  });

  it('keeps the stored prompts of replies a save names in keepPrompts (sent without them)', async () => {
    const store = new ChatStore(tmp, () => {});
    const c = await store.create({});
    const prompt = { text: '<s>User: Hi\nAssistant:', tokens: 7, templateName: 'plain' };
    const user = { id: 'u', role: 'user' as const, content: 'Hi', createdAt: 1 };
    const reply = { id: 'r', role: 'assistant' as const, content: 'Hello', createdAt: 2, prompt };
    await store.save({ ...c, messages: [user, reply] });
    // The page's next save: the reply's prompt left out (stored already), a new user message added.
    const request = validateRequest('chats:save', { chat: { ...c, messages: [user, { ...reply, prompt: undefined }, { ...user, id: 'u2' }] }, keepPrompts: ['r'] });
    await store.save(request.chat, request.keepPrompts);
    const back = await new ChatStore(tmp, () => {}).get(c.id);
    expect(back.messages.map((m) => m.id)).toEqual(['u', 'r', 'u2']);
    expect(back.messages[1].prompt).toEqual(prompt);
    expect(() => validateRequest('chats:save', { chat: c, keepPrompts: [3] })).toThrow('keepPrompts[0] must be a string.');
  });

  it('lists from its index: a chat file is decoded again only when it changed', async () => {
    const store = new ChatStore(tmp, () => {});
    const a = await store.create({ title: 'Alpha' });
    const b = await store.create({ title: 'Beta' });
    const file = join(tmp, 'chats', `${a.id}.json`);
    const when = Math.floor(statSync(file).mtimeMs / 1000); // whole seconds: utimes keeps them exactly
    utimesSync(file, when, when);
    expect((await store.list()).map((c) => c.title).sort()).toEqual(['Alpha', 'Beta']);
    // Same size and time, other content: the list answers from the index, not from the file.
    writeFileSync(file, readFileSync(file, 'utf8').replace('"Alpha"', '"Gamma"'));
    utimesSync(file, when, when);
    const lists = [await store.list(), await new ChatStore(tmp, () => {}).list()];
    for (const l of lists) expect(l.map((c) => c.title).sort()).toEqual(['Alpha', 'Beta']);
    // A save (new time) is decoded; a deleted chat leaves the index; a bad index is rebuilt.
    await store.save({ ...b, title: 'Beta 2' });
    await store.delete(a.id);
    expect((await store.list()).map((c) => c.title)).toEqual(['Beta 2']);
    writeFileSync(join(tmp, 'chats', '.index.json'), '{ not json');
    expect((await new ChatStore(tmp, () => {}).list()).map((c) => c.title)).toEqual(['Beta 2']);
    expect(JSON.parse(readFileSync(join(tmp, 'chats', '.index.json'), 'utf8'))).toMatchObject({ version: 1, chats: { [b.id]: { summary: { title: 'Beta 2' } } } });
  });

  it('sets a corrupt file aside with a log line instead of failing the list', async () => {
    const lines: string[] = [];
    const store = new ChatStore(tmp, (l) => lines.push(l));
    const ok = await store.create({ title: 'fine' });
    writeFileSync(join(tmp, 'chats', 'deadbeefdeadbeef.json'), '{"id": "deadbeefdeadbeef", "title": ');
    writeFileSync(join(tmp, 'chats', 'cafecafecafecafe.json'), JSON.stringify({ id: 'cafecafecafecafe', title: 3 }));
    const list = await store.list();
    expect(list.map((c) => c.id)).toEqual([ok.id]);
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.startsWith('chats: ') && l.endsWith('; moving it aside'))).toBe(true);
  });

  it('renames inside the chat\'s queue: a rename racing a save keeps the saved messages', async () => {
    const store = new ChatStore(tmp, () => {});
    const c = await store.create({});
    const messages: StoredMessage[] = [{ id: 'u', role: 'user', content: 'Once upon a time', createdAt: 1 }];
    // Not awaited: the rename is asked for while the save is still being written.
    const saving = store.save({ ...c, messages });
    const renamed = await store.rename(c.id, 'Stories');
    await saving;
    expect(renamed.messageCount).toBe(1);
    const back = await new ChatStore(tmp, () => {}).get(c.id);
    expect(back.title).toBe('Stories');
    expect(back.messages).toEqual(messages);
  });

  it('keeps a deleted chat deleted when a late save arrives', async () => {
    const store = new ChatStore(tmp, () => {});
    const c = await store.create({});
    const saving = store.save({ ...c, messages: [{ id: 'u', role: 'user', content: 'Hi', createdAt: 1 }] }).catch((e: Error) => e.message);
    await store.delete(c.id);
    await saving;
    // A reply that ends after the delete (its save comes late) must not bring the chat back.
    await expect(store.save({ ...c, messages: [] })).rejects.toThrow('That chat was deleted.');
    await expect(store.rename(c.id, 'back')).rejects.toThrow('That chat was deleted.');
    expect(readdirSync(join(tmp, 'chats'))).toEqual([]);
    expect(await store.list()).toEqual([]);
  });

  it('refuses ids that could name a file outside the chats folder', async () => {
    const store = new ChatStore(tmp, () => {});
    await expect(store.get('../settings')).rejects.toThrow('id is not a chat id.');
    await expect(store.delete('..')).rejects.toThrow('id is not a chat id.');
  });

  it('keeps the exact prompt of a reply across a restart, and refuses a malformed one', async () => {
    const prompt = { text: '<s>[INST] Once upon a time [/INST]', tokens: 9, templateName: 'llama2' };
    const reply = { id: 'r', role: 'assistant' as const, content: 'There was', createdAt: 2, prompt };
    const c = await new ChatStore(tmp, () => {}).create({});
    await new ChatStore(tmp, () => {}).save({ ...c, messages: [{ id: 'u', role: 'user', content: 'Once upon a time', createdAt: 1 }, reply] });
    const back = await new ChatStore(tmp, () => {}).get(c.id);
    expect(back.messages[1].prompt).toEqual(prompt);
    // Through the request validator (chats:save), as the page sends it.
    const bad = (p: unknown) => () => validateRequest('chats:save', { chat: { ...c, messages: [{ ...reply, prompt: p }] } });
    expect(bad({ ...prompt, tokens: -1 })).toThrow('chat.messages[0].prompt.tokens must be between 0 and');
    expect(bad({ ...prompt, tokens: 1.5 })).toThrow('chat.messages[0].prompt.tokens must be a whole number (got 1.5).');
    expect(bad({ text: 3, tokens: 1, templateName: 'x' })).toThrow('chat.messages[0].prompt.text must be a string.');
    expect(bad({ ...prompt, templateName: 'x'.repeat(201) })).toThrow('chat.messages[0].prompt.templateName is too long (201 characters; at most 200).');
    expect(bad('the prompt')).toThrow('chat.messages[0].prompt must be an object.');
  });

  it('keeps a reply\'s reasoning (text, tokens, time) with it across a restart, and refuses a malformed one', async () => {
    const reasoning = { text: 'The user greets me. I should greet back.', tokens: 12, ms: 3210.5 };
    const stats = { promptTokens: 9, generatedTokens: 16, ttftMs: 5, tokensPerS: 40, promptTokensPerS: 900, stopReason: 'eos' as const, reasoningTokens: 12, reasoningMs: 3210.5 };
    const reply = { id: 'r', role: 'assistant' as const, content: 'Hello!', createdAt: 2, reasoning, stats };
    const c = await new ChatStore(tmp, () => {}).create({});
    await new ChatStore(tmp, () => {}).save({ ...c, messages: [{ id: 'u', role: 'user', content: 'Hi', createdAt: 1 }, reply] });
    const back = await new ChatStore(tmp, () => {}).get(c.id);
    expect(back.messages[1]).toEqual(reply);
    const bad = (r: unknown) => () => validateRequest('chats:save', { chat: { ...c, messages: [{ ...reply, reasoning: r }] } });
    expect(bad({ ...reasoning, tokens: -1 })).toThrow('chat.messages[0].reasoning.tokens must be between 0 and');
    expect(bad({ ...reasoning, text: 7 })).toThrow('chat.messages[0].reasoning.text must be a string.');
    expect(bad('thinking')).toThrow('chat.messages[0].reasoning must be an object.');
    expect(() => validateRequest('chats:save', { chat: { ...c, messages: [{ ...reply, stats: { ...stats, reasoningMs: -2 } }] } })).toThrow('chat.messages[0].stats.reasoningMs must be between 0 and');
  });

  it('stores each reply\'s prompt against the previous one: files grow linearly, prompts come back whole', async () => {
    // ChatML: every prompt is the previous prompt, the previous reply and the new user turn.
    const conversation = (turns: number): StoredMessage[] => {
      const messages: StoredMessage[] = [];
      let text = '<|im_start|>system\nBe brief.<|im_end|>\n';
      for (let i = 0; i < turns; i++) {
        const user = `Question ${i}: ${'why '.repeat(20)}🙂`;
        messages.push({ id: `u${i}`, role: 'user', content: user, createdAt: 2 * i });
        text += `<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;
        const content = `Answer ${i}: ${'because '.repeat(20)}`;
        messages.push({ id: `a${i}`, role: 'assistant', content, createdAt: 2 * i + 1, prompt: { text, tokens: text.length >> 2, templateName: 'chatml' } });
        text += `${content}<|im_end|>\n`;
      }
      return messages;
    };
    const store = new ChatStore(tmp, () => {});
    const saved = async (messages: StoredMessage[]) => {
      const c = await store.create({});
      await store.save({ ...c, messages });
      expect((await new ChatStore(tmp, () => {}).get(c.id)).messages).toEqual(messages);
      return readFileSync(join(tmp, 'chats', `${c.id}.json`), 'utf8').length;
    };
    // Twice the turns: twice the file (stored whole, the prompts alone would be four times).
    const [n30, n60] = [await saved(conversation(30)), await saved(conversation(60))];
    expect(n60 / n30).toBeLessThan(2.2);
    const whole = (m: StoredMessage[]) => m.reduce((n, x) => n + (x.prompt?.text.length ?? 0), 0);
    expect(whole(conversation(60)) / whole(conversation(30))).toBeGreaterThan(3.8);
    // A template that rewrites the past (common prefix only the first characters), an emoji exactly
    // where the common prefix ends, and a reply without a prompt in between.
    const odd = conversation(3);
    odd.push({ id: 'x', role: 'assistant', content: 'x', createdAt: 200, prompt: { text: '<|im_start|>system\nOther', tokens: 3, templateName: 't' } });
    odd.push({ id: 'y', role: 'assistant', content: 'y', createdAt: 201 });
    odd.push({ id: 'z', role: 'assistant', content: 'z', createdAt: 202, prompt: { text: '<|im_start|>system\nOther🙂', tokens: 4, templateName: 't' } });
    odd.push({ id: 'w', role: 'assistant', content: 'w', createdAt: 203, prompt: { text: '<|im_start|>system\nOther🙃', tokens: 4, templateName: 't' } });
    await saved(odd);
  });

  it('reads files whose prompts are stored whole, and skips a file whose prompt delta points past the previous prompt', async () => {
    const lines: string[] = [];
    const store = new ChatStore(tmp, (l) => lines.push(l));
    const c = await store.create({});
    const prompt = { text: 'p1', tokens: 1, templateName: 't' };
    const file = join(tmp, 'chats', `${c.id}.json`);
    writeFileSync(file, JSON.stringify({ ...c, messages: [{ id: 'r', role: 'assistant', content: 'a', createdAt: 1, prompt }] }));
    expect((await store.get(c.id)).messages[0].prompt).toEqual(prompt);
    writeFileSync(file, JSON.stringify({ ...c, messages: [{ id: 'r', role: 'assistant', content: 'a', createdAt: 1, prompt: { keep: 5, rest: 'x', tokens: 1, templateName: 't' } }] }));
    await expect(store.get(c.id)).rejects.toThrow('chat.messages[0].prompt.keep must be between 0 and 0');
    expect(await store.list()).toEqual([]);
    expect(lines.join('\n')).toContain('prompt.keep must be between 0 and 0');
  });

  it('writes concurrent saves of one chat in order; the file is always whole JSON', async () => {
    const store = new ChatStore(tmp, () => {});
    const c = await store.create({});
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.save({ ...c, title: `t${i}` })));
    const onDisk = JSON.parse(readFileSync(join(tmp, 'chats', `${c.id}.json`), 'utf8')) as { title: string };
    expect(onDisk.title).toBe('t19');
  });
});

describe('damaged files and failed writes', () => {
  it('a write that fails leaves no temp file behind', async () => {
    const target = join(tmp, 'x.json');
    // fails in writeFile, after the temp file is open
    await expect(writeFileAtomic(target, 42 as unknown as string)).rejects.toThrow();
    // fails in rename (a folder is in the way)
    mkdirSync(join(tmp, 'dir.json', 'inside'), { recursive: true });
    await expect(writeFileAtomic(join(tmp, 'dir.json'), 'x')).rejects.toThrow();
    expect(readdirSync(tmp).sort()).toEqual(['dir.json']);
  });

  it('a settings file that is not JSON is moved aside, said once, and the defaults are used', async () => {
    writeFileSync(join(tmp, 'settings.json'), '{"theme": "dark",');
    const s = new SettingsStore(tmp, () => {});
    expect(await s.load()).toEqual(DEFAULT_SETTINGS);
    const aside = readdirSync(tmp).filter((f) => f.startsWith('settings.json.corrupt-'));
    expect(aside).toHaveLength(1);
    expect(aside[0]).toMatch(/^settings\.json\.corrupt-\d{8}T\d{6}Z$/);
    expect(readFileSync(join(tmp, aside[0]), 'utf8')).toBe('{"theme": "dark",');
    expect(s.notice).toBe(`Your settings file was damaged; it was moved to ${join(tmp, aside[0])} and the default settings are used.`);
  });

  it('settings are backed up before an overwrite', async () => {
    const s = new SettingsStore(tmp, () => {});
    await s.load();
    await s.set({ theme: 'dark' });
    expect(readdirSync(tmp)).not.toContain('settings.json.bak');
    await s.set({ theme: 'light' });
    expect(JSON.parse(readFileSync(join(tmp, 'settings.json.bak'), 'utf8'))).toMatchObject({ theme: 'dark' });
    expect(JSON.parse(readFileSync(join(tmp, 'settings.json'), 'utf8'))).toMatchObject({ theme: 'light' });
  });

  it('a damaged chat file is moved aside, the others listed, and the user told once', async () => {
    const store = new ChatStore(tmp, () => {});
    const good = await store.create({ title: 'good' });
    const bad = await store.create({ title: 'bad' });
    writeFileSync(join(tmp, 'chats', `${bad.id}.json`), '{"id": "');
    expect((await store.list()).map((c) => c.title)).toEqual(['good']);
    const files = readdirSync(join(tmp, 'chats'));
    expect(files).toContain(`${good.id}.json`);
    expect(files.filter((f) => f.startsWith(`${bad.id}.json.corrupt-`))).toHaveLength(1);
    expect(store.notices).toHaveLength(1);
    expect(store.notices[0]).toMatch(/^A chat file was damaged and could not be read; it was moved to .*\.corrupt-\d{8}T\d{6}Z\.$/);
    await store.list();
    expect(store.notices).toHaveLength(1); // moved: not found, not told, again
  });
});

describe('settings', () => {
  it('starts from llama.cpp-like defaults and persists changes', async () => {
    const s = new SettingsStore(tmp, () => {});
    expect(await s.load()).toEqual(DEFAULT_SETTINGS);
    expect(DEFAULT_SETTINGS.sampling).toMatchObject({ temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1, penaltyLastN: 64, seed: -1 });
    expect(DEFAULT_SETTINGS.contextSize).toBe(2048);
    expect(DEFAULT_SETTINGS.threads).toBe(0);
    expect(DEFAULT_SETTINGS.computeBackend).toBe('auto');
    expect(DEFAULT_SETTINGS.gpuLayers).toBe('auto');
    await s.set(validateSettingsPatch({ contextSize: 4096, computeBackend: 'gpu', gpuLayers: 12, sampling: { temperature: 0.2 } }));
    const again = await new SettingsStore(tmp, () => {}).load();
    expect(again.contextSize).toBe(4096);
    expect(again.computeBackend).toBe('gpu');
    expect(again.gpuLayers).toBe(12);
    expect(again.sampling).toEqual({ ...DEFAULT_SETTINGS.sampling, temperature: 0.2 });
  });

  it('rejects bad values with a message naming the field', () => {
    expect(() => validateSettingsPatch({ contextSize: 8 })).toThrow('settings.contextSize must be between 16 and 1048576 (got 8).');
    expect(() => validateSettingsPatch({ sampling: { topP: 2 } })).toThrow('settings.sampling.topP must be between 0 and 1 (got 2).');
    expect(() => validateSettingsPatch({ theme: 'neon' })).toThrow('settings.theme must be one of "system", "light", "dark".');
    expect(() => validateSettingsPatch({ computeBackend: 'cuda' })).toThrow('settings.computeBackend must be one of "auto", "cpu", "gpu".');
    expect(validateSettingsPatch({ gpuLayers: 'auto' })).toEqual({ gpuLayers: 'auto' });
    expect(validateSettingsPatch({ gpuLayers: 0 })).toEqual({ gpuLayers: 0 });
    expect(() => validateSettingsPatch({ gpuLayers: -1 })).toThrow('settings.gpuLayers must be between 0 and 4096 (got -1).');
    expect(() => validateSettingsPatch({ gpuLayers: 2.5 })).toThrow('settings.gpuLayers must be a whole number (got 2.5).');
    expect(() => validateSettingsPatch({ gpuLayers: 'all' })).toThrow('settings.gpuLayers must be "auto" or a whole number of layers.');
    expect(() => validateSettingsPatch({ gpuLayers: '12' })).toThrow('settings.gpuLayers must be "auto" or a whole number of layers.');
    expect(() => validateSettingsPatch({ modelsFolder: '/etc' })).toThrow(/chooseFolder/);
    expect(() => validateSettingsPatch({ colour: 1 })).toThrow('settings.colour is not a setting.');
  });

  it('ignores an invalid field in the file, keeping its default', async () => {
    const lines: string[] = [];
    writeFileSync(join(tmp, 'settings.json'), JSON.stringify({ threads: -3, theme: 'dark' }));
    const s = await new SettingsStore(tmp, (l) => lines.push(l)).load();
    expect(s.threads).toBe(0);
    expect(s.theme).toBe('dark');
    expect(lines).toHaveLength(1);
  });
});

describe('request validation', () => {
  it('checks payloads per channel', () => {
    expect(validateRequest('model:metaArray', { key: 'k', offset: 0, limit: 10, query: 'x' })).toEqual({ key: 'k', offset: 0, limit: 10, query: 'x' });
    expect(() => validateRequest('model:metaArray', { key: 'k', offset: -1, limit: 10 })).toThrow('offset must be between 0 and 9007199254740991 (got -1).');
    expect(() => validateRequest('library:get', { sneaky: true })).toThrow('this request takes no arguments.');
    expect(() => validateRequest('chats:save', { chat: { id: 'ok', title: 't', createdAt: 0, updatedAt: 0, systemPrompt: '', messages: [{ id: 'm', role: 'root', content: '', createdAt: 0 }] } }))
      .toThrow('chat.messages[0].role must be one of "system", "user", "assistant".');
    // A reply's reasoning travels beside its answer, for the template to leave out.
    const messages = [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello!', reasoning: 'A greeting.' }, { role: 'user', content: 'Again' }];
    expect(validateRequest('engine:countTokens', { messages })).toEqual({ messages });
    expect(() => validateRequest('engine:countTokens', { messages: [{ role: 'assistant', content: 'x', reasoning: 1 }] })).toThrow('messages[0].reasoning must be a string.');
  });
});

describe('renderer path check', () => {
  it('keeps every path inside the root', () => {
    expect(fileInside('/srv/r', '/')).toBe('/srv/r/index.html');
    expect(fileInside('/srv/r', '/assets/a.js')).toBe('/srv/r/assets/a.js');
    expect(fileInside('/srv/r', '/assets/')).toBe('/srv/r/assets/index.html');
    expect(fileInside('/srv/r', '/../etc/passwd')).toBeNull();
    expect(fileInside('/srv/r', '/..%2f..%2fetc/passwd')).toBeNull();
    expect(fileInside('/srv/r', '/%2e%2e/x')).toBeNull();
    expect(fileInside('/srv/r', '/a%00.js')).toBeNull();
    expect(fileInside('/srv/r', '/%E0%A4%A')).toBeNull();
    expect(fileInside('/srv/r', '/../r2/x')).toBeNull(); // a sibling whose name starts with the root's
  });

  it('resolves symlinks before the check: a link may not lead out of the root', async () => {
    const root = join(tmp, 'renderer');
    mkdirSync(join(root, 'assets'), { recursive: true });
    writeFileSync(join(root, 'index.html'), 'page');
    writeFileSync(join(tmp, 'secret.txt'), 'secret');
    symlinkSync(join(tmp, 'secret.txt'), join(root, 'assets', 'leak.txt'));
    symlinkSync(tmp, join(root, 'up'));
    symlinkSync(join(root, 'index.html'), join(root, 'alias.html'));
    expect(fileInside(root, '/assets/leak.txt')).toBe(join(root, 'assets', 'leak.txt')); // the lexical check alone lets it through
    expect(await realFileInside(root, '/assets/leak.txt')).toBeNull();
    expect(await realFileInside(root, '/up/secret.txt')).toBeNull();
    expect(await realFileInside(root, '/missing.js')).toBeNull();
    expect(await realFileInside(root, '/alias.html')).toBe(realpathSync(join(root, 'index.html')));
    expect(await realFileInside(root, '/')).toBe(realpathSync(join(root, 'index.html')));
  });
});

describe('engine exit reasons', () => {
  it('maps a Node child\'s exit to the contract\'s reasons', () => {
    expect(exitReason(null, 'SIGKILL', '')).toEqual({ reason: 'killed', code: null, detail: 'signal SIGKILL' });
    expect(exitReason(null, 'SIGSEGV', '')).toMatchObject({ reason: 'crashed' });
    expect(exitReason(null, 'SIGABRT', 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory')).toMatchObject({ reason: 'oom' });
    expect(exitReason(0, null, '')).toMatchObject({ reason: 'clean-exit' });
    expect(exitReason(3, null, '')).toEqual({ reason: 'abnormal-exit', code: 3, detail: 'exit code 3' });
  });

  it('says what happened in one sentence with what to do', () => {
    expect(crashMessage({ reason: 'oom', code: null, detail: 'signal SIGABRT' }, 'loading', 'Llama 3'))
      .toBe('The engine ran out of memory while loading Llama 3; try a smaller model or context size, then press Reload.');
    expect(crashMessage({ reason: 'crashed', code: null, detail: 'signal SIGSEGV' }, 'running', null))
      .toBe('The engine process crashed while running the model (signal SIGSEGV); press Reload to start it again.');
  });
});
