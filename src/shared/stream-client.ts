// The client side of a generation stream, one copy for the three places that start one: the
// preload (over the engine's MessagePort), the dev harness's page client (over its WebSocket) and
// the engine supervisor (over the host's control channel). Each stream has an id; the other side
// answers with events for that id until 'done' or 'error'; 'cancel' is a message of its own.
// What differs per place is only the wire, given as a StreamWire (or a promise of one, while a
// port or socket is still being opened). Plain TypeScript: no Electron, DOM or Node imports.

import type { GenerationEvent, GenerationHandle } from './contract.js';
import { serializeError } from './errors.js';

/** Where the start and cancel messages of a stream go. */
export interface StreamWire<Req> {
  start(id: number, request: Req): void;
  cancel(id: number): void;
}

const isEnd = (e: GenerationEvent) => e.kind === 'done' || e.kind === 'error';
const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as { then?: unknown }).then === 'function';

export class StreamClient<Req> {
  private readonly live = new Map<number, (e: GenerationEvent) => void>();
  private counter = 1;

  /** `nextId`: where ids come from when the wire shares its id space with other requests. */
  constructor(private readonly nextId: () => number = () => this.counter++) {}

  /** How many streams wait for their end. */
  get open(): number {
    return this.live.size;
  }

  /**
   * Start a stream. `wire` may be a promise (a port or socket still opening) or a function that
   * throws (nothing to run on): its failure ends the stream with that error, asynchronously, so
   * `onEvent` is never called before `start` returns. A wire at hand gets the start message now;
   * a cancel before the wire is there is sent right after the start message.
   */
  start(request: Req, onEvent: (e: GenerationEvent) => void, wire: StreamWire<Req> | Promise<StreamWire<Req>> | (() => StreamWire<Req> | Promise<StreamWire<Req>>)): GenerationHandle {
    const id = this.nextId();
    let target: StreamWire<Req> | null = null;
    let cancelled = false;
    this.live.set(id, onEvent);
    const fail = (err: unknown) => {
      if (this.live.delete(id)) onEvent({ kind: 'error', error: serializeError(err) });
    };
    const begin = (w: StreamWire<Req>) => {
      if (!this.live.has(id)) return;
      target = w;
      w.start(id, request);
      if (cancelled) w.cancel(id);
    };
    try {
      const w = typeof wire === 'function' ? wire() : wire;
      if (isPromise(w)) w.then(begin, fail).catch(fail);
      else begin(w);
    } catch (err) {
      queueMicrotask(() => fail(err));
    }
    return {
      cancel: () => {
        if (cancelled) return;
        cancelled = true;
        if (this.live.has(id)) target?.cancel(id);
      },
    };
  }

  /** An event from the other side; false when no stream has that id (ended, or never ours). */
  deliver(id: number, event: GenerationEvent): boolean {
    const listener = this.live.get(id);
    if (!listener) return false;
    if (isEnd(event)) this.live.delete(id);
    listener(event);
    return true;
  }

  /** The other side is gone (process died, socket closed, port dropped): every stream ends with `error`. */
  endAll(error: unknown): void {
    const all = [...this.live.values()];
    this.live.clear();
    const e = serializeError(error);
    for (const listener of all) listener({ kind: 'error', error: e });
  }
}

/**
 * A stream as an async iterator: yields its events up to 'done' and then returns; an 'error' event
 * throws that error (rebuilt as its class by `toError`). Breaking out of the loop cancels the stream.
 */
export async function* streamEvents(
  begin: (onEvent: (e: GenerationEvent) => void) => GenerationHandle,
  toError: (e: Extract<GenerationEvent, { kind: 'error' }>['error']) => Error,
): AsyncGenerator<Exclude<GenerationEvent, { kind: 'error' }>, void, undefined> {
  const queue: GenerationEvent[] = [];
  let wake: (() => void) | null = null;
  let ended = false;
  const handle = begin((e) => {
    queue.push(e);
    wake?.();
  });
  try {
    for (;;) {
      while (queue.length === 0) await new Promise<void>((r) => { wake = r; });
      wake = null;
      const e = queue.shift()!;
      if (e.kind === 'error') {
        ended = true;
        throw toError(e.error);
      }
      yield e;
      if (e.kind === 'done') {
        ended = true;
        return;
      }
    }
  } finally {
    if (!ended) handle.cancel();
  }
}
