// What differs between two GGUF files: metadata keys added, removed or changed; tensors added,
// removed, retyped or reshaped; and for each common tensor whose bytes differ, how far apart its
// dequantised values are (relative RMS ‖a − b‖₂ / ‖a‖₂ and max |a − b|). `pantheon diff` and the
// app's "Compare with…" view.

import { ggmlTypeName } from '../gguf/ggml-types.js';
import { isGgufArray, type GgufHeader, type GgufTensorInfo, type GgufValue } from '../gguf/types.js';
import { readTensorRange } from '../gguf/file.js';
import { tensorChunks } from './tensor-chunks.js';

export interface TensorSide {
  type: string;
  dims: number[];
}

export interface TensorChange {
  name: string;
  a: TensorSide;
  b: TensorSide;
  /** ‖a − b‖₂ / ‖a‖₂ over the elements; null when the element counts differ. */
  relRms: number | null;
  /** max |a − b|; null when the element counts differ. */
  maxAbs: number | null;
}

export interface ModelDiff {
  metadata: { added: string[]; removed: string[]; changed: string[] };
  tensors: { added: string[]; removed: string[]; changed: TensorChange[]; unchanged: number };
}

export interface DiffOptions {
  /** Tensors compared so far of `total` common tensors. */
  onProgress?: (done: number, total: number, name: string) => void;
}

/** A value's identity for comparison (arrays by element type and items, bigints exactly). */
function valueKey(v: GgufValue): string {
  if (isGgufArray(v)) {
    if (v.typed) return `${v.itemType}:${Array.from(v.typed as ArrayLike<number | bigint>, String).join(',')}`;
    return `${v.itemType}:[${v.items.map(valueKey).join(',')}]`;
  }
  return `${typeof v}:${String(v)}`;
}

function sameBytes(fdA: number, a: GgufHeader, ta: GgufTensorInfo, fdB: number, b: GgufHeader, tb: GgufTensorInfo): boolean {
  if (ta.bytes !== tb.bytes) return false;
  const step = 1 << 22;
  const ba = new Uint8Array(Math.min(step, ta.bytes));
  const bb = new Uint8Array(Math.min(step, ta.bytes));
  for (let o = 0; o < ta.bytes; o += step) {
    const n = Math.min(step, ta.bytes - o);
    readTensorRange(fdA, a, ta, ba.subarray(0, n), o);
    readTensorRange(fdB, b, tb, bb.subarray(0, n), o);
    for (let i = 0; i < n; i++) if (ba[i] !== bb[i]) return false;
  }
  return true;
}

/** relRms and maxAbs of two tensors of the same element count, read side by side. */
function valueDistance(fdA: number, a: GgufHeader, ta: GgufTensorInfo, fdB: number, b: GgufHeader, tb: GgufTensorInfo): { relRms: number; maxAbs: number } {
  const ia = tensorChunks(fdA, a, ta);
  const ib = tensorChunks(fdB, b, tb);
  let ca: Float32Array = new Float32Array(0);
  let cb: Float32Array = new Float32Array(0);
  let pa = 0;
  let pb = 0;
  let num = 0;
  let den = 0;
  let maxAbs = 0;
  for (let done = 0; done < ta.elements;) {
    if (pa === ca.length) { ca = ia.next().value as Float32Array; pa = 0; }
    if (pb === cb.length) { cb = ib.next().value as Float32Array; pb = 0; }
    const n = Math.min(ca.length - pa, cb.length - pb);
    for (let i = 0; i < n; i++) {
      const x = ca[pa + i];
      const d = x - cb[pb + i];
      num += d * d;
      den += x * x;
      const ad = Math.abs(d);
      if (ad > maxAbs || Number.isNaN(ad)) maxAbs = ad;
    }
    pa += n;
    pb += n;
    done += n;
  }
  return { relRms: den > 0 ? Math.sqrt(num / den) : num > 0 ? Infinity : 0, maxAbs };
}

/** Compare file A (header `a`, open as `fdA`) with file B. */
export function diffModels(fdA: number, a: GgufHeader, fdB: number, b: GgufHeader, opts: DiffOptions = {}): ModelDiff {
  const metadata = { added: [] as string[], removed: [] as string[], changed: [] as string[] };
  for (const [key, kv] of a.metadata) {
    const other = b.metadata.get(key);
    if (!other) metadata.removed.push(key);
    else if (other.type !== kv.type || valueKey(other.value) !== valueKey(kv.value)) metadata.changed.push(key);
  }
  for (const key of b.metadata.keys()) if (!a.metadata.has(key)) metadata.added.push(key);

  const inB = new Map(b.tensors.map((t) => [t.name, t]));
  const inA = new Set(a.tensors.map((t) => t.name));
  const tensors: ModelDiff['tensors'] = { added: b.tensors.filter((t) => !inA.has(t.name)).map((t) => t.name), removed: [], changed: [], unchanged: 0 };
  const common = a.tensors.filter((t) => {
    if (inB.has(t.name)) return true;
    tensors.removed.push(t.name);
    return false;
  });
  common.forEach((ta, i) => {
    const tb = inB.get(ta.name) as GgufTensorInfo;
    opts.onProgress?.(i, common.length, ta.name);
    const sameShape = ta.dims.length === tb.dims.length && ta.dims.every((d, k) => d === tb.dims[k]);
    if (ta.type === tb.type && sameShape && sameBytes(fdA, a, ta, fdB, b, tb)) { tensors.unchanged++; return; }
    const side = (t: GgufTensorInfo): TensorSide => ({ type: ggmlTypeName(t.type), dims: [...t.dims] });
    const dist = ta.elements === tb.elements ? valueDistance(fdA, a, ta, fdB, b, tb) : { relRms: null, maxAbs: null };
    tensors.changed.push({ name: ta.name, a: side(ta), b: side(tb), ...dist });
  });
  opts.onProgress?.(common.length, common.length, '');
  return { metadata, tensors };
}
