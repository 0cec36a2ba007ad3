// splitRows with several parts (memories) per thread (pool.ts: shards): every row held, the cores
// in order and disjoint, and bands only between parts of different threads, as wide as with one
// part per thread.

import { describe, expect, it } from 'vitest';
import { BAND, splitRows } from '../../src/engine/backend/pool.js';

describe('splitRows with shards', () => {
  it.each([
    [4096, 1, 2, 3],
    [14336, 1, 4, 2],
    [151936, 1, 2, 5],
    [1003, 4, 3, 2],
    [64, 1, 2, 4],
    [896, 1, 1, 3],
  ])('%i rows, unit %i, %i threads × %i shards', (rows, unit, threads, shards) => {
    const p = threads * shards;
    const { held, core, bands } = splitRows(rows, unit, p, BAND, 1024, shards);
    expect(held.length).toBe(p);
    expect(core[0][0]).toBe(0);
    expect(core[p - 1][1]).toBe(rows);
    for (let i = 0; i < p; i++) {
      expect(held[i][0]).toBeLessThanOrEqual(core[i][0]);
      expect(core[i][0]).toBeLessThanOrEqual(core[i][1]);
      expect(core[i][1]).toBeLessThanOrEqual(held[i][1]);
      if (i > 0) {
        // a part's held rows start where its left neighbour's core ends, its core where the neighbour's held rows end
        expect(held[i][0]).toBe(core[i - 1][1]);
        expect(core[i][0]).toBe(held[i - 1][1]);
      }
    }
    if (!bands) return;
    const one = splitRows(rows, unit, threads, BAND, 1024).bands;
    for (let b = 0; b < p - 1; b++) {
      const band = bands[b];
      if ((b + 1) % shards !== 0) {
        expect(band).toBeNull(); // two parts of one thread: a fixed cut
        expect(held[b][1]).toBe(held[b + 1][0]);
        continue;
      }
      expect(band).not.toBeNull();
      expect(band!.e - band!.s).toBeLessThanOrEqual(one ? one[0]!.e - one[0]!.s : Infinity);
      expect(band!.s % 4).toBe(0);
    }
  });
});
