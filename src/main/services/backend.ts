// Everything behind `window.pantheon`, minus the transport: one handler per request channel of the
// contract, and the events. Electron main (ipcMain.handle) and the dev harness (WebSocket) both
// serve this same object, so the page sees the same behaviour in the app and in a browser.

import { mkdirSync } from 'node:fs';
import { basename } from 'node:path';
import type {
  Events, EventChannel, GenerateRequest, GenerationEvent, GenerationHandle, ModelCompareView, OpenedModel, RequestChannel, RequestOf, ResponseOf,
  TensorStatsView,
} from '../../shared/contract.js';
import { UsageError } from '../../shared/errors.js';
import { ChatStore } from './chat-store.js';
import { EngineSupervisor, type EngineTransport } from './engine-supervisor.js';
import { LibraryService } from './library.js';
import { InspectJobs } from './inspect-jobs.js';
import { RemoteService, type SecretStore } from './remotes.js';
import type { Logger } from './log.js';
import { SettingsStore } from './settings.js';
import { validateRequest } from '../../shared/requests.js';

/** What differs between the Electron app and the browser harness. */
export interface Platform {
  harness: boolean;
  version: string;
  /** A native folder picker; null when cancelled. */
  chooseFolder(): Promise<string | null>;
  /** A native open dialog filtered to .gguf; null when cancelled. */
  chooseModelFile(): Promise<string | null>;
  /** The OS's secret store for remote servers' API keys; null where there is none (harness). */
  secrets?: SecretStore | null;
}

export interface BackendOptions {
  userData: string;
  /** The bundled demo model, or null if the build has none. */
  demoPath: string | null;
  transport: EngineTransport;
  platform: Platform;
  log: Logger;
}

export type Handlers = { [C in RequestChannel]: (request: RequestOf<C>) => Promise<ResponseOf<C>> };
type EventListener = <E extends EventChannel>(event: E, payload: Events[E]) => void;

export class Backend {
  readonly library: LibraryService;
  readonly chats: ChatStore;
  readonly settings: SettingsStore;
  readonly engine: EngineSupervisor;
  readonly handlers: Handlers;
  readonly inspect = new InspectJobs();
  readonly remotes: RemoteService;
  /** The model the page has open; its header stays in the header worker (metadata slices). */
  private opened: OpenedModel | null = null;
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly opts: BackendOptions) {
    mkdirSync(opts.userData, { recursive: true });
    this.library = new LibraryService(opts.userData, opts.demoPath, opts.log);
    this.chats = new ChatStore(opts.userData, opts.log);
    this.settings = new SettingsStore(opts.userData, opts.log);
    this.engine = new EngineSupervisor(opts.transport, opts.log);
    this.remotes = new RemoteService(opts.userData, opts.platform.secrets ?? null, opts.log);
    this.engine.onState((s) => this.emit('engine:state', s));
    this.engine.onServer((s) => this.emit('server:state', s));
    this.library.onChange((lib) => this.emit('library:changed', lib));
    this.handlers = this.makeHandlers();
  }

  /** Read persisted state; the models folder is scanned in the background. */
  async init(): Promise<void> {
    await this.library.load();
    await this.remotes.load();
    void this.remotes.refreshAll();
    const s = await this.settings.load();
    if (s.modelsFolder) void this.library.setFolder(s.modelsFolder).catch((err) => this.opts.log(`library: scan failed: ${(err as Error).message}`));
  }

  /**
   * Lines for the user about damaged files moved aside at startup (settings, chats), each given
   * once: the caller shows them (Electron: a message box; harness: its console).
   */
  async takeNotices(): Promise<string[]> {
    await this.chats.list(); // finds damaged chat files before the page asks
    const out = [...(this.settings.notice ? [this.settings.notice] : []), ...this.chats.notices.splice(0)];
    this.settings.notice = null;
    return out;
  }

  onEvent(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit<E extends EventChannel>(event: E, payload: Events[E]): void {
    for (const l of this.listeners) l(event, payload);
  }

  /** Validate an untrusted payload, then run the channel's handler. */
  handle<C extends RequestChannel>(channel: C, payload: unknown): Promise<ResponseOf<C>> {
    let request: RequestOf<C>;
    try {
      request = validateRequest(channel, payload);
    } catch (err) {
      return Promise.reject(err);
    }
    return (this.handlers[channel] as (r: RequestOf<C>) => Promise<ResponseOf<C>>)(request);
  }

  /** Generation over the supervisor's channel (the harness; Electron uses a brokered port). */
  generate(request: GenerateRequest, onEvent: (e: GenerationEvent) => void): GenerationHandle {
    return this.engine.generate(request, onEvent);
  }

  /**
   * Open a file from outside the page (drop, command line, OS file association, menu): it must be
   * an existing .gguf file; it joins the recent list. `announce` sends 'model:opened' to the page.
   */
  async openPath(path: string, announce = false): Promise<OpenedModel> {
    const abs = await this.library.checkModelPath(path);
    const view = await this.library.headers.open(abs);
    const entry = await this.library.addRecent(abs);
    const model: OpenedModel = { entry, ...view };
    this.opened = model;
    if (announce) this.emit('model:opened', model);
    return model;
  }

  private async openEntry(id: string): Promise<OpenedModel> {
    const entry = await this.library.find(id);
    if (entry.source === 'demo') {
      const model: OpenedModel = { entry, ...(await this.library.headers.open(entry.path)) };
      this.opened = model;
      return model;
    }
    return this.openPath(entry.path);
  }

  private makeHandlers(): Handlers {
    const { platform } = this.opts;
    return {
      'app:info': async () => ({ version: platform.version, platform: process.platform, harness: platform.harness }),
      'library:get': () => this.library.get(),
      'library:chooseFolder': async () => {
        const folder = await platform.chooseFolder();
        if (folder === null) return this.library.get();
        await this.settings.set({ modelsFolder: folder });
        return this.library.setFolder(folder);
      },
      'library:forgetRecent': ({ id }) => this.library.forgetRecent(id),
      'model:openDialog': async () => {
        const path = await platform.chooseModelFile();
        return path === null ? null : this.openPath(path);
      },
      'model:open': ({ id }) => this.openEntry(id),
      'model:openDropped': ({ path }) => this.openPath(path),
      'model:close': async () => {
        this.opened = null;
      },
      'model:metaArray': async ({ key, offset, limit, query }) => {
        if (!this.opened) throw new UsageError('No model is open; open one first.');
        return this.library.headers.metaArray(this.opened.entry.path, key, offset, limit, query);
      },
      'model:tensorStats': async ({ name }) => {
        if (!this.opened) throw new UsageError('No model is open; open one first.');
        const path = this.opened.entry.path;
        return this.inspect.run<TensorStatsView>({ kind: 'stats', path, name, bins: 64, heatmap: { rows: 64, cols: 128 } }, (done, total) =>
          this.emit('model:inspectProgress', { job: 'stats', done, total }));
      },
      'model:compare': async ({ id }) => {
        if (!this.opened) throw new UsageError('No model is open; open one first.');
        const path = this.opened.entry.path;
        const other = id !== undefined ? (await this.library.find(id)).path : await platform.chooseModelFile();
        if (other === null) return null;
        const d = await this.inspect.run<Omit<ModelCompareView, 'other'>>({ kind: 'compare', path, other }, (done, total) =>
          this.emit('model:inspectProgress', { job: 'compare', done, total }));
        return { other: { fileName: basename(other), path: other }, ...d };
      },
      'model:cancelInspect': async () => this.inspect.cancel(),
      'engine:load': async ({ id, contextSize, threads }) => {
        const s = this.settings.get();
        const remote = this.remotes.target(id);
        if (remote) {
          const { serverId: _server, ...target } = remote;
          return this.engine.load({ modelId: id, modelName: target.model, path: '', contextSize: contextSize ?? s.contextSize, threads: 0, remote: target });
        }
        const entry = await this.library.find(id);
        return this.engine.load({
          modelId: entry.id,
          modelName: entry.name ?? entry.fileName,
          path: entry.path,
          contextSize: contextSize ?? s.contextSize,
          threads: threads ?? s.threads,
          backend: s.computeBackend ?? 'auto',
          ...(s.computeBackend === 'gpu' ? { gpuLayers: s.gpuLayers ?? 'auto' } : {}),
        });
      },
      'engine:cancelLoad': () => this.engine.cancelLoad(),
      'engine:unload': () => this.engine.unload(),
      'engine:state': async () => this.engine.current,
      'engine:gpuAdapter': async () => ({ adapter: await this.engine.gpuAdapter() }),
      'engine:countTokens': ({ messages }) => this.engine.countTokens(messages),
      'remote:list': async () => this.remotes.list(),
      'remote:add': ({ baseUrl, apiKey }) => this.remotes.add(baseUrl, apiKey),
      'remote:remove': ({ id }) => this.remotes.remove(id),
      'remote:refresh': ({ id }) => this.remotes.refresh(id),
      'remote:open': async ({ id, model }) => {
        const opened = this.remotes.openedModel(this.remotes.modelEntryId(id, model));
        this.opened = null;
        return opened;
      },
      'server:start': ({ port, apiKey }) => this.engine.serverStart(port, apiKey),
      'server:stop': () => this.engine.serverStop(),
      'server:state': async () => this.engine.server,
      'chats:list': () => this.chats.list(),
      'chats:get': ({ id }) => this.chats.get(id),
      'chats:create': (req) => this.chats.create(req ?? {}),
      'chats:save': ({ chat, keepPrompts }) => this.chats.save(chat, keepPrompts),
      'chats:rename': ({ id, title }) => this.chats.rename(id, title),
      'chats:delete': ({ id }) => this.chats.delete(id),
      'chats:import': ({ text }) => this.chats.importChat(text),
      'settings:get': async () => this.settings.get(),
      'settings:set': ({ settings }) => this.settings.set(settings),
    };
  }

  async dispose(): Promise<void> {
    this.listeners.clear();
    await Promise.all([this.engine.dispose(), this.library.headers.close(), this.inspect.close()]);
  }
}
