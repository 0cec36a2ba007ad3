// The host's routing as Electron uses it: control messages on the parent port, generation on
// MessagePorts brokered to windows (here plain in-process channels), with the real engine loading
// stories260K. Replies go to the channel a request came from; a closed port stops its generation.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerationEvent, SamplingSettings } from '../../src/shared/contract.js';
import { EngineHost, type HostChannel } from '../../src/engine/host/host.js';
import { loadSessionModel } from '../../src/engine/host/engine.js';
import type { FromHost, StreamReply } from '../../src/engine/host/protocol.js';
import { ROOT } from '../helpers.js';

const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');
const SAMPLING: SamplingSettings = {
  temperature: 0, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1, presencePenalty: 0, frequencyPenalty: 0,
  penaltyLastN: 64, seed: 1, maxTokens: -1, stop: [],
};
const MESSAGES = [{ role: 'user' as const, content: 'Once upon a time' }];

class Recorder implements HostChannel {
  readonly messages: (FromHost | StreamReply)[] = [];
  private waiters: (() => void)[] = [];
  send(msg: FromHost | StreamReply): void {
    this.messages.push(msg);
    for (const w of this.waiters.splice(0)) w();
  }
  /** Resolves once a message satisfying `pred` has arrived. */
  async until(pred: (m: FromHost | StreamReply) => boolean): Promise<FromHost | StreamReply> {
    for (;;) {
      const hit = this.messages.find(pred);
      if (hit) return hit;
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }
  events(id: number): GenerationEvent[] {
    return this.messages.filter((m): m is StreamReply => m.kind === 'event' && m.id === id).map((m) => m.event);
  }
}

const isDone = (id: number) => (m: FromHost | StreamReply) => m.kind === 'event' && m.id === id && (m.event.kind === 'done' || m.event.kind === 'error');

describe('engine host channels (the Electron layout, in-process)', () => {
  it('routes control and per-port streams, refuses a second reply at once, and stops when a port closes', async () => {
    const control = new Recorder();
    const exits: number[] = [];
    const host = new EngineHost(control, loadSessionModel, (code) => exits.push(code));
    host.start(123);
    expect(control.messages[0]).toEqual({ kind: 'ready', pid: 123 });

    host.onControl({ kind: 'load', path: DEMO, contextSize: 128, threads: 1 });
    const loaded = await control.until((m) => m.kind === 'loaded' || m.kind === 'loadFailed');
    expect(loaded).toMatchObject({ kind: 'loaded', info: { contextSize: 128, backend: expect.any(String) } });
    expect(control.messages.some((m) => m.kind === 'progress')).toBe(true);

    const a = new Recorder();
    const b = new Recorder();
    // Port A starts a reply; port B asks for one while A's is running and is refused.
    host.onStream(a, { kind: 'generate', id: 1, request: { messages: MESSAGES, sampling: SAMPLING } });
    host.onStream(b, { kind: 'generate', id: 1, request: { messages: MESSAGES, sampling: SAMPLING } });
    await b.until(isDone(1));
    expect(b.events(1)).toEqual([{ kind: 'error', error: { name: 'UsageError', code: 'USAGE', message: 'The engine is still writing another reply; stop it first.' } }]);
    // B cancelling its id 1 must not touch A's id 1.
    host.onStream(b, { kind: 'cancel', id: 1 });
    await a.until((m) => m.kind === 'event' && m.event.kind === 'token');
    // Nothing of A's stream went to the control channel or to B.
    expect(control.messages.some((m) => m.kind === 'event')).toBe(false);
    expect(control.messages.filter((m) => m.kind === 'busy')).toHaveLength(1);
    // A's window goes away: its generation stops within a token.
    const tokensBefore = a.events(1).filter((e) => e.kind === 'token').length;
    host.onStreamClosed(a);
    await a.until(isDone(1));
    // The next request follows the end of the last at once (no "still busy" in between).
    const evs = a.events(1);
    expect(evs.at(-1)).toMatchObject({ kind: 'done', stats: { stopReason: 'cancelled' } });
    expect(evs.filter((e) => e.kind === 'token').length - tokensBefore).toBeLessThanOrEqual(1);
    expect(control.messages.at(-1)).toMatchObject({ kind: 'idle' });

    // A cancel message on the port: the reply ends within one token of it.
    host.onStream(a, { kind: 'generate', id: 2, request: { messages: MESSAGES, sampling: SAMPLING } });
    await a.until((m) => m.kind === 'event' && m.id === 2 && m.event.kind !== 'prompt');
    const before2 = a.events(2).filter((e) => e.kind === 'token').length;
    host.onStream(a, { kind: 'cancel', id: 2 });
    await a.until(isDone(2));
    expect(a.events(2).at(-1)).toMatchObject({ kind: 'done', stats: { stopReason: 'cancelled' } });
    expect(a.events(2).filter((e) => e.kind === 'token').length - before2).toBeLessThanOrEqual(1);

    host.onControl({ kind: 'countTokens', id: 9, messages: MESSAGES });
    expect(await control.until((m) => m.kind === 'tokenCount')).toMatchObject({ id: 9, contextSize: 128 });
    host.onControl({ kind: 'shutdown' });
    expect(exits).toEqual([0]);
  });

  it('ignores messages that are not protocol messages', () => {
    const control = new Recorder();
    const host = new EngineHost(control, loadSessionModel, () => {});
    for (const junk of [null, 42, 'load', { kind: 7 }, [], { kind: 'nonsense' }]) host.onControl(junk);
    host.onStream(control, { kind: 'generate', id: 3, request: null });
    expect(control.messages).toEqual([{ kind: 'event', id: 3, event: { kind: 'error', error: expect.objectContaining({ name: 'UsageError', message: 'No model is loaded; load one first.' }) } }]);
  });
});
