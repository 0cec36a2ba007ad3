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

/** clamp(l) to [lo, hi] keeping a NaN (as Math.max(lo, Math.min(hi, l)) does), with selects: V8's f32.min/max are several instructions. */
// @ts-ignore: decorator
@inline export function clampf(l: f32, lo: f32, hi: f32): f32 {
  return l < lo ? lo : l > hi ? hi : l;
}

/** Math.min(hi, l) keeping a NaN, with a select. */
// @ts-ignore: decorator
@inline function minf(l: f32, hi: f32): f32 {
  return l > hi ? hi : l;
}

/** Four lanes of clampf (pmin/pmax: the level's NaN passes through; nearest never makes -0). */
// @ts-ignore: decorator
@inline function clamp4(l: v128, lo: v128, hi: v128): v128 {
  return f32x4.pmax(f32x4.pmin(l, hi), lo);
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

/** Four levels as stored by the reference's byte arrays: NaN → 0. */
// @ts-ignore: decorator
@inline function canon(l: v128): v128 {
  return v128.and(l, f32x4.eq(l, l));
}

/** nearest() in four lanes. */
// @ts-ignore: decorator
@inline function nearest4(v: v128): v128 {
  const m = f32x4.splat(MAGIC);
  return f32x4.sub(f32x4.add(v, m), m);
}

/** f32 levels lf[n] to bytes L[n] (whole numbers in [-128, 256)). */
function levelsToBytes(L: usize, lf: usize, n: i32, add: f32): void {
  for (let i = 0; i < n; i++) putL(L, i, ld(lf, i) + add);
}

/**
 * make_qkx2_quants (kscales.ts makeQkx2Quants), n a multiple of 4: returns the scale, writes -min
 * to outMin. aux: 20·n bytes of scratch (f32 trial levels, best levels, three term arrays). The
 * per-element products run four lanes at a time; every sum adds its terms in order, as the
 * reference does.
 */
export function kscale_qkx2(
  n: i32, nmax: i32, x: usize, w: usize, L: usize, aux: usize, rmin: f32, rdelta: f32, nstep: i32, useMad: i32, outMin: usize,
): f32 {
  const fmax = <f32>nmax;
  const nb = <usize>n << 2;
  const laux = aux;
  const best = aux + nb;
  const t1 = aux + 2 * nb;
  const t2 = aux + 3 * nb;
  const t3 = aux + 4 * nb;
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
  const vzero = f32x4.splat(0);
  const vmax = f32x4.splat(fmax);
  let iscale: f32 = fmax / (xmax - xmin);
  let scale: f32 = <f32>1 / iscale;
  {
    const vmin = f32x4.splat(xmin);
    const vi = f32x4.splat(iscale);
    const vs = f32x4.splat(scale);
    for (let o: usize = 0; o < nb; o += 16) {
      const v = v128.load(x + o);
      const l = clamp4(nearest4(f32x4.mul(vi, f32x4.sub(v, vmin))), vzero, vmax);
      v128.store(best + o, canon(l));
      let diff = f32x4.sub(f32x4.add(f32x4.mul(vs, l), vmin), v);
      diff = useMad ? f32x4.abs(diff) : f32x4.mul(diff, diff);
      v128.store(t1 + o, f32x4.mul(v128.load(w + o), diff));
    }
  }
  let bestError: f32 = 0;
  for (let i = 0; i < n; i++) bestError = bestError + ld(t1, i);
  if (nstep < 1) {
    levelsToBytes(L, best, n, 0);
    store<f32>(outMin, -xmin);
    return scale;
  }
  let havePrev = false;
  for (let is = 0; is <= nstep; is++) {
    iscale = ((rmin + rdelta * <f32>is) + fmax) / (xmax - xmin);
    const vmin = f32x4.splat(xmin);
    const vi = f32x4.splat(iscale);
    let changed = f32x4.splat(0);
    for (let o: usize = 0; o < nb; o += 16) {
      const l = clamp4(nearest4(f32x4.mul(vi, f32x4.sub(v128.load(x + o), vmin))), vzero, vmax);
      changed = v128.or(changed, v128.not(f32x4.eq(l, v128.load(laux + o))));
      v128.store(laux + o, canon(l));
    }
    const same = havePrev && !v128.any_true(changed);
    havePrev = true;
    if (same) continue;
    for (let o: usize = 0; o < nb; o += 16) {
      const l = v128.load(laux + o);
      const wl = f32x4.mul(v128.load(w + o), l);
      v128.store(t1 + o, wl);
      v128.store(t2 + o, f32x4.mul(wl, l));
      v128.store(t3 + o, f32x4.mul(wl, v128.load(x + o)));
    }
    let sumL: f32 = 0;
    let sumL2: f32 = 0;
    let sumXL: f32 = 0;
    for (let i = 0; i < n; i++) {
      sumL = sumL + ld(t1, i);
      sumL2 = sumL2 + ld(t2, i);
      sumXL = sumXL + ld(t3, i);
    }
    const D: f32 = sumW * sumL2 - sumL * sumL;
    if (D > 0) {
      let thisScale: f32 = (sumW * sumXL - sumX * sumL) / D;
      let thisMin: f32 = (sumL2 * sumX - sumL * sumXL) / D;
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = sumXL / sumL2;
      }
      const vs = f32x4.splat(thisScale);
      const vm = f32x4.splat(thisMin);
      for (let o: usize = 0; o < nb; o += 16) {
        let diff = f32x4.sub(f32x4.add(f32x4.mul(vs, v128.load(laux + o)), vm), v128.load(x + o));
        diff = useMad ? f32x4.abs(diff) : f32x4.mul(diff, diff);
        v128.store(t1 + o, f32x4.mul(v128.load(w + o), diff));
      }
      let curError: f32 = 0;
      for (let i = 0; i < n; i++) {
        curError = curError + ld(t1, i);
        if (curError >= bestError && nonNegative) break;
      }
      if (curError < bestError) {
        memory.copy(best, laux, nb);
        bestError = curError;
        scale = thisScale;
        xmin = thisMin;
      }
    }
  }
  levelsToBytes(L, best, n, 0);
  store<f32>(outMin, -xmin);
  return scale;
}

/**
 * make_qx_quants (kscales.ts makeQxQuants), n a multiple of 4: levels in [0, 2·nmax) to L, the
 * scale returned. qw: the weights, or 0 for rmseType's; aux: 20·n bytes of scratch.
 */
export function kscale_qx(n: i32, nmax: i32, x: usize, L: usize, rmseType: i32, qw: usize, aux: usize): f32 {
  const fmax = <f32>nmax;
  const nb = <usize>n << 2;
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
  const prev = aux + nb;
  const best = aux + 2 * nb;
  const t1 = aux + 3 * nb;
  const t2 = aux + 4 * nb;
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
  const lo = f32x4.splat(-fmax);
  const hi = f32x4.splat(fmax - 1);
  let sumlx: f32 = 0;
  let suml2: f32 = 0;
  {
    const vi = f32x4.splat(iscale);
    for (let o: usize = 0; o < nb; o += 16) {
      const v = v128.load(x + o);
      const l = clamp4(nearest4(f32x4.mul(vi, v)), lo, hi);
      // the reference stores l + nmax (NaN → 0 there): best holds the stored level minus nmax
      v128.store(best + o, f32x4.sub(canon(f32x4.add(l, f32x4.splat(fmax))), f32x4.splat(fmax)));
      const wi = v128.load(W + o);
      v128.store(t1 + o, f32x4.mul(f32x4.mul(wi, v), l));
      v128.store(t2 + o, f32x4.mul(f32x4.mul(wi, l), l));
    }
    for (let i = 0; i < n; i++) {
      sumlx = sumlx + ld(t1, i);
      suml2 = suml2 + ld(t2, i);
    }
  }
  let scale: f32 = truthy(suml2) ? sumlx / suml2 : 0;
  if (returnEarly) {
    levelsToBytes(L, best, n, fmax);
    return suml2 > 0 ? <f32>0.5 * (scale + <f32>1 / iscale) : <f32>1 / iscale;
  }
  let bestv: f32 = scale * sumlx;
  let havePrev = false;
  for (let is = -9; is <= 9; is++) {
    if (is == 0) continue;
    iscale = -(fmax + F01 * <f32>is) / xmax;
    const vi = f32x4.splat(iscale);
    let changed = f32x4.splat(0);
    for (let o: usize = 0; o < nb; o += 16) {
      let l = nearest4(f32x4.mul(vi, v128.load(x + o)));
      // l < -nmax ? -nmax : l > nmax - 1 ? nmax - 1 : l (NaN stays NaN)
      l = v128.bitselect(lo, v128.bitselect(hi, l, f32x4.gt(l, hi)), f32x4.lt(l, lo));
      changed = v128.or(changed, v128.not(f32x4.eq(l, v128.load(prev + o))));
      v128.store(prev + o, canon(l));
    }
    const same = havePrev && !v128.any_true(changed);
    havePrev = true;
    if (same) continue;
    for (let o: usize = 0; o < nb; o += 16) {
      const l = v128.load(prev + o);
      const wi = v128.load(W + o);
      v128.store(t1 + o, f32x4.mul(f32x4.mul(wi, v128.load(x + o)), l));
      v128.store(t2 + o, f32x4.mul(f32x4.mul(wi, l), l));
    }
    sumlx = 0;
    suml2 = 0;
    for (let i = 0; i < n; i++) {
      sumlx = sumlx + ld(t1, i);
      suml2 = suml2 + ld(t2, i);
    }
    if (suml2 > 0 && sumlx * sumlx > bestv * suml2) {
      memory.copy(best, prev, nb);
      scale = sumlx / suml2;
      bestv = scale * sumlx;
    }
  }
  levelsToBytes(L, best, n, fmax);
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
      const l = clampf(nearest(iscale * v), -fmax, fmax - 1);
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
          const nl = clampf(nearest((v * sl2) / slx), -fmax, fmax - 1);
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
    const l = clampf(nearest(iscale * ld(x, i)), -fmax, fmax - 1);
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
    // ggml keeps this l in its uint8 L: a negative x (IQ2_XXS's sign-flipped element) wraps
    const l: f32 = <f32>(<i32>nearest(iscale * ld(x, i)) & 255);
    const diff: f32 = ld(x, i) - scale * l;
    bestMse = bestMse + (ld(qw, i) * diff) * diff;
  }
  for (let is = -4; is <= 4; is++) {
    if (is == 0) continue;
    const iscaleIs: f32 = (F01 * <f32>is + fmax) / xmax;
    const scaleIs: f32 = <f32>1 / iscaleIs;
    let mse: f32 = 0;
    for (let i = 0; i < n; i++) {
      const l = minf(nearest(iscaleIs * ld(x, i)), fmax);
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
    const l = minf(nearest(iscale * ld(x, i)), fmax);
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
        const nl = minf(nearest((xi * sl2) / slx), fmax);
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
