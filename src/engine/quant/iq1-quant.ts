// ggml's IQ1_S and IQ1_M quantisers (ggml-quants.c quantize_row_iq1_s_impl, quantize_row_iq1_m_impl):
// each group of 8 is a point of iq1s_grid (levels −1, 0, 1, as 1, 3, 5 in iq2-grid8.ts) shifted by
// ±delta. The two split points that cut a sub-block's sorted values into the three levels are
// searched exhaustively for the best weighted fit; a group off the grid takes the nearest listed
// neighbour. Block layouts as iq1.ts:
//   IQ1_S  50 B per 256: d | qs[32] | u16 qh[8]  (per 32: 4 × 3 index high bits | 3-bit scale << 12 | delta sign << 15)
//   IQ1_M  56 B per 256: qs[32] | qh[16] (per 16: 2 × (3 high bits | delta sign << 3)) | u16 sc[4] (3 bits per 16, f16 d in the top nibbles)
// IQ1_S needs an importance matrix (ggml asserts one); IQ1_M weighs by x² without.

import { fr, f32ToF16Bits, nearestInt, putF16 } from './half.js';
import { iq1sGrid, type Grid8 } from './iq2-grid8.js';
import { IQ1M_DELTA, IQ1S_DELTA } from './iq-grids.js';
import { QK_K } from './q8k.js';

const EPS_IQ1_S = fr(1e-12);
const EPS_IQ1_M = fr(1e-7);
const F1125 = fr(1.125);
const F11125 = fr(1.1125);
const FLT_MAX = 3.4028234663852886e38;

// x_p (delta +) and x_m (delta −): the three levels −1, 0, 1 shifted
const S_P = new Float32Array([-1 + IQ1S_DELTA, IQ1S_DELTA, 1 + IQ1S_DELTA]);
const S_M = new Float32Array([-1 - IQ1S_DELTA, -IQ1S_DELTA, 1 - IQ1S_DELTA]);
const M_P = new Float32Array([-1 + IQ1M_DELTA, IQ1M_DELTA, 1 + IQ1M_DELTA]);
const M_M = new Float32Array([-1 - IQ1M_DELTA, -IQ1M_DELTA, 1 - IQ1M_DELTA]);

const scales = new Float32Array(QK_K / 16);
const shifts = new Int8Array(QK_K / 16);
const weight = new Float32Array(32);
const sumx = new Float32Array(33);
const sumw = new Float32Array(33);
const idx = new Int32Array(32);
const L = new Int8Array(32);
const index = new Uint16Array(4);
const sumqx4 = new Float32Array(4);
const sumq24 = new Float32Array(4);
/** term[3k + l]: weighted squared error of level l at position k of the group being searched. */
const term = new Float32Array(24);
/** IQ1_M: at 8(3j + l), the 8 products w·q·x (cases 0-3) and w·q·q of sorted element j at level l. */
const m1Terms = new Float32Array(16 * 3 * 8);
/** IQ1_S: the last range's products (x_p, x_m; Σ w·x·q, Σ w·q·q) for each split point i2. */
const tailP = new Float32Array(33);
const tailPw = new Float32Array(33);
const tailM = new Float32Array(33);
const tailMw = new Float32Array(33);

/**
 * iq1_find_best_neighbour2: of the neighbours listed at `at`, the grid point whose levels, as the
 * values xx[l]·scale, are nearest to x[xo..xo+8) in weighted squared error (first on ties); its
 * levels go to L[lo..lo+8). (ggml then searches the whole grid if none scored below FLT_MAX, which
 * only non-finite input reaches; here the first neighbour is taken.)
 */
function bestNeighbour(g: Grid8, at: number, x: Float32Array, xo: number, wo: number, scale: number, xx: Float32Array, lo: number): number {
  const { neighbours: nb, codes } = g;
  // the 24 terms w·(scale·q − x)² a point can sum, computed once; each neighbour adds its 8 in ggml's order
  for (let k = 0; k < 8; k++) {
    const xk = x[xo + k];
    const wk = weight[wo + k];
    for (let l = 0; l < 3; l++) {
      const diff = fr(fr(scale * xx[l]) - xk);
      term[3 * k + l] = fr(fr(wk * diff) * diff);
    }
  }
  const n = nb[at];
  let best = FLT_MAX;
  let gi = nb[at + 1];
  for (let j = 1; j <= n; j++) {
    const p = 8 * nb[at + j];
    let d2 = term[codes[p]];
    for (let i = 1; i < 8; i++) d2 = fr(d2 + term[codes[p + i]]);
    if (d2 < best) {
      best = d2;
      gi = nb[at + j];
    }
  }
  for (let i = 0; i < 8; i++) L[lo + i] = (g.levels[8 * gi + i] - 1) >> 1;
  return gi;
}

/** idx[0..n) = 0..n-1 ordered by x[xb + i] ascending, ties in index order (glibc's qsort is a stable merge sort). */
function sortIndices(x: Float32Array, xb: number, n: number): void {
  for (let j = 0; j < n; j++) {
    const v = x[xb + j];
    let k = j;
    for (; k > 0 && x[xb + idx[k - 1]] > v; k--) idx[k] = idx[k - 1];
    idx[k] = j;
  }
}

/** L[idx[j]] = 0 below i1, 1 below i2, 2 from there. */
function splitLevels(n: number, i1: number, i2: number): void {
  for (let j = 0; j < n; j++) L[idx[j]] = j < i1 ? 0 : j < i2 ? 1 : 2;
}

/** Grid indices of the n/8 groups of L; off-grid groups take their best neighbour (per group delta xxOf(k)). */
function gridIndices(g: Grid8, x: Float32Array, xb: number, n: number, scale: number, xxOf: (k: number) => Float32Array): boolean {
  let all = true;
  for (let k = 0; k < n / 8; k++) {
    let u = 0;
    for (let j = 0; j < 8; j++) u |= L[8 * k + j] << (2 * j);
    let gi = g.map[u];
    if (gi < 0) {
      all = false;
      gi = bestNeighbour(g, -g.map[u] - 1, x, xb + 8 * k, 8 * k, scale, xxOf(k), 8 * k);
    }
    index[k] = gi;
  }
  return all;
}

/** The least-squares scale of x[xb..xb+n) on the chosen grid points, or `scale` when not positive. */
function refit(g: Grid8, x: Float32Array, xb: number, n: number, scale: number, xxOf: (k: number) => Float32Array): number {
  let sumqx = 0;
  let sumq2 = 0;
  for (let k = 0; k < n / 8; k++) {
    const xx = xxOf(k);
    for (let j = 0; j < 8; j++) {
      const w = weight[8 * k + j];
      const q = xx[(g.levels[8 * index[k] + j] - 1) >> 1];
      sumqx = fr(sumqx + fr(fr(w * q) * x[xb + 8 * k + j]));
      sumq2 = fr(sumq2 + fr(fr(w * q) * q));
    }
  }
  return sumqx > 0 && sumq2 > 0 ? fr(sumqx / sumq2) : scale;
}

function rowPrep(x: Float32Array, xbl: number): number {
  let sumx2 = 0;
  for (let i = 0; i < QK_K; i++) sumx2 = fr(sumx2 + fr(x[xbl + i] * x[xbl + i]));
  return fr(fr(2 * sumx2) / QK_K);
}

function maxAbs(x: Float32Array, xb: number, n: number): number {
  let max = Math.abs(x[xb]);
  for (let i = 1; i < n; i++) max = Math.max(max, Math.abs(x[xb + i]));
  return max;
}

/** quantize_row_iq1_s_impl for one row x[0..n); qw the column importances (required). */
export function quantizeIq1SRow(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array): void {
  const g = iq1sGrid();
  const bs = 32;
  for (let ibl = 0, o = off; ibl < n / QK_K; ibl++, o += 50) {
    dst.fill(0, o, o + 50);
    const xbl = QK_K * ibl;
    const sigma2 = rowPrep(x, xbl);
    let maxScale = 0;
    for (let ib = 0; ib < QK_K / bs; ib++) {
      const xb = xbl + bs * ib;
      for (let i = 0; i < bs; i++) weight[i] = fr(qw[xb + i] * fr(Math.sqrt(fr(sigma2 + fr(x[xb + i] * x[xb + i])))));
      const max = maxAbs(x, xb, bs);
      scales[ib] = 0;
      shifts[ib] = 1;
      if (max < EPS_IQ1_S) continue;
      sortIndices(x, xb, bs);
      sumx[0] = sumw[0] = 0;
      for (let j = 0; j < bs; j++) {
        const i = idx[j];
        sumx[j + 1] = fr(sumx[j] + fr(weight[i] * x[xb + i]));
        sumw[j + 1] = fr(sumw[j] + weight[i]);
      }
      let bestScore = -FLT_MAX;
      let scale = max;
      let besti1 = -1;
      let besti2 = -1;
      let bestShift = 0;
      // ggml's sums, with the products of the first and last ranges hoisted out of the loops they do not change in
      const sx = sumx[bs];
      const sw = sumw[bs];
      const p0 = S_P[0], p1 = S_P[1], p2 = S_P[2], m0 = S_M[0], m1 = S_M[1], m2 = S_M[2];
      for (let i2 = 0; i2 <= bs; i2++) {
        const e = fr(sx - sumx[i2]);
        const ew = fr(sw - sumw[i2]);
        tailP[i2] = fr(e * p2);
        tailPw[i2] = fr(fr(ew * p2) * p2);
        tailM[i2] = fr(e * m2);
        tailMw[i2] = fr(fr(ew * m2) * m2);
      }
      for (let i1 = 0; i1 <= bs; i1++) {
        const a = fr(sumx[i1] - sumx[0]);
        const aw = fr(sumw[i1] - sumw[0]);
        const ap = fr(a * p0);
        const apw = fr(fr(aw * p0) * p0);
        const am = fr(a * m0);
        const amw = fr(fr(aw * m0) * m0);
        for (let i2 = i1; i2 <= bs; i2++) {
          const b = fr(sumx[i2] - sumx[i1]);
          const bw = fr(sumw[i2] - sumw[i1]);
          for (let c = 0; c < 2; c++) {
            const sumqx = c ? fr(fr(am + fr(b * m1)) + tailM[i2]) : fr(fr(ap + fr(b * p1)) + tailP[i2]);
            const sumq2 = c ? fr(fr(amw + fr(fr(bw * m1) * m1)) + tailMw[i2]) : fr(fr(apw + fr(fr(bw * p1) * p1)) + tailPw[i2]);
            if (sumq2 > 0 && fr(sumqx * sumqx) > fr(bestScore * sumq2)) {
              scale = fr(sumqx / sumq2);
              bestScore = fr(scale * sumqx);
              besti1 = i1;
              besti2 = i2;
              bestShift = c ? -1 : 1;
            }
          }
        }
      }
      if (besti1 < 0 || besti2 < 0 || bestShift === 0) continue;
      splitLevels(bs, besti1, besti2);
      if (scale < 0) {
        for (let j = 0; j < bs; j++) L[j] = 2 - L[j];
        scale = -scale;
        bestShift = -bestShift;
      }
      const xx = bestShift === 1 ? S_P : S_M;
      if (!gridIndices(g, x, xb, bs, scale, () => xx)) scale = refit(g, x, xb, bs, scale, () => xx);
      let h = 0;
      for (let k = 0; k < bs / 8; k++) {
        dst[o + 2 + (bs / 8) * ib + k] = index[k] & 255;
        h |= (index[k] >> 8) << (3 * k);
      }
      dst[o + 34 + 2 * ib] = h & 255;
      dst[o + 35 + 2 * ib] = h >> 8;
      scales[ib] = scale;
      shifts[ib] = bestShift;
      maxScale = Math.max(maxScale, scale);
    }
    if (!maxScale) continue;
    const d = fr(maxScale / 15);
    putF16(dst, o, fr(d * F1125));
    const id = fr(1 / d);
    for (let ib = 0; ib < QK_K / bs; ib++) {
      let l = Math.max(0, Math.min(7, nearestInt(fr(0.5 * fr(fr(id * scales[ib]) - 1)))));
      if (shifts[ib] === -1) l |= 8;
      dst[o + 35 + 2 * ib] |= l << 4;
    }
  }
}

/** Delta table of group k (0: first 8, 1: last 8) of an IQ1_M sub-block for shift case s (0 ++, 1 +−, 2 −+, 3 −−). */
const m1xx = (s: number, k: number) => (k === 0 ? (s < 2 ? M_P : M_M) : s % 2 === 0 ? M_P : M_M);
const MASKS = [0x00, 0x80, 0x08, 0x88];

function iq1mWeights(x: Float32Array, xb: number, qw: Float32Array | null, sigma2: number): void {
  for (let i = 0; i < 16; i++) {
    const v = x[xb + i];
    weight[i] = qw ? fr(qw[xb + i] * fr(Math.sqrt(fr(sigma2 + fr(v * v))))) : fr(v * v);
  }
}

/** quantize_row_iq1_m_impl for one row x[0..n); qw the column importances, or null (weights x²). */
export function quantizeIq1MRow(x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null): void {
  const g = iq1sGrid();
  const bs = 16;
  for (let ibl = 0, o = off; ibl < n / QK_K; ibl++, o += 56) {
    dst.fill(0, o, o + 56);
    const xbl = QK_K * ibl;
    const sigma2 = rowPrep(x, xbl);
    let maxScale = 0;
    for (let ib = 0; ib < QK_K / bs; ib++) {
      const xb = xbl + bs * ib;
      iq1mWeights(x, xb, qw, sigma2);
      const max = maxAbs(x, xb, bs);
      scales[ib] = 0;
      shifts[ib] = 0;
      if (max < EPS_IQ1_M) continue;
      sortIndices(x, xb, bs);
      let bestScore = -FLT_MAX;
      let scale = max;
      let besti1 = -1;
      let besti2 = -1;
      let bestK = -1;
      // the products each sorted element adds at each level, computed once; the loops add them in ggml's order
      for (let j = 0; j < bs; j++) {
        const i = idx[j];
        const w = weight[i];
        const xi = x[xb + i];
        for (let lv = 0; lv < 3; lv++) {
          const p = M_P[lv];
          const m = M_M[lv];
          // cases 0, 1 use x_p on the first half; cases 0, 2 on the second
          const q1 = i < bs / 2 ? p : m;
          const q2 = i < bs / 2 ? m : p;
          const t = 8 * (3 * j + lv);
          m1Terms[t] = fr(fr(w * p) * xi);
          m1Terms[t + 1] = fr(fr(w * q1) * xi);
          m1Terms[t + 2] = fr(fr(w * q2) * xi);
          m1Terms[t + 3] = fr(fr(w * m) * xi);
          m1Terms[t + 4] = fr(fr(w * p) * p);
          m1Terms[t + 5] = fr(fr(w * q1) * q1);
          m1Terms[t + 6] = fr(fr(w * q2) * q2);
          m1Terms[t + 7] = fr(fr(w * m) * m);
        }
      }
      for (let i1 = 0; i1 <= bs; i1++) {
        for (let i2 = i1; i2 <= bs; i2++) {
          let qx0 = 0, qx1 = 0, qx2 = 0, qx3 = 0, qq0 = 0, qq1 = 0, qq2 = 0, qq3 = 0;
          for (let j = 0; j < bs; j++) {
            const t = 8 * (3 * j + (j < i1 ? 0 : j < i2 ? 1 : 2));
            qx0 = fr(qx0 + m1Terms[t]);
            qx1 = fr(qx1 + m1Terms[t + 1]);
            qx2 = fr(qx2 + m1Terms[t + 2]);
            qx3 = fr(qx3 + m1Terms[t + 3]);
            qq0 = fr(qq0 + m1Terms[t + 4]);
            qq1 = fr(qq1 + m1Terms[t + 5]);
            qq2 = fr(qq2 + m1Terms[t + 6]);
            qq3 = fr(qq3 + m1Terms[t + 7]);
          }
          sumqx4[0] = qx0;
          sumqx4[1] = qx1;
          sumqx4[2] = qx2;
          sumqx4[3] = qx3;
          sumq24[0] = qq0;
          sumq24[1] = qq1;
          sumq24[2] = qq2;
          sumq24[3] = qq3;
          for (let k = 0; k < 4; k++) {
            if (sumq24[k] > 0 && fr(sumqx4[k] * sumqx4[k]) > fr(bestScore * sumq24[k])) {
              scale = fr(sumqx4[k] / sumq24[k]);
              bestScore = fr(scale * sumqx4[k]);
              besti1 = i1;
              besti2 = i2;
              bestK = k;
            }
          }
        }
      }
      if (besti1 < 0 || besti2 < 0 || bestK < 0) continue;
      splitLevels(bs, besti1, besti2);
      if (scale < 0) {
        for (let j = 0; j < bs; j++) L[j] = 2 - L[j];
        scale = -scale;
        bestK = 3 - bestK;
      }
      const k0 = bestK;
      if (!gridIndices(g, x, xb, bs, scale, (k) => m1xx(k0, k))) scale = refit(g, x, xb, bs, scale, (k) => m1xx(k0, k));
      dst[o + 2 * ib] = index[0] & 255;
      dst[o + 2 * ib + 1] = index[1] & 255;
      dst[o + 32 + ib] = (index[0] >> 8) | ((index[1] >> 8) << 4);
      scales[ib] = scale;
      shifts[ib] = bestK;
      maxScale = Math.max(maxScale, scale);
    }
    if (!maxScale) continue;
    let d = fr(maxScale / 15);
    const id = fr(1 / d);
    let sumqx = 0;
    let sumq2 = 0;
    const sc = [0, 0, 0, 0];
    for (let ib = 0; ib < QK_K / bs; ib++) {
      const l = Math.max(0, Math.min(7, nearestInt(fr(0.5 * fr(fr(id * scales[ib]) - 1)))));
      sc[ib >> 2] |= l << (3 * (ib % 4));
      dst[o + 32 + ib] |= MASKS[shifts[ib]];
      const xb = xbl + bs * ib;
      iq1mWeights(x, xb, qw, sigma2);
      for (let k = 0; k < 2; k++) {
        const xx = m1xx(shifts[ib], k);
        const p = 8 * (dst[o + 2 * ib + k] + ((dst[o + 32 + ib] << (8 - 4 * k)) & 0x700));
        for (let j = 0; j < 8; j++) {
          const w = weight[8 * k + j];
          const q = fr(xx[(g.levels[p + j] - 1) >> 1] * (2 * l + 1));
          sumqx = fr(sumqx + fr(fr(w * q) * x[xb + 8 * k + j]));
          sumq2 = fr(sumq2 + fr(fr(w * q) * q));
        }
      }
    }
    if (sumq2 > 0) d = fr(sumqx / sumq2);
    const s = f32ToF16Bits(fr(d * F11125));
    sc[0] |= (s & 0x000f) << 12;
    sc[1] |= (s & 0x00f0) << 8;
    sc[2] |= (s & 0x0f00) << 4;
    sc[3] |= s & 0xf000;
    for (let i = 0; i < 4; i++) {
      dst[o + 48 + 2 * i] = sc[i] & 255;
      dst[o + 49 + 2 * i] = sc[i] >> 8;
    }
  }
}
