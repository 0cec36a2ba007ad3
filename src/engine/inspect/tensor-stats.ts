// Statistics of one tensor, read from its file a chunk at a time: moments, zeros and non-finite
// values, a histogram, a downsampled |value| heatmap of the matrix, and for block formats the
// distribution of the blocks' scales. Used by `pantheon stats` and the app's tensor browser.

import { ggmlTypeInfo, ggmlTypeName, GgmlType } from '../gguf/ggml-types.js';
import type { GgufHeader, GgufTensorInfo } from '../gguf/types.js';
import { e8m0HalfToF32, f16ToF32 } from '../quant/half.js';
import { tensorChunksRaw } from './tensor-chunks.js';

/** Equal-width bins: `edges` has one more entry than `counts`; the last bin includes its right edge. */
export interface Histogram {
  edges: number[];
  counts: number[];
}

/** Mean |value| over a grid of cells laid on the matrix (rows = elements / dims[0], cols = dims[0]). */
export interface Heatmap {
  /** Grid size (at most the requested size, at most the matrix's). */
  rows: number;
  cols: number;
  /** The matrix the grid covers. */
  matrixRows: number;
  matrixCols: number;
  /** rows × cols, row-major: mean |value| of the finite elements in the cell (0 when none). */
  values: number[];
}

export interface TensorStats {
  name: string;
  type: string;
  dims: number[];
  elements: number;
  /** Over the finite elements (NaN when there are none). */
  min: number;
  max: number;
  mean: number;
  /** Population standard deviation over the finite elements. */
  std: number;
  zeros: number;
  nonfinite: number;
  histogram: Histogram;
  heatmap?: Heatmap;
  /** Block formats: the blocks' (super-block) scale d as stored, one per block. */
  scales?: { count: number; min: number; max: number; histogram: Histogram };
}

export interface StatsOptions {
  /** Histogram bins (64 by default). */
  bins?: number;
  /** Heatmap grid wanted (none when absent). */
  heatmap?: { rows: number; cols: number };
  /** Elements processed so far of `total` (the tensor is read twice, so total = 2 × elements). */
  onProgress?: (done: number, total: number) => void;
  /** Polled between chunks; true stops with a StatsCancelled. */
  cancelled?: () => boolean;
}

export class StatsCancelled extends Error {
  readonly code = 'CANCELLED';
  constructor() { super('statistics cancelled'); }
}

/** Where each block keeps its scale: byte offset of an f16 d (ggml-common.h block structs). */
const F16_SCALE_AT: Partial<Record<number, number>> = {
  [GgmlType.Q4_0]: 0, [GgmlType.Q4_1]: 0, [GgmlType.Q5_0]: 0, [GgmlType.Q5_1]: 0, [GgmlType.Q8_0]: 0,
  [GgmlType.Q2_K]: 80, [GgmlType.Q3_K]: 108, [GgmlType.Q4_K]: 0, [GgmlType.Q5_K]: 0, [GgmlType.Q6_K]: 208,
  [GgmlType.IQ2_XXS]: 0, [GgmlType.IQ2_XS]: 0, [GgmlType.IQ2_S]: 0, [GgmlType.IQ3_XXS]: 0, [GgmlType.IQ3_S]: 0,
  [GgmlType.IQ1_S]: 0, [GgmlType.IQ4_NL]: 0, [GgmlType.IQ4_XS]: 0, [GgmlType.TQ2_0]: 64, [GgmlType.TQ1_0]: 52,
};

/** The scale of the block at `o` of `raw`, or undefined when the type keeps none we read. */
function blockScale(type: number, raw: Uint8Array, o: number): number | undefined {
  if (type === GgmlType.MXFP4) return 2 * e8m0HalfToF32(raw[o]); // E8M0: 2^(e-127)
  const at = F16_SCALE_AT[type];
  return at === undefined ? undefined : f16ToF32(raw[o + at] | (raw[o + at + 1] << 8));
}

/** numpy.histogram's rule: bins equal-width from lo to hi (lo = hi widens to ±0.5). */
export function histogramEdges(lo: number, hi: number, bins: number): number[] {
  if (lo === hi) { lo -= 0.5; hi += 0.5; }
  const edges: number[] = [];
  for (let i = 0; i <= bins; i++) edges.push(lo + ((hi - lo) * i) / bins);
  edges[bins] = hi;
  return edges;
}

/** The bin of `x` (lo ≤ x ≤ hi) under `edges`, the right edge belonging to the last bin. */
export function binOf(x: number, edges: number[]): number {
  const bins = edges.length - 1;
  const lo = edges[0];
  const hi = edges[bins];
  let b = Math.floor(((x - lo) / (hi - lo)) * bins);
  if (b >= bins) b = bins - 1;
  if (b < 0) b = 0;
  // Floating point can put x one bin off near an edge: settle it by comparing with the edges.
  if (x < edges[b] && b > 0) b--;
  else if (b < bins - 1 && x >= edges[b + 1]) b++;
  return b;
}

function histogram(values: Float64Array | number[], lo: number, hi: number, bins: number): Histogram {
  const edges = histogramEdges(lo, hi, bins);
  const counts = new Array<number>(bins).fill(0);
  for (const x of values) counts[binOf(x, edges)]++;
  return { edges, counts };
}

export function tensorStats(fd: number, h: GgufHeader, t: GgufTensorInfo, opts: StatsOptions = {}): TensorStats {
  const bins = opts.bins ?? 64;
  const total = 2 * t.elements;
  const step = (done: number): void => {
    if (opts.cancelled?.()) throw new StatsCancelled();
    opts.onProgress?.(done, total);
  };
  const matrixCols = t.dims[0] ?? 1;
  const matrixRows = t.elements / matrixCols;
  const grid = opts.heatmap && { rows: Math.max(1, Math.min(opts.heatmap.rows, matrixRows)), cols: Math.max(1, Math.min(opts.heatmap.cols, matrixCols)) };
  const cellSum = grid ? new Float64Array(grid.rows * grid.cols) : undefined;
  const cellCount = grid ? new Float64Array(grid.rows * grid.cols) : undefined;
  const colCell = grid ? Int32Array.from({ length: matrixCols }, (_, c) => Math.floor((c * grid.cols) / matrixCols)) : undefined;

  const info = ggmlTypeInfo(t.type);
  const hasScales = info !== undefined && info.blockSize > 1 && blockScale(t.type, new Uint8Array(info.typeSize), 0) !== undefined;
  const scaleValues: number[] = [];

  // Pass 1: min, max, zeros, non-finite, mean and M2 merged chunk by chunk (Chan et al.), the heatmap.
  let min = Infinity;
  let max = -Infinity;
  let zeros = 0;
  let nonfinite = 0;
  let n = 0;
  let mean = 0;
  let m2 = 0;
  let index = 0;
  step(0);
  for (const { values, raw } of tensorChunksRaw(fd, h, t)) {
    let cn = 0;
    let csum = 0;
    for (let i = 0; i < values.length; i++) {
      const x = values[i];
      if (!Number.isFinite(x)) { nonfinite++; continue; }
      if (x === 0) zeros++;
      if (x < min) min = x;
      if (x > max) max = x;
      csum += x;
      cn++;
    }
    if (cn > 0) {
      const cmean = csum / cn;
      let cm2 = 0;
      for (let i = 0; i < values.length; i++) {
        const x = values[i];
        if (Number.isFinite(x)) cm2 += (x - cmean) * (x - cmean);
      }
      const all = n + cn;
      const delta = cmean - mean;
      mean += (delta * cn) / all;
      m2 += cm2 + (delta * delta * n * cn) / all;
      n = all;
    }
    if (grid && cellSum && cellCount && colCell) {
      for (let i = 0; i < values.length; i++) {
        const x = values[i];
        if (!Number.isFinite(x)) continue;
        const e = index + i;
        const r = Math.floor(e / matrixCols);
        const cell = Math.floor((r * grid.rows) / matrixRows) * grid.cols + colCell[e - r * matrixCols];
        cellSum[cell] += Math.abs(x);
        cellCount[cell]++;
      }
    }
    if (hasScales && info) {
      for (let o = 0; o + info.typeSize <= raw.length; o += info.typeSize) scaleValues.push(blockScale(t.type, raw, o) as number);
    }
    index += values.length;
    step(index);
  }

  // Pass 2: the histogram, now that min and max are known.
  const lo = n > 0 ? min : 0;
  const hi = n > 0 ? max : 0;
  const edges = histogramEdges(lo, hi, bins);
  const counts = new Array<number>(bins).fill(0);
  if (n > 0) {
    let done = 0;
    for (const { values } of tensorChunksRaw(fd, h, t)) {
      for (let i = 0; i < values.length; i++) {
        const x = values[i];
        if (Number.isFinite(x)) counts[binOf(x, edges)]++;
      }
      done += values.length;
      step(t.elements + done);
    }
  }
  step(total);

  const out: TensorStats = {
    name: t.name,
    type: ggmlTypeName(t.type),
    dims: [...t.dims],
    elements: t.elements,
    min: n > 0 ? min : NaN,
    max: n > 0 ? max : NaN,
    mean: n > 0 ? mean : NaN,
    std: n > 0 ? Math.sqrt(m2 / n) : NaN,
    zeros,
    nonfinite,
    histogram: { edges, counts },
  };
  if (grid && cellSum && cellCount) {
    out.heatmap = { rows: grid.rows, cols: grid.cols, matrixRows, matrixCols, values: Array.from(cellSum, (s, i) => (cellCount[i] > 0 ? s / cellCount[i] : 0)) };
  }
  if (hasScales && scaleValues.length > 0) {
    const finite = scaleValues.filter(Number.isFinite);
    const smin = finite.reduce((a, b) => Math.min(a, b), Infinity);
    const smax = finite.reduce((a, b) => Math.max(a, b), -Infinity);
    out.scales = { count: scaleValues.length, min: smin, max: smax, histogram: histogram(finite, finite.length ? smin : 0, finite.length ? smax : 0, bins) };
  }
  return out;
}
