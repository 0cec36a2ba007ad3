// The K-quant scale searches (ggml-quants.c make_qkx2_quants / make_qkx3_quants, make_qx_quants,
// make_q3_quants, make_qp_quants) for the quantisers: the same steps as quant/kscales.ts (the
// scalar reference) in f32, so the levels and scales are the reference's bit for bit. Levels are
// kept as f32 while computing (as the reference's doubles hold whole numbers, NaN included) and
// stored as bytes at the end of each step. Pointers: x, w, qw f32[n]; L, laux bytes[n].

const MAGIC: f32 = 12582912.0;
const F01: f32 = <f32>0.1;
const GROUP_MAX_EPS: f32 = <f32>1e-15;

/** nearest_int as a float: v rounded half to even (|v| < 2^22). */
// @ts-ignore: decorator
@inline function nearest(v: f32): f32 {
  return (v + MAGIC) - MAGIC;
}

// @ts-ignore: decorator
@inline function ld(p: usize, i: i32): f32 {
  return load<f32>(p + (<usize>i << 2));
}

// @ts-ignore: decorator
@inline function putL(p: usize, i: i32, l: f32): void {
  store<u8>(p + <usize>i, <u8><i32>l);
}

// @ts-ignore: decorator
@inline function getL(p: usize, i: i32): f32 {
  return <f32>load<u8>(p + <usize>i);
}

// @ts-ignore: decorator
@inline function getLs(p: usize, i: i32): f32 {
  return <f32>load<i8>(p + <usize>i);
}

/** A JavaScript truthiness test of a float: not 0 and not NaN. */
// @ts-ignore: decorator
@inline function truthy(v: f32): bool {
  return v != 0 && v == v;
}

function signedMax(x: usize, n: i32): f32 {
  let amax: f32 = 0;
  let max: f32 = 0;
  for (let i = 0; i < n; i++) {
    const v = ld(x, i);
    const ax = abs<f32>(v);
    if (ax > amax) { amax = ax; max = v; }
  }
  return max;
}

/** make_qkx2_quants (kscales.ts makeQkx2Quants): returns the scale, writes -min to out_min. */
export function kscale_qkx2(
  n: i32, nmax: i32, x: usize, w: usize, L: usize, laux: usize, rmin: f32, rdelta: f32, nstep: i32, useMad: i32, outMin: usize,
): f32 {
  const fmax = <f32>nmax;
  let xmin = ld(x, 0);
  let xmax = xmin;
  let sumW = ld(w, 0);
  let sumX: f32 = sumW * xmin;
  let nonNegative = sumW >= 0;
  for (let i = 1; i < n; i++) {
    const v = ld(x, i);
    if (v < xmin) xmin = v;
    if (v > xmax) xmax = v;
    const wi = ld(w, i);
    if (!(wi >= 0)) nonNegative = false;
    sumW = sumW + wi;
    sumX = sumX + wi * v;
  }
  if (xmin > 0) xmin = 0;
  if (xmax == xmin) {
    memory.fill(L, 0, <usize>n);
    store<f32>(outMin, -xmin);
    return 0;
  }
  let iscale: f32 = fmax / (xmax - xmin);
  let scale: f32 = <f32>1 / iscale;
  let bestError: f32 = 0;
  for (let i = 0; i < n; i++) {
    const v = ld(x, i);
    const l = max<f32>(0, min<f32>(fmax, nearest(iscale * (v - xmin))));
    putL(L, i, l);
    let diff: f32 = (scale * l + xmin) - v;
    diff = useMad ? abs<f32>(diff) : diff * diff;
    bestError = bestError + ld(w, i) * diff;
  }
  if (nstep < 1) {
    store<f32>(outMin, -xmin);
    return scale;
  }
  let havePrev = false;
  for (let is = 0; is <= nstep; is++) {
    iscale = ((rmin + rdelta * <f32>is) + fmax) / (xmax - xmin);
    let same = havePrev;
    for (let i = 0; i < n; i++) {
      const l = max<f32>(0, min<f32>(fmax, nearest(iscale * (ld(x, i) - xmin))));
      if (l != getL(laux, i)) same = false;
      putL(laux, i, l);
    }
    havePrev = true;
    if (same) continue;
    let sumL: f32 = 0;
    let sumL2: f32 = 0;
    let sumXL: f32 = 0;
    for (let i = 0; i < n; i++) {
      const l = getL(laux, i);
      const wl: f32 = ld(w, i) * l;
      sumL = sumL + wl;
      sumL2 = sumL2 + wl * l;
      sumXL = sumXL + wl * ld(x, i);
    }
    const D: f32 = sumW * sumL2 - sumL * sumL;
    if (D > 0) {
      let thisScale: f32 = (sumW * sumXL - sumX * sumL) / D;
      let thisMin: f32 = (sumL2 * sumX - sumL * sumXL) / D;
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = sumXL / sumL2;
      }
      let curError: f32 = 0;
      for (let i = 0; i < n; i++) {
        let diff: f32 = (thisScale * getL(laux, i) + thisMin) - ld(x, i);
        diff = useMad ? abs<f32>(diff) : diff * diff;
        curError = curError + ld(w, i) * diff;
        if (curError >= bestError && nonNegative) break;
      }
      if (curError < bestError) {
        memory.copy(L, laux, <usize>n);
        bestError = curError;
        scale = thisScale;
        xmin = thisMin;
      }
    }
  }
  store<f32>(outMin, -xmin);
  return scale;
}

/**
 * make_qx_quants (kscales.ts makeQxQuants): levels in [0, 2·nmax) to L, the scale returned. qw: the
 * weights, or 0 for rmseType's; aux: 5·n bytes of scratch (the weights, then the trial levels).
 */
export function kscale_qx(n: i32, nmax: i32, x: usize, L: usize, rmseType: i32, qw: usize, aux: usize): f32 {
  const fmax = <f32>nmax;
  const xmax = signedMax(x, n);
  if (abs<f32>(xmax) < GROUP_MAX_EPS) {
    memory.fill(L, 0, <usize>n);
    return 0;
  }
  let iscale: f32 = -fmax / xmax;
  if (rmseType == 0) {
    for (let i = 0; i < n; i++) {
      const l = nearest(iscale * ld(x, i));
      putL(L, i, fmax + max<f32>(-fmax, min<f32>(fmax - 1, l)));
    }
    return <f32>1 / iscale;
  }
  let returnEarly = false;
  if (rmseType < 0) {
    rmseType = -rmseType;
    returnEarly = true;
  }
  const W = aux;
  const prev = aux + (<usize>n << 2);
  for (let i = 0; i < n; i++) {
    const v = ld(x, i);
    let wi: f32;
    if (qw) wi = ld(qw, i);
    else if (rmseType == 1) wi = v * v;
    else if (rmseType == 2) wi = 1;
    else if (rmseType == 3) wi = abs<f32>(v);
    else wi = sqrt<f32>(abs<f32>(v));
    store<f32>(W + (<usize>i << 2), wi);
  }
  let sumlx: f32 = 0;
  let suml2: f32 = 0;
  for (let i = 0; i < n; i++) {
    const v = ld(x, i);
    const l = max<f32>(-fmax, min<f32>(fmax - 1, nearest(iscale * v)));
    putL(L, i, l + fmax);
    const wi = ld(W, i);
    sumlx = sumlx + (wi * v) * l;
    suml2 = suml2 + (wi * l) * l;
  }
  let scale: f32 = truthy(suml2) ? sumlx / suml2 : 0;
  if (returnEarly) return suml2 > 0 ? <f32>0.5 * (scale + <f32>1 / iscale) : <f32>1 / iscale;
  let best: f32 = scale * sumlx;
  let havePrev = false;
  for (let is = -9; is <= 9; is++) {
    if (is == 0) continue;
    iscale = -(fmax + F01 * <f32>is) / xmax;
    let same = havePrev;
    for (let i = 0; i < n; i++) {
      let l = nearest(iscale * ld(x, i));
      l = l < -fmax ? -fmax : l > fmax - 1 ? fmax - 1 : l;
      if (l != getLs(prev, i)) same = false;
      store<i8>(prev + <usize>i, <i8><i32>l);
    }
    havePrev = true;
    if (same) continue;
    sumlx = 0;
    suml2 = 0;
    for (let i = 0; i < n; i++) {
      const v = ld(x, i);
      const l = getLs(prev, i);
      const wi = ld(W, i);
      sumlx = sumlx + (wi * v) * l;
      suml2 = suml2 + (wi * l) * l;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (let i = 0; i < n; i++) putL(L, i, fmax + getLs(prev, i));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

/** make_q3_quants (kscales.ts makeQ3Quants): levels in [0, 2·nmax) to L (i8), the scale returned. */
export function kscale_q3(n: i32, nmax: i32, x: usize, L: usize, doRmse: i32): f32 {
  const fmax = <f32>nmax;
  const xmax = signedMax(x, n);
  if (abs<f32>(xmax) < GROUP_MAX_EPS) {
    memory.fill(L, 0, <usize>n);
    return 0;
  }
  const iscale: f32 = -fmax / xmax;
  if (doRmse) {
    let sumlx: f32 = 0;
    let suml2: f32 = 0;
    for (let i = 0; i < n; i++) {
      const v = ld(x, i);
      const l = max<f32>(-fmax, min<f32>(fmax - 1, nearest(iscale * v)));
      store<i8>(L + <usize>i, <i8><i32>l);
      const wi: f32 = v * v;
      sumlx = sumlx + (wi * v) * l;
      suml2 = suml2 + (wi * l) * l;
    }
    for (let itry = 0; itry < 5; itry++) {
      let changed = 0;
      for (let i = 0; i < n; i++) {
        const v = ld(x, i);
        const wi: f32 = v * v;
        const li = getLs(L, i);
        let slx: f32 = sumlx - (wi * v) * li;
        if (slx > 0) {
          let sl2: f32 = suml2 - (wi * li) * li;
          const nl = max<f32>(-fmax, min<f32>(fmax - 1, nearest((v * sl2) / slx)));
          if (nl != li) {
            slx = slx + (wi * v) * nl;
            sl2 = sl2 + (wi * nl) * nl;
            if (sl2 > 0 && (slx * slx) * suml2 > (sumlx * sumlx) * sl2) {
              store<i8>(L + <usize>i, <i8><i32>nl);
              sumlx = slx;
              suml2 = sl2;
              changed++;
            }
          }
        }
      }
      if (!changed) break;
    }
    for (let i = 0; i < n; i++) store<i8>(L + <usize>i, <i8>(load<i8>(L + <usize>i) + nmax));
    return suml2 > 0 ? sumlx / suml2 : 0;
  }
  for (let i = 0; i < n; i++) {
    const l = max<f32>(-fmax, min<f32>(fmax - 1, nearest(iscale * ld(x, i))));
    store<i8>(L + <usize>i, <i8><i32>(l + fmax));
  }
  return <f32>1 / iscale;
}

/** make_qp_quants (kscales-weighted.ts makeQpQuants): levels in [0, nmax] to L, the scale returned. */
export function kscale_qp(n: i32, nmax: i32, x: usize, L: usize, qw: usize): f32 {
  const fmax = <f32>nmax;
  let xmax: f32 = 0;
  for (let i = 0; i < n; i++) xmax = max<f32>(xmax, ld(x, i));
  if (xmax < GROUP_MAX_EPS) {
    memory.fill(L, 0, <usize>n);
    return 0;
  }
  let iscale: f32 = fmax / xmax;
  const scale: f32 = <f32>1 / iscale;
  let bestMse: f32 = 0;
  for (let i = 0; i < n; i++) {
    const l = nearest(iscale * ld(x, i));
    const diff: f32 = ld(x, i) - scale * l;
    bestMse = bestMse + (ld(qw, i) * diff) * diff;
  }
  for (let is = -4; is <= 4; is++) {
    if (is == 0) continue;
    const iscaleIs: f32 = (F01 * <f32>is + fmax) / xmax;
    const scaleIs: f32 = <f32>1 / iscaleIs;
    let mse: f32 = 0;
    for (let i = 0; i < n; i++) {
      const l = min<f32>(fmax, nearest(iscaleIs * ld(x, i)));
      const diff: f32 = ld(x, i) - scaleIs * l;
      mse = mse + (ld(qw, i) * diff) * diff;
    }
    if (mse < bestMse) {
      bestMse = mse;
      iscale = iscaleIs;
    }
  }
  let sumlx: f32 = 0;
  let suml2: f32 = 0;
  for (let i = 0; i < n; i++) {
    const l = min<f32>(fmax, nearest(iscale * ld(x, i)));
    putL(L, i, l);
    const wi = ld(qw, i);
    sumlx = sumlx + (wi * ld(x, i)) * l;
    suml2 = suml2 + (wi * l) * l;
  }
  for (let itry = 0; itry < 5; itry++) {
    let changed = 0;
    for (let i = 0; i < n; i++) {
      const wi = ld(qw, i);
      const xi = ld(x, i);
      const li = getL(L, i);
      let slx: f32 = sumlx - (wi * xi) * li;
      let sl2: f32 = suml2 - (wi * li) * li;
      if (slx > 0 && sl2 > 0) {
        const nl = min<f32>(fmax, nearest((xi * sl2) / slx));
        if (nl != li) {
          slx = slx + (wi * xi) * nl;
          sl2 = sl2 + (wi * nl) * nl;
          if ((slx * slx) * suml2 > (sumlx * sumlx) * sl2) {
            putL(L, i, nl);
            sumlx = slx;
            suml2 = sl2;
            changed++;
          }
        }
      }
    }
    if (!changed) break;
  }
  return suml2 > 0 ? sumlx / suml2 : 0;
}
