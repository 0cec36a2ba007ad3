// Benchmark workers that run one step at the same moment, round after round (bench/kernels.ts,
// bench/f16-ab.ts). The workers share four i32 words with this thread: [round, done count, arg,
// arg]; a round bumps the round word, every worker runs its step and counts itself done.
import { Worker } from 'node:worker_threads';

/**
 * The end of a rig worker's source: it reports itself ready, then runs `step` once per round
 * until the round word turns negative. `go` (the words' SharedArrayBuffer) must be in scope, as it
 * is when taken from workerData; the step sees the words as `g`.
 */
export function rigLoop(step: string): string {
  return `
    const g = new Int32Array(go);
    Atomics.add(g, 1, 1); Atomics.notify(g, 1);
    let round = 0;
    for (;;) {
      Atomics.wait(g, 0, round);
      round = Atomics.load(g, 0);
      if (round < 0) break;
      ${step}
      Atomics.add(g, 1, 1); Atomics.notify(g, 1);
    }`;
}

export interface Rig {
  /** The shared words: go[2] and go[3] are the steps' to read. */
  readonly go: Int32Array;
  /** One round on every worker; its wall time in ms. */
  round(): number;
  close(): Promise<void>;
}

/** n workers running `src` (which ends with rigLoop), given workerData `data` and `go`; ready when it returns. */
export function startRig(src: string, n: number, data: Record<string, unknown>): Rig {
  const go = new Int32Array(new SharedArrayBuffer(16));
  const workers = Array.from({ length: n }, () => new Worker(src, { eval: true, workerData: { ...data, go: go.buffer } }));
  const waitCount = (want: number) => {
    for (let c = Atomics.load(go, 1); c < want; c = Atomics.load(go, 1)) Atomics.wait(go, 1, c);
  };
  waitCount(n);
  let round = 0;
  return {
    go,
    round() {
      Atomics.store(go, 1, 0);
      const t0 = performance.now();
      Atomics.store(go, 0, ++round);
      Atomics.notify(go, 0);
      waitCount(n);
      return performance.now() - t0;
    },
    async close() {
      Atomics.store(go, 0, -1);
      Atomics.notify(go, 0);
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
