// Chats persisted as one JSON file each under `<userData>/chats/<id>.json`, written atomically
// (temp file + fsync + rename, atomic-file.ts) so a crash or power cut never loses or corrupts a
// conversation. Ids are random; a file that does not parse is skipped with a log line, never
// breaking the list.
//
// Each reply keeps the exact prompt it was generated from, and each prompt repeats the whole
// conversation before it, so stored whole they would grow with the square of the chat's length.
// On disk a reply's prompt is therefore stored against the previous reply's prompt:
//   { "keep": N, "rest": "…", "tokens": T, "templateName": "…" }
// means the first N characters of the previous stored prompt, then `rest` (N is their common
// prefix, so it works for any template; a first prompt or one sharing nothing has keep 0). The
// page and the IPC contract only ever see whole prompts (`text`); files written before this
// (whole `text` everywhere) still read.

import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { CHAT_EXPORT_FORMAT, type Chat, type ChatSummary } from '../../shared/contract.js';
import { UsageError } from '../../shared/errors.js';
import { chatId, chatTitle, DEFAULT_TITLE, isChatId, validateChat } from '../../shared/requests.js';
import { MAX_MESSAGES, MAX_MESSAGE_CHARS, array, integer, number, record, string } from '../../shared/validate.js';
import { moveAside, readJson, writeJsonAtomic } from './atomic-file.js';
import type { Logger } from './log.js';

export function newChatId(): string {
  return randomBytes(8).toString('hex');
}

/** On-disk form of a chat: every reply's prompt stored against the previous one (see the top). */
export function encodeChat(chat: Chat): unknown {
  let prev = '';
  const messages = chat.messages.map((m) => {
    if (!m.prompt) return m;
    const { text, ...meta } = m.prompt;
    let keep = 0;
    const n = Math.min(text.length, prev.length);
    while (keep < n && text.charCodeAt(keep) === prev.charCodeAt(keep)) keep++;
    // Never split a surrogate pair: `rest` must be valid text on its own.
    if (keep > 0 && keep < text.length && isHighSurrogate(text.charCodeAt(keep - 1))) keep--;
    prev = text;
    return { ...m, prompt: { keep, rest: text.slice(keep), ...meta } };
  });
  return { ...chat, messages };
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** A chat file's content with every prompt's text made whole again, then checked by validateChat. */
export function decodeChat(v: unknown): Chat {
  const c = record(v, 'chat');
  const raw = array(c.messages, 'chat.messages', MAX_MESSAGES);
  let prev = '';
  const messages = raw.map((m, i) => {
    const what = `chat.messages[${i}].prompt`;
    const r = record(m, `chat.messages[${i}]`);
    if (r.prompt === undefined) return r;
    const p = record(r.prompt, what);
    if (p.text !== undefined) {
      // written whole (older files): validateChat checks it
      prev = string(p.text, `${what}.text`, MAX_MESSAGE_CHARS);
      return r;
    }
    const { keep: k, rest: rs, ...meta } = p;
    const keep = integer(k, `${what}.keep`, 0, prev.length);
    const rest = string(rs, `${what}.rest`, MAX_MESSAGE_CHARS);
    prev = prev.slice(0, keep) + rest;
    return { ...r, prompt: { ...meta, text: prev } };
  });
  return validateChat({ ...c, messages });
}

/** Bad JSON, or JSON that is not a chat (a validator's UsageError names the field). */
function isDamaged(err: unknown): boolean {
  return err instanceof SyntaxError || (err instanceof UsageError && !/does not exist/.test(err.message));
}

/** `<chats>/.index.json`: not a chat id (the dot), so never listed as a chat. */
const INDEX_FILE = '.index.json';

/** Per chat id: its file's size and modification time when its summary was taken. */
type ChatIndex = Record<string, { size: number; mtimeMs: number; summary: ChatSummary }>;

function summary(c: Chat): ChatSummary {
  return { id: c.id, title: c.title, updatedAt: c.updatedAt, messageCount: c.messages.length };
}

export class ChatStore {
  readonly dir: string;
  /** Per chat, the last step in flight: reads-then-writes, writes and deletes of one chat happen in order. */
  private readonly queue = new Map<string, Promise<unknown>>();
  /**
   * Chats deleted while this process runs: a save that arrives late (a reply that ended after the
   * delete) is refused instead of writing the file again. Ids are random, never reused.
   */
  private readonly deleted = new Set<string>();

  constructor(userData: string, private readonly log: Logger) {
    this.dir = join(userData, 'chats');
  }

  private file(id: string): string {
    return join(this.dir, `${chatId(id)}.json`);
  }

  /** Run `step` after every earlier step on chat `id`; chained before any await, so in call order. */
  private async inQueue<T>(id: string, step: () => Promise<T>): Promise<T> {
    const prev = this.queue.get(id) ?? Promise.resolve();
    const next = prev.catch(() => {}).then(step);
    this.queue.set(id, next);
    try {
      return await next;
    } finally {
      if (this.queue.get(id) === next) this.queue.delete(id);
    }
  }

  /** Write a chat now (inside its queue step). */
  private async writeNow(chat: Chat): Promise<void> {
    if (this.deleted.has(chat.id)) throw new UsageError('That chat was deleted.');
    await fsp.mkdir(this.dir, { recursive: true });
    await writeJsonAtomic(this.file(chat.id), encodeChat(chat));
  }

  /** Lines for the user about damaged chat files moved aside (see Backend.takeNotices). */
  readonly notices: string[] = [];

  /** A chat file that cannot be read: moved aside (`<id>.json.corrupt-<time>`), said once. */
  private async setAside(id: string, why: string): Promise<void> {
    const file = this.file(id);
    this.log(`chats: ${file} is damaged (${why}); moving it aside`);
    try {
      const to = await moveAside(file);
      this.notices.push(`A chat file was damaged and could not be read; it was moved to ${to}.`);
    } catch (err) {
      this.log(`chats: cannot move ${file} aside: ${(err as Error).message}`);
    }
  }

  /**
   * Newest first. Damaged files are moved aside (setAside); other unreadable ones skipped. A chat
   * file is decoded only when it changed since the last list: the index (`.index.json`) keeps each
   * file's summary with its size and modification time.
   */
  async list(): Promise<ChatSummary[]> {
    let names: string[];
    try {
      names = await fsp.readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const index = await this.readIndex();
    const next: ChatIndex = {};
    let changed = false;
    const out: ChatSummary[] = [];
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const id = name.slice(0, -'.json'.length);
      if (!isChatId(id)) continue;
      try {
        const st = await fsp.stat(join(this.dir, name));
        const known = index[id];
        if (known && known.size === st.size && known.mtimeMs === st.mtimeMs) {
          next[id] = known;
          out.push(known.summary);
          continue;
        }
        const s = summary(await this.read(id));
        next[id] = { size: st.size, mtimeMs: st.mtimeMs, summary: s };
        changed = true;
        out.push(s);
      } catch (err) {
        if (isDamaged(err)) await this.setAside(id, (err as Error).message);
        else this.log(`chats: skipping ${join(this.dir, name)}: ${(err as Error).message}`);
      }
    }
    if (changed || Object.keys(index).length !== Object.keys(next).length) {
      // Only a cache: a failed write costs the next list some decoding, nothing else.
      await writeJsonAtomic(join(this.dir, INDEX_FILE), { version: 1, chats: next }).catch((err: Error) => this.log(`chats: cannot write the index: ${err.message}`));
    }
    return out.sort((a, b) => b.updatedAt - a.updatedAt);
  }

  /** The list's index; empty when missing or not as written (it is rebuilt then). */
  private async readIndex(): Promise<ChatIndex> {
    try {
      const raw = record(await readJson(join(this.dir, INDEX_FILE)), 'index');
      if (raw.version !== 1) return {};
      const chats = record(raw.chats, 'index.chats');
      const out: ChatIndex = {};
      for (const [id, v] of Object.entries(chats)) {
        const e = record(v, 'entry');
        const s = record(e.summary, 'summary');
        if (!isChatId(id) || s.id !== id) continue;
        out[id] = {
          size: number(e.size, 'size', 0, Number.MAX_SAFE_INTEGER),
          mtimeMs: number(e.mtimeMs, 'mtimeMs', 0, Number.MAX_SAFE_INTEGER),
          summary: { id, title: chatTitle(s.title), updatedAt: number(s.updatedAt, 'updatedAt', 0, Number.MAX_SAFE_INTEGER), messageCount: integer(s.messageCount, 'messageCount', 0, MAX_MESSAGES) },
        };
      }
      return out;
    } catch {
      return {};
    }
  }

  private async read(id: string): Promise<Chat> {
    const raw = await readJson(this.file(id));
    if (raw === undefined) throw new UsageError('That chat does not exist (it may have been deleted).');
    const chat = decodeChat(raw);
    if (chat.id !== id) throw new UsageError(`the file holds chat ${chat.id}, not ${id}`);
    return chat;
  }

  /** A chat as last saved: after any write of it still in flight (from this page or another). */
  async get(id: string): Promise<Chat> {
    await this.queue.get(chatId(id))?.catch(() => {});
    return this.getNow(id);
  }

  private async getNow(id: string): Promise<Chat> {
    try {
      return await this.read(id);
    } catch (err) {
      if (isDamaged(err)) {
        await this.setAside(id, (err as Error).message);
        throw new UsageError(`That chat's file is damaged (${(err as Error).message}); it was moved aside.`);
      }
      throw err;
    }
  }

  async create(opts: { title?: string; systemPrompt?: string } = {}): Promise<Chat> {
    const now = Date.now();
    const chat: Chat = {
      id: newChatId(),
      title: opts.title === undefined ? DEFAULT_TITLE : chatTitle(opts.title),
      createdAt: now,
      updatedAt: now,
      systemPrompt: opts.systemPrompt ?? '',
      messages: [],
    };
    await this.inQueue(chat.id, () => this.writeNow(chat));
    return chat;
  }

  /**
   * Replace a chat's content (already validated); its updatedAt becomes now. Replies named in
   * `keepPrompts` came without their prompt: each keeps the one stored with it.
   */
  /**
   * A chat exported as JSON (`{ format: 'pantheon-chat', version: 1, chat }`, or a bare chat) saved
   * as a new chat: a fresh id, everything else as exported, checked like any saved chat.
   */
  async importChat(text: string): Promise<ChatSummary> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UsageError('The file is not JSON; choose a chat exported from Pantheon as JSON.');
    }
    const wrapped = parsed !== null && typeof parsed === 'object' && (parsed as { format?: unknown }).format === CHAT_EXPORT_FORMAT;
    const body = wrapped ? (parsed as { chat?: unknown }).chat : parsed;
    let chat: Chat;
    try {
      chat = validateChat({ ...(body !== null && typeof body === 'object' ? body : {}), id: newChatId() });
    } catch (err) {
      throw new UsageError(`The file is not a Pantheon chat: ${(err as Error).message}`);
    }
    return this.save(chat);
  }

  async save(chat: Chat, keepPrompts: string[] = []): Promise<ChatSummary> {
    let next = { ...chat, updatedAt: Math.max(Date.now(), chat.updatedAt) };
    await this.inQueue(chat.id, async () => {
      if (keepPrompts.length > 0 && !this.deleted.has(chat.id)) next = await this.withStoredPrompts(next, new Set(keepPrompts));
      await this.writeNow(next);
    });
    return summary(next);
  }

  private async withStoredPrompts(chat: Chat, keep: Set<string>): Promise<Chat> {
    let stored: Chat;
    try {
      stored = await this.read(chat.id);
    } catch (err) {
      this.log(`chats: cannot keep the stored prompts of ${chat.id}: ${(err as Error).message}`);
      return chat;
    }
    const prompts = new Map(stored.messages.flatMap((m) => (m.prompt ? [[m.id, m.prompt] as const] : [])));
    const messages = chat.messages.map((m) => {
      const p = m.prompt === undefined && keep.has(m.id) ? prompts.get(m.id) : undefined;
      return p ? { ...m, prompt: p } : m;
    });
    return { ...chat, messages };
  }

  /** Read and write in one queue step, so a save asked for before the rename is never undone by it. */
  async rename(id: string, title: string): Promise<ChatSummary> {
    const t = chatTitle(title);
    return this.inQueue(chatId(id), async () => {
      if (this.deleted.has(id)) throw new UsageError('That chat was deleted.');
      const chat = await this.getNow(id);
      const next = { ...chat, title: t, updatedAt: Math.max(Date.now(), chat.updatedAt) };
      await this.writeNow(next);
      return summary(next);
    });
  }

  async delete(id: string): Promise<void> {
    const file = this.file(id);
    // Marked at once: a save asked for after the delete is refused even before the file is gone.
    this.deleted.add(id);
    await this.inQueue(id, () => fsp.rm(file, { force: true }));
  }
}
