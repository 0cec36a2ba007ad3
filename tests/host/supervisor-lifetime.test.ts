// The supervisor with a scripted host (no real process): what the page waits for settles when the
// process goes on purpose (a new load, an unload), and a host that is alive but never answers the
// heartbeat is ended and told as a crash with Reload offered.

import { describe, expect, it } from 'vitest';
import { EngineSupervisor, type EngineTransport, type HostProcess, type HostProcessEvents } from '../../src/main/services/engine-supervisor.js';
import type { ToHost } from '../../src/engine/host/protocol.js';
import type { GenerationEvent } from '../../src/shared/contract.js';

const LOAD = { modelId: 'm', modelName: 'tiny', path: '/x.gguf', contextSize: 64, threads: 1 };
const INFO = { modelName: 'tiny', architecture: 'llama', contextSize: 64, threads: 1, backend: 'scalar', memoryBytes: 1, loadMs: 1 };

/** A host that loads at once, never answers countTokens or generate, and answers pings if `pongs`. */
function scriptedTransport(pongs: boolean): EngineTransport & { spawned: number } {
  const t = {
    spawned: 0,
    spawn(events: HostProcessEvents): HostProcess {
      t.spawned++;
      let alive = true;
      const exit = (reason: 'clean-exit' | 'killed') => {
        if (!alive) return;
        alive = false;
        setTimeout(() => events.exit({ reason, code: reason === 'killed' ? null : 0, detail: reason === 'killed' ? 'signal SIGKILL' : 'exit code 0' }), 1);
      };
      queueMicrotask(() => events.message({ kind: 'ready', pid: 1 }));
      return {
        pid: 1000 + t.spawned,
        send(msg: ToHost) {
          if (!alive) return;
          if (msg.kind === 'load') setTimeout(() => events.message({ kind: 'loaded', info: INFO }), 1);
          if (msg.kind === 'ping' && pongs) events.message({ kind: 'pong', id: msg.id });
          if (msg.kind === 'shutdown') exit('clean-exit');
        },
        kill: () => exit('killed'),
      };
    },
  };
  return t;
}

/** 'pending' when `p` has not settled within `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms))]);
}

describe('engine supervisor: nothing hangs', () => {
  it('rejects a pending token count and ends a pending reply when a new load starts', async () => {
    const sup = new EngineSupervisor(scriptedTransport(true), () => {});
    await sup.load(LOAD);
    const count = sup.countTokens([{ role: 'user', content: 'hi' }]).then(() => 'resolved', (e: Error) => e.message);
    const events: GenerationEvent[] = [];
    sup.generate({ messages: [{ role: 'user', content: 'hi' }], sampling: {} } as never, (e) => events.push(e));
    await sup.load(LOAD);
    expect(await within(count, 500)).toBe('A model is being loaded; the request was stopped.');
    expect(events.map((e) => e.kind)).toEqual(['error']);
    await sup.dispose();
  });

  it('rejects a pending token count on unload', async () => {
    const sup = new EngineSupervisor(scriptedTransport(true), () => {});
    await sup.load(LOAD);
    const count = sup.countTokens([{ role: 'user', content: 'hi' }]).then(() => 'resolved', (e: Error) => e.message);
    await sup.unload();
    expect(await within(count, 500)).toBe('The model was unloaded.');
    expect(sup.current.status).toBe('idle');
  });

  it('ends a host that is alive but never answers the heartbeat, and reports it like a crash', async () => {
    const logs: string[] = [];
    const sup = new EngineSupervisor(scriptedTransport(false), (l) => logs.push(l), { intervalMs: 20, timeoutMs: 150 });
    const states: string[] = [];
    sup.onState((s) => states.push(s.status));
    await sup.load(LOAD);
    const count = sup.countTokens([{ role: 'user', content: 'hi' }]).then(() => 'resolved', (e: Error) => e.message);
    await expect.poll(() => sup.current.status, { timeout: 2000, interval: 20 }).toBe('crashed');
    expect(sup.current).toMatchObject({ status: 'crashed', reason: 'killed', message: 'The engine stopped responding while running tiny (no answer for 150 ms); press Reload to start it again.' });
    expect(await within(count, 500)).toMatch(/^The engine stopped responding/);
    expect(logs.some((l) => /has not answered for 150 ms; ending it/.test(l))).toBe(true);
    // Reload starts a fresh process.
    await sup.reload();
    expect(sup.current.status).toBe('ready');
    await sup.dispose();
  });

  it('keeps a host that answers the heartbeat', async () => {
    const sup = new EngineSupervisor(scriptedTransport(true), () => {}, { intervalMs: 20, timeoutMs: 150 });
    await sup.load(LOAD);
    await new Promise((r) => setTimeout(r, 400));
    expect(sup.current.status).toBe('ready');
    await sup.dispose();
  });
});
