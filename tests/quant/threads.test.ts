// Quantising on worker threads gives the single thread's bytes: rows are independent, so splitting
// them across threads must not change a byte (the reference is the plain single-thread quantizeRows).
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../../src/engine/quant/index.js';
import { quantizeModelFile, quantizeModelFileThreaded } from '../../src/engine/quant/model.js';
import { QuantizePool } from '../../src/engine/quant/quantize-pool.js';
import { fileTypeByName } from '../../src/engine/quant/recipe.js';
import { sharedModel } from '../helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'pantheon-qthreads-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('QuantizePool', () => {
  it('splits 50 rows over 3 threads and returns quantizeRows\' bytes', async () => {
    const rows = 50, cols = 512; // ranges of 17, 17 and 16 rows
    let s = 11;
    const x = Float32Array.from({ length: rows * cols }, () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.1);
    const pool = new QuantizePool({ threads: 3, minElementsPerThread: 1 });
    try {
      for (const type of [GgmlType.Q4_K, GgmlType.Q6_K, GgmlType.IQ4_NL, GgmlType.Q8_0]) {
        const want = quantizeRows(type, x, rows, cols);
        const got = await pool.quantizeRows(type, x, rows, cols);
        expect(sha256(got), `type ${type}`).toBe(sha256(want));
      }
      expect(pool.rowsInWorkers).toBe(4 * 33); // rows 17..49 of each of the 4 tensors

    } finally {
      await pool.close();
    }
  });
});

describe('quantizeModelFileThreaded', () => {
  it('1 and 2 threads write the same file as quantizeModelFile', async () => {
    const src = sharedModel('tiny-random/tiny-llama-s5.gguf');
    const ft = fileTypeByName('Q4_K_M')!;
    const paths = [join(tmp, 'sync.gguf'), join(tmp, 't1.gguf'), join(tmp, 't2.gguf')];
    quantizeModelFile(src, paths[0], ft);
    await quantizeModelFileThreaded(src, paths[1], ft, { threads: 1 });
    await quantizeModelFileThreaded(src, paths[2], ft, { threads: 2 });
    const [a, b, c] = paths.map((p) => sha256(readFileSync(p)));
    expect(b).toBe(a);
    expect(c).toBe(a);
  }, 60_000);
});
