// Continuous batching of decode steps (`pantheon serve --parallel N`, as llama.cpp's server does):
// the sessions generating at once each hand in their next token, and once every one of them has,
// the step runs as one forward pass over them all (model/forward.ts forwardRows: each weight
// matrix read once for the batch, each row against its own KV cache and position). A session
// joins with its first decode step (its prompt is evaluated on its own, as a prompt batch) and
// leaves when its generation ends, fails or is cancelled; the others go on without it. A step of
// one session alone is today's one-token forward(). A session whose events nobody reads holds the
// others back (the server reads every reply to its end, or returns it, which leaves).

import { createRunState, decodeRowsUnsupported, forward, forwardRows, type Model, type RunState } from './model/forward.js';

interface Step {
  s: RunState;
  token: number;
  pos: number;
  resolve: (logits: Float32Array) => void;
  reject: (err: unknown) => void;
}

export class DecodeBatch {
  /** The batch's activations: `size` rows, no cache (each row's is in its session's state). */
  private readonly b: RunState;
  /** The states of the sessions that take decode steps, until they leave. */
  private readonly members = new Set<RunState>();
  private waiting: Step[] = [];

  private constructor(private readonly m: Model, contextSize: number, readonly size: number) {
    this.b = createRunState(m, contextSize, size, m.backend.kernels, true);
  }

  /** A batch for up to `size` sequences of `contextSize` positions, or why it cannot run this model. */
  static create(m: Model, contextSize: number, size: number): DecodeBatch | { unsupported: string } {
    const why = decodeRowsUnsupported(m);
    return why ? { unsupported: why } : new DecodeBatch(m, contextSize, size);
  }

  /**
   * The logits after `token` at position `pos` of the sequence in s (written to s.logits), once
   * every member has handed in its step. The first step makes s a member.
   */
  step(s: RunState, token: number, pos: number): Promise<Float32Array> {
    this.members.add(s);
    return new Promise<Float32Array>((resolve, reject) => {
      this.waiting.push({ s, token, pos, resolve, reject });
      this.runWhenReady();
    });
  }

  /** s takes no more steps (its generation is over); the others no longer wait for it. */
  leave(s: RunState): void {
    if (!this.members.delete(s)) return;
    this.runWhenReady();
  }

  private runWhenReady(): void {
    if (this.waiting.length === 0 || this.waiting.length < this.members.size) return;
    const steps = this.waiting;
    this.waiting = [];
    for (let i = 0; i < steps.length; i += this.b.maxBatch) this.run(steps.slice(i, i + this.b.maxBatch));
  }

  private run(steps: Step[]): void {
    try {
      if (steps.length === 1) forward(this.m, steps[0].s, [steps[0].token], steps[0].pos);
      else forwardRows(this.m, this.b, steps.map((x) => x.s), steps.map((x) => x.token), steps.map((x) => x.pos));
    } catch (err) {
      for (const x of steps) x.reject(err);
      return;
    }
    for (const x of steps) x.resolve(x.s.logits);
  }
}
