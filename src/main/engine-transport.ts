// The engine supervisor's transport inside Electron: the host runs in a utility process
// (utilityProcess.fork) with a serviceName for crash attribution, a cleaned environment, and its
// stdout/stderr piped to main's log with a prefix. Why it exited comes from
// app 'child-process-gone' (a closed set of reasons), matched by serviceName (CONVENTIONS §3).

import { join } from 'node:path';
import { app, utilityProcess, type Details, type MessagePortMain } from 'electron';
import type { EngineExitReason } from '../shared/contract.js';
import type { EngineTransport, HostProcess, HostProcessEvents } from './services/engine-supervisor.js';
import { cleanEnv } from './services/node-engine-transport.js';
import type { FromHost, StreamReply } from '../engine/host/protocol.js';
import type { Logger } from './services/log.js';

/** Electron's reasons, folded into the contract's closed union. */
function reasonOf(details: Details | null, code: number): EngineExitReason {
  if (!details) return code === 0 ? 'clean-exit' : 'abnormal-exit';
  // 'memory-eviction': the OS reclaimed the process under memory pressure; to the user, out of memory.
  return details.reason === 'memory-eviction' ? 'oom' : details.reason;
}

/** Where the engine finds its WebAssembly kernels (src/engine/wasm/loader.ts). */
function wasmDir(): string {
  return app.isPackaged ? join(process.resourcesPath, 'wasm') : join(app.getAppPath(), 'build', 'wasm');
}

export function electronEngineTransport(entry: string, log: Logger): EngineTransport {
  let count = 0;
  return {
    spawn(events: HostProcessEvents): HostProcess {
      const serviceName = `Pantheon Engine ${++count}`;
      const child = utilityProcess.fork(entry, [], { serviceName, stdio: 'pipe', env: { ...cleanEnv(), PANTHEON_WASM_DIR: wasmDir() } });
      let gone: Details | null = null;
      let fatal = '';
      const onGone = (_e: Electron.Event, details: Details) => {
        if (details.type === 'Utility' && details.serviceName === serviceName) gone = details;
      };
      app.on('child-process-gone', onGone);
      for (const stream of [child.stdout, child.stderr]) {
        let partial = '';
        stream?.setEncoding('utf8');
        stream?.on('data', (chunk: string) => {
          const lines = (partial + chunk).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) if (line.trim()) log(`[${serviceName}] ${line}`);
        });
      }
      child.on('error', (type, location) => {
        fatal = `${type} at ${location}`;
      });
      child.on('message', (msg: unknown) => events.message(msg as FromHost | StreamReply));
      child.on('exit', (code) => {
        // child-process-gone may arrive just after 'exit': give it a moment.
        setTimeout(() => {
          app.off('child-process-gone', onGone);
          const g = gone as Details | null;
          const reason = /out of memory/i.test(fatal) ? 'oom' : reasonOf(g, code);
          events.exit({ reason, code, detail: fatal || `exit code ${g?.exitCode ?? code}` });
        }, 100);
      });
      return {
        get pid() { return child.pid; },
        send: (msg) => child.postMessage(msg),
        // SIGKILL, as HostProcess.kill says: utilityProcess.kill() sends SIGTERM, and the
        // heartbeat's target may be stuck. On Windows process.kill terminates whatever the signal.
        kill: () => {
          if (child.pid === undefined) return void child.kill();
          try {
            process.kill(child.pid, 'SIGKILL');
          } catch {
            child.kill(); // already gone, or not ours to signal: let Electron reap it
          }
        },
        attachPort: (port) => child.postMessage({ kind: 'attachPort' }, [port as MessagePortMain]),
      };
    },
  };
}
