// The app's inspection runner (src/main/services/inspect-jobs.ts): statistics in a worker thread
// with progress, Cancel ending a job mid-read, and the next job running on a fresh worker.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TensorStatsView } from '../../src/shared/contract.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { writeGguf } from '../../src/engine/gguf/writer.js';
import { InspectCancelled, InspectJobs } from '../../src/main/services/inspect-jobs.js';

const dir = mkdtempSync(join(tmpdir(), 'pantheon-inspect-'));
// 8 Mi floats, value i mod 7: big enough that the job is still reading when Cancel comes.
const N = 1 << 23;
const values = new Float32Array(N);
for (let i = 0; i < N; i++) values[i] = i % 7;
const file = join(dir, 'big.gguf');
writeFileSync(file, writeGguf([], [{ name: 'big', dims: [1024, N / 1024], type: GgmlType.F32, data: new Uint8Array(values.buffer) }]));

describe('InspectJobs', () => {
  const jobs = new InspectJobs();
  afterAll(() => jobs.close());

  it('Cancel ends a running job; the next one runs and reports progress to the end', async () => {
    let started!: () => void;
    const firstProgress = new Promise<void>((r) => { started = r; });
    const first = jobs.run<TensorStatsView>({ kind: 'stats', path: file, name: 'big', bins: 7, heatmap: { rows: 2, cols: 2 } }, (done) => { if (done > 0) started(); });
    await firstProgress;
    jobs.cancel();
    await expect(first).rejects.toBeInstanceOf(InspectCancelled);

    const seen: [number, number][] = [];
    const s = await jobs.run<TensorStatsView>({ kind: 'stats', path: file, name: 'big', bins: 7, heatmap: { rows: 2, cols: 2 } }, (d, t) => seen.push([d, t]));
    expect(seen.at(-1)).toEqual([2 * N, 2 * N]);
    // 0…6 repeating: N = 7q + r with the first r values 0…r−1 once more.
    const q = Math.floor(N / 7);
    const r = N % 7;
    expect(s.histogram.counts).toEqual([0, 1, 2, 3, 4, 5, 6].map((k) => q + (k < r ? 1 : 0)));
    expect([s.min, s.max, s.zeros]).toEqual([0, 6, q + 1]);
  }, 60_000);

  it('a bad tensor name rejects with the one-line message', async () => {
    await expect(jobs.run({ kind: 'stats', path: file, name: 'nope', bins: 4, heatmap: { rows: 1, cols: 1 } }, () => {})).rejects.toThrow(/no tensor named "nope"/);
  });
});
