// Conversations: the list, the open chat, and one streamed reply at a time. A chat is saved after each
// user message and after each reply ends, so reloading the page finds it as it was.

import { create } from 'zustand';
import type { Chat, ChatSummary, ContextPolicy, ProfileView, ReplyVersion, StoredToken, TokenLogprobs, GenerationEvent, GenerationHandle, ReplyStats, RequestMessage, StoredMessage } from '../../shared/contract.js';
import { api } from '../api.js';
import { errorLine } from '../lib/format.js';
import { useApp } from './app.js';
import { engineHas, useEngine } from './engine.js';
import { useSettings } from './settings.js';
import { structuredRequest, useStructured } from './structured.js';

const LAST_CHAT_KEY = 'pantheon.lastChat';
export const NEW_CHAT_TITLE = 'New chat';

/** How each context policy is named to the user. */
export const POLICY_LABEL: Record<ContextPolicy, string> = { stop: 'stop at the limit', 'truncate-middle': 'truncate the middle', rolling: 'rolling window' };

export interface Streaming {
  messageId: string;
  handle: GenerationHandle | null;
  stopping: boolean;
}

export interface ChatState {
  chats: ChatSummary[];
  chat: Chat | null;
  streaming: Streaming | null;
  /** Context gauge: tokens used by the conversation and the context size. */
  context: { used: number; size: number } | null;
  /** A calm one-line notice (context full). */
  notice: string | null;
  /** Messages the context policy left out of the last prompt (0: none). */
  dropped: number;
  /** The last reply's profile ("Profile" setting), or null. */
  profile: ProfileView | null;
  error: string | null;
  init(): Promise<void>;
  select(id: string): Promise<void>;
  newChat(): Promise<void>;
  rename(id: string, title: string): Promise<void>;
  remove(id: string): Promise<void>;
  /** Save an exported chat's JSON as a new chat and open it. */
  importChat(text: string): Promise<void>;
  setSystemPrompt(text: string): Promise<void>;
  send(text: string): Promise<void>;
  stop(): void;
  regenerate(): Promise<void>;
  /** Cut reply `messageId` before token `index`, put the alternative `alt` there and continue. */
  branch(messageId: string, index: number, alt: string): Promise<void>;
  editAndResend(messageId: string, text: string): Promise<void>;
  countContext(): Promise<void>;
}

/** Log-probabilities as stored: -Infinity (an underflow) as a very small number, which JSON keeps. */
const storedLp = (lp: number): number => Math.max(lp, -1e4);

/** A token event's probabilities as the reply keeps them: the sampler's p (0 when it cut the token) and the raw ones. */
function storedToken(id: number, text: string, top: { id: number; p: number; text: string }[], lps: TokenLogprobs): StoredToken {
  const p = (tid: number) => top.find((x) => x.id === tid)?.p ?? 0;
  return { t: text, p: p(id), lp: storedLp(lps.logprob), alts: lps.top.map((a) => ({ t: a.text, p: p(a.id), lp: storedLp(a.logprob) })) };
}

/** Earlier versions of a reply about to be replaced: its own, then it (at most 32, newest kept). */
function keptVersions(old: StoredMessage): ReplyVersion[] {
  const self: ReplyVersion = { content: old.content, createdAt: old.createdAt, ...(old.stats ? { stats: old.stats } : {}), ...(old.modelName ? { modelName: old.modelName } : {}), ...(old.reasoning ? { reasoning: old.reasoning } : {}) };
  return [...(old.versions ?? []), self].slice(-32);
}

function newId(): string {
  return crypto.randomUUID();
}

function titleFrom(text: string): string {
  const line = text.trim().split('\n')[0];
  return line.length > 48 ? `${line.slice(0, 47)}…` : line || NEW_CHAT_TITLE;
}

function rememberChat(id: string | null): void {
  try {
    if (id) localStorage.setItem(LAST_CHAT_KEY, id);
    else localStorage.removeItem(LAST_CHAT_KEY);
  } catch {
    // Storage may be unavailable; the most recent chat is opened instead.
  }
}

function lastChat(): string | null {
  try {
    return localStorage.getItem(LAST_CHAT_KEY);
  } catch {
    return null;
  }
}

/**
 * The messages sent to the model: the system prompt first, then the conversation. A reply's content
 * is its answer; its reasoning goes beside it, for the model's template to leave out (it does for
 * earlier turns, as do the built-in templates).
 */
export function requestMessages(chat: Chat): RequestMessage[] {
  const out: RequestMessage[] = [];
  if (chat.systemPrompt.trim()) out.push({ role: 'system', content: chat.systemPrompt });
  for (const m of chat.messages) {
    if (m.role === 'system') continue;
    out.push(m.reasoning ? { role: m.role, content: m.content, reasoning: m.reasoning.text } : { role: m.role, content: m.content });
  }
  return out;
}

/** Per chat, the replies whose prompt the store holds: saves send those without it (keepPrompts). */
const storedPrompts = new Map<string, Set<string>>();

function rememberPrompts(chat: Chat): void {
  storedPrompts.set(chat.id, new Set(chat.messages.flatMap((m) => (m.prompt ? [m.id] : []))));
}

/** The chat as a save sends it: prompts already stored left out, named in keepPrompts. */
function forSave(chat: Chat): { chat: Chat; keepPrompts: string[] } {
  const known = storedPrompts.get(chat.id);
  const keepPrompts: string[] = [];
  const messages = chat.messages.map((m) => {
    if (!m.prompt || !known?.has(m.id)) return m;
    keepPrompts.push(m.id);
    const { prompt: _, ...rest } = m;
    return rest;
  });
  return { chat: { ...chat, messages }, keepPrompts };
}

export const useChat = create<ChatState>()((set, get) => {
  /** Replace the open chat and save it; the list is updated from the answer. */
  async function save(chat: Chat): Promise<void> {
    try {
      const summary = await api().chats.save(forSave(chat));
      rememberPrompts(chat);
      set((s) => ({ chats: [summary, ...s.chats.filter((c) => c.id !== summary.id)].sort((a, b) => b.updatedAt - a.updatedAt) }));
    } catch (err) {
      // Not known to be stored: the next save sends every prompt.
      storedPrompts.delete(chat.id);
      // A reply that ended after its chat was deleted: the chat stays deleted, nothing to tell.
      if (!get().chats.some((c) => c.id === chat.id) && /was deleted/.test(errorLine(err))) return;
      set({ error: `The chat could not be saved: ${errorLine(err)}` });
    }
  }

  function patchMessage(id: string, patch: (m: StoredMessage) => StoredMessage): Chat | null {
    const chat = get().chat;
    if (!chat) return null;
    const next = { ...chat, updatedAt: Date.now(), messages: chat.messages.map((m) => (m.id === id ? patch(m) : m)) };
    set({ chat: next });
    return next;
  }

  /**
   * Stream a reply to the open chat (whose last message is the user's). `start`: the reply begins
   * with this text and these tokens, given (a branch at an alternative token); the engine goes on.
   */
  async function generate(start?: { content: string; tokens: StoredToken[] }, versions?: ReplyVersion[]): Promise<void> {
    const model = useApp.getState().model;
    const settings = useSettings.getState().settings;
    if (!model || !settings) {
      set({ error: 'Open a model to chat with it.' });
      return;
    }
    if (!model.runnable) {
      set({ error: model.notRunnableReason ?? 'The engine cannot run this model.' });
      return;
    }
    if (!engineHas(useEngine.getState().state, model.entry.id)) {
      const ok = await useEngine.getState().load(model.entry.id);
      if (!ok) return;
    }
    const chat = get().chat;
    if (!chat) return;
    const engine = useEngine.getState().state;
    const reply: StoredMessage = {
      id: newId(), role: 'assistant', content: start?.content ?? '', createdAt: Date.now(),
      modelName: engine.status === 'ready' || engine.status === 'busy' ? engine.modelName : model.entry.fileName,
      ...(start ? { tokens: start.tokens } : {}),
      ...(versions?.length ? { versions } : {}),
    };
    const structured = structuredRequest(useStructured.getState());
    const probabilities = settings.showProbabilities || !!start;
    const request = {
      messages: requestMessages(chat), sampling: settings.sampling, contextPolicy: settings.contextPolicy ?? 'stop', ...(structured ? { structured } : {}),
      ...(probabilities ? { probabilities: true } : {}), ...(start ? { replyPrefix: start.content } : {}),
      ...(settings.showProfile ? { profile: true } : {}),
    };
    set({ chat: { ...chat, messages: [...chat.messages, reply] }, streaming: { messageId: reply.id, handle: null, stopping: false }, notice: null, error: null });

    // Tokens arrive faster than the screen refreshes: gather them and paint a few times a second.
    // A reasoning model's thinking comes first: counted (tokens, time since the first token) until
    // the answer starts; the engine's own counts replace these when the reply ends.
    let pending = '';
    let pendingReasoning = '';
    // "Probabilities": each answer token with its probabilities, painted with the text
    let pendingTokens: StoredToken[] = [];
    const thinking = { tokens: 0, started: 0, ms: 0, answered: false, seen: false };
    let timer: ReturnType<typeof setTimeout> | null = null;
    // The reply in flight is saved as it grows (its first words at once, then at most every 2 s,
    // and when the page goes away), without stats: a reload, a closed window or a dead engine
    // leaves its text so far, shown as interrupted. The save that ends the reply (finish) comes
    // after these, in order.
    let partialTimer: ReturnType<typeof setTimeout> | null = null;
    let partialAt = -Infinity;
    const savePartial = (): void => {
      partialTimer = null;
      if (finished) return;
      partialAt = performance.now();
      const open = get().chat;
      if (open?.messages.some((m) => m.id === reply.id)) void save(open);
    };
    const onPageHide = (): void => {
      if (timer) clearTimeout(timer);
      flush();
      savePartial();
    };
    window.addEventListener('pagehide', onPageHide);
    const flush = (): void => {
      timer = null;
      if (!pending && !pendingReasoning) return;
      if (!partialTimer) {
        const wait = partialAt + 2000 - performance.now();
        if (wait <= 0) queueMicrotask(savePartial);
        else partialTimer = setTimeout(savePartial, wait);
      }
      const text = pending;
      const reasoning = pendingReasoning;
      const tokens = pendingTokens;
      pending = '';
      pendingReasoning = '';
      pendingTokens = [];
      patchMessage(reply.id, (m) => ({
        ...m,
        content: m.content + text,
        ...(tokens.length ? { tokens: [...(m.tokens ?? []), ...tokens] } : {}),
        ...(thinking.seen ? { reasoning: { text: (m.reasoning?.text ?? '') + reasoning, tokens: thinking.tokens, ms: thinking.ms } } : {}),
      }));
    };
    let finished = false;
    const finish = async (stats: ReplyStats | undefined): Promise<void> => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      if (partialTimer) clearTimeout(partialTimer);
      window.removeEventListener('pagehide', onPageHide);
      flush();
      const done = patchMessage(reply.id, (m) => {
        const next = stats ? { ...m, stats } : { ...m };
        if (next.reasoning) {
          const text = next.reasoning.text.trim();
          if (!text) delete next.reasoning;
          else next.reasoning = { text, tokens: stats?.reasoningTokens || thinking.tokens, ms: stats?.reasoningTokens ? (stats.reasoningMs ?? thinking.ms) : thinking.ms };
        }
        return next;
      });
      set({ streaming: null });
      if (done) await save(done);
    };

    await new Promise<void>((resolve) => {
      const onEvent = (ev: GenerationEvent): void => {
        switch (ev.kind) {
          case 'prompt':
            // Kept with the reply (and saved with it), so "Show prompt" survives a reload.
            patchMessage(reply.id, (m) => ({ ...m, prompt: { text: ev.text, tokens: ev.tokens.length, templateName: ev.templateName } }));
            // A template that passed a limit: said once per reply, on the chat's notice line.
            if (ev.notice) set({ notice: ev.notice });
            // The context policy left earlier turns out of this prompt: said, and shown by the gauge.
            set({ dropped: ev.dropped ?? 0 });
            if (ev.dropped) set({ notice: `The conversation is longer than the context: ${ev.dropped} earlier message${ev.dropped === 1 ? ' was' : 's were'} left out of this prompt (${POLICY_LABEL[request.contextPolicy]}).` });
            break;
          case 'token': {
            const now = performance.now();
            if (thinking.tokens === 0 && !thinking.answered) thinking.started = now;
            if (ev.reasoning) thinking.seen = true;
            if (ev.text) thinking.answered = true;
            if (!thinking.answered) {
              thinking.tokens++;
              thinking.ms = now - thinking.started;
            }
            pending += ev.text;
            pendingReasoning += ev.reasoning;
            if (ev.logprobs && ev.text) pendingTokens.push(storedToken(ev.id, ev.text, ev.top, ev.logprobs));
            timer ??= setTimeout(flush, 40);
            break;
          }
          case 'done':
            set({ context: { used: ev.contextUsed, size: ev.contextSize }, ...(ev.profile ? { profile: ev.profile } : {}) });
            if (ev.stats.stopReason === 'context') set({ notice: `The context is full (${ev.contextUsed} of ${ev.contextSize} tokens). Start a new chat, or load the model with a larger context in Settings.` });
            void finish(ev.stats).then(resolve);
            break;
          case 'error': {
            if (ev.error.code === 'GPU_LOST') useEngine.setState({ gpuLost: true });
            if (ev.error.name === 'ContextFullError' || ev.error.code === 'CONTEXT_FULL') set({ notice: ev.error.message });
            // A crash is told once, by the engine line with its Reload button.
            else if (ev.error.name !== 'CancelledError' && ev.error.code !== 'ENGINE_CRASHED') set({ error: ev.error.message.split('\n')[0] });
            void finish(undefined).then(resolve);
            break;
          }
        }
      };
      try {
        const handle = api().generate(request, onEvent);
        set((s) => (s.streaming?.messageId === reply.id ? { streaming: { ...s.streaming, handle } } : {}));
        // Stop was pressed before the handle existed.
        if (get().streaming?.stopping) handle.cancel();
      } catch (err) {
        set({ error: errorLine(err) });
        void finish(undefined).then(resolve);
      }
      // If the engine never answers a Stop (it crashed), end the reply here and keep its text.
      const unsub = useChat.subscribe((s) => {
        if (finished) {
          unsub();
          return;
        }
        if (s.streaming?.messageId === reply.id && s.streaming.stopping) {
          unsub();
          setTimeout(() => void finish(undefined).then(resolve), 3000);
        }
      });
      const unsubEngine = useEngine.subscribe((e) => {
        if (finished) {
          unsubEngine();
          return;
        }
        if (e.state.status === 'crashed') {
          unsubEngine();
          void finish(undefined).then(resolve);
        }
      });
    });
  }

  return {
    chats: [],
    chat: null,
    streaming: null,
    context: null,
    dropped: 0,
    profile: null,
    notice: null,
    error: null,

    async init() {
      try {
        const chats = (await api().chats.list()).sort((a, b) => b.updatedAt - a.updatedAt);
        set({ chats });
        const want = lastChat();
        const pick = chats.find((c) => c.id === want) ?? chats[0];
        if (pick) await get().select(pick.id);
      } catch (err) {
        set({ error: errorLine(err) });
      }
    },

    async select(id) {
      if (get().streaming) get().stop();
      try {
        const chat = await api().chats.get({ id });
        rememberPrompts(chat);
        set({ chat, notice: null, error: null, context: null, dropped: 0 });
        rememberChat(id);
        void get().countContext();
      } catch (err) {
        set({ error: errorLine(err) });
      }
    },

    async newChat() {
      if (get().streaming) get().stop();
      try {
        const systemPrompt = useSettings.getState().settings?.systemPrompt ?? '';
        const chat = await api().chats.create({ title: NEW_CHAT_TITLE, systemPrompt });
        set((s) => ({ chat, chats: [{ id: chat.id, title: chat.title, updatedAt: chat.updatedAt, messageCount: 0 }, ...s.chats], notice: null, error: null, context: null, dropped: 0 }));
        rememberChat(chat.id);
      } catch (err) {
        set({ error: errorLine(err) });
      }
    },

    async rename(id, title) {
      const t = title.trim();
      if (!t) return;
      try {
        const summary = await api().chats.rename({ id, title: t });
        set((s) => ({ chats: s.chats.map((c) => (c.id === id ? summary : c)), chat: s.chat?.id === id ? { ...s.chat, title: summary.title } : s.chat }));
      } catch (err) {
        set({ error: errorLine(err) });
      }
    },

    async remove(id) {
      if (get().chat?.id === id && get().streaming) get().stop();
      try {
        await api().chats.delete({ id });
        const chats = get().chats.filter((c) => c.id !== id);
        set({ chats });
        if (get().chat?.id === id) {
          set({ chat: null, context: null });
          rememberChat(null);
          if (chats[0]) await get().select(chats[0].id);
        }
      } catch (err) {
        set({ error: errorLine(err) });
      }
    },

    async importChat(text) {
      try {
        const summary = await api().chats.import({ text });
        set((s) => ({ chats: [summary, ...s.chats.filter((c) => c.id !== summary.id)] }));
        await get().select(summary.id);
      } catch (err) {
        set({ error: errorLine(err) });
      }
    },

    async setSystemPrompt(text) {
      const chat = get().chat;
      if (!chat || chat.systemPrompt === text) return;
      const next = { ...chat, systemPrompt: text, updatedAt: Date.now() };
      set({ chat: next });
      await save(next);
    },

    async send(text) {
      const content = text.trim();
      if (!content || get().streaming) return;
      if (!get().chat) await get().newChat();
      const chat = get().chat;
      if (!chat) return;
      const user: StoredMessage = { id: newId(), role: 'user', content, createdAt: Date.now() };
      const title = chat.messages.length === 0 && chat.title === NEW_CHAT_TITLE ? titleFrom(content) : chat.title;
      const next = { ...chat, title, updatedAt: Date.now(), messages: [...chat.messages, user] };
      set({ chat: next });
      await save(next);
      await generate();
    },

    stop() {
      const s = get().streaming;
      if (!s || s.stopping) return;
      set({ streaming: { ...s, stopping: true } });
      s.handle?.cancel();
    },

    async branch(messageId, index, alt) {
      const chat = get().chat;
      if (!chat || get().streaming) return;
      const i = chat.messages.findIndex((m) => m.id === messageId);
      const old = chat.messages[i];
      if (i < 0 || old.role !== 'assistant' || !old.tokens || index >= old.tokens.length) return;
      // The reply cut before token `index`, the alternative put there; the engine continues.
      const kept = old.tokens.slice(0, index);
      const chosen = old.tokens[index].alts.find((a) => a.t === alt) ?? { t: alt, p: 0, lp: storedLp(-Infinity) };
      const tokens = [...kept, { t: alt, p: chosen.p, lp: chosen.lp, alts: old.tokens[index].alts }];
      const next = { ...chat, updatedAt: Date.now(), messages: chat.messages.slice(0, i) };
      set({ chat: next });
      await save(next);
      await generate({ content: tokens.map((t) => t.t).join(''), tokens }, keptVersions(old));
    },

    async regenerate() {
      const chat = get().chat;
      if (!chat || get().streaming) return;
      let end = chat.messages.length;
      while (end > 0 && chat.messages[end - 1].role === 'assistant') end--;
      if (end === 0) return;
      const old = chat.messages[end];
      const next = { ...chat, updatedAt: Date.now(), messages: chat.messages.slice(0, end) };
      set({ chat: next });
      await save(next);
      await generate(undefined, old?.role === 'assistant' ? keptVersions(old) : undefined);
    },

    async editAndResend(messageId, text) {
      const chat = get().chat;
      const content = text.trim();
      if (!chat || !content || get().streaming) return;
      const i = chat.messages.findIndex((m) => m.id === messageId);
      if (i < 0 || chat.messages[i].role !== 'user') return;
      const edited = { ...chat.messages[i], content, createdAt: Date.now() };
      const next = { ...chat, updatedAt: Date.now(), messages: [...chat.messages.slice(0, i), edited] };
      set({ chat: next });
      await save(next);
      await generate();
    },

    async countContext() {
      const chat = get().chat;
      const model = useApp.getState().model;
      if (!chat || !model || !engineHas(useEngine.getState().state, model.entry.id)) return;
      try {
        const r = await api().engine.countTokens({ messages: requestMessages(chat) });
        if (get().chat?.id === chat.id) set({ context: { used: r.tokens, size: r.contextSize } });
      } catch {
        // The gauge is a hint; it stays empty when counting fails.
      }
    },
  };
});
