// The engine supervisor's transport under plain Node: the host runs as a child process
// (child_process.fork) with an IPC channel. Used by the dev harness and the tests; Electron uses
// utilityProcess.fork instead (src/main/engine-transport.ts). Like that one, the child gets a
// cleaned environment and its stdout/stderr are piped to our log with a prefix.

import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { EngineExitReason } from '../../shared/contract.js';
import type { EngineTransport, HostExit, HostProcess, HostProcessEvents } from './engine-supervisor.js';
import type { FromHost, StreamReply } from '../../engine/host/protocol.js';
import type { Logger } from './log.js';

/** The host entry in the source tree (run through tsx) and its built form, if one exists. */
export const NODE_HOST_ENTRY = fileURLToPath(new URL('../../engine/host/node-entry.ts', import.meta.url));

/** Only what the engine needs: no NODE_OPTIONS, no secrets from the parent's environment. */
export function cleanEnv(from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'USERPROFILE', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'LC_ALL', 'SYSTEMROOT', 'PANTHEON_BACKEND', 'PANTHEON_THREADS', 'PANTHEON_WASM_DIR'];
  const env: NodeJS.ProcessEnv = {};
  for (const k of keep) if (from[k] !== undefined) env[k] = from[k];
  return env;
}

/** Exit code and signal of a Node child process as one of the contract's reasons. */
export function exitReason(code: number | null, signal: NodeJS.Signals | null, stderrTail: string): HostExit {
  // V8 prints this before aborting on a heap out-of-memory (src/heap/heap.cc FatalProcessOutOfMemory).
  const oom = /heap out of memory|Allocation failed|Out of memory|RangeError: Array buffer allocation failed/i.test(stderrTail);
  let reason: EngineExitReason;
  if (oom) reason = 'oom';
  else if (signal === 'SIGKILL' || signal === 'SIGTERM' || signal === 'SIGINT' || signal === 'SIGHUP') reason = 'killed';
  else if (signal !== null) reason = 'crashed';
  else if (code === 0) reason = 'clean-exit';
  else reason = 'abnormal-exit';
  return { reason, code, detail: signal !== null ? `signal ${signal}` : `exit code ${code}` };
}

export interface NodeTransportOptions {
  log: Logger;
  /** Host entry; a .ts entry runs through tsx. Default: the source entry. */
  entry?: string;
  /** Extra environment for the child (on top of the cleaned one). */
  env?: NodeJS.ProcessEnv;
}

export function nodeEngineTransport(opts: NodeTransportOptions): EngineTransport {
  const entry = opts.entry ?? NODE_HOST_ENTRY;
  const execArgv = entry.endsWith('.ts') ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : [];
  return {
    spawn(events: HostProcessEvents): HostProcess {
      const child = fork(entry, [], {
        execArgv,
        env: { ...cleanEnv(), ...opts.env },
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        serialization: 'json',
      });
      const prefix = `engine ${child.pid ?? '?'}`;
      let stderrTail = '';
      const pipe = (stream: NodeJS.ReadableStream | null, isErr: boolean) => {
        let partial = '';
        stream?.setEncoding('utf8');
        stream?.on('data', (chunk: string) => {
          if (isErr) stderrTail = (stderrTail + chunk).slice(-8192);
          const lines = (partial + chunk).split('\n');
          partial = lines.pop() ?? '';
          for (const line of lines) if (line.trim()) opts.log(`[${prefix}] ${line}`);
        });
      };
      pipe(child.stdout, false);
      pipe(child.stderr, true);
      let exited = false;
      child.on('message', (msg) => events.message(msg as FromHost | StreamReply));
      child.on('error', (err) => {
        // 'error' without a pid: the launch failed; with one, a failed send or kill (logged only).
        if (child.pid === undefined && !exited) {
          exited = true;
          events.exit({ reason: 'launch-failed', code: null, detail: err.message });
        } else {
          opts.log(`[${prefix}] ${err.message}`);
        }
      });
      child.on('exit', (code, signal) => {
        if (exited) return;
        exited = true;
        // Let the last stderr chunk arrive (it may carry the out-of-memory line).
        setTimeout(() => events.exit(exitReason(code, signal, stderrTail)), 20);
      });
      return {
        get pid() { return child.pid; },
        send(msg) {
          if (child.connected) child.send(msg);
        },
        kill() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        },
      };
    },
  };
}
