// ggml's IQ2_XXS, IQ2_XS and IQ2_S quantisers (ggml-quants.c quantize_row_iq2_xxs_impl,
// quantize_row_iq2_xs_impl, quantize_row_iq2_s_impl): each group of 8 magnitudes is a point of a
// grid with levels {1, 3, 5} (iq2-grid8.ts), signs stored apart. A group that rounds off the grid
// takes the nearest of its listed neighbours. IQ2_XXS and IQ2_XS store 7 sign bits (an odd count of
// minus signs flips the least important element), IQ2_S all 8. Block layouts as iq2.ts:
//   IQ2_XXS  66 B per 256: d | u32 q2[16]  (per 32: 4 × 8-bit index, then 4 × 7 sign bits | scale << 28)
//   IQ2_XS   74 B per 256: d | u16 qs[32] (9-bit index | 7 sign bits << 9) | scales[8] (4 bits per 16)
//   IQ2_S    82 B per 256: d | qs[32] | signs[32] | qh[8] (index bits 8-9) | scales[8]
// IQ2_XXS and IQ2_XS need an importance matrix (ggml asserts one); IQ2_S weighs by 0.25σ² + x² without.
// The *Row functions run the WebAssembly kernels (wasm/assembly/quantize-iq2.ts) where there are
// some (quant-kernel.ts), the TypeScript references here (*Ref) otherwise: the same bytes.

import { fr, nearestInt, putF16 } from './half.js';
import { iq2sGrid, iq2xsGrid, iq2xxsGrid, type Grid8 } from './iq2-grid8.js';
import { GROUP_MAX_EPS } from './kscales.js';
import { makeQpQuants } from './kscales-weighted.js';
import { QK_K } from './q8k.js';
import { groupSigns } from './iq-signs.js';
import { kernelAlloc, rowKernel, type QuantKernel } from './quant-kernel.js';

const K_MAX_Q = 3;
const F01 = fr(0.1);
const EPS_IQ2_S = fr(1e-8);
const F09875 = fr(0.9875);

const scales = new Float32Array(QK_K / 16);
const weight = new Float32Array(32);
const waux = new Float32Array(32);
const xval = new Float32Array(32);
const L = new Int8Array(32);
const Lu8 = new Uint8Array(L.buffer);
const Laux = new Int8Array(32);
const onGrid = new Uint8Array(4);
const onGridAux = new Uint8Array(4);
const blockSigns = new Uint8Array(4);
const q2 = new Uint32Array(16);
const q2Bytes = new Uint8Array(q2.buffer);

/** term[3k + l]: the weighted squared error of level l at position k of the group being searched. */
const term = new Float32Array(24);

/**
 * iq2_find_best_neighbour: of the neighbours listed at `at`, the grid point nearest to
 * xval[xo..xo+8) / scale in weighted squared error (first on ties); its levels go to out[xo..xo+8).
 * The 24 terms w·(scale·q − x)² a point can sum are computed once, then each neighbour adds its 8
 * in ggml's order, so the float32 sums are ggml's.
 */
function bestNeighbour(g: Grid8, at: number, w: Float32Array, scale: number, out: Int8Array, xo: number): number {
  const { neighbours: nb, codes } = g;
  for (let k = 0; k < 8; k++) {
    const x = xval[xo + k];
    const wk = w[xo + k];
    for (let l = 0; l < 3; l++) {
      const diff = fr(fr(scale * (2 * l + 1)) - x);
      term[3 * k + l] = fr(fr(wk * diff) * diff);
    }
  }
  const n = nb[at];
  let best = Infinity;
  let index = -1;
  for (let j = 1; j <= n; j++) {
    const p = 8 * nb[at + j];
    let d2 = term[codes[p]];
    for (let i = 1; i < 8; i++) d2 = fr(d2 + term[codes[p + i]]);
    if (d2 < best) {
      best = d2;
      index = nb[at + j];
    }
  }
  for (let i = 0; i < 8; i++) out[xo + i] = (g.levels[8 * index + i] - 1) >> 1;
  return index;
}

/** The 16-bit grid index of levels l[o..o+8) (ggml's u), clamping nothing. */
function indexOf(l: Int8Array, o: number): number {
  let u = 0;
  for (let i = 0; i < 8; i++) u |= l[o + i] << (2 * i);
  return u;
}

/**
 * Levels of group k for the inverse scale id into out[8k..8k+8): nearest_int(0.5·(id·x − 1)) in [0, 2];
 * returns their 16-bit grid index (indexOf).
 */
function roundGroup(id: number, k: number, out: Int8Array): number {
  let u = 0;
  for (let i = 0; i < 8; i++) {
    const l = nearestInt(fr(0.5 * fr(fr(id * xval[8 * k + i]) - 1)));
    const c = l < 0 ? 0 : l > K_MAX_Q - 1 ? K_MAX_Q - 1 : l;
    out[8 * k + i] = c;
    u |= c << (2 * i);
  }
  return u;
}

/** At 3i + l: the terms w·x·q and w·q·q element i adds at level l (q = 2l + 1) to ggml's sums. */
const qxTerm = new Float32Array(3 * 32);
const qqTerm = new Float32Array(3 * 32);

/** qxTerm and qqTerm of the first n elements of weight and xval, computed once per block instead of once per trial scale. */
function sumTerms(n: number): void {
  for (let i = 0; i < n; i++) {
    const w = weight[i];
    const wx = fr(w * xval[i]);
    for (let l = 0; l < 3; l++) {
      const q = 2 * l + 1;
      qxTerm[3 * i + l] = fr(wx * q);
      qqTerm[3 * i + l] = fr(fr(w * q) * q);
    }
  }
}

/** The last sums(): Σ w·x·q and Σ w·q² (float32, in order). */
let sumqx = 0;
let sumq2 = 0;

/** Σ w·x·q and Σ w·q² over n elements into sumqx, sumq2, q = 2l + 1 (float32, in order). */
function sums(l: Int8Array, n: number): void {
  let sx = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const t = 3 * i + l[i];
    sx = fr(sx + qxTerm[t]);
    s2 = fr(s2 + qqTerm[t]);
  }
  sumqx = sx;
  sumq2 = s2;
}

/** weight[i] = qw·√(σ² + x²) (or 0.25σ² + x² without qw) for x[xb..xb+n), and waux = √weight. */
function groupWeights(x: Float32Array, xb: number, n: number, qw: Float32Array | null, sigma2: number): void {
  for (let i = 0; i < n; i++) {
    const v = x[xb + i];
    weight[i] = qw ? fr(qw[xb + i] * fr(Math.sqrt(fr(sigma2 + fr(v * v))))) : fr(fr(0.25 * sigma2) + fr(v * v));
    waux[i] = fr(Math.sqrt(weight[i]));
  }
}

function sumSquares(x: Float32Array, xo: number): number {
  let s = 0;
  for (let i = xo; i < xo + QK_K; i++) s = fr(s + fr(x[i] * x[i]));
  return s;
}

/** quantize_row_iq2_xxs_impl for one row x[0..n); qw the column importances (required). The TypeScript reference. */
export function quantizeIq2XxsRef(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array): void {
  const g = iq2xxsGrid();
  const { map } = g;
  for (let ibl = 0, o = off; ibl < n / QK_K; ibl++, o += 66) {
    q2.fill(0);
    const xbl = QK_K * ibl;
    const sigma2 = fr(sumSquares(x, xbl) / QK_K);
    let maxScale = 0;
    for (let ib = 0; ib < QK_K / 32; ib++) {
      const xb = xbl + 32 * ib;
      groupWeights(x, xb, 32, qw, sigma2);
      for (let k = 0; k < 4; k++) blockSigns[k] = groupSigns(xval, weight, x, xb, k, true);
      sumTerms(32);
      let max = xval[0];
      for (let i = 1; i < 32; i++) max = max > xval[i] ? max : xval[i];
      if (max < GROUP_MAX_EPS) {
        scales[ib] = 0;
        L.fill(0);
        continue;
      }
      let scale = makeQpQuants(32, K_MAX_Q + 1, xval, Lu8, weight);
      const effMax = fr(scale * K_MAX_Q);
      if (effMax <= 0) {
        scales[ib] = 0;
        L.fill(0);
        continue;
      }
      let best = 0;
      for (let is = -6; is <= 6; is++) {
        const id = fr(fr(2 * K_MAX_Q - 1 + fr(is * F01)) / effMax);
        const thisScale = fr(1 / id);
        for (let k = 0; k < 4; k++) {
          const u = roundGroup(id, k, Laux);
          if (map[u] < 0) bestNeighbour(g, -map[u] - 1, waux, thisScale, Laux, 8 * k);
        }
        sums(Laux, 32);
        if (sumq2 > 0 && fr(sumqx * sumqx) > fr(best * sumq2)) {
          scale = fr(sumqx / sumq2);
          best = fr(scale * sumqx);
          L.set(Laux);
        }
      }
      if (scale > 0) {
        const id = fr(1 / scale);
        for (let k = 0; k < 4; k++) {
          const u = roundGroup(id, k, L);
          let gi = map[u];
          if (gi < 0) gi = bestNeighbour(g, -map[u] - 1, waux, scale, L, 8 * k);
          for (let i = 0; i < 8; i++) L[8 * k + i] = (g.levels[8 * gi + i] - 1) >> 1;
        }
        sums(L, 32);
        if (sumq2 > 0) scale = fr(sumqx / sumq2);
      }
      if (scale < 0) {
        scale = -scale;
        for (let k = 0; k < 4; k++) blockSigns[k] = ~blockSigns[k] & 127;
      }
      for (let k = 0; k < 4; k++) {
        const gi = map[indexOf(L, 8 * k)];
        q2[2 * ib] = (q2[2 * ib] | (gi << (8 * k))) >>> 0;
        q2[2 * ib + 1] |= blockSigns[k] << (7 * k);
      }
      scales[ib] = scale;
      maxScale = Math.max(maxScale, scale);
    }
    dst.fill(0, o, o + 66);
    if (!maxScale) continue;
    const d = fr(maxScale / 31);
    putF16(dst, o, d);
    const id = fr(1 / d);
    for (let ib = 0; ib < QK_K / 32; ib++) {
      const l = Math.max(0, Math.min(15, nearestInt(fr(0.5 * fr(fr(id * scales[ib]) - 1)))));
      q2[2 * ib + 1] = (q2[2 * ib + 1] | (l << 28)) >>> 0;
    }
    dst.set(q2Bytes, o + 2);
  }
}

/**
 * quantize_row_iq2_xs_impl (`s` false; qw required) and quantize_row_iq2_s_impl (`s` true; qw or
 * null) for one row x[0..n): 16-element sub-blocks of two 8-element groups, a 4-bit scale each.
 */
function quantizeIq2XsOrS(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null, s: boolean): void {
  const g = s ? iq2sGrid() : iq2xsGrid();
  const { map } = g;
  const bytes = s ? 82 : 74;
  const scalesAt = s ? 74 : 66;
  for (let ibl = 0, o = off; ibl < n / QK_K; ibl++, o += bytes) {
    dst.fill(0, o, o + bytes);
    const xbl = QK_K * ibl;
    const sumx2 = sumSquares(x, xbl);
    const sigma2 = s ? fr(fr(2 * sumx2) / QK_K) : fr(sumx2 / QK_K);
    let maxScale = 0;
    for (let ib = 0; ib < QK_K / 16; ib++) {
      const xb = xbl + 16 * ib;
      groupWeights(x, xb, 16, qw, sigma2);
      for (let k = 0; k < 2; k++) blockSigns[k] = groupSigns(xval, weight, x, xb, k, !s);
      sumTerms(16);
      let max = xval[0];
      for (let i = 1; i < 16; i++) max = max > xval[i] ? max : xval[i];
      L.fill(0, 0, 16);
      if (max < (s ? EPS_IQ2_S : GROUP_MAX_EPS)) {
        scales[ib] = 0;
        continue;
      }
      let best = 0;
      let scale = fr(max / (2 * K_MAX_Q - 1));
      onGrid[0] = onGrid[1] = 1;
      for (let is = -9; is <= 9; is++) {
        const id = fr(fr(2 * K_MAX_Q - 1 + fr(is * F01)) / max);
        const thisScale = fr(1 / id);
        for (let k = 0; k < 2; k++) {
          const u = roundGroup(id, k, Laux);
          onGridAux[k] = 1;
          if (map[u] < 0) {
            onGridAux[k] = 0;
            bestNeighbour(g, -map[u] - 1, waux, thisScale, Laux, 8 * k);
          }
        }
        sums(Laux, 16);
        if (sumq2 > 0 && fr(sumqx * sumqx) > fr(best * sumq2)) {
          scale = fr(sumqx / sumq2);
          best = fr(scale * sumqx);
          L.set(Laux.subarray(0, 16));
          onGrid[0] = onGridAux[0];
          onGrid[1] = onGridAux[1];
        }
      }
      if ((!onGrid[0] || !onGrid[1]) && scale > 0) {
        const id = fr(1 / scale);
        for (let k = 0; k < 2; k++) {
          if (onGrid[k]) continue;
          const u = roundGroup(id, k, L);
          if (map[u] < 0) bestNeighbour(g, -map[u] - 1, waux, scale, L, 8 * k);
        }
        sums(L, 16);
        if (sumq2 > 0) scale = fr(sumqx / sumq2);
      }
      if (scale < 0) {
        scale = -scale;
        for (let k = 0; k < 2; k++) blockSigns[k] = ~blockSigns[k] & (s ? 255 : 127);
      }
      for (let k = 0; k < 2; k++) {
        const gi = map[indexOf(L, 8 * k)];
        const i8 = 2 * ib + k;
        if (s) {
          dst[o + 2 + i8] = gi & 255;
          dst[o + 66 + (i8 >> 2)] |= (gi >> 8) << (2 * (i8 % 4));
          dst[o + 2 + QK_K / 8 + i8] = blockSigns[k];
        } else {
          const v = gi | (blockSigns[k] << 9);
          dst[o + 2 + 2 * i8] = v & 255;
          dst[o + 3 + 2 * i8] = v >> 8;
        }
      }
      scales[ib] = scale;
      maxScale = Math.max(maxScale, scale);
    }
    if (!maxScale) {
      if (!s) dst.fill(0, o + 2, o + 66); // as ggml: IQ2_XS clears qs, IQ2_S keeps them
      continue;
    }
    const d = fr(maxScale / 31);
    putF16(dst, o, s ? fr(d * F09875) : d);
    const id = fr(1 / d);
    for (let ib = 0; ib < QK_K / 16; ib++) {
      const l = Math.max(0, Math.min(15, nearestInt(fr(0.5 * fr(fr(id * scales[ib]) - 1)))));
      dst[o + scalesAt + (ib >> 1)] |= ib % 2 ? l << 4 : l;
    }
  }
}

/** quantize_row_iq2_xs_impl for one row x[0..n); qw the column importances (required). The TypeScript reference. */
export function quantizeIq2XsRef(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array): void {
  quantizeIq2XsOrS(x, dst, off, n, qw, false);
}

/** quantize_row_iq2_s_impl for one row x[0..n); qw the column importances, or null (weights 0.25σ² + x²). The TypeScript reference. */
export function quantizeIq2SRef(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null): void {
  quantizeIq2XsOrS(x, dst, off, n, qw, true);
}

// ---------------------------------------------------------------------------------------------
// The kernels

/** A grid's map, neighbour lists and values (iq2_grid_q) in one kernel's memory: byte addresses. */
interface GridTables {
  map: number;
  nb: number;
  gq: number;
}
/** The three grids, as iq2_grid_q numbers them. */
type Which = 'xs' | 's' | 'xxs';
const GRID_NUMBER: Record<Which, number> = { xs: 0, s: 1, xxs: 2 };
let tables: { k: QuantKernel; grids: Partial<Record<Which, GridTables>> } | null = null;

/** This thread's kernel's copy of one grid's tables (made on first use). */
function kernelTables(k: QuantKernel, which: Which): GridTables {
  if (tables?.k !== k) tables = { k, grids: {} };
  const have = tables.grids[which];
  if (have) return have;
  const g = which === 'xs' ? iq2xsGrid() : which === 's' ? iq2sGrid() : iq2xxsGrid();
  const map = kernelAlloc(k, 4 * g.map.length);
  const nb = kernelAlloc(k, 2 * g.neighbours.length);
  const gq = kernelAlloc(k, 4 * g.levels.length);
  const buf = k.inst.arena.memory.buffer;
  new Int32Array(buf, map, g.map.length).set(g.map);
  new Uint16Array(buf, nb, g.neighbours.length).set(g.neighbours);
  k.iq2GridQ(gq, GRID_NUMBER[which]);
  return (tables.grids[which] = { map, nb, gq });
}

const ROW_BYTES: Record<Which, number> = { xs: 74, s: 82, xxs: 66 };

/** The row through the kernel (quantize_row_iq2_xs / _s / _xxs); false where there is none (or n is not whole blocks). */
function byKernel(which: Which, x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null): boolean {
  if (n % QK_K !== 0) return false;
  const k = rowKernel(n);
  if (!k) return false;
  const t = kernelTables(k, which);
  k.f32.set(x.subarray(0, n), k.row.x >> 2);
  if (qw) k.f32.set(qw.subarray(0, n), k.row.w >> 2);
  const fn = which === 'xs' ? k.rowIq2Xs : which === 's' ? k.rowIq2S : k.rowIq2Xxs;
  fn(k.row.out, k.row.x, qw ? k.row.w : 0, n, t.map, t.nb, t.gq, k.addr.aux);
  const bytes = (n / QK_K) * ROW_BYTES[which];
  dst.set(k.u8.subarray(k.row.out, k.row.out + bytes), off);
  return true;
}

/** quantize_row_iq2_xxs_impl for one row x[0..n); qw the column importances (required). */
export function quantizeIq2XxsRow(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array): void {
  if (!byKernel('xxs', x, dst, off, n, qw)) quantizeIq2XxsRef(x, dst, off, n, qw);
}

/** quantize_row_iq2_xs_impl for one row x[0..n); qw the column importances (required). */
export function quantizeIq2XsRow(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array): void {
  if (!byKernel('xs', x, dst, off, n, qw)) quantizeIq2XsRef(x, dst, off, n, qw);
}

/** quantize_row_iq2_s_impl for one row x[0..n); qw the column importances, or null (weights 0.25σ² + x²). */
export function quantizeIq2SRow(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null): void {
  if (!byKernel('s', x, dst, off, n, qw)) quantizeIq2SRef(x, dst, off, n, qw);
}
