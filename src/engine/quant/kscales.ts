// The scale searches the K-quant reference quantisers use (ggml-quants.c make_qx_quants,
// make_q3_quants, make_qkx2_quants, make_qp_quants). Same algorithms, same float32 rounding at each
// step (fr after every operation), so the chosen levels match ggml's byte for byte.
// Arrays are passed with an element offset (x, xo) so the callers never allocate per group.

import { fr, nearestInt } from './half.js';
import { kernelFits, scaleKernel } from './quant-kernel.js';
import { QK_K } from './q8k.js';

/** ggml-quants.c GROUP_MAX_EPS: a group whose largest magnitude is below this is all zero. */
export const GROUP_MAX_EPS = fr(1e-15);

const F01 = fr(0.1);

/**
 * The value of x[xo..xo+n) with the largest magnitude, keeping its sign (the first one on ties;
 * 0 when all are 0): the `max` every ggml reference quantiser scales from.
 */
export function signedMax(x: ArrayLike<number>, xo: number, n: number): number {
  let amax = 0;
  let max = 0;
  for (let i = xo; i < xo + n; i++) {
    const ax = Math.abs(x[i]);
    if (ax > amax) { amax = ax; max = x[i]; }
  }
  return max;
}

/** Scratch for makeQxQuants' trial levels and weights. */
let trialLevels = new Int8Array(32);
let weights = new Float32Array(32);

/**
 * Symmetric levels L ∈ [0, 2·nmax) for x ≈ scale·(L - nmax), searching 19 scales around
 * -nmax/max and keeping the one with the best weighted fit (make_qx_quants). Weights: qw if
 * given, else by rmseType (1: x², 2: 1, 3: |x|, other: √|x|). Returns the scale.
 */
export function makeQxQuantsRef(
  n: number, nmax: number, x: Float32Array, xo: number, L: Uint8Array, lo: number, rmseType: number,
  qw: Float32Array | null, qo = 0,
): number {
  const max = signedMax(x, xo, n);
  if (Math.abs(max) < GROUP_MAX_EPS) {
    L.fill(0, lo, lo + n);
    return 0;
  }
  let iscale = fr(-nmax / max);
  if (rmseType === 0) {
    for (let i = 0; i < n; i++) {
      const l = nearestInt(fr(iscale * x[xo + i]));
      L[lo + i] = nmax + Math.max(-nmax, Math.min(nmax - 1, l));
    }
    return fr(1 / iscale);
  }
  let returnEarly = false;
  if (rmseType < 0) {
    rmseType = -rmseType;
    returnEarly = true;
  }
  // the weights once per group (the trials below read each one 19 times)
  if (weights.length < n) weights = new Float32Array(n);
  const W = weights;
  for (let i = 0; i < n; i++) {
    const v = x[xo + i];
    W[i] = qw ? qw[qo + i] : rmseType === 1 ? fr(v * v) : rmseType === 2 ? 1 : rmseType === 3 ? Math.abs(v) : fr(Math.sqrt(Math.abs(v)));
  }
  let sumlx = 0;
  let suml2 = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xo + i];
    let l = nearestInt(fr(iscale * v));
    l = Math.max(-nmax, Math.min(nmax - 1, l));
    L[lo + i] = l + nmax;
    const w = W[i];
    sumlx = fr(sumlx + fr(fr(w * v) * l));
    suml2 = fr(suml2 + fr(fr(w * l) * l));
  }
  let scale = suml2 ? fr(sumlx / suml2) : 0;
  if (returnEarly) return suml2 > 0 ? fr(0.5 * fr(scale + fr(1 / iscale))) : fr(1 / iscale);
  let best = fr(scale * sumlx);
  // As in makeQkx2Quants: a trial with the previous trial's levels cannot change the outcome.
  const prev = trialLevels.length >= n ? trialLevels : (trialLevels = new Int8Array(n));
  let havePrev = false;
  for (let is = -9; is <= 9; is++) {
    if (is === 0) continue;
    iscale = fr(-fr(nmax + fr(F01 * is)) / max);
    let same = havePrev;
    for (let i = 0; i < n; i++) {
      let l = fr(fr(iscale * x[xo + i]) + 12582912) - 12582912; // nearestInt
      l = l < -nmax ? -nmax : l > nmax - 1 ? nmax - 1 : l;
      if (l !== prev[i]) same = false;
      prev[i] = l;
    }
    havePrev = true;
    if (same) continue;
    sumlx = 0;
    suml2 = 0;
    for (let i = 0; i < n; i++) {
      const v = x[xo + i];
      const l = prev[i];
      const w = W[i];
      sumlx = fr(sumlx + fr(fr(w * v) * l));
      suml2 = fr(suml2 + fr(fr(w * l) * l));
    }
    if (suml2 > 0 && fr(sumlx * sumlx) > fr(best * suml2)) {
      for (let i = 0; i < n; i++) L[lo + i] = nmax + prev[i];
      scale = fr(sumlx / suml2);
      best = fr(scale * sumlx);
    }
  }
  return scale;
}

/**
 * Q3_K's symmetric levels (make_q3_quants): start from -nmax/max, then (doRmse) up to 5 passes of
 * moving single levels while the x²-weighted fit improves. L gets values in [0, 2·nmax). Returns the scale.
 */
export function makeQ3QuantsRef(n: number, nmax: number, x: Float32Array, xo: number, L: Int8Array, lo: number, doRmse: boolean): number {
  const max = signedMax(x, xo, n);
  if (Math.abs(max) < GROUP_MAX_EPS) {
    L.fill(0, lo, lo + n);
    return 0;
  }
  const iscale = fr(-nmax / max);
  if (doRmse) {
    let sumlx = 0;
    let suml2 = 0;
    for (let i = 0; i < n; i++) {
      const v = x[xo + i];
      let l = nearestInt(fr(iscale * v));
      l = Math.max(-nmax, Math.min(nmax - 1, l));
      L[lo + i] = l;
      const w = fr(v * v);
      sumlx = fr(sumlx + fr(fr(w * v) * l));
      suml2 = fr(suml2 + fr(fr(w * l) * l));
    }
    for (let itry = 0; itry < 5; itry++) {
      let changed = 0;
      for (let i = 0; i < n; i++) {
        const v = x[xo + i];
        const w = fr(v * v);
        const li = L[lo + i];
        let slx = fr(sumlx - fr(fr(w * v) * li));
        if (slx > 0) {
          let sl2 = fr(suml2 - fr(fr(w * li) * li));
          let nl = nearestInt(fr(fr(v * sl2) / slx));
          nl = Math.max(-nmax, Math.min(nmax - 1, nl));
          if (nl !== li) {
            slx = fr(slx + fr(fr(w * v) * nl));
            sl2 = fr(sl2 + fr(fr(w * nl) * nl));
            if (sl2 > 0 && fr(fr(slx * slx) * suml2) > fr(fr(sumlx * sumlx) * sl2)) {
              L[lo + i] = nl;
              sumlx = slx;
              suml2 = sl2;
              changed++;
            }
          }
        }
      }
      if (!changed) break;
    }
    for (let i = 0; i < n; i++) L[lo + i] += nmax;
    return suml2 > 0 ? fr(sumlx / suml2) : 0;
  }
  for (let i = 0; i < n; i++) {
    let l = nearestInt(fr(iscale * x[xo + i]));
    l = Math.max(-nmax, Math.min(nmax - 1, l));
    L[lo + i] = l + nmax;
  }
  return fr(1 / iscale);
}

/**
 * Asymmetric levels L ∈ [0, nmax] for x ≈ scale·L - min (make_qkx2_quants): start from the
 * min/max fit, then try nstep+1 scales (rmin + rdelta·is + nmax)/(max - min), each refined by a
 * weighted least-squares solve for scale and min; keep the lowest weighted error (|e| with
 * useMad, else e²). Returns the scale; writes the (positive) min to mins[mi].
 */
export function makeQkx2QuantsRef(
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
  if (max === min) {
    L.fill(0, lo, lo + n);
    mins[mi] = -min;
    return 0;
  }
  let iscale = fr(nmax / fr(max - min));
  let scale = fr(1 / iscale);
  let bestError = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xo + i];
    const l = Math.max(0, Math.min(nmax, nearestInt(fr(iscale * fr(v - min)))));
    L[lo + i] = l;
    let diff = fr(fr(fr(scale * l) + min) - v);
    diff = useMad ? Math.abs(diff) : fr(diff * diff);
    bestError = fr(bestError + fr(weights[i] * diff));
  }
  if (nstep < 1) {
    mins[mi] = -min;
    return scale;
  }
  // A trial whose levels equal the previous trial's gives the same sums, fit and error, and so
  // the same (non-)update: skipping it changes nothing (and saves most of the work).
  let havePrev = false;
  for (let is = 0; is <= nstep; is++) {
    // min (and so the range) moves whenever a better fit is found, as in ggml.
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
      const wl = fr(weights[i] * l);
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
      let curError = 0;
      for (let i = 0; i < n; i++) {
        let diff = fr(fr(fr(thisScale * Laux[i]) + thisMin) - x[xo + i]);
        diff = useMad ? Math.abs(diff) : fr(diff * diff);
        curError = fr(curError + fr(weights[i] * diff));
        // With weights ≥ 0 every term is ≥ 0 and a rounded sum never decreases, so once the
        // error reaches bestError this trial cannot win: stop summing (same outcome, less work).
        if (curError >= bestError && nonNegative) break;
      }
      if (curError < bestError) {
        for (let i = 0; i < n; i++) L[lo + i] = Laux[i];
        bestError = curError;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  mins[mi] = -min;
  return scale;
}

// ---------------------------------------------------------------------------------------------
// The searches as the quantisers call them: through the WebAssembly kernel when there is one (the
// group copied into its memory, the levels copied back), else the references above. Same bits.

/** makeQxQuantsRef's result, by the kernel when there is one. */
export function makeQxQuants(
  n: number, nmax: number, x: Float32Array, xo: number, L: Uint8Array, lo: number, rmseType: number,
  qw: Float32Array | null, qo = 0,
): number {
  const k = kernelFits(n) ? scaleKernel() : null;
  if (!k) return makeQxQuantsRef(n, nmax, x, xo, L, lo, rmseType, qw, qo);
  const f = k.f32;
  for (let i = 0; i < n; i++) f[k.x + i] = x[xo + i];
  if (qw) for (let i = 0; i < n; i++) f[k.w + i] = qw[qo + i];
  const scale = k.qx(n, nmax, k.addr.x, k.addr.L, rmseType, qw ? k.addr.w : 0, k.addr.aux);
  const u8 = k.u8;
  for (let i = 0; i < n; i++) L[lo + i] = u8[k.L + i];
  return scale;
}

/** makeQ3QuantsRef's result, by the kernel when there is one. */
export function makeQ3Quants(n: number, nmax: number, x: Float32Array, xo: number, L: Int8Array, lo: number, doRmse: boolean): number {
  const k = kernelFits(n) ? scaleKernel() : null;
  if (!k) return makeQ3QuantsRef(n, nmax, x, xo, L, lo, doRmse);
  const f = k.f32;
  for (let i = 0; i < n; i++) f[k.x + i] = x[xo + i];
  const scale = k.q3(n, nmax, k.addr.x, k.addr.L, doRmse ? 1 : 0);
  const i8 = k.i8;
  for (let i = 0; i < n; i++) L[lo + i] = i8[k.L + i];
  return scale;
}

/** makeQkx2QuantsRef's result, by the kernel when there is one (Laux is then not written). */
export function makeQkx2Quants(
  n: number, nmax: number, x: Float32Array, xo: number, weights: Float32Array, L: Uint8Array, lo: number,
  mins: Float32Array, mi: number, Laux: Uint8Array, rmin: number, rdelta: number, nstep: number, useMad: boolean,
): number {
  const k = kernelFits(n) ? scaleKernel() : null;
  if (!k) return makeQkx2QuantsRef(n, nmax, x, xo, weights, L, lo, mins, mi, Laux, rmin, rdelta, nstep, useMad);
  const f = k.f32;
  for (let i = 0; i < n; i++) {
    f[k.x + i] = x[xo + i];
    f[k.w + i] = weights[i];
  }
  const scale = k.qkx2(n, nmax, k.addr.x, k.addr.w, k.addr.L, k.addr.aux, rmin, rdelta, nstep, useMad ? 1 : 0, k.addr.min);
  const u8 = k.u8;
  for (let i = 0; i < n; i++) L[lo + i] = u8[k.L + i];
  mins[mi] = f[k.min];
  return scale;
}

// ---------------------------------------------------------------------------------------------
// The float side of ggml_vec_dot_q{3,4,5,6}_K_q8_K_generic: integer products go to 8 lanes
// (element j to lane j % 8), each lane's float sum is kept across blocks, and the lanes are added
// at the end.

/** sums[l] += d·lane_l for the 8 integer lane sums of one block (each step in float32). */
export function addLanes(
  sums: Float32Array, d: number, l0: number, l1: number, l2: number, l3: number, l4: number, l5: number, l6: number, l7: number,
): void {
  sums[0] += fr(d * fr(l0));
  sums[1] += fr(d * fr(l1));
  sums[2] += fr(d * fr(l2));
  sums[3] += fr(d * fr(l3));
  sums[4] += fr(d * fr(l4));
  sums[5] += fr(d * fr(l5));
  sums[6] += fr(d * fr(l6));
  sums[7] += fr(d * fr(l7));
}

/** sumf + the 8 lane sums, added in lane order. */
export function laneTotal(sums: Float32Array, sumf = 0): number {
  for (let l = 0; l < 8; l++) sumf = fr(sumf + sums[l]);
  return sumf;
}

/**
 * One block of Q3_K / Q6_K: levels q[0..256) (signed, already unpacked), signed group scales
 * sc[so + j/16]; lane l gets sc·a·q over j ≡ l (mod 8), then addLanes with d.
 */
export function addScaledLanes16(
  sums: Float32Array, d: number, q: Int8Array, sc: Int8Array, so: number, a8: Int8Array, ao: number,
): void {
  let l0 = 0, l1 = 0, l2 = 0, l3 = 0, l4 = 0, l5 = 0, l6 = 0, l7 = 0;
  for (let j = 0; j < QK_K; j += 8) {
    const s = sc[so + (j >> 4)];
    const a = ao + j;
    l0 += s * a8[a] * q[j];
    l1 += s * a8[a + 1] * q[j + 1];
    l2 += s * a8[a + 2] * q[j + 2];
    l3 += s * a8[a + 3] * q[j + 3];
    l4 += s * a8[a + 4] * q[j + 4];
    l5 += s * a8[a + 5] * q[j + 5];
    l6 += s * a8[a + 6] * q[j + 6];
    l7 += s * a8[a + 7] * q[j + 7];
  }
  addLanes(sums, d, l0, l1, l2, l3, l4, l5, l6, l7);
}
