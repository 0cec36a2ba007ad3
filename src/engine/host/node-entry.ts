// Engine host entry under plain Node: started with child_process.fork by the dev harness and the
// tests (NodeEngineTransport). The IPC channel is both the control and the stream channel.

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
host.start(process.pid);
