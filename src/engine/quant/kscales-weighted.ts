// The scale searches ggml's quantisers use when they are given an importance matrix
// (ggml-quants.c make_qkx3_quants, make_qp_quants). Same float32 rounding at each step as ggml
// (fr after every operation), so the chosen levels match byte for byte. Arrays carry an element
// offset so callers never allocate per group.

import { fr, nearestInt } from './half.js';
import { GROUP_MAX_EPS } from './kscales.js';

const F01 = fr(0.1);

/**
 * Asymmetric levels L ∈ [0, nmax] for x ≈ scale·L + min (make_qkx3_quants with weights): the
 * min/max fit, then nstep+1 trial scales (rmin + rdelta·is + nmax)/(max - min), each refit by
 * weighted least squares for scale and min; the lowest weighted error (|e| with useMad, else e²)
 * wins. Returns the scale; writes -min (≥ 0) to mins[mi]. Laux is scratch of n levels.
 */
export function makeQkx3Quants(
  n: number, nmax: number, x: Float32Array, xo: number, weights: Float32Array, L: Uint8Array, lo: number,
  mins: Float32Array, mi: number, Laux: Uint8Array, rmin: number, rdelta: number, nstep: number, useMad: boolean,
): number {
  let min = x[xo];
  let max = x[xo];
  let sumW = weights[0];
  let sumX = fr(sumW * x[xo]);
  let nonNegative = sumW >= 0;
  for (let i = 1; i < n; i++) {
    const v = x[xo + i];
    if (v < min) min = v;
    if (v > max) max = v;
    const w = weights[i];
    if (!(w >= 0)) nonNegative = false;
    sumW = fr(sumW + w);
    sumX = fr(sumX + fr(w * v));
  }
  if (min > 0) min = 0;
  if (max <= min) {
    L.fill(0, lo, lo + n);
    mins[mi] = -min;
    return 0;
  }
  let iscale = fr(nmax / fr(max - min));
  let scale = fr(1 / iscale);
  let bestMad = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xo + i];
    const l = Math.max(0, Math.min(nmax, nearestInt(fr(iscale * fr(v - min)))));
    L[lo + i] = l;
    let diff = fr(fr(fr(scale * l) + min) - v);
    diff = useMad ? Math.abs(diff) : fr(diff * diff);
    bestMad = fr(bestMad + fr(weights[i] * diff));
  }
  if (nstep < 1) {
    mins[mi] = -min;
    return scale;
  }
  // A trial whose levels equal the previous trial's gives the same sums and error, so the same
  // (non-)update: skipping it changes nothing. min moves whenever a better fit is found, as in ggml.
  let havePrev = false;
  for (let is = 0; is <= nstep; is++) {
    iscale = fr(fr(fr(rmin + fr(rdelta * is)) + nmax) / fr(max - min));
    let same = havePrev;
    for (let i = 0; i < n; i++) {
      const l = Math.max(0, Math.min(nmax, nearestInt(fr(iscale * fr(x[xo + i] - min)))));
      if (l !== Laux[i]) same = false;
      Laux[i] = l;
    }
    havePrev = true;
    if (same) continue;
    let sumL = 0;
    let sumL2 = 0;
    let sumXL = 0;
    for (let i = 0; i < n; i++) {
      const l = Laux[i];
      const w = weights[i];
      const wl = fr(w * l);
      sumL = fr(sumL + wl);
      sumL2 = fr(sumL2 + fr(wl * l));
      sumXL = fr(sumXL + fr(wl * x[xo + i]));
    }
    const D = fr(fr(sumW * sumL2) - fr(sumL * sumL));
    if (D > 0) {
      let thisScale = fr(fr(fr(sumW * sumXL) - fr(sumX * sumL)) / D);
      let thisMin = fr(fr(fr(sumL2 * sumX) - fr(sumL * sumXL)) / D);
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = fr(sumXL / sumL2);
      }
      let mad = 0;
      for (let i = 0; i < n; i++) {
        let diff = fr(fr(fr(thisScale * Laux[i]) + thisMin) - x[xo + i]);
        diff = useMad ? Math.abs(diff) : fr(diff * diff);
        mad = fr(mad + fr(weights[i] * diff));
        // Non-negative terms: a rounded sum never decreases, so this trial cannot win any more.
        if (mad >= bestMad && nonNegative) break;
      }
      if (mad < bestMad) {
        for (let i = 0; i < n; i++) L[lo + i] = Laux[i];
        bestMad = mad;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  mins[mi] = -min;
  return scale;
}

/**
 * Unsigned levels L ∈ [0, nmax] for non-negative x ≈ scale·L (make_qp_quants): 9 trial scales
 * around nmax/max by weighted squared error, then up to 5 passes moving single levels while the
 * weighted fit improves. Used for the 4- and 6-bit scales of the K-quant super-blocks. Returns the scale.
 */
export function makeQpQuants(n: number, nmax: number, x: Float32Array, L: Uint8Array, qw: Float32Array): number {
  let max = 0;
  for (let i = 0; i < n; i++) max = Math.max(max, x[i]);
  if (max < GROUP_MAX_EPS) {
    L.fill(0, 0, n);
    return 0;
  }
  let iscale = fr(nmax / max);
  const scale = fr(1 / iscale);
  let bestMse = 0;
  for (let i = 0; i < n; i++) {
    // ggml stores this l in the uint8 L and reads it back: a negative x (IQ2_XXS's sign-flipped element) wraps
    const l = nearestInt(fr(iscale * x[i])) & 255;
    const diff = fr(x[i] - fr(scale * l));
    bestMse = fr(bestMse + fr(fr(qw[i] * diff) * diff));
  }
  for (let is = -4; is <= 4; is++) {
    if (is === 0) continue;
    const iscaleIs = fr(fr(fr(F01 * is) + nmax) / max);
    const scaleIs = fr(1 / iscaleIs);
    let mse = 0;
    for (let i = 0; i < n; i++) {
      const l = Math.min(nmax, nearestInt(fr(iscaleIs * x[i])));
      const diff = fr(x[i] - fr(scaleIs * l));
      mse = fr(mse + fr(fr(qw[i] * diff) * diff));
    }
    if (mse < bestMse) {
      bestMse = mse;
      iscale = iscaleIs;
    }
  }
  let sumlx = 0;
  let suml2 = 0;
  for (let i = 0; i < n; i++) {
    const l = Math.min(nmax, nearestInt(fr(iscale * x[i])));
    L[i] = l;
    const w = qw[i];
    sumlx = fr(sumlx + fr(fr(w * x[i]) * l));
    suml2 = fr(suml2 + fr(fr(w * l) * l));
  }
  for (let itry = 0; itry < 5; itry++) {
    let changed = 0;
    for (let i = 0; i < n; i++) {
      const w = qw[i];
      const li = L[i];
      let slx = fr(sumlx - fr(fr(w * x[i]) * li));
      let sl2 = fr(suml2 - fr(fr(w * li) * li));
      if (slx > 0 && sl2 > 0) {
        const nl = Math.min(nmax, nearestInt(fr(fr(x[i] * sl2) / slx)));
        if (nl !== li) {
          slx = fr(slx + fr(fr(w * x[i]) * nl));
          sl2 = fr(sl2 + fr(fr(w * nl) * nl));
          if (fr(fr(slx * slx) * suml2) > fr(fr(sumlx * sumlx) * sl2)) {
            L[i] = nl;
            sumlx = slx;
            suml2 = sl2;
            changed++;
          }
        }
      }
    }
    if (!changed) break;
  }
  return suml2 > 0 ? fr(sumlx / suml2) : 0;
}
