// The IQ2_XXS, IQ2_XS and IQ2_S weight quantisers (ggml-quants.c quantize_row_iq2_xxs_impl,
// quantize_row_iq2_xs_impl, quantize_row_iq2_s_impl), bit for bit the scalar reference's
// (quant/iq2-quant.ts): the same f32 operations in the same order, NaN and out-of-range cases
// included (a JavaScript `undefined` read from the reference's map counts as grid index 0).
// Whole rows, n a multiple of 256; qw f32[n] the importances (0: none, IQ2_S only).
//
// A grid (quant/iq2-kernel.ts copies quant/iq2-grid8.ts's Grid8 in) is 4 u32 addresses at g:
//   map    i32[43692]  grid index of the point with levels l (Σ l_k << 2k), or -(offset + 1) into nb
//   nb     u16[]       at each offset: n, then n grid indices, nearest first
//   lv     u8[size×8]  each entry's levels l ∈ {0, 1, 2}
//   codes  u8[size×8]  byte offset 32l + 4k of the error term of level l at position k (TERM below)
// Block layouts as quant/iq2-quant.ts. aux: 1448 bytes of scratch.

import { f32ToF16 } from './common';
import { kscale_qp } from './kscales';

const MAGIC: f32 = 12582912.0;
const F01: f32 = <f32>0.1;
const GROUP_MAX_EPS: f32 = <f32>1e-15;
const EPS_IQ2_S: f32 = <f32>1e-8;
const F09875: f32 = <f32>0.9875;
const KMAP_SIZE: i32 = 43692;

// Scratch at aux (byte offsets): f32 weight, waux, xval [32]; f32 QX, QQ [3 × 32] at 128l + 4i: the
// terms w·x·q and w·q·q of element i at level l (q = 2l + 1); f32 TERM [3 × 8] at 32l + 4k: one
// neighbour search's w·(scale·q − x)²; f32 scales [16]; i8 L, LA [32]; u32 q2 [16]; u8 signs [4].
const W = 0;
const WA = 128;
const XV = 256;
const QX = 384;
const QQ = 768;
const TERM = 1152;
const SC = 1248;
const LL = 1312;
const LA = 1344;
const Q2 = 1376;
const SG = 1440;
// 1448 bytes in all (quant/iq2-kernel.ts gives the quantiser kernels' 20·256-byte aux).

/** nearest_int as a float: v rounded half to even (as the reference's nearestInt). */
// @ts-ignore: decorator
@inline function nearest(v: f32): f32 {
  return (v + MAGIC) - MAGIC;
}

// @ts-ignore: decorator
@inline function ldf(p: usize, i: i32): f32 {
  return load<f32>(p + (<usize>i << 2));
}

/**
 * The grid index at map[u], or 0 where the reference's map read is undefined (u out of range: levels
 * left by make_qp_quants when the scale is NaN, whose block is then all zeros anyway; no read outside map).
 */
// @ts-ignore: decorator
@inline function mapAt(map: usize, u: i32): i32 {
  return <u32>u < <u32>KMAP_SIZE ? load<i32>(map + (<usize>u << 2)) : 0;
}

/** Σ x[xo + i]² over 256 elements, in order. */
function sumSquares(x: usize): f32 {
  let s: f32 = 0;
  for (let i = 0; i < 256; i++) {
    const v = ldf(x, i);
    s = s + v * v;
  }
  return s;
}

/** weight[i] = qw·√(σ² + x²) (or 0.25σ² + x² without qw) for x[0..n), waux = √weight (n: 16 or 32). */
function groupWeights(aux: usize, x: usize, n: i32, qw: usize, sigma2: f32): void {
  const s2 = f32x4.splat(sigma2);
  const q = f32x4.splat(<f32>0.25 * sigma2);
  for (let i = 0; i < n; i += 4) {
    const o = <usize>i << 2;
    const v = v128.load(x + o);
    const v2 = f32x4.mul(v, v);
    const w = qw ? f32x4.mul(v128.load(qw + o), f32x4.sqrt(f32x4.add(s2, v2))) : f32x4.add(q, v2);
    v128.store(aux + W + o, w);
    v128.store(aux + WA + o, f32x4.sqrt(w));
  }
}

/**
 * groupSigns (quant/iq-signs.ts) of group k: |x| of x[8k..8k+8) into xval, the sign bits; with
 * `even`, an odd count of minus signs flips the element of least weight·x² (7 bits stored).
 */
function groupSigns(aux: usize, x: usize, k: i32, even: bool): i32 {
  let nflip = 0;
  let s = 0;
  for (let i = 0; i < 8; i++) {
    const j = 8 * k + i;
    const v = ldf(x, j);
    if (v >= 0) store<f32>(aux + XV + (<usize>j << 2), v);
    else {
      store<f32>(aux + XV + (<usize>j << 2), -v);
      nflip++;
      s |= 1 << i;
    }
  }
  if (even && (nflip & 1)) {
    let imin = 0;
    let min: f32 = (ldf(aux + W, 8 * k) * ldf(x, 8 * k)) * ldf(x, 8 * k);
    for (let i = 1; i < 8; i++) {
      const xi = ldf(x, 8 * k + i);
      const ax: f32 = (ldf(aux + W, 8 * k + i) * xi) * xi;
      if (ax < min) {
        min = ax;
        imin = i;
      }
    }
    const p = aux + XV + (<usize>(8 * k + imin) << 2);
    store<f32>(p, -load<f32>(p));
    s ^= 1 << imin;
  }
  return even ? s & 127 : s;
}

/** QX and QQ of the first n elements of weight and xval (once per group, not per trial scale). */
function sumTerms(aux: usize, n: i32): void {
  for (let i = 0; i < n; i += 4) {
    const o = <usize>i << 2;
    const w = v128.load(aux + W + o);
    const wx = f32x4.mul(w, v128.load(aux + XV + o));
    for (let l = 0; l < 3; l++) {
      const q = f32x4.splat(<f32>2 * <f32>l + 1);
      v128.store(aux + QX + 128 * <usize>l + o, f32x4.mul(wx, q));
      v128.store(aux + QQ + 128 * <usize>l + o, f32x4.mul(f32x4.mul(w, q), q));
    }
  }
}

/** Σ w·x·q and Σ w·q² over the n levels at l (float32, in order), of the last sums(). */
let sumqx: f32 = 0;
let sumq2: f32 = 0;

function sums(aux: usize, l: usize, n: i32): void {
  let sx: f32 = 0;
  let s2: f32 = 0;
  for (let i = 0; i < n; i++) {
    const t = (<usize>load<i8>(l + <usize>i) << 7) + (<usize>i << 2);
    sx = sx + load<f32>(aux + QX + t);
    s2 = s2 + load<f32>(aux + QQ + t);
  }
  sumqx = sx;
  sumq2 = s2;
}

/**
 * Levels of group k for the inverse scale id into out[8k..8k+8): nearest(0.5·(id·x − 1)) in [0, 2]
 * (a NaN becomes 0, as the reference's Int8Array stores it); returns their 16-bit index Σ l_i << 2i.
 */
// @ts-ignore: decorator
@inline function roundGroup(aux: usize, id: f32, k: i32, out: usize): i32 {
  const vid = f32x4.splat(id);
  const one = f32x4.splat(1);
  const half = f32x4.splat(0.5);
  const m = f32x4.splat(MAGIC);
  const zero = f32x4.splat(0);
  const two = f32x4.splat(2);
  const p = aux + XV + (<usize>k << 5);
  let a = f32x4.mul(f32x4.sub(f32x4.mul(vid, v128.load(p)), one), half);
  let b = f32x4.mul(f32x4.sub(f32x4.mul(vid, v128.load(p, 16)), one), half);
  a = f32x4.pmax(f32x4.pmin(f32x4.sub(f32x4.add(a, m), m), two), zero);
  b = f32x4.pmax(f32x4.pmin(f32x4.sub(f32x4.add(b, m), m), two), zero);
  const ia = i32x4.trunc_sat_f32x4_s(a);
  const ib = i32x4.trunc_sat_f32x4_s(b);
  const bytes = i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(ia, ib), i16x8.splat(0));
  let t = i64x2.extract_lane(bytes, 0);
  store<i64>(out + (<usize>k << 3), t);
  // gather the 2-bit levels from the 8 bytes: pairs, then nibbles, then bytes
  t = (t | (t >> 6)) & 0x000f000f000f000f;
  t = (t | (t >> 12)) & 0x000000ff000000ff;
  return <i32>((t | (t >> 24)) & 0xffff);
}

/** The 16-bit index of levels l[8k..8k+8) as the reference's indexOf: Σ l_i << 2i in i32, levels signed. */
function indexOf(l: usize, k: i32): i32 {
  let u = 0;
  for (let i = 0; i < 8; i++) u |= <i32>load<i8>(l + <usize>(8 * k + i)) << (2 * i);
  return u;
}

/**
 * iq2_find_best_neighbour: of the neighbours listed at nb[at], the grid point nearest to group k of
 * xval / scale in waux-weighted squared error (first on ties; -1 when every error is NaN); its
 * levels go to out[8k..8k+8) (zeros for -1). Each neighbour adds its 8 precomputed terms in ggml's order.
 */
function bestNeighbour(aux: usize, g: usize, at: i32, scale: f32, k: i32, out: usize): i32 {
  const nb = <usize>load<u32>(g, 4);
  const lv = <usize>load<u32>(g, 8);
  const codes = <usize>load<u32>(g, 12);
  const xo = <usize>k << 5;
  const x0 = v128.load(aux + XV + xo);
  const x1 = v128.load(aux + XV + xo, 16);
  const w0 = v128.load(aux + WA + xo);
  const w1 = v128.load(aux + WA + xo, 16);
  const term = aux + TERM;
  for (let l = 0; l < 3; l++) {
    const q = f32x4.splat(scale * (<f32>2 * <f32>l + 1));
    const d0 = f32x4.sub(q, x0);
    const d1 = f32x4.sub(q, x1);
    v128.store(term + 32 * <usize>l, f32x4.mul(f32x4.mul(w0, d0), d0));
    v128.store(term + 32 * <usize>l, f32x4.mul(f32x4.mul(w1, d1), d1), 16);
  }
  const list = nb + (<usize>at << 1);
  const n = <i32>load<u16>(list);
  let best = <f32>Infinity;
  let index = -1;
  for (let j = 1; j <= n; j++) {
    const e = <i32>load<u16>(list + (<usize>j << 1));
    const c = load<u64>(codes + (<usize>e << 3));
    let d2 = load<f32>(term + <usize>(c & 0xff));
    d2 = d2 + load<f32>(term + <usize>((c >> 8) & 0xff));
    d2 = d2 + load<f32>(term + <usize>((c >> 16) & 0xff));
    d2 = d2 + load<f32>(term + <usize>((c >> 24) & 0xff));
    d2 = d2 + load<f32>(term + <usize>((c >> 32) & 0xff));
    d2 = d2 + load<f32>(term + <usize>((c >> 40) & 0xff));
    d2 = d2 + load<f32>(term + <usize>((c >> 48) & 0xff));
    d2 = d2 + load<f32>(term + <usize>(c >> 56));
    if (d2 < best) {
      best = d2;
      index = e;
    }
  }
  store<u64>(out + (<usize>k << 3), index < 0 ? 0 : load<u64>(lv + (<usize>index << 3)));
  return index;
}

/** Group k's levels for the inverse scale id into out; the nearest listed neighbour's when off the grid (scale 1/id). Returns 1 when on the grid. */
// @ts-ignore: decorator
@inline function gridGroup(aux: usize, g: usize, map: usize, id: f32, scale: f32, k: i32, out: usize): i32 {
  const m = load<i32>(map + (<usize>roundGroup(aux, id, k, out) << 2));
  if (m >= 0) return 1;
  bestNeighbour(aux, g, -m - 1, scale, k, out);
  return 0;
}

/** The largest of xval[0..n) as the reference's `max > v ? max : v` (order-dependent with NaN). */
function groupMax(aux: usize, n: i32): f32 {
  let max = ldf(aux + XV, 0);
  for (let i = 1; i < n; i++) {
    const v = ldf(aux + XV, i);
    max = max > v ? max : v;
  }
  return max;
}

/** The 4-bit scale nearest(0.5·(id·s − 1)) in [0, 15] (NaN → 0). */
// @ts-ignore: decorator
@inline function scale4(id: f32, s: f32): i32 {
  const l = nearest(<f32>0.5 * (id * s - 1));
  return <i32>(l < 0 ? <f32>0 : l > 15 ? <f32>15 : l);
}

/** quantize_row_iq2_xxs_impl of x[0..n) into dst (66 bytes per 256); qw f32[n] (required); g the IQ2_XXS grid. */
export function quantize_row_iq2_xxs(dst: usize, x: usize, n: i32, qw: usize, g: usize, aux: usize): void {
  const map = <usize>load<u32>(g);
  const L = aux + LL;
  const La = aux + LA;
  const q2 = aux + Q2;
  const sg = aux + SG;
  for (let ibl = 0; ibl < n / 256; ibl++, x += 1024, qw += 1024, dst += 66) {
    memory.fill(q2, 0, 64);
    const sigma2: f32 = sumSquares(x) / <f32>256;
    let maxScale: f32 = 0;
    for (let ib = 0; ib < 8; ib++) {
      const xb = x + (<usize>ib << 7);
      groupWeights(aux, xb, 32, qw + (<usize>ib << 7), sigma2);
      for (let k = 0; k < 4; k++) store<u8>(sg + <usize>k, <u8>groupSigns(aux, xb, k, true));
      sumTerms(aux, 32);
      const xmax = groupMax(aux, 32);
      if (xmax < GROUP_MAX_EPS) {
        store<f32>(aux + SC + (<usize>ib << 2), 0);
        memory.fill(L, 0, 32);
        continue;
      }
      let scale = kscale_qp(32, 4, aux + XV, L, aux + W);
      const effMax: f32 = scale * 3;
      if (effMax <= 0) {
        store<f32>(aux + SC + (<usize>ib << 2), 0);
        memory.fill(L, 0, 32);
        continue;
      }
      let best: f32 = 0;
      for (let is = -6; is <= 6; is++) {
        const id: f32 = (<f32>5 + <f32>is * F01) / effMax;
        const thisScale: f32 = <f32>1 / id;
        for (let k = 0; k < 4; k++) gridGroup(aux, g, map, id, thisScale, k, La);
        sums(aux, La, 32);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
          scale = sumqx / sumq2;
          best = scale * sumqx;
          memory.copy(L, La, 32);
        }
      }
      if (scale > 0) {
        const id: f32 = <f32>1 / scale;
        for (let k = 0; k < 4; k++) gridGroup(aux, g, map, id, scale, k, L);
        sums(aux, L, 32);
        if (sumq2 > 0) scale = sumqx / sumq2;
      }
      if (scale < 0) {
        scale = -scale;
        for (let k = 0; k < 4; k++) store<u8>(sg + <usize>k, ~load<u8>(sg + <usize>k) & 127);
      }
      const p = q2 + (<usize>ib << 3);
      for (let k = 0; k < 4; k++) {
        store<u32>(p, load<u32>(p) | <u32>(mapAt(map, indexOf(L, k)) << (8 * k)));
        store<u32>(p, load<u32>(p, 4) | (<u32>load<u8>(sg + <usize>k) << (7 * k)), 4);
      }
      store<f32>(aux + SC + (<usize>ib << 2), scale);
      maxScale = max<f32>(maxScale, scale);
    }
    memory.fill(dst, 0, 66);
    if (!(maxScale != 0 && maxScale == maxScale)) continue;
    const d: f32 = maxScale / 31;
    store<u16>(dst, <u16>f32ToF16(d));
    const id: f32 = <f32>1 / d;
    for (let ib = 0; ib < 8; ib++) {
      const p = q2 + (<usize>ib << 3) + 4;
      store<u32>(p, load<u32>(p) | (<u32>scale4(id, ldf(aux + SC, ib)) << 28));
    }
    memory.copy(dst + 2, q2, 64);
  }
}

/** quantize_row_iq2_xs_impl (s 0; qw required) and quantize_row_iq2_s_impl (s 1; qw or 0) of x[0..n) into dst. */
function quantizeXsOrS(dst: usize, x: usize, n: i32, qw: usize, g: usize, aux: usize, s: bool): void {
  const map = <usize>load<u32>(g);
  const L = aux + LL;
  const La = aux + LA;
  const sg = aux + SG;
  const bytes: usize = s ? 82 : 74;
  const scalesAt: usize = s ? 74 : 66;
  const eps = s ? EPS_IQ2_S : GROUP_MAX_EPS;
  for (let ibl = 0; ibl < n / 256; ibl++, x += 1024, dst += bytes) {
    memory.fill(dst, 0, bytes);
    const sumx2 = sumSquares(x);
    const sigma2: f32 = s ? (2 * sumx2) / <f32>256 : sumx2 / <f32>256;
    let maxScale: f32 = 0;
    for (let ib = 0; ib < 16; ib++) {
      const xb = x + (<usize>ib << 6);
      groupWeights(aux, xb, 16, qw ? qw + 1024 * <usize>ibl + (<usize>ib << 6) : 0, sigma2);
      for (let k = 0; k < 2; k++) store<u8>(sg + <usize>k, <u8>groupSigns(aux, xb, k, !s));
      sumTerms(aux, 16);
      const xmax = groupMax(aux, 16);
      memory.fill(L, 0, 16);
      if (xmax < eps) {
        store<f32>(aux + SC + (<usize>ib << 2), 0);
        continue;
      }
      let best: f32 = 0;
      let scale: f32 = xmax / 5;
      let onGrid = 3;
      for (let is = -9; is <= 9; is++) {
        const id: f32 = (<f32>5 + <f32>is * F01) / xmax;
        const thisScale: f32 = <f32>1 / id;
        const on = gridGroup(aux, g, map, id, thisScale, 0, La) | (gridGroup(aux, g, map, id, thisScale, 1, La) << 1);
        sums(aux, La, 16);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
          scale = sumqx / sumq2;
          best = scale * sumqx;
          memory.copy(L, La, 16);
          onGrid = on;
        }
      }
      if (onGrid != 3 && scale > 0) {
        const id: f32 = <f32>1 / scale;
        for (let k = 0; k < 2; k++) if (!(onGrid & (1 << k))) gridGroup(aux, g, map, id, scale, k, L);
        sums(aux, L, 16);
        if (sumq2 > 0) scale = sumqx / sumq2;
      }
      if (scale < 0) {
        scale = -scale;
        for (let k = 0; k < 2; k++) store<u8>(sg + <usize>k, ~load<u8>(sg + <usize>k) & (s ? 255 : 127));
      }
      for (let k = 0; k < 2; k++) {
        const gi = mapAt(map, indexOf(L, k));
        const i8 = 2 * ib + k;
        const signs = <i32>load<u8>(sg + <usize>k);
        if (s) {
          store<u8>(dst + 2 + <usize>i8, <u8>gi);
          const h = dst + 66 + <usize>(i8 >> 2);
          store<u8>(h, load<u8>(h) | <u8>((gi >> 8) << (2 * (i8 & 3))));
          store<u8>(dst + 34 + <usize>i8, <u8>signs);
        } else {
          store<u16>(dst + 2 + 2 * <usize>i8, <u16>(gi | (signs << 9)));
        }
      }
      store<f32>(aux + SC + (<usize>ib << 2), scale);
      maxScale = max<f32>(maxScale, scale);
    }
    if (!(maxScale != 0 && maxScale == maxScale)) {
      if (!s) memory.fill(dst + 2, 0, 64); // as ggml: IQ2_XS clears qs, IQ2_S keeps them
      continue;
    }
    const d: f32 = maxScale / 31;
    store<u16>(dst, <u16>f32ToF16(s ? d * F09875 : d));
    const id: f32 = <f32>1 / d;
    for (let ib = 0; ib < 16; ib++) {
      const l = scale4(id, ldf(aux + SC, ib));
      const p = dst + scalesAt + <usize>(ib >> 1);
      store<u8>(p, load<u8>(p) | <u8>(ib & 1 ? l << 4 : l));
    }
  }
}

/** quantize_row_iq2_xs_impl of x[0..n) into dst (74 bytes per 256); qw f32[n] (required); g the IQ2_XS grid. */
export function quantize_row_iq2_xs(dst: usize, x: usize, n: i32, qw: usize, g: usize, aux: usize): void {
  quantizeXsOrS(dst, x, n, qw, g, aux, false);
}

/** quantize_row_iq2_s_impl of x[0..n) into dst (82 bytes per 256); qw f32[n] or 0 (weights 0.25σ² + x²); g the IQ2_S grid. */
export function quantize_row_iq2_s(dst: usize, x: usize, n: i32, qw: usize, g: usize, aux: usize): void {
  quantizeXsOrS(dst, x, n, qw, g, aux, true);
}
