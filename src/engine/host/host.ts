// The engine host: the process that runs one loaded model. It is transport-agnostic: the entry
// files (node-entry.ts for child_process.fork, utility-entry.ts for Electron's utilityProcess)
// hand it the control channel and any stream channels (MessagePorts), and it answers the
// protocol in protocol.ts. One model, one conversation cache, one generation at a time.
//
// Cancellation works because the engine yields to the event loop between tokens: a 'cancel'
// message is handled there and aborts the generation's signal, so it stops within one token.

import { CancelledError, UsageError, serializeError } from '../../shared/errors.js';
import type { GenerationEvent } from '../../shared/contract.js';
import { hasKind, type FromHost, type LoadRequest, type StreamReply, type StreamRequest, type ToHost } from './protocol.js';
import { generateRequest, chatMessages } from '../../shared/requests.js';
import type { EngineLoader, EngineModel } from './engine.js';
import { gpuAdapterName } from './backend-choice.js';

/** Where replies go: the control channel, or one stream port. */
export interface HostChannel {
  send(msg: FromHost | StreamReply): void;
}

interface Running {
  channel: HostChannel;
  id: number;
  abort: AbortController;
}

export class EngineHost {
  private model: EngineModel | null = null;
  private loading: AbortController | null = null;
  private running: Running | null = null;
  private server: { close(): Promise<void> } | null = null;

  constructor(
    private readonly control: HostChannel,
    private readonly loader: EngineLoader,
    private readonly exit: (code: number) => void,
  ) {}

  /** Announce that the host listens (the supervisor waits for this before sending). */
  start(pid: number): void {
    this.control.send({ kind: 'ready', pid });
  }

  /** A message from the parent. ('attachPort' is handled by the entry, which owns the port.) */
  onControl(msg: unknown): void {
    if (!hasKind(msg)) return;
    const m = msg as ToHost;
    switch (m.kind) {
      case 'load': void this.load(m); break;
      case 'cancelLoad': this.loading?.abort(); break;
      case 'unload': this.unload(); this.control.send({ kind: 'unloaded' }); break;
      case 'countTokens': this.countTokens(m.id, m.messages); break;
      case 'attachPort': break;
      case 'shutdown': this.shutdown(); break;
      case 'ping': this.control.send({ kind: 'pong', id: m.id }); break;
      case 'serverStart': void this.serverStart(m.port, m.apiKey); break;
      case 'serverStop': void this.serverStop().then(() => this.control.send({ kind: 'serverState', url: null })); break;
      case 'gpuAdapter': this.control.send({ kind: 'gpuAdapter', id: m.id, adapter: gpuAdapterName() }); break;
      case 'generate':
      case 'cancel': this.onStream(this.control, m); break;
    }
  }

  /** A message from a stream channel (a page's MessagePort, or the control channel under Node). */
  onStream(channel: HostChannel, msg: unknown): void {
    if (!hasKind(msg)) return;
    const m = msg as StreamRequest;
    const id = typeof m.id === 'number' ? m.id : -1;
    if (m.kind === 'cancel') {
      if (this.running && this.running.channel === channel && this.running.id === id) this.running.abort.abort();
      return;
    }
    if (m.kind === 'generate') void this.generate(channel, id, m.request);
  }

  /** A stream channel closed (its window went away): stop what it was generating. */
  onStreamClosed(channel: HostChannel): void {
    if (this.running?.channel === channel) this.running.abort.abort();
  }

  private async load(req: LoadRequest): Promise<void> {
    this.loading?.abort();
    this.unload();
    const abort = new AbortController();
    this.loading = abort;
    const started = performance.now();
    let lastReport = 0;
    try {
      const model = await this.loader({
        path: String(req.path),
        contextSize: req.contextSize,
        threads: req.threads,
        ...(req.backend ? { backend: req.backend } : {}),
        ...(req.gpuLayers !== undefined ? { gpuLayers: req.gpuLayers } : {}),
        ...(req.remote ? { remote: req.remote } : {}),
        signal: abort.signal,
        onProgress: (loadedBytes, totalBytes) => {
          // At most ~30 reports a second: progress is for a bar, not a log.
          const now = performance.now();
          if (now - lastReport < 33 && loadedBytes < totalBytes) return;
          lastReport = now;
          this.control.send({ kind: 'progress', loadedBytes, totalBytes });
        },
      });
      if (abort.signal.aborted) {
        model.dispose();
        throw new CancelledError('Loading was cancelled.');
      }
      this.model = model;
      this.control.send({ kind: 'loaded', info: { ...model.info, loadMs: Math.round(performance.now() - started) } });
    } catch (err) {
      const e = abort.signal.aborted && !(err instanceof CancelledError) ? new CancelledError('Loading was cancelled.') : err;
      this.control.send({ kind: 'loadFailed', error: serializeError(e) });
    } finally {
      if (this.loading === abort) this.loading = null;
    }
  }

  /** The local server over the loaded model (one at a time; a new start replaces it). */
  private async serverStart(port: number, apiKey: string | undefined): Promise<void> {
    await this.serverStop();
    const model = this.model;
    if (!model) return this.control.send({ kind: 'serverState', url: null, error: 'No model is loaded; load one to serve it.' });
    try {
      const s = await model.serve({ port, apiKey, onRequest: (entry) => this.control.send({ kind: 'serverRequest', entry }) });
      if (this.model !== model) {
        await s.close();
        return this.control.send({ kind: 'serverState', url: null, error: 'The model was unloaded while the server started.' });
      }
      this.server = s;
      this.control.send({ kind: 'serverState', url: s.url });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const error = code === 'EADDRINUSE' ? `Port ${port} is in use; choose another.` : code === 'EACCES' ? `Port ${port} needs privileges; choose one above 1023.` : `The server could not start (${err instanceof Error ? err.message : String(err)}).`;
      this.control.send({ kind: 'serverState', url: null, error });
    }
  }

  private async serverStop(): Promise<void> {
    const s = this.server;
    this.server = null;
    await s?.close();
  }

  private unload(): void {
    void this.serverStop();
    this.running?.abort.abort();
    this.model?.dispose();
    this.model = null;
  }

  private countTokens(id: number, raw: unknown): void {
    try {
      if (!this.model) throw new UsageError('No model is loaded; load one first.');
      const tokens = this.model.countTokens(chatMessages(raw));
      this.control.send({ kind: 'tokenCount', id, tokens, contextSize: this.model.info.contextSize });
    } catch (err) {
      this.control.send({ kind: 'tokenCountFailed', id, error: serializeError(err) });
    }
  }

  private async generate(channel: HostChannel, id: number, raw: unknown): Promise<void> {
    const send = (event: GenerationEvent) => channel.send({ kind: 'event', id, event });
    const model = this.model;
    if (!model) return send({ kind: 'error', error: serializeError(new UsageError('No model is loaded; load one first.')) });
    if (this.running) return send({ kind: 'error', error: serializeError(new UsageError('The engine is still writing another reply; stop it first.')) });
    let request;
    try {
      request = generateRequest(raw);
    } catch (err) {
      return send({ kind: 'error', error: serializeError(err) });
    }
    const abort = new AbortController();
    this.running = { channel, id, abort };
    this.control.send({ kind: 'busy' });
    // Report idle before the stream's last event, so that whoever sees the end also sees the
    // engine ready (under Node both travel on one channel, in order).
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.running = null;
      this.control.send({ kind: 'idle', contextUsed: model.used });
    };
    try {
      let last: GenerationEvent | null = null;
      for await (const event of model.chat(request.messages, request.sampling, abort.signal, { policy: request.contextPolicy, structured: request.structured, probabilities: request.probabilities, replyPrefix: request.replyPrefix, profile: request.profile })) {
        if (event.kind === 'done') {
          // Leave the loop first: that finishes the engine's generator (its session is free
          // again) before anyone hears the reply ended and asks for the next one.
          last = event;
          break;
        }
        send(event);
      }
      finish();
      if (last) send(last);
    } catch (err) {
      finish();
      send({ kind: 'error', error: serializeError(err) });
    } finally {
      finish();
    }
  }

  private shutdown(): void {
    this.loading?.abort();
    this.unload();
    this.exit(0);
  }
}
