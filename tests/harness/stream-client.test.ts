// The one stream client of the preload, the harness page client and the supervisor
// (src/shared/stream-client.ts), against a fake other side that records what it was sent and
// answers with events the test chooses.
import { describe, expect, it } from 'vitest';
import type { GenerationEvent } from '../../src/shared/contract.js';
import { EngineError, deserializeError } from '../../src/shared/errors.js';
import { StreamClient, streamEvents, type StreamWire } from '../../src/shared/stream-client.js';

const token = (text: string): GenerationEvent => ({ kind: 'token', id: 1, text, reasoning: '', top: [] });
const done: GenerationEvent = { kind: 'done', stats: { promptTokens: 1, tokens: 2, promptMs: 1, genMs: 1, tokensPerSecond: 1 } as never, contextUsed: 3, contextSize: 16 };

function peer() {
  const sent: string[] = [];
  const wire: StreamWire<string> = {
    start: (id, req) => sent.push(`start ${id} ${req}`),
    cancel: (id) => sent.push(`cancel ${id}`),
  };
  return { sent, wire };
}

function recorder() {
  const events: GenerationEvent[] = [];
  return { events, on: (e: GenerationEvent) => events.push(e) };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('StreamClient', () => {
  it('delivers each stream its own events in order and nothing after its end', () => {
    const c = new StreamClient<string>();
    const { sent, wire } = peer();
    const a = recorder();
    const b = recorder();
    c.start('A', a.on, wire);
    c.start('B', b.on, wire);
    expect(sent).toEqual(['start 1 A', 'start 2 B']);
    expect(c.deliver(1, token('x'))).toBe(true);
    expect(c.deliver(2, token('p'))).toBe(true);
    expect(c.deliver(1, token('y'))).toBe(true);
    expect(c.deliver(1, done)).toBe(true);
    expect(c.deliver(1, token('late'))).toBe(false);
    expect(c.deliver(7, token('stranger'))).toBe(false);
    expect(a.events.map((e) => e.kind === 'token' ? e.text : e.kind)).toEqual(['x', 'y', 'done']);
    expect(b.events.map((e) => e.kind === 'token' ? e.text : e.kind)).toEqual(['p']);
    expect(c.open).toBe(1);
  });

  it('sends a cancel made before the wire opened right after the start, once, and none after the end', async () => {
    const c = new StreamClient<string>();
    const { sent, wire } = peer();
    let open!: (w: StreamWire<string>) => void;
    const h = c.start('A', () => {}, new Promise<StreamWire<string>>((r) => { open = r; }));
    h.cancel();
    h.cancel();
    expect(sent).toEqual([]);
    open(wire);
    await tick();
    expect(sent).toEqual(['start 1 A', 'cancel 1']);
    const h2 = c.start('B', () => {}, wire);
    c.deliver(2, done);
    h2.cancel();
    expect(sent).toEqual(['start 1 A', 'cancel 1', 'start 2 B']);
  });

  it('ends a stream whose wire fails with that error, never before start returns', async () => {
    const c = new StreamClient<string>();
    const r1 = recorder();
    const r2 = recorder();
    c.start('A', r1.on, Promise.reject(new EngineError('ENGINE_NO_PORT', 'The engine did not answer; press Reload to start it again.')));
    c.start('B', r2.on, () => { throw new EngineError('ENGINE_NOT_READY', 'No model is loaded for chat; load one first.'); });
    expect(r1.events).toEqual([]);
    expect(r2.events).toEqual([]);
    await tick();
    expect(r1.events).toEqual([{ kind: 'error', error: { name: 'EngineError', code: 'ENGINE_NO_PORT', message: 'The engine did not answer; press Reload to start it again.' } }]);
    expect(r2.events).toMatchObject([{ kind: 'error', error: { code: 'ENGINE_NOT_READY' } }]);
    expect(c.open).toBe(0);
  });

  it('uses the id source it is given (ids shared with other requests)', () => {
    let n = 40;
    const c = new StreamClient<string>(() => n++);
    const { sent, wire } = peer();
    c.start('A', () => {}, wire);
    n = 50;
    c.start('B', () => {}, wire);
    expect(sent).toEqual(['start 40 A', 'start 50 B']);
  });
});

describe('streamEvents', () => {
  it('yields the events up to done, in order', async () => {
    const c = new StreamClient<string>();
    const { wire } = peer();
    const it = streamEvents((on) => c.start('A', on, wire), deserializeError);
    setTimeout(() => {
      c.deliver(1, token('a'));
      c.deliver(1, token('b'));
      setTimeout(() => c.deliver(1, done), 5);
    }, 1);
    const got: string[] = [];
    for await (const e of it) got.push(e.kind === 'token' ? e.text : e.kind);
    expect(got).toEqual(['a', 'b', 'done']);
  });

  it('rejects with a clear error when the other side dies mid-stream, after the tokens so far', async () => {
    const c = new StreamClient<string>();
    const { wire } = peer();
    const got: string[] = [];
    const run = (async () => {
      for await (const e of streamEvents((on) => c.start('A', on, wire), deserializeError)) if (e.kind === 'token') got.push(e.text);
    })();
    c.deliver(1, token('half'));
    await tick();
    c.endAll(new EngineError('ENGINE_CRASHED', 'The engine process crashed while running tiny (signal SIGSEGV); press Reload to start it again.'));
    await expect(run).rejects.toThrow(new EngineError('ENGINE_CRASHED', 'The engine process crashed while running tiny (signal SIGSEGV); press Reload to start it again.'));
    await expect(run).rejects.toBeInstanceOf(EngineError);
    expect(got).toEqual(['half']);
    expect(c.open).toBe(0);
  });

  it('cancels the stream when the loop stops early, and not when it ran to the end', async () => {
    const c = new StreamClient<string>();
    const { sent, wire } = peer();
    setTimeout(() => c.deliver(1, token('a')), 1);
    for await (const e of streamEvents((on) => c.start('A', on, wire), deserializeError)) if (e.kind === 'token') break;
    expect(sent).toEqual(['start 1 A', 'cancel 1']);
    setTimeout(() => c.deliver(2, done), 1);
    for await (const e of streamEvents((on) => c.start('B', on, wire), deserializeError)) void e;
    expect(sent).toEqual(['start 1 A', 'cancel 1', 'start 2 B']);
  });
});
