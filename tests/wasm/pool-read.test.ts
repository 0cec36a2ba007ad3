// The pool's threads read their own rows from the model file (PoolBackend.addWeight with
// FillFn.file: READ jobs on the workers, plain reads on the calling thread): the weights must be
// the bytes a fill through the calling thread gives, row for row, on several memories per thread
// and with the layouts that run after the read (Q4_0, F16); a read past the file's end is an error
// naming the cause, never wrong weights.
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import type { FillFn } from '../../src/engine/backend/types.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { fillFrom, quantisedWeights, randomBlocks, randomFloats } from './gen.js';

/** A fill that must not be called: the backend is to read the file itself. */
function fileFill(fd: number, at: number): FillFn {
  const f: FillFn = () => {
    throw new Error('the fill was called instead of reading the file');
  };
  f.file = { fd, at };
  return f;
}

describe('PoolBackend: each thread reads its rows from the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pantheon-pool-read-'));
  const pools: PoolBackend[] = [];
  afterAll(() => {
    for (const p of pools) p.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases: [string, number, number, number][] = [
    ['Q4_K', GgmlType.Q4_K, 64, 512],
    ['Q4_0', GgmlType.Q4_0, 43, 96],
    ['F16', GgmlType.F16, 11, 37],
  ];
  for (const [name, type, rows, cols] of cases) {
    it(`${name} [${cols}, ${rows}] on 2 threads × 2 memories: every row and matvec as the fill's`, () => {
      const data = type === GgmlType.F16 ? randomBlocks(type, rows, cols, 3) : quantisedWeights(type, rows, cols, 3);
      const at = 12345; // an odd offset: the tensor need not start aligned in the file
      const path = join(dir, `${name}.bin`);
      const file = new Uint8Array(at + data.length + 7).fill(0xa5);
      file.set(data, at);
      writeFileSync(path, file);
      const pool = new PoolBackend({ simd: 'simd', threads: 2, shards: 2 });
      pools.push(pool);
      const spec = { name, type, rows, cols };
      const fd = openSync(path, 'r');
      try {
        const a = pool.addWeight(spec, fillFrom(data));
        const b = pool.addWeight(spec, fileFill(fd, at));
        const ra = new Float32Array(cols), rb = new Float32Array(cols);
        for (let r = 0; r < rows; r++) {
          pool.getRow(ra, a, r);
          pool.getRow(rb, b, r);
          expect(rb).toEqual(ra);
        }
        const x = randomFloats(cols, 9);
        const oa = new Float32Array(rows), ob = new Float32Array(rows);
        pool.matvec(oa, a, x);
        pool.matvec(ob, b, x);
        expect(ob).toEqual(oa);
      } finally {
        closeSync(fd);
      }
    });
  }

  it('rows past the end of the file: the calling thread says truncated, a worker that the file could not be read', () => {
    const rows = 64, cols = 512;
    const data = quantisedWeights(GgmlType.Q4_K, rows, cols, 4);
    const path = join(dir, 'short.bin');
    writeFileSync(path, data.subarray(0, data.length / 2)); // only the first half of the rows
    const pool = new PoolBackend({ simd: 'simd', threads: 2, band: 0 });
    pools.push(pool);
    const spec = { name: 'short', type: GgmlType.Q4_K, rows, cols };
    const fd = openSync(path, 'r');
    try {
      // rows [0, 32) on this thread are in the file, [32, 64) on the worker are not
      expect(() => pool.addWeight(spec, fileFill(fd, 0))).toThrow(/worker 1 .* could not read the model file/);
      // everything past the end: this thread's read fails first
      expect(() => pool.addWeight(spec, fileFill(fd, data.length))).toThrow(/truncated|could not read/);
      // the pool still works afterwards
      const w = pool.addWeight(spec, fillFrom(data));
      const out = new Float32Array(rows);
      pool.matvec(out, w, randomFloats(cols, 2));
      expect(out.every(Number.isFinite)).toBe(true);
    } finally {
      closeSync(fd);
    }
  });
});
