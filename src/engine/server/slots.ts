// The server's sequences: N Sessions over one loaded model (`--parallel N`), each with its own KV
// cache, so N requests generate at once: their decode steps run together, one forward pass over
// all of them (decode-batch.ts), or, for a model that cannot batch them (a recurrent hybrid),
// one after another (each session yields to the event loop between tokens). A request takes the free session whose cache shares the longest
// prefix with its prompt (a follow-up turn of a conversation reuses its cache); when none is free
// it waits in line, first come first served, and leaves the line if its client goes away.

import { DecodeBatch } from '../decode-batch.js';
import { Session, type LoadedModel } from '../session.js';

interface Waiter {
  tokens: readonly number[];
  resolve: (s: Session | null) => void;
}

export class Slots {
  private readonly free: Session[] = [];
  private readonly line: Waiter[] = [];

  /** Why the sessions' decode steps interleave instead of running as one batch (a model that cannot batch them), or null. */
  readonly interleaved: string | null = null;

  constructor(model: LoadedModel, readonly count: number) {
    const b = count > 1 ? DecodeBatch.create(model.model, model.contextSize, count) : null;
    const batch = b instanceof DecodeBatch ? b : null;
    if (b && !batch) this.interleaved = (b as { unsupported: string }).unsupported;
    for (let i = 0; i < count; i++) this.free.push(new Session(model, null, batch));
  }

  /** A session for `tokens`, once one is free; null if `signal` aborts first. Give it back with release. */
  acquire(tokens: readonly number[], signal: AbortSignal): Promise<Session | null> {
    if (signal.aborted) return Promise.resolve(null);
    if (this.free.length > 0 && this.line.length === 0) return Promise.resolve(this.take(tokens));
    return new Promise((resolve) => {
      const w: Waiter = { tokens, resolve };
      this.line.push(w);
      signal.addEventListener('abort', () => {
        const i = this.line.indexOf(w);
        if (i >= 0) {
          this.line.splice(i, 1);
          resolve(null);
        }
      }, { once: true });
    });
  }

  release(s: Session): void {
    this.free.push(s);
    const next = this.line.shift();
    if (next) next.resolve(this.take(next.tokens));
  }

  /** The free session sharing the longest cached prefix with `tokens`. */
  private take(tokens: readonly number[]): Session {
    let best = 0;
    for (let i = 1; i < this.free.length; i++) if (this.free[i].sharedPrefix(tokens) > this.free[best].sharedPrefix(tokens)) best = i;
    return this.free.splice(best, 1)[0];
  }
}
