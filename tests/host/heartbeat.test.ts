// The hang check (src/main/services/heartbeat.ts) on a fake clock, alone and inside the engine
// supervisor with a fake host process: the same code Electron's utility process and Node's child
// process run under.
import { describe, expect, it } from 'vitest';
import { Heartbeat, type Clock } from '../../src/main/services/heartbeat.js';
import { EngineSupervisor, type EngineTransport, type HostProcess, type HostProcessEvents } from '../../src/main/services/engine-supervisor.js';
import type { ToHost } from '../../src/engine/host/protocol.js';

/** A clock the test moves by hand; timers fire in order of their due time. */
function fakeClock(): Clock & { advance(ms: number): void; timers: number } {
  let now = 0;
  const timers = new Set<{ every: number; due: number; tick: () => void }>();
  return {
    now: () => now,
    every(ms, tick) {
      const t = { every: ms, due: now + ms, tick };
      timers.add(t);
      return () => timers.delete(t);
    },
    get timers() { return timers.size; },
    advance(ms) {
      const end = now + ms;
      for (;;) {
        const next = [...timers].sort((a, b) => a.due - b.due)[0];
        if (!next || next.due > end) break;
        now = next.due;
        next.due += next.every;
        next.tick();
      }
      now = end;
    },
  };
}

describe('Heartbeat', () => {
  it('pings every interval and calls hung once, after the timeout without an answer', () => {
    const clock = fakeClock();
    let pings = 0;
    const hung: number[] = [];
    new Heartbeat({ intervalMs: 100, timeoutMs: 450 }, clock, () => pings++, () => hung.push(clock.now()));
    clock.advance(400);
    expect(pings).toBe(4);
    expect(hung).toEqual([]);
    clock.advance(2000);
    // 450 ms of silence is passed at the tick of 500 ms: hung then, once, and no more pings
    expect(hung).toEqual([500]);
    expect(pings).toBe(4);
    expect(clock.timers).toBe(0);
  });

  it('an answer restarts the wait; stop ends it', () => {
    const clock = fakeClock();
    const hung: number[] = [];
    const h = new Heartbeat({ intervalMs: 100, timeoutMs: 450 }, clock, () => {}, () => hung.push(clock.now()));
    for (let i = 0; i < 20; i++) {
      clock.advance(300);
      h.answered();
    }
    expect(hung).toEqual([]);
    clock.advance(1000);
    expect(hung).toEqual([6500]);
    const h2 = new Heartbeat({ intervalMs: 100, timeoutMs: 450 }, clock, () => {}, () => hung.push(-1));
    h2.stop();
    clock.advance(1000);
    expect(hung).toEqual([6500]);
  });
});

const LOAD = { modelId: 'm', modelName: 'tiny', path: '/x.gguf', contextSize: 64, threads: 1 };
const INFO = { modelName: 'tiny', architecture: 'llama', contextSize: 64, threads: 1, backend: 'scalar', memoryBytes: 1, loadMs: 1 };

/** A host that loads at once and answers pings while `answering`; kill ends it as SIGKILL does. */
function fakeHost() {
  const h = {
    answering: true,
    killed: 0,
    pings: 0,
    events: null as HostProcessEvents | null,
    transport: {
      spawn(events: HostProcessEvents): HostProcess {
        h.events = events;
        queueMicrotask(() => events.message({ kind: 'ready', pid: 1 }));
        return {
          pid: 4242,
          send(msg: ToHost) {
            if (msg.kind === 'load') queueMicrotask(() => events.message({ kind: 'loaded', info: INFO }));
            if (msg.kind === 'shutdown') queueMicrotask(() => events.exit({ reason: 'clean-exit', code: 0, detail: 'exit code 0' }));
            if (msg.kind === 'ping') {
              h.pings++;
              if (h.answering) events.message({ kind: 'pong', id: msg.id });
            }
          },
          kill: () => {
            h.killed++;
            events.exit({ reason: 'killed', code: null, detail: 'signal SIGKILL' });
          },
        };
      },
    } as EngineTransport,
  };
  return h;
}

describe('the supervisor with a fake clock', () => {
  it('keeps an answering host, ends one that stops answering, and offers Reload', async () => {
    const clock = fakeClock();
    const host = fakeHost();
    const logs: string[] = [];
    const sup = new EngineSupervisor(host.transport, (l) => logs.push(l), { intervalMs: 1000, timeoutMs: 10_000 }, clock);
    await sup.load(LOAD);
    clock.advance(60_000);
    expect(host.pings).toBe(60);
    expect(sup.current.status).toBe('ready');
    host.answering = false;
    clock.advance(9_000);
    expect(sup.current.status).toBe('ready');
    clock.advance(3_000);
    expect(host.killed).toBe(1);
    expect(sup.current).toEqual({ status: 'crashed', modelId: 'm', reason: 'killed', message: 'The engine stopped responding while running tiny (no answer for 10 s); press Reload to start it again.' });
    expect(logs).toContain('engine: process 4242 has not answered for 10000 ms; ending it');
    // Reload starts a fresh process with its own heartbeat
    host.answering = true;
    await sup.reload();
    expect(sup.current.status).toBe('ready');
    clock.advance(60_000);
    expect(sup.current.status).toBe('ready');
    expect(host.killed).toBe(1);
    await sup.unload();
  });

  it('a host streaming a reply without answering pings is alive', async () => {
    const clock = fakeClock();
    const host = fakeHost();
    const sup = new EngineSupervisor(host.transport, () => {}, { intervalMs: 1000, timeoutMs: 10_000 }, clock);
    await sup.load(LOAD);
    host.answering = false;
    for (let i = 0; i < 30; i++) {
      clock.advance(2000);
      host.events!.message({ kind: 'busy' });
    }
    expect(sup.current.status).toBe('busy');
    expect(host.killed).toBe(0);
  });
});
