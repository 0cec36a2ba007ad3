// Importance matrices: for each weight matrix, the sum over a text's tokens of each input
// column's squared activation, and how many tokens were summed (llama.cpp tools/imatrix/imatrix.cpp
// IMatrixCollector). The quantiser weights column j by sums[j] / count (tools/quantize/quantize.cpp
// load_imatrix). Files as llama.cpp reads and writes them:
//   GGUF (imatrix.cpp save_imatrix): general.type = "imatrix", imatrix.datasets [str],
//     imatrix.chunk_count u32, imatrix.chunk_size u32; per matrix, sorted by name,
//     `<name>.in_sum2` f32 [cols, nMat] (raw sums) and `<name>.counts` f32 [1, nMat]
//     (nMat = experts of a MoE tensor, else 1; trailing 1-dims dropped as ggml_n_dims does).
//   legacy .dat (save_imatrix_legacy): i32 n; per entry i32 len, name, i32 ncall, i32 nval,
//     f32 values[nval] = sums / count · ncall; then i32 chunk count, i32 len, dataset name.

import { readFileSync, writeFileSync } from 'node:fs';
import { ModelError } from '../../shared/errors.js';
import { readGgufHeaderSync, readTensorBytes } from '../gguf/file.js';
import { GgmlType } from '../gguf/ggml-types.js';
import { getArray, getNumber } from '../gguf/keys.js';
import { GgufType } from '../gguf/types.js';
import { kv, writeGguf, type WriterTensor } from '../gguf/writer.js';

export interface ImatrixEntry {
  /** Input columns of the matrix. */
  cols: number;
  /** [nMat, cols]: Σ x² per column, per expert (nMat = 1 for a dense matrix). */
  sums: Float32Array;
  /** [nMat] tokens summed per expert; legacy files hold one ncall for all (see importanceOf). */
  counts: Float64Array;
  /** True when read from a legacy .dat file (sums are then means × ncall, counts = [ncall]). */
  legacy?: boolean;
}

export interface Imatrix {
  entries: Map<string, ImatrixEntry>;
  /** The text files it was computed on. */
  datasets: string[];
  /** Chunks of chunkSize tokens processed. */
  chunkCount: number;
  chunkSize: number;
}

export function emptyImatrix(chunkSize: number, datasets: string[] = []): Imatrix {
  return { entries: new Map(), datasets, chunkCount: 0, chunkSize };
}

// ---------------------------------------------------------------------------------------------
// Collecting (imatrix.cpp collect_imatrix)

/** llama.cpp skips dense products of fewer tokens than this ("why are small batches ignored?"). */
export const MIN_BATCH_TOKENS = 16;

/**
 * Add x[n, cols]'s squares to matrix `name` (expert `expert` of `nMat`). Each x² is rounded to
 * float32 and added in float32, as ggml does.
 */
export function accumulate(im: Imatrix, name: string, x: Float32Array, n: number, cols: number, expert = 0, nMat = 1): void {
  let e = im.entries.get(name);
  if (!e) {
    e = { cols, sums: new Float32Array(nMat * cols), counts: new Float64Array(nMat) };
    im.entries.set(name, e);
  } else if (e.cols !== cols || e.counts.length !== nMat) {
    throw new ModelError('IMATRIX_SHAPE', `inconsistent size for ${name}: ${nMat} × ${cols} now, ${e.counts.length} × ${e.cols} before`);
  }
  const acc = e.sums;
  const base = expert * cols;
  for (let t = 0; t < n; t++) {
    const row = t * cols;
    for (let j = 0; j < cols; j++) {
      const v = x[row + j];
      acc[base + j] += Math.fround(v * v);
    }
  }
  for (let j = base; j < base + cols; j++) {
    if (!Number.isFinite(acc[j])) throw new ModelError('IMATRIX_NOT_FINITE', `non-finite activations in ${name}: the model produces inf or NaN on this text`);
  }
  e.counts[expert] += n;
}

/**
 * The importance of each column that `pantheon quantize --imatrix` (and llama-quantize) weights
 * matrix `name` with: [nMat, cols] = sums / count per expert (1 for an expert no token reached;
 * legacy: sums / ncall). Undefined when the matrix has no entry.
 */
export function importanceOf(im: Imatrix, name: string): Float32Array | undefined {
  const e = im.entries.get(name);
  if (!e) return undefined;
  const out = new Float32Array(e.sums.length);
  if (e.legacy) {
    const ncall = e.counts[0];
    for (let i = 0; i < out.length; i++) out[i] = ncall > 0 ? Math.fround(e.sums[i] / ncall) : e.sums[i];
    return out;
  }
  const nMat = e.counts.length;
  const cols = e.sums.length / nMat;
  for (let m = 0; m < nMat; m++) {
    const count = Math.fround(e.counts[m]);
    for (let j = m * cols; j < (m + 1) * cols; j++) out[j] = count > 0 ? Math.fround(e.sums[j] / count) : 1;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// GGUF

const SUMS = '.in_sum2';
const COUNTS = '.counts';

const f32Bytes = (a: Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** The imatrix as llama.cpp's GGUF imatrix file. */
export function imatrixToGguf(im: Imatrix): Uint8Array {
  const tensors: WriterTensor[] = [];
  for (const name of [...im.entries.keys()].sort()) {
    const e = im.entries.get(name)!;
    const nMat = e.counts.length;
    const counts = Float32Array.from(e.counts);
    tensors.push({ name: name + SUMS, dims: nMat > 1 ? [e.cols, nMat] : [e.cols], type: GgmlType.F32, data: f32Bytes(e.sums) });
    tensors.push({ name: name + COUNTS, dims: nMat > 1 ? [1, nMat] : [1], type: GgmlType.F32, data: f32Bytes(counts) });
  }
  return writeGguf([
    kv.str('general.type', 'imatrix'),
    kv.arr('imatrix.datasets', GgufType.STRING, im.datasets),
    kv.u32('imatrix.chunk_count', im.chunkCount),
    kv.u32('imatrix.chunk_size', im.chunkSize),
  ], tensors);
}

function readGgufImatrix(path: string): Imatrix {
  const h = readGgufHeaderSync(path);
  const pairs = new Map<string, { sums?: (typeof h.tensors)[number]; counts?: (typeof h.tensors)[number] }>();
  for (const t of h.tensors) {
    const suffix = t.name.endsWith(SUMS) ? SUMS : t.name.endsWith(COUNTS) ? COUNTS : null;
    if (!suffix) continue;
    const name = t.name.slice(0, -suffix.length);
    const p = pairs.get(name) ?? {};
    if (suffix === SUMS) p.sums = t;
    else p.counts = t;
    pairs.set(name, p);
  }
  if (pairs.size === 0) throw new ModelError('NOT_AN_IMATRIX', `${path} is a GGUF file without importance matrix tensors (<name>.in_sum2, <name>.counts)`);
  const datasets = getArray(h, 'imatrix.datasets');
  const chunkCount = getNumber(h, 'imatrix.chunk_count');
  const chunkSize = getNumber(h, 'imatrix.chunk_size');
  if (!datasets || chunkCount === undefined || chunkSize === undefined) {
    throw new ModelError('BAD_IMATRIX', `${path} lacks the imatrix metadata (imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size)`);
  }
  const im: Imatrix = { entries: new Map(), datasets: datasets.map(String), chunkCount, chunkSize };
  for (const [name, p] of [...pairs].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (!p.sums || !p.counts) throw new ModelError('BAD_IMATRIX', `${path}: mismatched sums and counts for ${name}`);
    if (p.sums.type !== GgmlType.F32 || p.counts.type !== GgmlType.F32) throw new ModelError('BAD_IMATRIX', `${path}: sums and counts for ${name} must be F32`);
    const sums = new Float32Array(readTensorBytes(path, h, p.sums.name).slice().buffer);
    const c32 = new Float32Array(readTensorBytes(path, h, p.counts.name).slice().buffer);
    const nMat = c32.length;
    if (nMat < 1 || sums.length % nMat !== 0) throw new ModelError('BAD_IMATRIX', `${path}: ${sums.length} sums do not split into ${nMat} matrices for ${name}`);
    im.entries.set(name, { cols: sums.length / nMat, sums, counts: Float64Array.from(c32, (c) => Math.round(c)) });
  }
  return im;
}

// ---------------------------------------------------------------------------------------------
// Legacy .dat

/** The imatrix as llama.cpp's legacy .dat file (entries no token reached are left out, as llama.cpp does). */
export function imatrixToDat(im: Imatrix): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  const i32 = (v: number) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setInt32(0, v, true);
    parts.push(b);
  };
  const names = [...im.entries.keys()].filter((n) => im.entries.get(n)!.counts.some((c) => c > 0)).sort();
  i32(names.length);
  for (const name of names) {
    const e = im.entries.get(name)!;
    const nb = enc.encode(name);
    i32(nb.length);
    parts.push(nb);
    // read from a .dat: the values and ncall as they were
    const ncall = e.legacy ? e.counts[0] : Math.trunc((Math.max(...e.counts) + (im.chunkSize - 1)) / im.chunkSize);
    i32(ncall);
    i32(e.sums.length);
    const per = e.sums.length / e.counts.length;
    const vals = e.legacy ? e.sums : new Float32Array(e.sums.length);
    for (let i = 0; !e.legacy && i < vals.length; i++) {
      let count = Math.fround(e.counts[Math.trunc(i / per)]);
      let value = e.sums[i];
      if (count === 0) value = count = 1;
      vals[i] = Math.fround(Math.fround(value / count) * ncall);
    }
    parts.push(f32Bytes(vals));
  }
  i32(im.chunkCount);
  const ds = enc.encode(im.datasets.at(-1) ?? '');
  i32(ds.length);
  parts.push(ds);
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function readDatImatrix(path: string, b: Uint8Array): Imatrix {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const dec = new TextDecoder();
  let o = 0;
  const bad = (what: string): never => {
    throw new ModelError('BAD_IMATRIX', `${path} is not an importance matrix (GGUF or llama.cpp's legacy .dat): ${what} at byte ${o}`);
  };
  const i32 = () => {
    if (o + 4 > b.length) bad('file ends early');
    const v = dv.getInt32(o, true);
    o += 4;
    return v;
  };
  const n = i32();
  if (n < 1) bad('no entries');
  const im: Imatrix = { entries: new Map(), datasets: [], chunkCount: 0, chunkSize: 0 };
  for (let i = 0; i < n; i++) {
    const len = i32();
    if (len < 0 || o + len > b.length) bad(`entry ${i + 1}'s name length ${len}`);
    const name = dec.decode(b.subarray(o, o + len));
    o += len;
    const ncall = i32();
    const nval = i32();
    if (nval < 1 || o + 4 * nval > b.length) bad(`entry "${name}"'s ${nval} values`);
    const sums = new Float32Array(b.slice(o, o + 4 * nval).buffer);
    o += 4 * nval;
    im.entries.set(name, { cols: nval, sums, counts: Float64Array.of(ncall), legacy: true });
  }
  // optional trailer: chunk count and dataset name
  if (o + 4 <= b.length) {
    im.chunkCount = i32();
    if (o + 4 <= b.length) {
      const len = i32();
      if (len > 0 && o + len <= b.length) im.datasets.push(dec.decode(b.subarray(o, o + len)));
    }
  }
  return im;
}

/** Read an importance matrix in either of llama.cpp's formats (GGUF, or legacy .dat). */
export function readImatrix(path: string): Imatrix {
  let b: Uint8Array;
  try {
    b = new Uint8Array(readFileSync(path));
  } catch (e) {
    throw new ModelError('IMATRIX_UNREADABLE', `cannot read the importance matrix ${path}: ${(e as Error).message}`);
  }
  const isGguf = b.length >= 4 && b[0] === 0x47 && b[1] === 0x47 && b[2] === 0x55 && b[3] === 0x46;
  return isGguf ? readGgufImatrix(path) : readDatImatrix(path, b);
}

/** Write `im` to `path`: llama.cpp's GGUF imatrix format, or the legacy .dat format. */
export function writeImatrix(path: string, im: Imatrix, format: 'gguf' | 'dat' = 'gguf'): void {
  writeFileSync(path, format === 'gguf' ? imatrixToGguf(im) : imatrixToDat(im));
}
