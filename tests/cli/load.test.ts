// Loading as a user sees it: progress in bytes (LoadOptions.onProgress, the CLI's stderr line) that
// only grows and ends at the model's weight bytes, and `pantheon run --json`'s load_ms, with the
// pool's threads reading their own rows and giving llama.cpp's tokens.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { progressText } from '../../src/cli/progress.js';
import { readGgufHeaderSync } from '../../src/engine/gguf/file.js';
import { LoadedModel } from '../../src/engine/session.js';
import { weightTensors } from '../../src/engine/model/weights.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { readGolden } from '../model/golden.js';

const PATH = sharedModel('stories260K.gguf');

describe('the loading line', () => {
  it('bytes in GB, the share and the rate', () => {
    expect(progressText(1.5e9, 3e9, 1000)).toBe('loading 1.50 / 3.00 GB (50%), 1500 MB/s');
    expect(progressText(0, 0, 0)).toBe('loading 0.00 / 0.00 GB (100%)');
  });
});

describe.skipIf(!HAVE_SHARED)('loading progress and load_ms', () => {
  const weights = HAVE_SHARED ? weightTensors(readGgufHeaderSync(PATH)).reduce((a, t) => a + t.bytes, 0) : 0;

  it('onProgress on the pool: never decreasing, one total, ending at the weight bytes', async () => {
    const seen: [number, number][] = [];
    const m = await LoadedModel.load(PATH, { threads: 2, backend: 'pool', contextSize: 64, onProgress: (l, t) => seen.push([l, t]) });
    m.dispose();
    expect(seen.length).toBeGreaterThan(10);
    for (let i = 1; i < seen.length; i++) expect(seen[i][0]).toBeGreaterThanOrEqual(seen[i - 1][0]);
    expect(new Set(seen.map((s) => s[1]))).toEqual(new Set([weights]));
    expect(seen.at(-1)![0]).toBe(weights);
    expect(m.loadMs).toBeGreaterThan(0);
  });

  it('`pantheon run --json --threads 2`: load_ms within the run, the status line to 100% then cleared, llama.cpp\'s tokens', async () => {
    const golden = readGolden('stories260K');
    const out: string[] = [], err: string[] = [], status: string[] = [];
    const t0 = performance.now();
    const code = await main(['run', PATH, '-p', 'Once upon a time', '-n', '8', '--temp', '0', '--json', '--ctx', '64', '--threads', '2'], { out: (t) => out.push(t), err: (t) => err.push(t), isTty: false, status: (l) => status.push(l) });
    const wall = performance.now() - t0;
    expect(err).toEqual([]);
    expect(code).toBe(0);
    const r = JSON.parse(out.join(''));
    expect(r.load_ms).toBeGreaterThan(0);
    expect(r.load_ms).toBeLessThan(wall);
    expect(r.tokens).toEqual(golden!.cases[0].tokens.slice(0, 8));
    // the line: shares that only grow, the last drawn at 100%, then cleared
    expect(status.at(-1)).toBe('');
    const shares = status.slice(0, -1).map((l) => Number(/\((\d+)%\)/.exec(l)![1]));
    expect(shares.length).toBeGreaterThan(0);
    for (let i = 1; i < shares.length; i++) expect(shares[i]).toBeGreaterThanOrEqual(shares[i - 1]);
    expect(shares.at(-1)).toBe(100);
    expect(status.at(-2)).toMatch(/^loading \d+\.\d\d \/ \d+\.\d\d GB \(100%\)/);
  });

  it('no status line without a terminal', async () => {
    const out: string[] = [], err: string[] = [];
    expect(await main(['run', PATH, '-p', 'Once', '-n', '1', '--json', '--ctx', '16'], { out: (t) => out.push(t), err: (t) => err.push(t), isTty: false })).toBe(0);
    expect(err).toEqual([]);
  });
});
