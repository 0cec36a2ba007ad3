// Tensor-table logic, kept pure so it is tested apart from React: filter, sort, group by layer, totals.

import type { TensorRow } from '../../shared/contract.js';

export type TensorColumn = 'name' | 'type' | 'shape' | 'elements' | 'bytes' | 'offset';
export type SortDir = 'ascending' | 'descending';
export interface TensorSort {
  column: TensorColumn;
  dir: SortDir;
}

export interface TensorFilter {
  /** Substring of the name, case-insensitive. */
  name: string;
  /** A ggml type name, or '' for all. */
  type: string;
  /** 'all', 'none' (tensors outside any blk.N) or a layer number as text. */
  layer: string;
}

const collator = new Intl.Collator('en', { numeric: true });

export function filterTensors(rows: readonly TensorRow[], f: TensorFilter): TensorRow[] {
  const name = f.name.trim().toLowerCase();
  return rows.filter((r) => {
    if (name && !r.name.toLowerCase().includes(name)) return false;
    if (f.type && r.type !== f.type) return false;
    if (f.layer === 'none') return r.layer === null;
    if (f.layer !== 'all' && f.layer !== '') return r.layer === Number(f.layer);
    return true;
  });
}

function compare(a: TensorRow, b: TensorRow, column: TensorColumn): number {
  switch (column) {
    case 'name':
      return collator.compare(a.name, b.name);
    case 'type':
      return collator.compare(a.type, b.type);
    case 'shape': {
      // Outermost dimension first (how the shape is read), then the rest.
      const n = Math.max(a.dims.length, b.dims.length);
      for (let i = n - 1; i >= 0; i--) {
        const d = (a.dims[i] ?? 1) - (b.dims[i] ?? 1);
        if (d !== 0) return d;
      }
      return a.dims.length - b.dims.length;
    }
    case 'elements':
      return a.elements - b.elements;
    case 'bytes':
      return a.bytes - b.bytes;
    case 'offset':
      return a.offset - b.offset;
  }
}

/** A stable sort; ties keep file order (by offset). */
export function sortTensors(rows: readonly TensorRow[], s: TensorSort): TensorRow[] {
  const sign = s.dir === 'ascending' ? 1 : -1;
  return [...rows].sort((a, b) => sign * compare(a, b, s.column) || a.offset - b.offset);
}

export interface LayerGroup {
  /** null: tensors outside any blk.N (embeddings, output). */
  layer: number | null;
  label: string;
  tensors: TensorRow[];
  bytes: number;
  elements: number;
}

/** Groups in layer order (non-layer tensors first), tensors inside each in the given order. */
export function groupByLayer(rows: readonly TensorRow[]): LayerGroup[] {
  const map = new Map<number | null, LayerGroup>();
  for (const r of rows) {
    let g = map.get(r.layer);
    if (!g) {
      g = { layer: r.layer, label: r.layer === null ? 'other' : `blk.${r.layer}`, tensors: [], bytes: 0, elements: 0 };
      map.set(r.layer, g);
    }
    g.tensors.push(r);
    g.bytes += r.bytes;
    g.elements += r.elements;
  }
  return [...map.values()].sort((a, b) => (a.layer ?? -1) - (b.layer ?? -1));
}

/** Bytes per ggml type, largest first. */
export function bytesByType(rows: readonly TensorRow[]): { type: string; bytes: number; tensors: number }[] {
  const map = new Map<string, { type: string; bytes: number; tensors: number }>();
  for (const r of rows) {
    const e = map.get(r.type) ?? { type: r.type, bytes: 0, tensors: 0 };
    e.bytes += r.bytes;
    e.tensors++;
    map.set(r.type, e);
  }
  return [...map.values()].sort((a, b) => b.bytes - a.bytes || collator.compare(a.type, b.type));
}

/** Shape as read, outermost first: dims [288, 512] (innermost first in GGUF) → "512 × 288". */
export function shapeText(dims: readonly number[]): string {
  return dims.length ? [...dims].reverse().join(' × ') : 'scalar';
}

/** Bits per weight of a tensor as stored. */
export function bitsPerWeight(r: TensorRow): number {
  return r.elements ? (r.bytes * 8) / r.elements : 0;
}
