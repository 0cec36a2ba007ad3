// The engine supervisor: one small class that owns the engine host process for the app
// (CONVENTIONS §3, after VS Code's utilityProcess.ts). It is transport-agnostic: Electron main
// gives it a transport over utilityProcess.fork (src/main/engine-transport.ts), the dev harness and
// the tests one over child_process.fork (node-engine-transport.ts).
//
// State machine (EngineState in the contract):
//   idle --load--> loading --loaded--> ready <--busy/idle--> busy
//   loading --cancel--> idle;  loading --fails--> error;  any --process dies--> crashed
//   crashed/error --load (the Reload button)--> loading ...
// Each load starts a fresh process, so a crash, an unload or a new model always begins clean and
// the operating system gets every byte of the old model back.

import { SERVER_LOG_SIZE, type ComputeBackend, type GpuLayersSetting, type EngineExitReason, type EngineState, type GenerateRequest, type GenerationEvent, type GenerationHandle, type RequestMessage, type ServerState } from '../../shared/contract.js';
import { CancelledError, EngineError, deserializeError, type PantheonError } from '../../shared/errors.js';
import type { FromHost, LoadedInfo, StreamReply, ToHost } from '../../engine/host/protocol.js';
import type { RemoteTarget } from '../../engine/host/remote-model.js';
import { StreamClient } from '../../shared/stream-client.js';
import { DEFAULT_HEARTBEAT, Heartbeat, systemClock, type Clock, type HeartbeatOptions } from './heartbeat.js';
import type { Logger } from './log.js';

// ---------------------------------------------------------------------------------------------
// Transport

export interface HostExit {
  reason: EngineExitReason;
  /** Exit code, or null when a signal ended it. */
  code: number | null;
  /** A few words for the message: "signal SIGSEGV", "code 3", the launch error. */
  detail: string;
}

export interface HostProcessEvents {
  message(msg: FromHost | StreamReply): void;
  exit(exit: HostExit): void;
}

/** One running host process, as a transport started it. */
export interface HostProcess {
  readonly pid: number | undefined;
  send(msg: ToHost): void;
  /** End it now (SIGKILL or the platform's equivalent). */
  kill(): void;
  /** Electron only: transfer a MessagePortMain to the host as a new stream channel. */
  attachPort?(port: unknown): void;
}

export interface EngineTransport {
  spawn(events: HostProcessEvents): HostProcess;
}

// ---------------------------------------------------------------------------------------------
// Supervisor

export interface LoadParams {
  modelId: string;
  modelName: string;
  path: string;
  contextSize: number;
  threads: number;
  /** Where the engine computes (Settings.computeBackend); default 'auto'. */
  backend?: ComputeBackend;
  /** With backend 'gpu': the blocks on the GPU (Settings.gpuLayers); default 'auto'. */
  gpuLayers?: GpuLayersSetting;
  /** A model on a remote server instead of the file at `path`. */
  remote?: RemoteTarget;
}

const SHUTDOWN_GRACE_MS = 2000;
/** How long the GPU adapter query may take (Dawn's start, a device and its feature test). */
const GPU_ADAPTER_MS = 20_000;
const CANCEL_GRACE_MS = 3000;

interface Pending<T> {
  resolve(v: T): void;
  reject(e: unknown): void;
}

type Activity = 'none' | 'starting' | 'loading' | 'running';

export class EngineSupervisor {
  private state: EngineState = { status: 'idle' };
  private proc: HostProcess | null = null;
  private activity: Activity = 'none';
  private params: LoadParams | null = null;
  private info: LoadedInfo | null = null;
  private pendingLoad: Pending<EngineState> | null = null;
  private readonly counts = new Map<number, Pending<{ tokens: number; contextSize: number }>>();
  /** Generations over the control channel; ids shared with token counts and pings. */
  private readonly generations = new StreamClient<GenerateRequest>(() => this.nextId++);
  private readonly exitWaiters = new Set<() => void>();
  private readonly listeners = new Set<(s: EngineState) => void>();
  /** The local server (run by the host over its model): what the panel shows. */
  private serverState: ServerState = { running: false, url: null, port: 8080, apiKey: false, modelName: null, error: null, log: [] };
  private readonly serverListeners = new Set<(s: ServerState) => void>();
  private pendingServer: Pending<ServerState> | null = null;
  /** Processes we asked to go: their exit is not a crash. */
  private readonly expected = new WeakSet<HostProcess>();
  private queue: ToHost[] = [];
  private hostReady = false;
  private nextId = 1;
  private loadTicket = 0;
  /** The hang check of the current process. */
  private heartbeat: Heartbeat | null = null;
  /** Processes ended because they stopped answering: their exit is told as a hang. */
  private readonly hung = new WeakSet<HostProcess>();

  constructor(
    private readonly transport: EngineTransport,
    private readonly log: Logger,
    private readonly beat: HeartbeatOptions = DEFAULT_HEARTBEAT,
    private readonly clock: Clock = systemClock,
  ) {}

  get current(): EngineState {
    return this.state;
  }

  /** The host's process id while one runs (tests use it to kill the process). */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** The model of the last load (also after a crash: what Reload loads again). */
  get lastLoad(): LoadParams | null {
    return this.params;
  }

  onState(listener: (s: EngineState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get server(): ServerState {
    return this.serverState;
  }

  onServer(listener: (s: ServerState) => void): () => void {
    this.serverListeners.add(listener);
    return () => this.serverListeners.delete(listener);
  }

  private setServer(patch: Partial<ServerState>): void {
    this.serverState = { ...this.serverState, ...patch };
    for (const l of this.serverListeners) l(this.serverState);
  }

  /** The server stops with its process (an unload, a new load, a crash). */
  private serverGone(why: string | null): void {
    const p = this.pendingServer;
    this.pendingServer = null;
    if (this.serverState.running || p) this.setServer({ running: false, url: null, modelName: null, error: why });
    p?.resolve(this.serverState);
  }

  /** Serve the loaded model on 127.0.0.1:port; resolves with the state once it listens or failed. */
  serverStart(port: number, apiKey?: string): Promise<ServerState> {
    this.requireRunning();
    this.pendingServer?.resolve(this.serverState);
    this.setServer({ port, apiKey: apiKey !== undefined, error: null });
    return new Promise((resolve, reject) => {
      this.pendingServer = { resolve, reject };
      this.send({ kind: 'serverStart', port, ...(apiKey === undefined ? {} : { apiKey }) });
    });
  }

  serverStop(): Promise<ServerState> {
    if (!this.proc || this.activity !== 'running') {
      this.serverGone(null);
      return Promise.resolve(this.serverState);
    }
    this.pendingServer?.resolve(this.serverState);
    return new Promise((resolve, reject) => {
      this.pendingServer = { resolve, reject };
      this.send({ kind: 'serverStop' });
    });
  }

  private setState(s: EngineState): void {
    this.state = s;
    for (const l of this.listeners) l(s);
  }

  // ---- process lifetime ----------------------------------------------------------------------

  private spawn(): HostProcess {
    this.hostReady = false;
    this.queue = [];
    this.activity = 'starting';
    const proc: HostProcess = this.transport.spawn({
      message: (msg) => { if (this.proc === proc) this.onMessage(msg); },
      exit: (exit) => this.onExit(proc, exit),
    });
    this.proc = proc;
    this.startHeartbeat(proc);
    return proc;
  }

  private startHeartbeat(proc: HostProcess): void {
    this.stopHeartbeat();
    this.heartbeat = new Heartbeat(this.beat, this.clock, () => {
      if (this.proc === proc && this.hostReady) proc.send({ kind: 'ping', id: this.nextId++ });
    }, () => {
      if (this.proc !== proc) return;
      this.log(`engine: process ${proc.pid} has not answered for ${this.beat.timeoutMs} ms; ending it`);
      this.hung.add(proc);
      proc.kill();
    });
  }

  private stopHeartbeat(): void {
    this.heartbeat?.stop();
    this.heartbeat = null;
  }

  private send(msg: ToHost): void {
    if (!this.proc) return;
    if (this.hostReady) this.proc.send(msg);
    else this.queue.push(msg);
  }

  /** Resolves true when the current process has exited within `ms`, false when it is still up. */
  waitForExit(ms: number): Promise<boolean> {
    if (!this.proc) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.exitWaiters.delete(done);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.exitWaiters.delete(done);
        resolve(false);
      }, ms);
      this.exitWaiters.add(done);
    });
  }

  /** Ask the process to finish, wait for it, then kill it if it has not gone. */
  private async stopProcess(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    this.expected.add(proc);
    if (this.hostReady) proc.send({ kind: 'shutdown' });
    else proc.kill();
    if (!(await this.waitForExit(SHUTDOWN_GRACE_MS))) {
      this.log(`engine: process ${proc.pid} did not exit within ${SHUTDOWN_GRACE_MS} ms; killing it`);
      proc.kill();
      await this.waitForExit(SHUTDOWN_GRACE_MS);
    }
    if (this.proc === proc) this.forget();
  }

  private forget(): void {
    this.serverGone(null);
    this.stopHeartbeat();
    this.proc = null;
    this.hostReady = false;
    this.queue = [];
    this.activity = 'none';
    this.info = null;
  }

  private onExit(proc: HostProcess, exit: HostExit): void {
    for (const w of [...this.exitWaiters]) w();
    if (this.proc !== proc) return;
    const wasExpected = this.expected.has(proc);
    const activity = this.activity;
    this.forget();
    if (wasExpected) return;
    const model = this.params?.modelName ?? null;
    const message = this.hung.has(proc) ? hangMessage(this.beat.timeoutMs, activity, model) : crashMessage(exit, activity, model);
    this.log(`engine: process ${proc.pid} ended (${exit.reason}, ${exit.detail}) while ${activity}`);
    const error = new EngineError('ENGINE_CRASHED', message);
    this.failAll(error);
    this.setState({ status: 'crashed', modelId: this.params?.modelId ?? null, reason: exit.reason, message });
  }

  /**
   * Settle what the page still waits for when the process goes on purpose (a new load, an unload):
   * token counts reject and generations end with the error, so nothing hangs.
   */
  private settleRequests(error: PantheonError): void {
    for (const c of this.counts.values()) c.reject(error);
    this.counts.clear();
    this.generations.endAll(error);
  }

  private failAll(error: PantheonError): void {
    const load = this.pendingLoad;
    this.pendingLoad = null;
    load?.reject(error);
    for (const c of this.counts.values()) c.reject(error);
    this.counts.clear();
    this.generations.endAll(error);
  }

  // ---- host messages ---------------------------------------------------------------------------

  private onMessage(msg: FromHost | StreamReply): void {
    // Any message shows the host is alive, not just a pong (a busy host streams tokens).
    this.heartbeat?.answered();
    switch (msg.kind) {
      case 'pong':
        break;
      case 'ready': {
        this.hostReady = true;
        const q = this.queue;
        this.queue = [];
        for (const m of q) this.proc!.send(m);
        break;
      }
      case 'progress':
        if (this.activity === 'loading' && this.params) {
          this.setState({ status: 'loading', modelId: this.params.modelId, loadedBytes: msg.loadedBytes, totalBytes: msg.totalBytes });
        }
        break;
      case 'loaded': {
        this.activity = 'running';
        this.info = msg.info;
        const s = this.readyState();
        this.setState(s);
        const p = this.pendingLoad;
        this.pendingLoad = null;
        p?.resolve(s);
        break;
      }
      case 'loadFailed': {
        const err = deserializeError(msg.error);
        const p = this.pendingLoad;
        this.pendingLoad = null;
        void this.stopProcess();
        if (err instanceof CancelledError) {
          this.setState({ status: 'idle' });
          p?.resolve(this.state);
        } else {
          this.setState({ status: 'error', modelId: this.params?.modelId ?? null, error: msg.error });
          p?.reject(err);
        }
        break;
      }
      case 'unloaded':
        break;
      case 'serverState': {
        const p = this.pendingServer;
        this.pendingServer = null;
        this.setServer({ running: msg.url !== null, url: msg.url, modelName: msg.url !== null ? (this.params?.modelName ?? null) : null, error: msg.error ?? null });
        p?.resolve(this.serverState);
        break;
      }
      case 'serverRequest':
        this.setServer({ log: [...this.serverState.log, msg.entry].slice(-SERVER_LOG_SIZE) });
        break;
      case 'tokenCount':
        this.counts.get(msg.id)?.resolve({ tokens: msg.tokens, contextSize: msg.contextSize });
        this.counts.delete(msg.id);
        break;
      case 'tokenCountFailed':
        this.counts.get(msg.id)?.reject(deserializeError(msg.error));
        this.counts.delete(msg.id);
        break;
      case 'busy':
        if (this.info && this.params) this.setState({ status: 'busy', modelId: this.params.modelId, modelName: this.params.modelName, contextSize: this.info.contextSize });
        break;
      case 'idle':
        if (this.info && this.params) this.setState(this.readyState());
        break;
      case 'event':
        this.generations.deliver(msg.id, msg.event);
        break;
      case 'gpuAdapter': // (asked of a short-lived host: gpuAdapter())
        break;
    }
  }

  private readyState(): EngineState {
    const p = this.params!;
    const i = this.info!;
    return { status: 'ready', modelId: p.modelId, modelName: p.modelName, contextSize: i.contextSize, threads: i.threads, backend: i.backend, memoryBytes: i.memoryBytes, loadMs: i.loadMs, ...(i.gpu ? { gpu: i.gpu } : {}) };
  }

  // ---- requests --------------------------------------------------------------------------------

  /**
   * Load a model in a fresh process. Resolves with the ready state, or the idle state when the
   * load was cancelled; rejects with the load's error (the state is then 'error' or 'crashed').
   */
  async load(params: LoadParams): Promise<EngineState> {
    const ticket = ++this.loadTicket;
    this.params = params;
    this.setState({ status: 'loading', modelId: params.modelId, loadedBytes: 0, totalBytes: 0 });
    this.settleRequests(new CancelledError('A model is being loaded; the request was stopped.'));
    if (this.pendingLoad) await this.stopLoading();
    await this.stopProcess();
    // Cancelled (or replaced by a newer load) while the old process was stopping.
    if (ticket !== this.loadTicket) return this.state;
    this.spawn();
    this.activity = 'loading';
    const done = new Promise<EngineState>((resolve, reject) => { this.pendingLoad = { resolve, reject }; });
    this.send({ kind: 'load', path: params.path, contextSize: params.contextSize, threads: params.threads, ...(params.backend ? { backend: params.backend } : {}), ...(params.gpuLayers !== undefined ? { gpuLayers: params.gpuLayers } : {}), ...(params.remote ? { remote: params.remote } : {}) });
    return done;
  }

  /** Load the last model again (the Reload button after a crash). */
  reload(): Promise<EngineState> {
    if (!this.params) return Promise.reject(new EngineError('ENGINE_NO_MODEL', 'No model was loaded before; choose one to load.'));
    return this.load(this.params);
  }

  /** Cancel a load in progress; resolves with the idle state once the process has stopped loading. */
  async cancelLoad(): Promise<EngineState> {
    this.loadTicket++;
    if (this.pendingLoad) return this.stopLoading();
    if (this.state.status === 'loading') this.setState({ status: 'idle' });
    return this.state;
  }

  /** Ask the host to stop loading; end the process if it does not within the grace period. */
  private async stopLoading(): Promise<EngineState> {
    const p = this.pendingLoad!;
    const settled = new Promise<void>((resolve) => {
      this.pendingLoad = {
        resolve: (s) => { p.resolve(s); resolve(); },
        reject: (e) => { p.reject(e); resolve(); },
      };
    });
    this.send({ kind: 'cancelLoad' });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), CANCEL_GRACE_MS); });
    const outcome = await Promise.race([settled, late]);
    clearTimeout(timer);
    if (outcome === 'late') {
      // The host is stuck in code that does not look at the signal: end the process instead.
      this.log('engine: load did not stop within the grace period; stopping the process');
      const pending = this.pendingLoad;
      this.pendingLoad = null;
      await this.stopProcess();
      this.setState({ status: 'idle' });
      pending?.resolve(this.state);
    }
    return this.state;
  }

  /** Drop the model and end the process. */
  async unload(): Promise<EngineState> {
    if (this.pendingLoad || this.state.status === 'loading') await this.cancelLoad();
    this.settleRequests(new CancelledError('The model was unloaded.'));
    await this.stopProcess();
    this.setState({ status: 'idle' });
    return this.state;
  }

  private requireRunning(): void {
    if (this.activity !== 'running' || !this.proc) {
      const crashed = this.state.status === 'crashed';
      throw new EngineError('ENGINE_NOT_READY', crashed ? 'The engine stopped; press Reload to start it again.' : 'No model is loaded for chat; load one first.');
    }
  }

  /**
   * The WebGPU adapter a GPU load would take, by name, or null: none. The model's own when it runs
   * on the GPU; else a short-lived host process of its own opens a device and says (within
   * GPU_ADAPTER_MS, else null), so the engine's process and its state are not touched.
   */
  gpuAdapter(): Promise<string | null> {
    if (this.info?.gpu) return Promise.resolve(this.info.gpu.adapter);
    return new Promise((resolve) => {
      let done = false;
      let proc: HostProcess | null = null;
      let timer: ReturnType<typeof setTimeout> | null = null;
      const finish = (adapter: string | null, alive: boolean) => {
        if (done) return;
        done = true;
        if (timer) clearTimeout(timer);
        if (alive) proc?.send({ kind: 'shutdown' });
        resolve(adapter);
      };
      proc = this.transport.spawn({
        message: (msg) => {
          if (msg.kind === 'ready') proc?.send({ kind: 'gpuAdapter', id: 1 });
          else if (msg.kind === 'gpuAdapter') finish(msg.adapter, true);
        },
        exit: () => finish(null, false),
      });
      timer = setTimeout(() => {
        this.log(`engine: the GPU adapter query (process ${proc?.pid}) did not answer within ${GPU_ADAPTER_MS} ms`);
        proc?.kill();
        finish(null, false);
      }, GPU_ADAPTER_MS);
    });
  }

  async countTokens(messages: RequestMessage[]): Promise<{ tokens: number; contextSize: number }> {
    this.requireRunning();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.counts.set(id, { resolve, reject });
      this.send({ kind: 'countTokens', id, messages });
    });
  }

  /**
   * Generate over the control channel (the Node transport: harness and tests). Electron streams
   * over a brokered MessagePort instead (attachPort) and never calls this.
   */
  generate(request: GenerateRequest, onEvent: (e: GenerationEvent) => void): GenerationHandle {
    return this.generations.start(request, onEvent, () => {
      this.requireRunning();
      return {
        start: (id, req) => this.send({ kind: 'generate', id, request: req }),
        cancel: (id) => this.send({ kind: 'cancel', id }),
      };
    });
  }

  /**
   * Hand a stream channel to the running host (Electron: one end of a MessageChannelMain whose other
   * end goes to the window). False when no model is running or the transport has no ports.
   */
  attachPort(port: unknown): boolean {
    if (!this.proc?.attachPort || this.activity !== 'running') return false;
    this.proc.attachPort(port);
    return true;
  }

  /** End everything (app quit, window closed). */
  async dispose(): Promise<void> {
    await this.stopProcess();
    this.listeners.clear();
  }
}

// ---------------------------------------------------------------------------------------------

function doing(activity: Activity, model: string | null): string {
  const m = model ? ` ${model}` : ' the model';
  if (activity === 'loading' || activity === 'starting') return `while loading${m}`;
  return `while running${m}`;
}

/** One sentence for a process that stopped answering the heartbeat (and was ended). */
export function hangMessage(timeoutMs: number, activity: Activity, model: string | null): string {
  return `The engine stopped responding ${doing(activity, model)} (no answer for ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}); press Reload to start it again.`;
}

/** One sentence for the page: what happened, and what to do. */
export function crashMessage(exit: HostExit, activity: Activity, model: string | null): string {
  const when = doing(activity, model);
  switch (exit.reason) {
    case 'oom': return `The engine ran out of memory ${when}; try a smaller model or context size, then press Reload.`;
    case 'killed': return `The engine process was killed ${when} (${exit.detail}); press Reload to start it again.`;
    case 'crashed': return `The engine process crashed ${when} (${exit.detail}); press Reload to start it again.`;
    case 'launch-failed': return `The engine process could not be started (${exit.detail}); press Reload to try again.`;
    case 'integrity-failure': return `The engine process failed Electron's code integrity check ${when}; reinstall Pantheon.`;
    case 'clean-exit': return `The engine process exited unexpectedly ${when}; press Reload to start it again.`;
    case 'abnormal-exit': return `The engine process exited unexpectedly ${when} (${exit.detail}); press Reload to start it again.`;
  }
}
