// An in-page fake of PantheonApi for the renderer's component tests (never shipped). It runs inside
// the page (page.addInitScript), so it is one self-contained function: chats persist in localStorage
// so a reload finds them; replies stream word by word on a timer; Stop ends within one word. A reply
// can be made to think first (fakeHooks.thinkNext), as a reasoning model's does: its reasoning
// streams as the 'reasoning' part of the token events, then the answer.

import type { Chat, EngineState, GenerationEvent, Library, MetaValue, OpenedModel, PantheonApi, Settings } from '../../src/shared/contract.js';

export interface FakeOptions {
  model: OpenedModel;
  arrays: Record<string, MetaValue[]>;
  /** Milliseconds between streamed words. */
  tokenDelayMs: number;
  reply: string;
}

export function installFakeApi(opts: FakeOptions): void {
  type Listener = (payload: unknown) => void;
  const listeners = new Map<string, Set<Listener>>();
  const emit = (event: string, payload: unknown): void => listeners.get(event)?.forEach((fn) => fn(payload));
  const fail = (name: string, code: string, message: string): Error => Object.assign(new Error(message), { name, code });
  const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

  const store = {
    chats(): Record<string, Chat> {
      return JSON.parse(localStorage.getItem('fake.chats') ?? '{}') as Record<string, Chat>;
    },
    put(all: Record<string, Chat>): void {
      localStorage.setItem('fake.chats', JSON.stringify(all));
    },
  };
  let settings: Settings = JSON.parse(localStorage.getItem('fake.settings') ?? 'null') ?? {
    sampling: { temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1.1, presencePenalty: 0, frequencyPenalty: 0, penaltyLastN: 64, seed: -1, maxTokens: 256, stop: [] },
    systemPrompt: '',
    contextSize: 512,
    threads: 0,
    computeBackend: 'auto',
    theme: 'system',
    modelsFolder: null,
  };
  let engine: EngineState = { status: 'idle' };
  // what the host's backend-choice.ts picks (tested in tests/webgpu/device-lost.test.ts), and on
  // the GPU the blocks there as session.ts's offload gives them (tests/webgpu/offload.test.ts)
  const onGpu = (): boolean => settings.computeBackend === 'gpu' && !gpuLost;
  const blocks = (): number => {
    const arch = opts.model.metadata.find((e) => e.key === 'general.architecture')?.value;
    const n = opts.model.metadata.find((e) => e.key === `${String(arch)}.block_count`)?.value;
    return typeof n === 'number' ? n : 1;
  };
  const gpuSplit = () => ({ adapter: 'fake adapter', layers: settings.gpuLayers === undefined || settings.gpuLayers === 'auto' ? blocks() : Math.min(settings.gpuLayers, blocks()), of: blocks() });
  const fakeBackend = (): string => (settings.computeBackend !== 'gpu' ? 'fake' : gpuLost ? 'wasm-simd (on the CPU: the GPU was lost; restart Pantheon to try it again)' : `webgpu (fake adapter) ${gpuSplit().layers}/${blocks()} layers + fake`);
  const setEngine = (s: EngineState): void => {
    engine = s;
    emit('engine:state', s);
  };
  const library = (): Library => ({ demo: opts.model.entry, recent: [], folder: null, folderModels: [], scanning: false });
  const summary = (c: Chat) => ({ id: c.id, title: c.title, updatedAt: c.updatedAt, messageCount: c.messages.length });
  const chatOf = (id: string): Chat => {
    const c = store.chats()[id];
    if (!c) throw fail('PantheonError', 'NOT_FOUND', `No chat with id ${id}.`);
    return c;
  };

  // Test hooks: make the engine crash, lose the GPU mid-reply, make the next reply end on a full
  // context, or think first.
  let running: { fail(message: string, code?: string): void } | null = null;
  let gpuLost = false;
  let nextStop: 'context' | null = null;
  let nextThought: { reasoning: string; answer: string } | null = null;
  const hooks = {
    thinkNext(reasoning: string, answer: string): void {
      nextThought = { reasoning, answer };
    },
    crash(): void {
      running?.fail('The engine process crashed.');
      setEngine({ status: 'crashed', modelId: opts.model.entry.id, reason: 'crashed', message: 'The engine stopped unexpectedly (it crashed); your messages are kept. Reload it to continue.' });
    },
    loseGpu(): void {
      gpuLost = true;
      running?.fail('the GPU device was lost: simulated; reload the model to continue on the CPU', 'GPU_LOST');
    },
    fillContext(): void {
      nextStop = 'context';
    },
  };
  (window as unknown as { fakeHooks: typeof hooks }).fakeHooks = hooks;

  const api = {
    app: { info: async () => ({ version: 'fake', platform: 'browser', harness: true }) },
    library: {
      get: async () => library(),
      chooseFolder: async () => {
        throw fail('UsageError', 'USAGE', 'Choosing a folder is not available in the browser harness.');
      },
      forgetRecent: async () => library(),
    },
    model: {
      openDialog: async () => {
        throw fail('UsageError', 'USAGE', 'The file dialog is not available in the browser harness; drop a .gguf file instead.');
      },
      open: async ({ id }: { id: string }) => {
        if (id !== opts.model.entry.id) throw fail('PantheonError', 'NOT_FOUND', `No model with id ${id}.`);
        return opts.model;
      },
      openDropped: async () => opts.model,
      close: async () => undefined,
      // Statistics need the file (tested against the harness: inspect.e2e.test.ts): one line here.
      tensorStats: async () => {
        throw fail('UsageError', 'USAGE', 'The fake API computes no statistics.');
      },
      compare: async () => null,
      cancelInspect: async () => undefined,
      metaArray: async ({ key, offset, limit, query }: { key: string; offset: number; limit: number; query?: string }) => {
        const all = opts.arrays[key];
        if (!all) throw fail('PantheonError', 'NOT_FOUND', `No array metadata key ${key}.`);
        let items = all.map((value, index) => ({ index, value }));
        if (query) {
          const q = query.trim();
          const n = /^#?(\d+)$/.exec(q);
          items = n ? items.filter((i) => i.index === Number(n[1])) : items.filter((i) => String(i.value).includes(q));
        }
        return { key, total: all.length, matches: items.length, items: items.slice(offset, offset + limit) };
      },
    },
    engine: {
      load: async ({ id }: { id: string }) => {
        const total = opts.model.entry.fileSize;
        for (let i = 1; i <= 4; i++) {
          setEngine({ status: 'loading', modelId: id, loadedBytes: (total * i) / 4, totalBytes: total });
          await delay(30);
        }
        setEngine({ status: 'ready', modelId: id, modelName: opts.model.entry.name ?? opts.model.entry.fileName, contextSize: settings.contextSize, threads: 2, backend: fakeBackend(), memoryBytes: total, loadMs: 120, ...(onGpu() ? { gpu: gpuSplit() } : {}) });
        return engine;
      },
      cancelLoad: async () => (setEngine({ status: 'idle' }), engine),
      unload: async () => (setEngine({ status: 'idle' }), engine),
      state: async () => engine,
      gpuAdapter: async () => (await delay(30), { adapter: 'fake adapter' }),
      countTokens: async ({ messages }: { messages: { content: string }[] }) => ({ tokens: messages.reduce((a, m) => a + m.content.split(/\s+/).length + 4, 0), contextSize: settings.contextSize }),
    },
    chats: {
      list: async () => Object.values(store.chats()).map(summary),
      get: async ({ id }: { id: string }) => chatOf(id),
      create: async ({ title, systemPrompt }: { title?: string; systemPrompt?: string }) => {
        const now = Date.now();
        const c: Chat = { id: crypto.randomUUID(), title: title ?? 'New chat', createdAt: now, updatedAt: now, systemPrompt: systemPrompt ?? '', messages: [] };
        const all = store.chats();
        all[c.id] = c;
        store.put(all);
        return c;
      },
      save: async ({ chat, keepPrompts }: { chat: Chat; keepPrompts?: string[] }) => {
        const all = store.chats();
        // As the real store: replies named in keepPrompts keep the prompt stored with them.
        const stored = new Map((all[chat.id]?.messages ?? []).map((m) => [m.id, m.prompt]));
        const keep = new Set(keepPrompts ?? []);
        all[chat.id] = { ...chat, messages: chat.messages.map((m) => (keep.has(m.id) && !m.prompt && stored.get(m.id) ? { ...m, prompt: stored.get(m.id) } : m)) };
        store.put(all);
        return summary(all[chat.id]);
      },
      rename: async ({ id, title }: { id: string; title: string }) => {
        const all = store.chats();
        all[id] = { ...chatOf(id), title };
        store.put(all);
        return summary(all[id]);
      },
      delete: async ({ id }: { id: string }) => {
        const all = store.chats();
        delete all[id];
        store.put(all);
      },
    },
    // No remote servers here (the real ones are tested against the harness: remote.e2e.test.ts).
    remote: {
      list: async () => [],
      add: async () => { throw new Error('The fake API has no remote servers.'); },
    },
    settings: {
      get: async () => settings,
      set: async ({ settings: patch }: { settings: Partial<Settings> }) => {
        settings = { ...settings, ...patch };
        localStorage.setItem('fake.settings', JSON.stringify(settings));
        return settings;
      },
    },
    on(event: string, fn: Listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(fn);
      return () => set.delete(fn);
    },
    generate(request: { messages: { role: string; content: string }[] }, onEvent: (e: GenerationEvent) => void) {
      let cancelled = false;
      let failed: string | null = null;
      let failCode = 'ENGINE_CRASHED';
      running = { fail: (m, code = 'ENGINE_CRASHED') => void ((failed = m), (failCode = code)) };
      const stopAs = nextStop;
      nextStop = null;
      const thought = nextThought;
      nextThought = null;
      // Each token: [reasoning part, answer part].
      const words: [string, string][] = [
        ...(thought ? thought.reasoning.split(/(?<= )/).map((w): [string, string] => [w, '']) : []),
        ...(thought ? thought.answer : opts.reply).split(/(?<= )/).map((w): [string, string] => ['', w]),
      ];
      const thinkTokens = thought ? words.findIndex(([, a]) => a !== '') : 0;
      // The prompt as a template renders it: a reply's answer (content) only, never its reasoning.
      const text = request.messages.map((m) => `<|${m.role}|>${m.content}`).join('\n') + '\n<|assistant|>';
      const t0 = performance.now();
      void (async () => {
        await delay(10);
        onEvent({ kind: 'prompt', text, tokens: text.split(/\s+/).map((_, i) => i), templateName: 'fake' });
        let n = 0;
        let thinkMs = 0;
        const tGen = performance.now();
        for (const [r, w] of stopAs === 'context' ? words.slice(0, 5) : words) {
          if (cancelled || failed) break;
          await delay(opts.tokenDelayMs);
          if (cancelled || failed) break;
          onEvent({ kind: 'token', id: n++, text: w, reasoning: r, top: [] });
          if (n <= thinkTokens) thinkMs = performance.now() - tGen;
        }
        running = null;
        if (failed) {
          onEvent({ kind: 'error', error: { name: 'EngineError', code: failCode, message: failed } });
          return;
        }
        const ms = performance.now() - t0;
        const size = settings.contextSize;
        const used = stopAs === 'context' ? size : 10 + n;
        onEvent({ kind: 'done', stats: { promptTokens: 10, generatedTokens: n, ttftMs: opts.tokenDelayMs, tokensPerS: (n * 1000) / ms, promptTokensPerS: 1000, stopReason: cancelled ? 'cancelled' : (stopAs ?? 'eos'), reasoningTokens: Math.min(n, thinkTokens), reasoningMs: thinkMs }, contextUsed: used, contextSize: size });
      })();
      return { cancel: () => void (cancelled = true) };
    },
    async openDroppedFile(file: File) {
      if (!/\.gguf$/i.test(file.name)) throw fail('UsageError', 'USAGE', `${file.name} is not a .gguf model file`);
      const head = new Uint8Array(await file.slice(0, 4).arrayBuffer());
      if (String.fromCharCode(...head) !== 'GGUF') throw fail('GgufError', 'GGUF_BAD_MAGIC', `${file.name} is not a GGUF file: it does not start with "GGUF"`);
      return { ...opts.model, entry: { ...opts.model.entry, id: 'dropped', fileName: file.name, source: 'recent' as const } };
    },
  };
  (window as unknown as { pantheon: PantheonApi }).pantheon = api as unknown as PantheonApi;
}
