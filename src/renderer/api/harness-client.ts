// `window.pantheon` for a plain browser: the same PantheonApi the Electron preload exposes, carried
// over one WebSocket to the dev harness (src/harness/server.ts, `npm run dev:web`). Requests are
// numbered and each gets one reply; events fan out to subscribers; a generation is a stream of
// events with its own id and a cancel message. A dropped file is uploaded (a browser has no file
// paths): its bytes are POSTed to the harness, which saves them to a temp folder and opens them.

import {
  buildRequestApi, type EventChannel, type Events, type GenerateRequest, type GenerationEvent, type GenerationHandle, type PantheonApi, type RequestChannel,
} from '../../shared/contract.js';
import { PantheonError, UsageError, deserializeError, type SerializedError } from '../../shared/errors.js';
import {
  HARNESS_TOKEN_PARAM, HARNESS_UPLOAD_HEADER, HARNESS_UPLOAD_MAX_BYTES, HARNESS_UPLOAD_PATH, HARNESS_WS_PATH,
  type HarnessClientMessage, type HarnessServerMessage,
} from '../../shared/harness-protocol.js';
import { StreamClient, type StreamWire } from '../../shared/stream-client.js';

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

const lostConnection = () => new PantheonError('HARNESS_DISCONNECTED', 'Lost the connection to the dev harness; check that `npm run dev:web` is still running, then reload the page.');

function formatBytes(n: number): string {
  return `${(n / 1024 ** 3).toFixed(0)} GiB`;
}

export class HarnessClient {
  private socket: WebSocket | null = null;
  private opening: Promise<WebSocket> | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly streams: StreamClient<GenerateRequest>;
  private readonly listeners = new Map<EventChannel, Set<(payload: never) => void>>();

  private readonly wire: StreamWire<GenerateRequest> = {
    start: (id, request) => this.post({ t: 'gen', id, request }),
    cancel: (id) => this.post({ t: 'cancel', id }),
  };

  constructor(private readonly base: URL) {
    // Generations share the request ids' counter: one id space per socket.
    this.streams = new StreamClient<GenerateRequest>(() => this.nextId++);
  }

  /** `url` with the harness token of the page's own URL (see HARNESS_TOKEN_PARAM). */
  private withToken(url: URL): URL {
    const token = this.base.searchParams.get(HARNESS_TOKEN_PARAM);
    if (token !== null) url.searchParams.set(HARNESS_TOKEN_PARAM, token);
    return url;
  }

  /** Open the socket (again, after a harness restart). */
  connect(): Promise<WebSocket> {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) return Promise.resolve(this.socket);
    if (this.opening) return this.opening;
    const url = this.withToken(new URL(HARNESS_WS_PATH, this.base));
    url.protocol = this.base.protocol === 'https:' ? 'wss:' : 'ws:';
    this.opening = new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.onopen = () => {
        this.socket = ws;
        this.opening = null;
        resolve(ws);
      };
      ws.onerror = () => {
        if (this.opening) {
          this.opening = null;
          reject(new PantheonError('HARNESS_UNREACHABLE', `Cannot reach the dev harness at ${url.href}; start it with \`npm run dev:web\`.`));
        }
      };
      ws.onclose = () => this.closed(ws);
      ws.onmessage = (e) => this.receive(e.data);
    });
    return this.opening;
  }

  private closed(ws: WebSocket): void {
    if (this.socket !== ws) return;
    this.socket = null;
    const err = lostConnection();
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.streams.endAll(err);
  }

  private receive(data: unknown): void {
    if (typeof data !== 'string') return;
    let msg: HarnessServerMessage;
    try {
      msg = JSON.parse(data) as HarnessServerMessage;
    } catch {
      return;
    }
    switch (msg.t) {
      case 'res': {
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        if (msg.ok) p.resolve(msg.value);
        else p.reject(deserializeError(msg.error));
        break;
      }
      case 'evt':
        for (const l of this.listeners.get(msg.event) ?? []) (l as (p: unknown) => void)(msg.payload);
        break;
      case 'gen':
        this.streams.deliver(msg.id, msg.event);
        break;
    }
  }

  private post(msg: HarnessClientMessage): void {
    this.socket?.send(JSON.stringify(msg));
  }

  async call(channel: RequestChannel, payload: unknown): Promise<unknown> {
    await this.connect();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.post({ t: 'req', id, channel, payload });
    });
  }

  on<E extends EventChannel>(event: E, listener: (payload: Events[E]) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as (payload: never) => void);
    return () => {
      set.delete(listener as (payload: never) => void);
    };
  }

  generate(request: GenerateRequest, onEvent: (e: GenerationEvent) => void): GenerationHandle {
    return this.streams.start(request, onEvent, this.connect().then(() => this.wire));
  }

  /** Upload a dropped file's bytes; the harness saves and opens it. */
  async openDroppedFile(file: File): Promise<unknown> {
    if (!/\.gguf$/i.test(file.name)) throw new UsageError(`${file.name} is not a .gguf model file.`);
    if (file.size > HARNESS_UPLOAD_MAX_BYTES) {
      throw new UsageError(`${file.name} is larger than the browser harness accepts by upload (${formatBytes(HARNESS_UPLOAD_MAX_BYTES)}); open it from the models folder instead.`);
    }
    const url = this.withToken(new URL(HARNESS_UPLOAD_PATH, this.base));
    url.searchParams.set('name', file.name);
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', body: file, headers: { [HARNESS_UPLOAD_HEADER]: '1', 'content-type': 'application/octet-stream' } });
    } catch {
      throw lostConnection();
    }
    const body = (await res.json().catch(() => null)) as { ok: boolean; value?: unknown; error?: SerializedError } | null;
    if (!body) throw new PantheonError('HARNESS_UPLOAD', `The harness answered the upload with HTTP ${res.status}.`);
    if (!body.ok) throw deserializeError(body.error!);
    return body.value;
  }

  /** The full PantheonApi over this client. */
  api(): PantheonApi {
    return {
      ...buildRequestApi((channel, request) => this.call(channel, request)),
      on: (event, listener) => this.on(event, listener),
      generate: (request, onEvent) => this.generate(request, onEvent),
      openDroppedFile: (file) => this.openDroppedFile(file) as ReturnType<PantheonApi['openDroppedFile']>,
    };
  }
}

/**
 * Install `window.pantheon` over the harness's WebSocket when no preload provided it (a plain
 * browser). Resolves once connected; rejects with a one-line error when the harness is not running.
 */
export async function installHarnessApi(): Promise<void> {
  const w = window as unknown as { pantheon?: PantheonApi };
  if (w.pantheon) return;
  const client = new HarnessClient(new URL(window.location.href));
  await client.connect();
  w.pantheon = client.api();
}
