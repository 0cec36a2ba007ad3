// Quantising on worker threads gives the single thread's bytes: rows are independent, so splitting
// them across threads must not change a byte (the reference is the plain single-thread quantizeRows).
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { readGgufHeaderSync } from '../../src/engine/gguf/file.js';
import { f32ToF16 } from '../../src/engine/quant/half.js';
import { dequantizeRow, quantizeRows } from '../../src/engine/quant/index.js';
import { quantizeModelFile, quantizeModelFileThreaded } from '../../src/engine/quant/model.js';
import { QuantizePool, quantizeFileRows } from '../../src/engine/quant/quantize-pool.js';
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

describe('quantizeFileRows', () => {
  // a 37 × 512 F16 matrix after 100 bytes of something else, as rows lie in a model file
  const rows = 37, cols = 512, at = 100;
  let s = 5;
  const halves = Uint16Array.from({ length: rows * cols }, () => f32ToF16(((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5) * 0.2));
  const file = join(tmp, 'rows.bin');
  writeFileSync(file, Buffer.concat([Buffer.alloc(at, 7), Buffer.from(halves.buffer)]));
  const x = new Float32Array(rows * cols);
  dequantizeRow(GgmlType.F16, new Uint8Array(halves.buffer), 0, x, rows * cols);
  const src = { path: file, at, type: GgmlType.F16, name: 'm' };

  it('reads, converts and quantises a row range a slice at a time with quantizeRows\' bytes', () => {
    for (const type of [GgmlType.Q4_K, GgmlType.Q8_0]) {
      const rb = quantizeRows(type, x.subarray(0, cols), 1, cols).length;
      const want = quantizeRows(type, x, rows, cols);
      for (const [r0, r1, slice] of [[0, rows, 1 << 22], [0, rows, 3 * cols], [5, 29, 2 * cols], [36, 37, cols]]) {
        expect(sha256(quantizeFileRows(type, src, r0, r1, cols, undefined, slice)), `type ${type} rows ${r0}..${r1}, slice ${slice}`).toBe(sha256(want.subarray(r0 * rb, r1 * rb)));
      }
    }
  });

  it('a file that ends inside the rows is a truncated-file error naming the tensor', () => {
    const short = join(tmp, 'short.bin');
    writeFileSync(short, readFileSync(file).subarray(0, at + 10 * cols * 2 + 3));
    expect(() => quantizeFileRows(GgmlType.Q8_0, { ...src, path: short }, 0, rows, cols)).toThrow(/tensor "m": it is truncated/);
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

  it('an expert tensor with an importance matrix per expert: 2 threads write quantizeModelFile\'s file', async () => {
    const src = sharedModel('tiny-random/tiny-qwen3moe-s1.gguf');
    const h = readGgufHeaderSync(src);
    // one importance per column and expert (any positive values: the same for both writers)
    const entries = new Map(h.tensors.filter((t) => t.dims.length >= 2 && t.name.startsWith('blk.')).map((t) => {
      const nMat = t.dims[2] ?? 1, n = t.dims[0] * nMat;
      return [t.name, { cols: t.dims[0], sums: Float32Array.from({ length: n }, (_, i) => 1 + ((i * 7919) % 97) / 10), counts: new Float64Array(nMat).fill(1) }];
    }));
    expect([...entries.keys()].some((n) => /_exps\./.test(n))).toBe(true);
    const im = { imatrix: { entries, datasets: [], chunkCount: 1, chunkSize: 64 }, path: 'test.imatrix' };
    const ft = fileTypeByName('Q4_K_M')!;
    const paths = [join(tmp, 'moe-sync.gguf'), join(tmp, 'moe-t2.gguf')];
    quantizeModelFile(src, paths[0], ft, undefined, im);
    await quantizeModelFileThreaded(src, paths[1], ft, { threads: 2, imatrix: im });
    expect(sha256(readFileSync(paths[1]))).toBe(sha256(readFileSync(paths[0])));
  }, 60_000);
});
