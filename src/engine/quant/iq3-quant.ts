// ggml's IQ3_S and IQ3_XXS quantisers (ggml-quants.c iq3xs_init_impl, quantize_row_iq3_s_impl,
// quantize_row_iq3_xxs_impl): each group of 4 magnitudes is a point of a grid with levels
// {1, 3, …, 15} (IQ3_S: the 512 entries of iq3s_grid; IQ3_XXS: the 256 of iq3xxs_grid, whose
// stored values are 4× these), signs stored apart. A group that rounds off the grid takes the
// nearest grid point among its neighbours (the points at the nwant smallest distances, listed
// once per off-grid point by iq3xs_init_impl). Block layouts as iq3.ts:
//   IQ3_S   110 B per 256: d | qs[64] | qh[8] | signs[32] | scales[4]
//   IQ3_XXS  98 B per 256: d | qs[64] | u32 scales_and_signs[8] (4 × 7 sign bits, 4-bit scale on top)
// quantizeIq3SRow and quantizeIq3XxsRow run the WebAssembly kernels (wasm/assembly/quantize-iq3.ts)
// where there are some (quant-kernel.ts), the TypeScript references here otherwise: the same bytes.

import { fr, nearestInt, putF16 } from './half.js';
import { IQ3S_GRID, IQ3XXS_GRID } from './iq-grids.js';
import { QK_K } from './q8k.js';
import { groupSigns } from './iq-signs.js';
import { kernelAlloc, rowKernel, type QuantKernel } from './quant-kernel.js';

/** A 4-element grid's index map and neighbour lists (iq3xs_init_impl's kmap_q3xs, kneighbors_q3xs). */
export interface Iq3Neighbours {
  /** [4096] for the point with 3-bit levels (l0 | l1 << 3 | l2 << 6 | l3 << 9): its grid index, or -(offset + 1) into neighbours. */
  map: Int32Array;
  /** At each offset: n, then n grid indices, nearest first (ties by index). */
  neighbours: Uint16Array;
}

/**
 * iq3xs_init_impl for a grid of 4-byte entries with odd values 2l + 1: the map and, for every
 * off-grid point, its grid points at the `nwant` smallest squared distances, sorted by
 * (distance, index) as ggml's qsort with iq3_compare_func orders them.
 */
export function iq3Neighbours(grid: Uint8Array, nwant: number): Iq3Neighbours {
  const size = grid.length / 4;
  const map = new Int32Array(4096).fill(-1);
  for (let i = 0; i < size; i++) {
    let index = 0;
    for (let k = 0; k < 4; k++) index |= ((grid[4 * i + k] - 1) >> 1) << (3 * k);
    map[index] = i;
  }
  const lists: number[] = [];
  const d2s = new Int32Array(size);
  const order = new Int32Array(size);
  for (let i = 0; i < 4096; i++) {
    if (map[i] >= 0) continue;
    for (let j = 0; j < size; j++) {
      let d2 = 0;
      for (let k = 0; k < 4; k++) {
        const d = grid[4 * j + k] - (2 * ((i >> (3 * k)) & 7) + 1);
        d2 += d * d;
      }
      d2s[j] = d2;
      order[j] = j;
    }
    order.sort((a, b) => d2s[a] - d2s[b] || a - b);
    map[i] = -(lists.length + 1);
    const at = lists.length;
    lists.push(0);
    let d2 = d2s[order[0]];
    let nhave = 1;
    for (let j = 0; j < size; j++) {
      if (d2s[order[j]] > d2) {
        if (nhave === nwant) break;
        d2 = d2s[order[j]];
        nhave++;
      }
      lists.push(order[j]);
    }
    lists[at] = lists.length - at - 1;
  }
  return { map, neighbours: Uint16Array.from(lists) };
}

let iq3s: Iq3Neighbours | null = null;
let iq3xxs: Iq3Neighbours | null = null;
/** iq3xxs_grid with levels 2l + 1 (the stored grid is 4× that). */
const IQ3XXS_LEVELS = IQ3XXS_GRID.map((v) => v >> 2);

/**
 * iq3_find_best_neighbour: of the neighbours listed at `at`, the grid point nearest to
 * xval[xo..xo+4) / scale in weighted squared error (first on ties); its levels go to L[lo..lo+4).
 */
function bestNeighbour(nb: Uint16Array, at: number, grid: Uint8Array, xval: Float32Array, xo: number, w: Float32Array, scale: number, L: Int8Array, lo: number): number {
  for (let q = 1; q < 16; q += 2) sv[q] = fr(scale * q);
  const x0 = xval[xo], x1 = xval[xo + 1], x2 = xval[xo + 2], x3 = xval[xo + 3];
  const w0 = w[xo], w1 = w[xo + 1], w2 = w[xo + 2], w3 = w[xo + 3];
  const n = nb[at];
  let best = Infinity;
  let index = -1;
  for (let j = 1; j <= n; j++) {
    const g = 4 * nb[at + j];
    const e0 = fr(sv[grid[g]] - x0);
    const e1 = fr(sv[grid[g + 1]] - x1);
    const e2 = fr(sv[grid[g + 2]] - x2);
    const e3 = fr(sv[grid[g + 3]] - x3);
    const d2 = fr(fr(fr(fr(fr(w0 * e0) * e0) + fr(fr(w1 * e1) * e1)) + fr(fr(w2 * e2) * e2)) + fr(fr(w3 * e3) * e3));
    if (d2 < best) {
      best = d2;
      index = nb[at + j];
    }
  }
  for (let i = 0; i < 4; i++) L[lo + i] = (grid[4 * index + i] - 1) >> 1;
  return index;
}

const BS = 32;
const K_MAX_Q = 8;
const F02 = fr(0.2);
const F1033 = fr(1.033);
const scales = new Float32Array(QK_K / BS);
const weight = new Float32Array(BS);
const waux = new Float32Array(BS);
const xval = new Float32Array(BS);
const L = new Int8Array(BS);
const Laux = new Int8Array(BS);
const onGrid = new Uint8Array(BS / 4);
const onGridAux = new Uint8Array(BS / 4);
const blockSigns = new Uint8Array(BS / 8);
/** At 8i + l: the terms w·x·q and w·q·q element i adds at level l (q = 2l + 1) to ggml's sums. */
const qxTerm = new Float32Array(8 * BS);
const qqTerm = new Float32Array(8 * BS);
/** sv[q] = scale·q for the odd levels q of the group being searched. */
const sv = new Float32Array(16);

/** qxTerm and qqTerm of the current block's weight and xval, computed once instead of once per trial scale. */
function sumTerms(): void {
  for (let i = 0; i < BS; i++) {
    const w = weight[i];
    const wx = fr(w * xval[i]);
    for (let l = 0; l < 8; l++) {
      const q = 2 * l + 1;
      qxTerm[8 * i + l] = fr(wx * q);
      qqTerm[8 * i + l] = fr(fr(w * q) * q);
    }
  }
}

/** quantize_row_iq3_s_impl for one row x[0..n): qw the column importances, or null (weights x²). The TypeScript reference. */
export function quantizeIq3SRef(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null): void {
  const { map, neighbours } = (iq3s ??= iq3Neighbours(IQ3S_GRID, 3));
  const grid = IQ3S_GRID;
  for (let ibl = 0, o = off; ibl < n / QK_K; ibl++, o += 110) {
    dst.fill(0, o, o + 110);
    // as ggml, qs and signs advance only past blocks that are not all zero
    let qs = o + 2;
    let signs = o + 74;
    const qh = o + 66;
    const xbl = QK_K * ibl;
    let sumx2 = 0;
    for (let i = 0; i < QK_K; i++) sumx2 = fr(sumx2 + fr(x[xbl + i] * x[xbl + i]));
    const sigma2 = fr(fr(2 * sumx2) / QK_K);
    let maxScale = 0;
    for (let ib = 0; ib < QK_K / BS; ib++) {
      const xb = xbl + BS * ib;
      for (let i = 0; i < BS; i++) {
        const v = x[xb + i];
        weight[i] = qw ? fr(qw[xb + i] * fr(Math.sqrt(fr(sigma2 + fr(v * v))))) : fr(v * v);
        waux[i] = fr(Math.sqrt(weight[i]));
      }
      for (let k = 0; k < BS / 8; k++) blockSigns[k] = groupSigns(xval, weight, x, xb, k, false);
      sumTerms();
      let max = xval[0];
      for (let i = 1; i < BS; i++) max = max > xval[i] ? max : xval[i];
      L.fill(0);
      if (!max) {
        scales[ib] = 0;
        continue;
      }
      let best = 0;
      let scale = fr(max / (2 * K_MAX_Q - 1));
      onGrid.fill(0);
      for (let is = -9; is <= 9; is++) {
        const id = fr(fr(2 * K_MAX_Q - 1 + fr(is * F02)) / max);
        const thisScale = fr(1 / id);
        for (let k = 0; k < BS / 4; k++) {
          let u = 0;
          for (let i = 0; i < 4; i++) {
            const l = nearestInt(fr(0.5 * fr(fr(id * xval[4 * k + i]) - 1)));
            const c = l < 0 ? 0 : l > K_MAX_Q - 1 ? K_MAX_Q - 1 : l;
            Laux[4 * k + i] = c;
            u |= c << (3 * i);
          }
          onGridAux[k] = 1;
          if (map[u] < 0) {
            onGridAux[k] = 0;
            bestNeighbour(neighbours, -map[u] - 1, grid, xval, 4 * k, waux, thisScale, Laux, 4 * k);
          }
        }
        let sumqx = 0;
        let sumq2 = 0;
        for (let i = 0; i < BS; i++) {
          const t = 8 * i + Laux[i];
          sumqx = fr(sumqx + qxTerm[t]);
          sumq2 = fr(sumq2 + qqTerm[t]);
        }
        if (sumq2 > 0 && fr(sumqx * sumqx) > fr(best * sumq2)) {
          scale = fr(sumqx / sumq2);
          best = fr(scale * sumqx);
          L.set(Laux);
          onGrid.set(onGridAux);
        }
      }
      if (onGrid.includes(0) && scale > 0) {
        const id = fr(1 / scale);
        for (let k = 0; k < BS / 4; k++) {
          let u = 0;
          for (let i = 0; i < 4; i++) {
            const l = Math.max(0, Math.min(K_MAX_Q - 1, nearestInt(fr(0.5 * fr(fr(id * xval[4 * k + i]) - 1)))));
            u |= l << (3 * i);
          }
          let gi = map[u];
          if (gi < 0) gi = bestNeighbour(neighbours, -map[u] - 1, grid, xval, 4 * k, waux, scale, L, 4 * k);
          for (let i = 0; i < 4; i++) L[4 * k + i] = (grid[4 * gi + i] - 1) >> 1;
        }
        let sumqx = 0;
        let sumq2 = 0;
        for (let i = 0; i < BS; i++) {
          const t = 8 * i + L[i];
          sumqx = fr(sumqx + qxTerm[t]);
          sumq2 = fr(sumq2 + qqTerm[t]);
        }
        if (sumq2 > 0) scale = fr(sumqx / sumq2);
      }
      if (scale < 0) {
        scale = -scale;
        for (let k = 0; k < BS / 8; k++) blockSigns[k] = ~blockSigns[k] & 0xff;
      }
      for (let k = 0; k < BS / 4; k++) {
        let u = 0;
        for (let i = 0; i < 4; i++) u |= L[4 * k + i] << (3 * i);
        const gi = map[u];
        dst[qs + k] = gi & 255;
        dst[qh + ((ib * (BS / 4) + k) >> 3)] |= (gi >> 8) << ((ib * (BS / 4) + k) % 8);
      }
      qs += BS / 4;
      for (let k = 0; k < BS / 8; k++) dst[signs + k] = blockSigns[k];
      signs += BS / 8;
      scales[ib] = scale;
      maxScale = Math.max(maxScale, scale);
    }
    if (!maxScale) continue;
    const d = fr(maxScale / 31);
    putF16(dst, o, fr(d * F1033));
    const id = fr(1 / d);
    for (let ib = 0; ib < QK_K / BS; ib += 2) {
      const l1 = Math.max(0, Math.min(15, nearestInt(fr(0.5 * fr(fr(id * scales[ib]) - 1)))));
      const l2 = Math.max(0, Math.min(15, nearestInt(fr(0.5 * fr(fr(id * scales[ib + 1]) - 1)))));
      dst[o + 106 + ib / 2] = l1 | (l2 << 4);
    }
  }
}

/** ggml-quants.c GROUP_MAX_EPS_IQ3_XXS. */
const EPS_IQ3_XXS = fr(1e-8);
const F10125 = fr(1.0125);
const q3 = new Uint8Array(96);

/** quantize_row_iq3_xxs_impl (grid 256) for one row x[0..n): qw the column importances, or null (weights x²). The TypeScript reference. */
export function quantizeIq3XxsRef(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null): void {
  const { map, neighbours } = (iq3xxs ??= iq3Neighbours(IQ3XXS_LEVELS, 2));
  const grid = IQ3XXS_LEVELS;
  const sas = new DataView(q3.buffer, 64, 32);
  for (let ibl = 0, o = off; ibl < n / QK_K; ibl++, o += 98) {
    q3.fill(0);
    const xbl = QK_K * ibl;
    let sumx2 = 0;
    for (let i = 0; i < QK_K; i++) sumx2 = fr(sumx2 + fr(x[xbl + i] * x[xbl + i]));
    const sigma2 = fr(fr(2 * sumx2) / QK_K);
    let maxScale = 0;
    for (let ib = 0; ib < QK_K / 32; ib++) {
      const xb = xbl + 32 * ib;
      for (let i = 0; i < 32; i++) {
        const v = x[xb + i];
        weight[i] = qw ? fr(qw[xb + i] * fr(Math.sqrt(fr(sigma2 + fr(v * v))))) : fr(v * v);
        waux[i] = fr(Math.sqrt(weight[i]));
      }
      for (let k = 0; k < 4; k++) blockSigns[k] = groupSigns(xval, weight, x, xb, k, true);
      sumTerms();
      let max = xval[0];
      for (let i = 1; i < 32; i++) max = max > xval[i] ? max : xval[i];
      L.fill(0);
      if (max < EPS_IQ3_XXS) {
        scales[ib] = 0;
        continue;
      }
      let best = 0;
      let scale = fr(max / (2 * K_MAX_Q - 1));
      onGrid.fill(1);
      for (let is = -15; is <= 15; is++) {
        const id = fr(fr(2 * K_MAX_Q - 1 + fr(is * F02)) / max);
        const thisScale = fr(1 / id);
        for (let k = 0; k < 8; k++) {
          let u = 0;
          for (let i = 0; i < 4; i++) {
            const l = nearestInt(fr(0.5 * fr(fr(id * xval[4 * k + i]) - 1)));
            const c = l < 0 ? 0 : l > K_MAX_Q - 1 ? K_MAX_Q - 1 : l;
            Laux[4 * k + i] = c;
            u |= c << (3 * i);
          }
          onGridAux[k] = 1;
          if (map[u] < 0) {
            onGridAux[k] = 0;
            bestNeighbour(neighbours, -map[u] - 1, grid, xval, 4 * k, waux, thisScale, Laux, 4 * k);
          }
        }
        let sumqx = 0;
        let sumq2 = 0;
        for (let i = 0; i < 32; i++) {
          const t = 8 * i + Laux[i];
          sumqx = fr(sumqx + qxTerm[t]);
          sumq2 = fr(sumq2 + qqTerm[t]);
        }
        if (sumq2 > 0 && fr(sumqx * sumqx) > fr(best * sumq2)) {
          scale = fr(sumqx / sumq2);
          best = fr(scale * sumqx);
          L.set(Laux);
          onGrid.set(onGridAux);
        }
      }
      if (onGrid.includes(0) && scale > 0) {
        const id = fr(1 / scale);
        for (let k = 0; k < 8; k++) {
          if (onGrid[k]) continue;
          let u = 0;
          for (let i = 0; i < 4; i++) {
            const l = Math.max(0, Math.min(K_MAX_Q - 1, nearestInt(fr(0.5 * fr(fr(id * xval[4 * k + i]) - 1)))));
            u |= l << (3 * i);
          }
          let gi = map[u];
          if (gi < 0) gi = bestNeighbour(neighbours, -map[u] - 1, grid, xval, 4 * k, waux, scale, L, 4 * k);
          for (let i = 0; i < 4; i++) L[4 * k + i] = (grid[4 * gi + i] - 1) >> 1;
        }
        let sumqx = 0;
        let sumq2 = 0;
        for (let i = 0; i < 32; i++) {
          const t = 8 * i + L[i];
          sumqx = fr(sumqx + qxTerm[t]);
          sumq2 = fr(sumq2 + qqTerm[t]);
        }
        if (sumq2 > 0) scale = fr(sumqx / sumq2);
      }
      if (scale < 0) {
        scale = -scale;
        for (let k = 0; k < 4; k++) blockSigns[k] = ~blockSigns[k] & 127;
      }
      for (let k = 0; k < 8; k++) {
        let u = 0;
        for (let i = 0; i < 4; i++) u |= L[4 * k + i] << (3 * i);
        q3[8 * ib + k] = map[u];
      }
      sas.setUint32(4 * ib, (blockSigns[0] | (blockSigns[1] << 7) | (blockSigns[2] << 14) | (blockSigns[3] << 21)) >>> 0, true);
      scales[ib] = scale;
      maxScale = Math.max(maxScale, scale);
    }
    if (!maxScale) {
      dst.fill(0, o, o + 98);
      continue;
    }
    const d = fr(maxScale / 31);
    putF16(dst, o, fr(d * F10125));
    const id = fr(1 / d);
    for (let ib = 0; ib < QK_K / 32; ib++) {
      const l = Math.max(0, Math.min(15, nearestInt(fr(0.5 * fr(fr(id * scales[ib]) - 1)))));
      sas.setUint32(4 * ib, (sas.getUint32(4 * ib, true) | (l << 28)) >>> 0, true);
    }
    dst.set(q3, o + 2);
  }
}

// ---------------------------------------------------------------------------------------------
// The kernels

/** A grid's map and neighbour lists copied into one kernel's memory: byte addresses. */
interface GridTables {
  map: number;
  nb: number;
}
let tables: { k: QuantKernel; s?: GridTables; xxs?: GridTables } | null = null;

/** This thread's kernel's copy of the IQ3_XXS (xxs) or IQ3_S grid's tables (made on first use). */
function kernelTables(k: QuantKernel, xxs: boolean): GridTables {
  if (tables?.k !== k) tables = { k };
  const have = xxs ? tables.xxs : tables.s;
  if (have) return have;
  const g = xxs ? (iq3xxs ??= iq3Neighbours(IQ3XXS_LEVELS, 2)) : (iq3s ??= iq3Neighbours(IQ3S_GRID, 3));
  const map = kernelAlloc(k, 4 * g.map.length);
  const nb = kernelAlloc(k, 2 * g.neighbours.length);
  const buf = k.inst.arena.memory.buffer;
  new Int32Array(buf, map, g.map.length).set(g.map);
  new Uint16Array(buf, nb, g.neighbours.length).set(g.neighbours);
  const t = { map, nb };
  if (xxs) tables.xxs = t;
  else tables.s = t;
  return t;
}

/** The row through the kernel (quantize_row_iq3_s / _xxs); false where there is none (or n is not whole blocks). */
function byKernel(xxs: boolean, x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null): boolean {
  if (n % QK_K !== 0) return false;
  const k = rowKernel(n);
  if (!k) return false;
  const t = kernelTables(k, xxs);
  k.f32.set(x.subarray(0, n), k.row.x >> 2);
  if (qw) k.f32.set(qw.subarray(0, n), k.row.w >> 2);
  (xxs ? k.rowIq3Xxs : k.rowIq3S)(k.row.out, k.row.x, qw ? k.row.w : 0, n, t.map, t.nb, k.addr.aux);
  const bytes = (n / QK_K) * (xxs ? 98 : 110);
  dst.set(k.u8.subarray(k.row.out, k.row.out + bytes), off);
  return true;
}

/** quantize_row_iq3_s_impl for one row x[0..n): qw the column importances, or null (weights x²). */
export function quantizeIq3SRow(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null): void {
  if (!byKernel(false, x, dst, off, n, qw)) quantizeIq3SRef(x, dst, off, n, qw);
}

/** quantize_row_iq3_xxs_impl (grid 256) for one row x[0..n): qw the column importances, or null (weights x²). */
export function quantizeIq3XxsRow(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null): void {
  if (!byKernel(true, x, dst, off, n, qw)) quantizeIq3XxsRef(x, dst, off, n, qw);
}
