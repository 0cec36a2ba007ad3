// The rows two neighbouring pool threads share (PoolBackend "bands", pool-worker.ts runJobs): how a
// weight is split (splitRows), how runJobs claims a band's chunks from its two ends, and that
// whatever split a run ends with, every product equals the fixed split's bit for bit (a batch also
// with each worker quantising its own copy of x: q8_0, q8_1, q8_K and f32 activations).
import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend, splitRows } from '../../src/engine/backend/pool.js';
import { CTRL, JOBK, runJobs } from '../../src/engine/backend/pool-worker.js';
import type { LogitStats } from '../../src/engine/backend/logit-stats.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { FUSED_TOP_MAX } from '../../src/engine/sample/index.js';
import { fillFrom, quantisedWeights, randomFloats } from './gen.js';

describe('splitRows', () => {
  it('without bands: the even split in row groups (43 Q4_0 rows on 3 threads: 16, 16, 11)', () => {
    expect(splitRows(43, 4, 3, 0, 18)).toEqual({ held: [[0, 16], [16, 32], [32, 43]], core: [[0, 16], [16, 32], [32, 43]], bands: null });
    expect(splitRows(10, 1, 3, 0, 34)).toEqual({ held: [[0, 4], [4, 7], [7, 10]], core: [[0, 4], [4, 7], [7, 10]], bands: null });
    // too few rows for a band of one block of 4: as band 0
    expect(splitRows(28, 1, 2, 0.125, 34)).toEqual(splitRows(28, 1, 2, 0, 34));
  });

  it('hand-worked: 896 rows of 952 bytes on 2 threads, band 0.125', () => {
    // 224 blocks of 4, an eighth: 28 blocks (112 rows) around row 448; chunks of
    // ceil(28 / 16) = 2 blocks (8 rows, 7616 bytes ≤ CHUNK_BYTES): 14 chunks
    expect(splitRows(896, 1, 2, 0.125, 952)).toEqual({
      held: [[0, 504], [392, 896]],
      core: [[0, 392], [504, 896]],
      bands: [{ s: 392, e: 504, ch: 8, count: 14, coarse: { ch: 8, count: 14 } }],
    });
    // a big matrix's band is cut finer: 151936 rows of 952 bytes, chunks of at most 128 KiB (136
    // rows), or for matvecTop 16 chunks of 4·ceil(4748 / 16) = 1188 rows
    const big = splitRows(151936, 1, 2, 0.125, 952).bands![0];
    expect(big).toEqual({ s: 75968 - 4 * 2374, e: 75968 - 4 * 2374 + 4 * 4748, ch: 136, count: Math.ceil((4 * 4748) / 136), coarse: { ch: 1188, count: 16 } });
  });

  for (const p of [2, 3, 4, 7]) {
    it(`${p} threads: cores cover the rows once, in order; each band is what two neighbours hold`, () => {
      for (const rows of [1, 5, 31, 32, 67, 128, 1003, 4864, 151936]) {
        for (const band of [0.05, 0.125, 0.5, 0.9]) {
          for (const unit of rows % 4 === 0 ? [1, 4] : [1]) {
            const { held, core, bands } = splitRows(rows, unit, p, band, 100);
            expect(core[0][0]).toBe(0);
            expect(core[p - 1][1]).toBe(rows);
            for (let i = 0; i < p; i++) {
              expect(held[i][0]).toBeLessThanOrEqual(core[i][0]);
              expect(held[i][1]).toBeGreaterThanOrEqual(core[i][1]);
              if (i > 0) expect(core[i][0]).toBeGreaterThanOrEqual(core[i - 1][1]);
            }
            if (!bands) {
              for (let i = 1; i < p; i++) expect(core[i][0]).toBe(core[i - 1][1]);
              expect(held).toEqual(core);
              continue;
            }
            expect(bands.length).toBe(p - 1);
            const blocks = Math.ceil(rows / 4), share = Math.floor(blocks / p);
            for (let b = 0; b < p - 1; b++) {
              const { s, e, ch, count } = bands[b]!;
              expect(core[b][1]).toBe(s);
              expect(core[b + 1][0]).toBe(e);
              expect(held[b][1]).toBe(e);
              expect(held[b + 1][0]).toBe(s);
              expect(core[b + 1][1]).toBeGreaterThan(core[b + 1][0]); // every thread keeps a core
              expect(s % 4).toBe(0);
              expect(e % 4 === 0 || e === rows).toBe(true);
              expect(e - s).toBe(4 * Math.min(Math.floor((blocks * band) / (p - 1)), Math.floor(share / 2)));
              expect(ch % 4).toBe(0);
              expect(count).toBe(Math.ceil((e - s) / ch));
              expect(count).toBeLessThan(0x8000);
              const { coarse } = bands[b]!;
              expect(coarse.ch % 4 === 0 && coarse.ch >= ch && coarse.count === Math.ceil((e - s) / coarse.ch) && coarse.count <= 16).toBe(true);
            }
          }
        }
      }
    });
  }
});

describe('runJobs: a band claimed from both ends', () => {
  // Two "threads" as two job lists on one claim word: each a PIECE (its core) then a BAND from its
  // side, each followed by one PRODUCT template. The fake kernel records the rows it was given.
  const word = 5;
  const lo = 40, hi = 100, ch = 8; // band rows [40, 100) of the left thread's slice: chunks 0-7, the last 4 rows
  const count = Math.ceil((hi - lo) / ch);
  const job = (c: Int32Array, j: number, fn: number, args: number[]) => c.set([fn, ...args], CTRL.JOBS + j * CTRL.JOB);
  function side(high: boolean, core: [number, number], fn: number): Int32Array {
    const c = new Int32Array(CTRL.SIZE);
    job(c, 0, JOBK.PIECE, [core[0], core[1], 0, 0, 0, 1]);
    job(c, 1, fn | (JOBK.PRODUCT << JOBK.MODE_SHIFT), [1000, 2000, 3000, -1, -1, 4000, 5000, 6000, 7000, 8000]);
    // the right thread's slice starts at the band (its rows are 40 less there)
    job(c, 2, JOBK.BAND, [word, high ? 1 : 0, ch, high ? lo - 40 : lo, high ? hi - 40 : hi, 1]);
    job(c, 3, fn | (JOBK.PRODUCT << JOBK.MODE_SHIFT), [1000, 2000, 3000, -1, -1, 4000, 5000, 6000, 7000, 8000]);
    return c;
  }

  function run(order: 'left first' | 'right first' | 'interleaved') {
    const claims = new Int32Array(new SharedArrayBuffer(64));
    claims[word] = count << 16;
    const rows: { who: string; r0: number; r1: number }[] = [];
    const left = side(false, [0, 40], 0);
    const right = side(true, [60, 120], 1);
    let nested = false;
    const fns = [
      (...a: number[]) => {
        expect(a.slice(0, 3).concat(a.slice(5))).toEqual([1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 0, 0]);
        rows.push({ who: 'left', r0: a[3], r1: a[4] });
        // interleaved: after the left thread's first band chunk, the right one runs all of its jobs
        if (order === 'interleaved' && a[3] >= lo && !nested) {
          nested = true;
          runJobs(right, 4, fns, claims);
        }
      },
      (...a: number[]) => rows.push({ who: 'right', r0: a[3] + 40, r1: a[4] + 40 }),
    ];
    if (order === 'right first') runJobs(right, 4, fns, claims);
    runJobs(left, 4, fns, claims);
    if (order === 'left first') runJobs(right, 4, fns, claims);
    return { rows, left: claims[word] & 0xffff, right: claims[word] >>> 16 };
  }

  const covers = (rows: { r0: number; r1: number }[]) => {
    const hit = new Int32Array(160);
    for (const r of rows) for (let i = r.r0; i < r.r1; i++) hit[i]++;
    return Array.from(hit).every((h) => h === 1);
  };

  it('the thread that comes first takes the whole band, from its own end', () => {
    const a = run('left first');
    expect(a.rows.filter((r) => r.who === 'left')).toEqual([{ who: 'left', r0: 0, r1: 40 }, ...Array.from({ length: count }, (_, k) => ({ who: 'left', r0: lo + 8 * k, r1: Math.min(hi, lo + 8 * k + 8) }))]);
    expect(a.rows.filter((r) => r.who === 'right')).toEqual([{ who: 'right', r0: 100, r1: 160 }]);
    expect([a.left, a.right]).toEqual([count, count]);
    const b = run('right first');
    expect(b.rows.filter((r) => r.who === 'right')).toEqual([{ who: 'right', r0: 100, r1: 160 }, ...Array.from({ length: count }, (_, i) => count - 1 - i).map((k) => ({ who: 'right', r0: lo + 8 * k, r1: Math.min(hi, lo + 8 * k + 8) }))]);
    expect([b.left, b.right]).toEqual([0, 0]);
    expect(covers(a.rows) && covers(b.rows)).toBe(true);
  });

  it('interleaved: each takes a contiguous run from its end and together they cover the band once', () => {
    const c = run('interleaved');
    expect(c.left).toBe(1); // the left thread took chunk 0, then found the rest claimed
    expect(c.rows.filter((r) => r.who === 'left').map((r) => r.r0)).toEqual([0, lo]);
    expect(c.rows.filter((r) => r.who === 'right').map((r) => r.r0)).toEqual([100, 96, 88, 80, 72, 64, 56, 48]);
    expect(covers(c.rows)).toBe(true);
  });

  it('templates: rows, pointers and lengths per mode', () => {
    const c = new Int32Array(CTRL.SIZE);
    const calls: number[][] = [];
    const fns = [0, 1, 2, 3, 4].map((i) => (...a: number[]) => calls.push([i, ...a]));
    job(c, 0, JOBK.PIECE, [12, 20, 3, 0, 0, 5]);
    job(c, 1, 0 | (JOBK.PRODUCT << JOBK.MODE_SHIFT), [100, 200, 300, 0, 0, 600, 700, 800, 900, 1000]);
    job(c, 2, 1 | (JOBK.ROWS2 << JOBK.MODE_SHIFT), [100, 500]);
    job(c, 3, 2 | (JOBK.ROWS3 << JOBK.MODE_SHIFT), [100, 100, 900]);
    job(c, 4, 3 | (JOBK.TOKENS3 << JOBK.MODE_SHIFT), [100, 100, 900, 0, 2, 64]);
    job(c, 5, 4 | (JOBK.STATS << JOBK.MODE_SHIFT), [4096, 100, 0, 40, 48]);
    job(c, 6, 2, [7, 8, 9]); // a plain export after the piece
    runJobs(c, 7, fns, new Int32Array(new SharedArrayBuffer(4)));
    const z = [0, 0, 0, 0, 0, 0, 0, 0];
    expect(calls).toEqual([
      [0, 100, 200, 300, 12, 20, 600, 700, 800, 900, 1000, 0, 0],
      [1, 148, 548, 8],
      [2, 148, 148, 948, 8],
      [3, 148, 148, 948, 8],
      [3, 148 + 256, 148 + 256, 948 + 256, 8],
      [4, 4096 + 3 * 48, 148, 8, 40],
      [2, 7, 8, 9, ...z, 0],
    ]);
  });
});

describe('PoolBackend with bands: any split gives the fixed split\'s bits', () => {
  const rows = 1003, cols = 256;
  const fixed = new PoolBackend({ threads: 2, band: 0 });
  // (and 2 threads of 3 memories each: bands between threads, fixed cuts within one; pool.ts shards)
  const pools = [...[2, 3].map((threads) => new PoolBackend({ threads, band: 0.5 })), new PoolBackend({ threads: 2, band: 0.5, shards: 3 })];
  afterAll(() => [fixed, ...pools].forEach((p) => p.dispose()));

  for (const [name, type] of [['Q8_0', GgmlType.Q8_0], ['Q4_0', GgmlType.Q4_0], ['Q4_1', GgmlType.Q4_1], ['Q6_K', GgmlType.Q6_K], ['F16', GgmlType.F16]] as const) {
    it(`${name}: matvec, matvecAdd, a batch (n = 6), matmulGated and matmulShared, ten times each`, () => {
      const gate = quantisedWeights(type, rows, cols, 3), up = quantisedWeights(type, rows, cols, 4);
      const spec = (n: string) => ({ name: n, type, rows, cols });
      const ref = { g: fixed.addWeight(spec('g'), fillFrom(gate)), u: fixed.addWeight(spec('u'), fillFrom(up)) };
      const x = randomFloats(6 * cols, 11);
      const want = {
        mv: new Float32Array(rows), add: randomFloats(rows, 12), batch: new Float32Array(6 * rows), gated: new Float32Array(6 * rows), gated1: new Float32Array(rows),
        shared: [new Float32Array(6 * rows), new Float32Array(6 * rows)],
      };
      const base = want.add.slice();
      fixed.matvec(want.mv, ref.g, x);
      fixed.matvecAdd(want.add, ref.g, x);
      fixed.matmul(want.batch, ref.g, x, 6);
      fixed.matmulGated(want.gated, ref.g, ref.u, x, 6);
      fixed.matmulGated(want.gated1, ref.g, ref.u, x, 1);
      fixed.matmulShared(want.shared, [ref.g, ref.u], x, 6);
      for (const pool of pools) {
        const w = { g: pool.addWeight(spec('g'), fillFrom(gate)), u: pool.addWeight(spec('u'), fillFrom(up)) };
        // one token's outputs in the pool's own memory too (written there directly)
        const a = pool.kernels.arena;
        const direct = a.f32(a.alloc(rows * 4), rows);
        for (let rep = 0; rep < 10; rep++) {
          const mv = new Float32Array(rows), add = base.slice(), batch = new Float32Array(6 * rows), gated = new Float32Array(6 * rows), gated1 = new Float32Array(rows);
          const shared = [new Float32Array(6 * rows), new Float32Array(6 * rows)];
          pool.matvec(mv, w.g, x);
          pool.matvecAdd(add, w.g, x);
          pool.matmul(batch, w.g, x, 6);
          pool.matmulGated(gated, w.g, w.u, x, 6);
          pool.matmulGated(gated1, w.g, w.u, x, 1);
          pool.matmulShared(shared, [w.g, w.u], x, 6);
          direct.fill(NaN);
          pool.matvec(direct, w.g, x);
          expect([mv, add, batch, gated, gated1, ...shared, direct]).toEqual([want.mv, want.add, want.batch, want.gated, want.gated1, ...want.shared, want.mv]);
        }
      }
    });
  }

  // (the second shape's bands claim chunks of 12 rows, its matvecTop's of 32 on 2 threads, 24 on 3: Band.coarse)
  it.each([[1003, 256], [2000, 8192]])('matvecTop [%i rows of %i]: logits and top ids as the fixed split, the same normaliser every run', (rows, cols) => {
    const data = quantisedWeights(GgmlType.Q8_0, rows, cols, 8);
    const spec = { name: 'output', type: GgmlType.Q8_0, rows, cols };
    const x = randomFloats(cols, 13);
    const st = (): LogitStats => ({ want: 40, valid: false, max: 0, sum: 0, count: 0, ids: new Int32Array(FUSED_TOP_MAX) });
    const ref = st(), refOut = new Float32Array(rows);
    fixed.matvecTop(refOut, fixed.addWeight(spec, fillFrom(data)), x, ref);
    for (const pool of pools) {
      const w = pool.addWeight(spec, fillFrom(data));
      let sum = NaN;
      for (let rep = 0; rep < 20; rep++) {
        const s = st(), out = new Float32Array(rows);
        pool.matvecTop(out, w, x, s);
        expect(out).toEqual(refOut);
        expect([s.valid, s.max, s.count, Array.from(s.ids.subarray(0, 40))]).toEqual([true, ref.max, ref.count, Array.from(ref.ids.subarray(0, 40))]);
        expect(Math.abs(s.sum - ref.sum) / ref.sum).toBeLessThan(1e-12);
        // the pieces are fixed chunks whoever computes them, so the sum is the same bits every run
        if (rep > 0) expect(s.sum).toBe(sum);
        sum = s.sum;
      }
    }
  });
});
