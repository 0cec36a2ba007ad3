// The sandboxed preload: exposes `window.pantheon` (PantheonApi) through contextBridge, named
// functions only (CONVENTIONS §2, §6). Requests go over ipcRenderer.invoke and come back as
// IpcResult so errors are rebuilt as their own class; events are delivered without Electron's
// event object; every subscription returns an unsubscribe function.
//
// Token streams: main brokers a MessagePort to the engine host (ipc.ts). Ports do not survive
// contextBridge, and page code must not hold raw ports anyway, so the port stays here in the
// preload's isolated world and `generate` runs over it: tokens go host → preload → page callback
// without passing through main.
//
// Built as one CommonJS bundle (sandboxed preloads cannot load modules): only 'electron' is external.

import { contextBridge, ipcRenderer, webUtils } from 'electron';
import {
  EVENT_CHANNELS, buildRequestApi,
  type EngineState, type EventChannel, type Events, type GenerateRequest, type GenerationEvent, type OpenedModel, type PantheonApi,
} from '../shared/contract.js';
import { ENGINE_PORT, ENGINE_PORT_REQUEST, type IpcResult } from '../shared/electron-ipc.js';
import { EngineError, UsageError, deserializeError } from '../shared/errors.js';
import { StreamClient } from '../shared/stream-client.js';

const PORT_WAIT_MS = 5000;

async function call(channel: string, request: unknown): Promise<unknown> {
  const r = (await ipcRenderer.invoke(channel, request)) as IpcResult<unknown>;
  if (!r.ok) throw deserializeError(r.error);
  return r.value;
}

// ---- the engine port ---------------------------------------------------------------------------

let port: MessagePort | null = null;
let portWaiters: ((p: MessagePort) => void)[] = [];
const streams = new StreamClient<GenerateRequest>();

ipcRenderer.on(ENGINE_PORT, (e) => {
  const p = e.ports[0];
  if (!p) return;
  port?.close();
  port = p;
  p.onmessage = (m: MessageEvent) => {
    const msg = m.data as { kind?: string; id?: number; event?: GenerationEvent };
    if (msg?.kind !== 'event' || typeof msg.id !== 'number' || !msg.event) return;
    streams.deliver(msg.id, msg.event);
  };
  p.start();
  const waiters = portWaiters;
  portWaiters = [];
  for (const w of waiters) w(p);
});

// A port belongs to one engine process: when that process stops, drop the port and end its streams.
ipcRenderer.on('engine:state', (_e, s: EngineState) => {
  if (s.status === 'ready' || s.status === 'busy') return;
  port?.close();
  port = null;
  if (streams.open > 0) {
    streams.endAll(new EngineError('ENGINE_STOPPED', s.status === 'crashed' ? s.message : 'The engine stopped before the reply was finished.'));
  }
});

async function enginePort(): Promise<MessagePort> {
  if (port) return port;
  const waiting = new Promise<MessagePort>((resolve, reject) => {
    const timer = setTimeout(() => reject(new EngineError('ENGINE_NO_PORT', 'The engine did not answer; press Reload to start it again.')), PORT_WAIT_MS);
    portWaiters.push((p) => {
      clearTimeout(timer);
      resolve(p);
    });
  });
  if (!(await ipcRenderer.invoke(ENGINE_PORT_REQUEST))) {
    portWaiters = [];
    throw new UsageError('No model is loaded for chat; load one first.');
  }
  return waiting;
}

function generate(request: GenerateRequest, onEvent: (e: GenerationEvent) => void): { cancel(): void } {
  return streams.start(request, onEvent, enginePort().then((p) => ({
    start: (id: number, req: GenerateRequest) => p.postMessage({ kind: 'generate', id, request: req }),
    cancel: (id: number) => p.postMessage({ kind: 'cancel', id }),
  })));
}

// ---- the API -------------------------------------------------------------------------------------

function on<E extends EventChannel>(event: E, listener: (payload: Events[E]) => void): () => void {
  if (!(EVENT_CHANNELS as readonly string[]).includes(event)) throw new UsageError(`"${String(event)}" is not an event.`);
  const wrapped = (_e: unknown, payload: Events[E]) => listener(payload);
  ipcRenderer.on(event, wrapped);
  return () => {
    ipcRenderer.removeListener(event, wrapped);
  };
}

async function openDroppedFile(file: File): Promise<OpenedModel> {
  const path = webUtils.getPathForFile(file);
  if (!path) throw new UsageError(`${file.name} is not a file on this computer; drop a .gguf file from a folder.`);
  return (await call('model:openDropped', { path })) as OpenedModel;
}

const requests = buildRequestApi(call);
const api: PantheonApi = {
  ...requests,
  // The page never names paths (CONVENTIONS §2): a path comes only from a dropped File, resolved
  // here by openDroppedFile. The channel itself is not reachable from page code.
  model: {
    ...requests.model,
    openDropped: () => Promise.reject(new UsageError('Pages cannot open paths; drop the file on the window instead.')),
  },
  on,
  generate,
  openDroppedFile,
};

contextBridge.exposeInMainWorld('pantheon', api);
