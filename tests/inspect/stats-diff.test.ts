// `pantheon stats` and `pantheon diff` on small files made here, against hand-worked numbers.
import { mkdtempSync, openSync, closeSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/command.js';
import { readGgufHeaderSync } from '../../src/engine/gguf/file.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { kv, writeGguf } from '../../src/engine/gguf/writer.js';
import { binOf, histogramEdges, tensorStats } from '../../src/engine/inspect/tensor-stats.js';
import { findTensor } from '../../src/engine/inspect/tensor-chunks.js';

const dir = mkdtempSync(join(tmpdir(), 'pantheon-stats-'));

function f32(values: number[]): Uint8Array {
  return new Uint8Array(new Float32Array(values).buffer);
}

function f16(values: number[]): Uint8Array {
  // Only values exact in f16 (small integers): sign, exponent and mantissa by hand.
  const out = new Uint16Array(values.map((v) => {
    if (v === 0) return 0;
    const e = Math.floor(Math.log2(Math.abs(v)));
    return (v < 0 ? 0x8000 : 0) | ((e + 15) << 10) | Math.round((Math.abs(v) / 2 ** e - 1) * 1024);
  }));
  return new Uint8Array(out.buffer);
}

/** One Q8_0 block: f16 d = 0.5 (0x3800), then 32 signed bytes q = -3 … 28; values d·q. */
function q8Block(): Uint8Array {
  const b = new Uint8Array(34);
  b[0] = 0x00;
  b[1] = 0x38;
  for (let i = 0; i < 32; i++) b[2 + i] = (i - 3) & 0xff;
  return b;
}

function file(name: string, kvs: ReturnType<typeof kv.u32>[], tensors: Parameters<typeof writeGguf>[1]): string {
  const p = join(dir, name);
  writeFileSync(p, writeGguf(kvs, tensors));
  return p;
}

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; }, isTty: false };
  return { code: await main(argv, io), out, err };
}

// A 2-row × 4-column matrix with two zeros and one infinity.
const M = [1, 2, 3, 4, 0, 0, -2, Infinity];
const statsFile = file('stats.gguf', [kv.str('general.architecture', 'llama')], [
  { name: 'm', dims: [4, 2], type: GgmlType.F32, data: f32(M) },
  { name: 'q', dims: [32], type: GgmlType.Q8_0, data: q8Block() },
]);

describe('pantheon stats', () => {
  it('hand-worked moments, zeros, non-finite values and a 3-bin histogram', async () => {
    const r = await cli(['stats', statsFile, 'm', '--json', '--bins', '3']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    // Finite: 1 2 3 4 0 0 -2 → n 7, sum 8, sum of squares 34.
    expect(j.min).toBe(-2);
    expect(j.max).toBe(4);
    expect(j.mean).toBeCloseTo(8 / 7, 14);
    expect(j.std).toBeCloseTo(Math.sqrt(174) / 7, 14); // var = 34/7 − (8/7)² = 174/49
    expect(j.zeros).toBe(2);
    expect(j.nonfinite).toBe(1);
    // Edges −2, 0, 2, 4: [−2,0) holds −2; [0,2) holds 0 0 1; [2,4] holds 2 3 4.
    expect(j.histogram).toEqual({ edges: [-2, 0, 2, 4], counts: [1, 3, 3] });
    expect(j.scales).toBeUndefined();
  });

  it('a Q8_0 block: d·q values and its one block scale', async () => {
    const j = JSON.parse((await cli(['stats', statsFile, 'q', '--json', '--bins', '2'])).out);
    expect([j.min, j.max, j.zeros]).toEqual([-1.5, 14, 1]);
    expect(j.mean).toBe((0.5 * ((28 * 29) / 2 - 6)) / 32); // Σ q = (1+…+28) − (1+2+3) = 400
    expect(j.histogram.counts.reduce((a: number, b: number) => a + b, 0)).toBe(32);
    expect(j.scales).toMatchObject({ count: 1, min: 0.5, max: 0.5 });
  });

  it('the heatmap is mean |value| per cell, non-finite values left out', () => {
    const h = readGgufHeaderSync(statsFile);
    const fd = openSync(statsFile, 'r');
    try {
      const s = tensorStats(fd, h, findTensor(h, 'm'), { bins: 4, heatmap: { rows: 2, cols: 2 } });
      expect(s.heatmap).toEqual({ rows: 2, cols: 2, matrixRows: 2, matrixCols: 4, values: [1.5, 3.5, 0, 2] });
      const seen: number[] = [];
      tensorStats(fd, h, findTensor(h, 'm'), { onProgress: (d, t) => seen.push(d / t) });
      expect(seen[0]).toBe(0);
      expect(seen.at(-1)).toBe(1);
      expect(seen.every((x, i) => i === 0 || x >= seen[i - 1])).toBe(true);
    } finally {
      closeSync(fd);
    }
  });

  it("bins follow numpy's rule: equal widths, right edge in the last bin, one value widened by ±0.5", () => {
    expect(histogramEdges(3, 3, 2)).toEqual([2.5, 3, 3.5]);
    const e = histogramEdges(0, 1, 10);
    expect(binOf(0.3, e)).toBe(3); // 0.3 / 0.1 = 2.9999999999999996 in floats
    expect(binOf(1, e)).toBe(9);
    expect(binOf(0, e)).toBe(0);
  });

  it('a wrong tensor name is one line that says how to list them', async () => {
    const r = await cli(['stats', statsFile, 'nope']);
    expect(r.code).toBe(1);
    expect(r.err.trim()).toMatch(/^error: .*no tensor named "nope"; list them with "pantheon tensors FILE"$/);
  });
});

describe('pantheon diff', () => {
  const a = file('a.gguf', [kv.u32('x.k1', 1), kv.str('x.k2', 'a'), kv.str('x.gone', 'z')], [
    { name: 'x', dims: [4], type: GgmlType.F32, data: f32([1, 2, 2, 4]) },
    { name: 'same', dims: [4], type: GgmlType.F32, data: f32([7, 7, 7, 7]) },
    { name: 'retyped', dims: [4], type: GgmlType.F32, data: f32([1, 1, 2, -4]) },
    { name: 'reshaped', dims: [4], type: GgmlType.F32, data: f32([1, 2, 3, 4]) },
    { name: 'removed', dims: [4], type: GgmlType.F32, data: f32([0, 0, 0, 0]) },
  ]);
  const b = file('b.gguf', [kv.u32('x.k1', 2), kv.str('x.k2', 'a'), kv.str('x.new', 'y')], [
    { name: 'x', dims: [4], type: GgmlType.F32, data: f32([1, 2, 2, 5]) },
    { name: 'same', dims: [4], type: GgmlType.F32, data: f32([7, 7, 7, 7]) },
    { name: 'retyped', dims: [4], type: GgmlType.F16, data: f16([1, 1, 2, -4]) },
    { name: 'reshaped', dims: [2, 2], type: GgmlType.F32, data: f32([1, 2, 3, 4]) },
    { name: 'added', dims: [4], type: GgmlType.F32, data: f32([0, 0, 0, 0]) },
  ]);

  it('--json: keys and tensors added, removed, changed, with hand-worked distances', async () => {
    const r = await cli(['diff', a, b, '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.metadata).toEqual({ added: ['x.new'], removed: ['x.gone'], changed: ['x.k1'] });
    expect(j.tensors.added).toEqual(['added']);
    expect(j.tensors.removed).toEqual(['removed']);
    const byName = Object.fromEntries(j.tensors.changed.map((c: { name: string }) => [c.name, c]));
    expect(Object.keys(byName).sort()).toEqual(['reshaped', 'retyped', 'x']);
    // x: ‖(0,0,0,1)‖ / ‖(1,2,2,4)‖ = 1 / 5.
    expect(byName.x).toEqual({ name: 'x', a: { type: 'F32', dims: [4] }, b: { type: 'F32', dims: [4] }, relRms: 0.2, maxAbs: 1 });
    expect(byName.retyped).toMatchObject({ a: { type: 'F32' }, b: { type: 'F16' }, relRms: 0, maxAbs: 0 });
    expect(byName.reshaped).toMatchObject({ a: { dims: [4] }, b: { dims: [2, 2] }, relRms: 0 });
  });

  it('text: the changed tensors as a table, largest difference first', async () => {
    const r = await cli(['diff', a, b]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/metadata changed \(1\): x\.k1/);
    expect(r.out).toMatch(/F32 → F16/);
    expect(r.out.indexOf('x ')).toBeLessThan(r.out.indexOf('retyped'));
    expect(r.out).toMatch(/3 tensors differ, 1 identical/);
  });

  it('a bad second file is named as the one at fault', async () => {
    const bad = join(dir, 'not-a-model.gguf');
    writeFileSync(bad, 'not a model');
    const r = await cli(['diff', a, bad]);
    expect(r.code).toBe(1);
    expect(r.err.trim()).toBe(`error: ${bad}: starts with "not " instead of "GGUF": it is not a GGUF model (at byte 0)`);
  });

  it('a missing file is one line', async () => {
    const r = await cli(['diff', a, join(dir, 'nope.gguf')]);
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });
});
