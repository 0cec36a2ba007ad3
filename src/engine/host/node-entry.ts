// Engine host entry under plain Node: started with child_process.fork by the dev harness and the
// tests (NodeEngineTransport). The IPC channel is both the control and the stream channel.

import { Worker } from 'node:worker_threads';
import { EngineHost } from './host.js';
import { loadSessionModel } from './engine.js';
import type { FromHost, StreamReply } from './protocol.js';

if (!process.send) {
  console.error('The engine host must be started by the app (child_process.fork with an IPC channel), not run directly.');
  process.exit(2);
}

const control = {
  send(msg: FromHost | StreamReply): void {
    // The parent may be gone (it then disconnects us and we exit); a failed send is not an error here.
    if (process.connected) process.send!(msg);
  },
};

const host = new EngineHost(control, loadSessionModel, (code) => process.exit(code));
process.on('message', (msg: unknown) => host.onControl(msg));
// The parent went away: nothing can use this model any more.
process.on('disconnect', () => process.exit(0));
// The same when this thread is stuck (an endless loop never sees 'disconnect'): a small watchdog
// thread ends the process once it has been handed to another parent (the parent died).
const WATCHDOG = `
  const parent = process.ppid;
  setInterval(() => { if (process.ppid !== parent) process.kill(process.pid, 'SIGKILL'); }, 1000);
`;
new Worker(WATCHDOG, { eval: true }).unref();
// Tests only: {kind: 'testHang'} blocks this thread for good (an engine alive but not answering).
if (process.env.PANTHEON_TEST_HOOKS === '1') {
  process.on('message', (msg: unknown) => {
    if ((msg as { kind?: unknown } | null)?.kind === 'testHang') for (;;);
  });
}
host.start(process.pid);
