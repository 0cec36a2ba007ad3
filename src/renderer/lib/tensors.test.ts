import { describe, expect, it } from 'vitest';
import type { TensorRow } from '../../shared/contract.js';
import { bitsPerWeight, bytesByType, filterTensors, groupByLayer, shapeText, sortTensors } from './tensors.js';

function row(name: string, type: string, dims: number[], bytes: number, offset: number): TensorRow {
  const m = /^blk\.(\d+)\./.exec(name);
  return { name, type, typeId: 0, dims, elements: dims.reduce((a, b) => a * b, 1), bytes, offset, layer: m ? Number(m[1]) : null };
}

// A hand-made table in file order.
const rows = [
  row('token_embd.weight', 'Q8_0', [64, 512], 34816, 0),
  row('blk.0.attn_q.weight', 'Q4_K', [256, 64], 9216, 34816),
  row('blk.0.attn_norm.weight', 'F32', [64], 256, 44032),
  row('blk.1.attn_q.weight', 'Q4_K', [256, 64], 9216, 44288),
  row('blk.10.attn_q.weight', 'Q4_K', [256, 64], 9216, 53504),
  row('output_norm.weight', 'F32', [64], 256, 62720),
];

describe('tensor table logic', () => {
  it('filters by name, type and layer', () => {
    expect(filterTensors(rows, { name: 'blk.0', type: '', layer: 'all' }).map((r) => r.name)).toEqual(['blk.0.attn_q.weight', 'blk.0.attn_norm.weight']);
    expect(filterTensors(rows, { name: '', type: 'F32', layer: 'all' }).map((r) => r.name)).toEqual(['blk.0.attn_norm.weight', 'output_norm.weight']);
    expect(filterTensors(rows, { name: '', type: '', layer: '10' }).map((r) => r.name)).toEqual(['blk.10.attn_q.weight']);
    expect(filterTensors(rows, { name: '', type: '', layer: 'none' }).map((r) => r.name)).toEqual(['token_embd.weight', 'output_norm.weight']);
    expect(filterTensors(rows, { name: 'ATTN_Q', type: 'Q4_K', layer: '1' }).map((r) => r.name)).toEqual(['blk.1.attn_q.weight']);
  });

  it('sorts names numerically (blk.2 before blk.10) and either way', () => {
    const asc = sortTensors(rows, { column: 'name', dir: 'ascending' }).map((r) => r.name);
    expect(asc).toEqual(['blk.0.attn_norm.weight', 'blk.0.attn_q.weight', 'blk.1.attn_q.weight', 'blk.10.attn_q.weight', 'output_norm.weight', 'token_embd.weight']);
    expect(sortTensors(rows, { column: 'name', dir: 'descending' }).map((r) => r.name)).toEqual([...asc].reverse());
  });

  it('sorts by bytes with ties in file order', () => {
    expect(sortTensors(rows, { column: 'bytes', dir: 'descending' }).map((r) => r.offset)).toEqual([0, 34816, 44288, 53504, 44032, 62720]);
    expect(sortTensors(rows, { column: 'bytes', dir: 'ascending' }).map((r) => r.offset)).toEqual([44032, 62720, 34816, 44288, 53504, 0]);
  });

  it('sorts shapes by the outermost dimension first', () => {
    const s = sortTensors([row('a', 'F32', [512, 2], 0, 0), row('b', 'F32', [8, 3], 0, 1), row('c', 'F32', [64], 0, 2)], { column: 'shape', dir: 'ascending' });
    expect(s.map((r) => r.name)).toEqual(['c', 'a', 'b']);
  });

  it('groups by layer with totals, non-layer tensors first', () => {
    const g = groupByLayer(rows);
    expect(g.map((x) => [x.label, x.tensors.length, x.bytes])).toEqual([
      ['other', 2, 35072],
      ['blk.0', 2, 9472],
      ['blk.1', 1, 9216],
      ['blk.10', 1, 9216],
    ]);
  });

  it('sums bytes by type, largest first', () => {
    expect(bytesByType(rows)).toEqual([
      { type: 'Q8_0', bytes: 34816, tensors: 1 },
      { type: 'Q4_K', bytes: 27648, tensors: 3 },
      { type: 'F32', bytes: 512, tensors: 2 },
    ]);
  });

  it('writes shapes outermost first and bits per weight', () => {
    expect(shapeText([64, 512])).toBe('512 × 64');
    // Q4_K: 144 bytes per 256 weights = 4.5 bits (ggml-common.h block_q4_K).
    expect(bitsPerWeight(rows[1])).toBe(4.5);
    // Q8_0: 34 bytes per 32 weights = 8.5 bits (block_q8_0).
    expect(bitsPerWeight(rows[0])).toBe(8.5);
  });
});
