// The engine supervisor's hang check, apart from any process or timer so it can be tested with a
// fake clock: every `intervalMs` a ping goes out; when nothing has come back for `timeoutMs` the
// other side is alive but stuck (an endless loop, a deadlock) and `hung` is called once.
// The supervisor runs one per host process, for Electron's utility process and Node's child alike.

/**
 * The timeout is long because the host answers between tokens and a large model's prompt step
 * can hold it for a while.
 */
export interface HeartbeatOptions {
  intervalMs: number;
  timeoutMs: number;
}
export const DEFAULT_HEARTBEAT: HeartbeatOptions = { intervalMs: 5000, timeoutMs: 60_000 };

/** Time and a repeating timer; `every` returns its stop function. */
export interface Clock {
  now(): number;
  every(ms: number, tick: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  every(ms, tick) {
    const t = setInterval(tick, ms);
    // The heartbeat alone never keeps the app (or a test) running.
    (t as { unref?: () => void }).unref?.();
    return () => clearInterval(t);
  },
};

export class Heartbeat {
  private last: number;
  private stopTimer: (() => void) | null;

  /** Starts beating at once. `ping`: send one (the caller may skip it while the host starts). */
  constructor(
    private readonly opts: HeartbeatOptions,
    private readonly clock: Clock,
    private readonly ping: () => void,
    private readonly hung: () => void,
  ) {
    this.last = clock.now();
    this.stopTimer = clock.every(opts.intervalMs, () => this.tick());
  }

  /** Anything came back: the other side is alive (a busy host streams instead of answering pings). */
  answered(): void {
    this.last = this.clock.now();
  }

  stop(): void {
    this.stopTimer?.();
    this.stopTimer = null;
  }

  private tick(): void {
    if (!this.stopTimer) return;
    if (this.clock.now() - this.last > this.opts.timeoutMs) {
      this.stop();
      this.hung();
      return;
    }
    this.ping();
  }
}
