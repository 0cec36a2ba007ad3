// Engine host entry inside an Electron utility process (utilityProcess.fork in src/main). The
// parent port is the control channel; every 'attachPort' message carries a MessagePort that main
// brokered to a window, and that port is a stream channel: generation requests come in on it and
// tokens go straight back to the page without passing through main (CONVENTIONS §3).
//
// The engine layer does not import electron, so the few shapes used here are declared locally
// (they match electron.d.ts `ParentPort`, `MessageEvent` and `MessagePortMain`).

import { EngineHost, type HostChannel } from './host.js';
import { loadSessionModel } from './engine.js';
import { hasKind, type FromHost, type StreamReply } from './protocol.js';

interface PortLike {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (e: { data: unknown }) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  start(): void;
  close(): void;
}
interface ParentPortLike {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (e: { data: unknown; ports: PortLike[] }) => void): unknown;
}

const parentPort = (process as unknown as { parentPort?: ParentPortLike }).parentPort;
if (!parentPort) {
  console.error('The engine host utility entry must run in an Electron utility process.');
  process.exit(2);
}

const control: HostChannel = { send: (msg: FromHost | StreamReply) => parentPort.postMessage(msg) };
const host = new EngineHost(control, loadSessionModel, (code) => process.exit(code));

function attach(port: PortLike): void {
  const channel: HostChannel = { send: (msg) => port.postMessage(msg) };
  port.on('message', (e) => host.onStream(channel, e.data));
  port.on('close', () => host.onStreamClosed(channel));
  port.start();
}

parentPort.on('message', (e) => {
  if (hasKind(e.data) && e.data.kind === 'attachPort') {
    for (const port of e.ports) attach(port);
    return;
  }
  host.onControl(e.data);
});
host.start(process.pid);
