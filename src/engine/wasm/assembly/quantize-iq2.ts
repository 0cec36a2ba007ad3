// The IQ2_XXS, IQ2_XS and IQ2_S weight quantisers (ggml-quants.c quantize_row_iq2_xxs_impl,
// quantize_row_iq2_xs_impl, quantize_row_iq2_s_impl), bit for bit the TypeScript reference's
// (quant/iq2-quant.ts quantizeIq2XxsRef, quantizeIq2XsRef, quantizeIq2SRef): per 16 values (IQ2_XXS:
// 32) in groups of 8 the weights, the sign bits, the trial-scale search (each group rounded to levels
// {0, 1, 2}, and moved to its nearest listed grid neighbour when it falls off the grid), the
// requantisation, then the packing. Every float32 operation is the reference's, in its order; a group of 8 is two v128s,
// and the sums add their lanes in order. The grid's index map and neighbour lists come from the host
// (quant/iq2-grid8.ts grid8Neighbours, copied in once): map i32[43692] (grid index, or −(offset + 1)
// into nb), nb u16 (n, then n indices); gq f32[8·size] the grid's values q = 2l + 1 (iq2_grid_q).
// Blocks: IQ2_XXS 66 B per 256: f16 d | u32 q2[16] (per 32: 4 × 8-bit index, then 4 × 7 sign bits | scale << 28)
//         IQ2_XS  74 B per 256: f16 d | u16 qs[32] (9-bit index | 7 sign bits << 9) | scales[8]
//         IQ2_S   82 B per 256: f16 d | qs[32] | signs[32] | qh[8] (index bits 8-9) | scales[8]

import { f32ToF16 } from './common';
import { IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID } from './iq-grids';
import { kscale_qp } from './kscales';
import { addLanes, groupSigns } from './iq-quant-shared';

// Scratch at aux (byte offsets): one block of up to 32 and the super-block's scales (800 bytes in all).
const WEIGHT: usize = 0; // f32[32] the weights
const WAUX: usize = 128; // f32[32] their square roots (the neighbour search's weights)
const XVAL: usize = 256; // f32[32] |x| (IQ2_XXS, IQ2_XS: one element per 8 negated when the signs' parity is odd)
const LBEST: usize = 384; // i32[32] the best trial's levels 0..2
const LAUX: usize = 512; // i32[32] this trial's levels
const SCALES: usize = 640; // f32[16] the sub-blocks' scales
const ONGRID: usize = 704; // u8[2] the best trial's groups that rounded onto the grid
const ONGRIDAUX: usize = 706; // u8[2] this trial's
const SIGNS: usize = 708; // u8[4] sign bits per 8
const LQP: usize = 712; // u8[32] IQ2_XXS: make_qp_quants' levels
const Q2: usize = 744; // u32[16] IQ2_XXS's q2 being built
/** ggml-quants.c kmap_size of the 8-element grids: indices above it are not in map. */
const KMAP_SIZE: i32 = 43692;

/** 1.5·2^23: t + MAGIC is t rounded half to even (|t| < 2^22), as nearest_int does. */
const MAGIC: f32 = 12582912.0;
const F01: f32 = <f32>0.1;
const F09875: f32 = <f32>0.9875;
/** ggml-quants.c GROUP_MAX_EPS, GROUP_MAX_EPS_IQ2_S. */
const EPS: f32 = <f32>1e-15;
const EPS_IQ2_S: f32 = <f32>1e-8;

/** A JavaScript truthiness test of a float: not 0 and not NaN. */
// @ts-ignore: decorator
@inline function truthy(v: f32): bool {
  return v != 0 && v == v;
}

/** gq ← the values 2l + 1 of iq2xs_grid (which 0: 512 entries), iq2s_grid (1: 1024) or iq2xxs_grid (2: 256), as f32; byte values 8, 25, 43 are l = 0, 1, 2. */
export function iq2_grid_q(gq: usize, which: i32): void {
  const grid = which == 2 ? IQ2XXS_GRID : which == 1 ? IQ2S_GRID : IQ2XS_GRID;
  const n = which == 2 ? 2048 : which == 1 ? 8192 : 4096;
  for (let i = 0; i < n; i++) {
    const b = <i32>load<u8>(grid + <usize>i);
    const q = 2 * ((3 * b) >> 6) + 1;
    store<f32>(gq + (<usize>i << 2), <f32>q);
  }
}

/**
 * Four lanes of the reference's clamp(nearest_int(0.5·(id·x − 1)), 0, 2) as i32: t + MAGIC is
 * rounded, clamped to [MAGIC, MAGIC + 2] (a NaN goes to MAGIC, level 0, as the reference's byte
 * stores make it; beyond 2^22 only the sign decides, as in the reference's clamp), and its low bits
 * are the level.
 */
// @ts-ignore: decorator
@inline function levels4(id: v128, xv: v128): v128 {
  const m = f32x4.splat(MAGIC);
  const r = f32x4.add(f32x4.mul(f32x4.sub(f32x4.mul(id, xv), f32x4.splat(1)), f32x4.splat(0.5)), m);
  return i32x4.sub(f32x4.pmax(m, f32x4.pmin(r, f32x4.splat(MAGIC + 2))), m);
}

/** The 16-bit grid index of eight levels (Σ l_i << 2i), from the group's two halves. */
// @ts-ignore: decorator
@inline function index8(lo: v128, hi: v128): i32 {
  const s = v128.or(i32x4.mul(lo, i32x4(1, 4, 16, 64)), i32x4.mul(hi, i32x4(256, 1024, 4096, 16384)));
  return (i32x4.extract_lane(s, 0) | i32x4.extract_lane(s, 1)) | (i32x4.extract_lane(s, 2) | i32x4.extract_lane(s, 3));
}

/** Levels (q − 1)/2 of grid entry gi's elements 4h..4h+4 (h 0, 1); gi −1 (no neighbour won) gives 0s, as the reference's undefined reads do. */
// @ts-ignore: decorator
@inline function gridLevels(gq: usize, gi: i32, h: i32): v128 {
  if (gi < 0) return i32x4.splat(0);
  const q = i32x4.trunc_sat_f32x4_u(v128.load(gq + (<usize>gi << 5) + (<usize>h << 4)));
  return i32x4.shr_u(q, 1);
}

/**
 * iq2_find_best_neighbour (iq2-quant.ts bestNeighbour): of the neighbours listed at nb[at], the grid
 * index whose scale·q is nearest to the group's xval (8 f32 at xv) in Σ w·(scale·q − x)² (w: 8 f32
 * at wv; first on ties), or −1 when none is below +inf (NaN weights).
 */
function bestNeighbour(nb: usize, at: i32, gq: usize, xv: usize, wv: usize, scale: f32): i32 {
  const x0 = v128.load(xv);
  const x1 = v128.load(xv, 16);
  const w0 = v128.load(wv);
  const w1 = v128.load(wv, 16);
  const sc = f32x4.splat(scale);
  const p = nb + (<usize>at << 1);
  const n = <i32>load<u16>(p);
  let best = <f32>Infinity;
  let index = -1;
  for (let j = 1; j <= n; j++) {
    const gi = <i32>load<u16>(p + (<usize>j << 1));
    const g = gq + (<usize>gi << 5);
    const e0 = f32x4.sub(f32x4.mul(sc, v128.load(g)), x0);
    const e1 = f32x4.sub(f32x4.mul(sc, v128.load(g, 16)), x1);
    const t0 = f32x4.mul(f32x4.mul(w0, e0), e0);
    const t1 = f32x4.mul(f32x4.mul(w1, e1), e1);
    let d2 = f32x4.extract_lane(t0, 0) + f32x4.extract_lane(t0, 1);
    d2 += f32x4.extract_lane(t0, 2);
    d2 += f32x4.extract_lane(t0, 3);
    d2 += f32x4.extract_lane(t1, 0);
    d2 += f32x4.extract_lane(t1, 1);
    d2 += f32x4.extract_lane(t1, 2);
    d2 += f32x4.extract_lane(t1, 3);
    if (d2 < best) {
      best = d2;
      index = gi;
    }
  }
  return index;
}

/**
 * Weights, |x| and sign bits of the ng groups of 8 at x (iq2-quant.ts groupWeights and
 * groupSigns); qw 0 for none (weights 0.25σ² + x²). With `even`, an odd count of minus signs in a
 * group of 8 negates its element of least w·x² and flips its bit (7 bits stored).
 */
// @ts-ignore: decorator
@inline function prepare(aux: usize, x: usize, qw: usize, sigma2: f32, even: bool, ng: i32): void {
  const s2 = f32x4.splat(sigma2);
  const s4 = f32x4.splat(<f32>0.25 * sigma2);
  const zero = f32x4.splat(0);
  for (let k = 0; k < 2 * ng; k++) {
    const o = <usize>k << 4;
    const v = v128.load(x + o);
    const vv = f32x4.mul(v, v);
    const w = qw ? f32x4.mul(v128.load(qw + o), f32x4.sqrt(f32x4.add(s2, vv))) : f32x4.add(s4, vv);
    v128.store(aux + WEIGHT + o, w);
    v128.store(aux + WAUX + o, f32x4.sqrt(w));
    // v >= 0 ? v : −v (not abs: −0 stays −0, a NaN is negated and counts as a minus sign, as in the reference)
    v128.store(aux + XVAL + o, v128.bitselect(v, f32x4.neg(v), f32x4.ge(v, zero)));
  }
  groupSigns(x, ng, even, aux + XVAL, aux + WEIGHT, aux + SIGNS);
}

/** Σ w·x·q and Σ w·q·q of the four elements at byte o of the sub-block at levels l, added to sums in order (lane 0 first): the new [sumqx, sumq2] in lanes 0, 1. */
// @ts-ignore: decorator
@inline function addSums(aux: usize, o: usize, l: v128, sums: v128): v128 {
  const w = v128.load(aux + WEIGHT + o);
  const q = f32x4.convert_i32x4_s(i32x4.add(i32x4.shl(l, 1), i32x4.splat(1)));
  const tqx = f32x4.mul(f32x4.mul(w, v128.load(aux + XVAL + o)), q);
  const tqq = f32x4.mul(f32x4.mul(w, q), q);
  return addLanes(f32x4.extract_lane(sums, 0), f32x4.extract_lane(sums, 1), tqx, tqq);
}

/** Group k at inverse scale id: its levels into L (the block's levels) and, if off the grid, its best neighbour's; returns 1 when it rounded onto the grid. */
// @ts-ignore: decorator
@inline function roundGroup(aux: usize, L: usize, k: i32, idv: v128, scale: f32, map: usize, nb: usize, gq: usize): u8 {
  const o = <usize>k << 5;
  const lo = levels4(idv, v128.load(aux + XVAL + o));
  const hi = levels4(idv, v128.load(aux + XVAL + o + 16));
  const gi = load<i32>(map + (<usize>index8(lo, hi) << 2));
  if (gi >= 0) {
    v128.store(L + o, lo);
    v128.store(L + o + 16, hi);
    return 1;
  }
  const b = bestNeighbour(nb, -gi - 1, gq, aux + XVAL + o, aux + WAUX + o, scale);
  v128.store(L + o, gridLevels(gq, b, 0));
  v128.store(L + o + 16, gridLevels(gq, b, 1));
  return 0;
}

/** Σ w·x·q, Σ w·q² over the block's first n elements at levels L (lanes 0, 1). */
// @ts-ignore: decorator
@inline function sums(aux: usize, L: usize, n: i32): v128 {
  let s = f32x4.splat(0);
  for (let i: usize = 0; i < <usize>n << 2; i += 16) s = addSums(aux, i, v128.load(L + i), s);
  return s;
}

/** A block scale's 4-bit level: clamp(nearest_int(0.5·(id·scale − 1)), 0, 15), NaN → 0. */
// @ts-ignore: decorator
@inline function scaleLevel(id: f32, s: f32): u32 {
  const r = <f32>0.5 * (id * s - 1) + MAGIC;
  const c = r > MAGIC + 15 ? MAGIC + 15 : r;
  return reinterpret<u32>(c > MAGIC ? c : MAGIC) - reinterpret<u32>(MAGIC);
}

/**
 * quantize_row_iq2_xs_impl (s 0; qw required) and quantize_row_iq2_s_impl (s 1; qw or 0) of x[0..n)
 * (n a multiple of 256) into dst; map, nb, gq that grid's tables; aux 800 bytes of scratch.
 */
// @ts-ignore: decorator
@inline function quantizeIq2(dst: usize, x: usize, qw: usize, n: i32, map: usize, nb: usize, gq: usize, aux: usize, s: bool): void {
  const bytes: usize = s ? 82 : 74;
  const scalesAt: usize = s ? 74 : 66;
  const eps = s ? EPS_IQ2_S : EPS;
  for (let ibl = 0; ibl < n >> 8; ibl++, x += 1024, dst += bytes) {
    const qwb = qw ? qw + (<usize>ibl << 10) : <usize>0;
    memory.fill(dst, 0, bytes);
    let sumx2: f32 = 0;
    for (let i = 0; i < 256; i++) {
      const v = load<f32>(x + (<usize>i << 2));
      sumx2 += v * v;
    }
    const sigma2: f32 = s ? (2 * sumx2) / 256 : sumx2 / 256;
    let maxScale: f32 = 0;
    for (let ib = 0; ib < 16; ib++) {
      const o = <usize>ib << 6;
      prepare(aux, x + o, qwb ? qwb + o : <usize>0, sigma2, !s, 2);
      let xmax = load<f32>(aux + XVAL);
      for (let i = 1; i < 16; i++) {
        const v = load<f32>(aux + XVAL + (<usize>i << 2));
        xmax = xmax > v ? xmax : v;
      }
      memory.fill(aux + LBEST, 0, 64);
      if (xmax < eps) {
        store<f32>(aux + SCALES + (<usize>ib << 2), 0);
        continue;
      }
      let best: f32 = 0;
      let scale: f32 = xmax / 5;
      store<u16>(aux + ONGRID, 0x0101);
      for (let is = -9; is <= 9; is++) {
        const id: f32 = (<f32>5 + <f32>is * F01) / xmax;
        const thisScale: f32 = <f32>1 / id;
        const idv = f32x4.splat(id);
        store<u8>(aux + ONGRIDAUX, roundGroup(aux, aux + LAUX, 0, idv, thisScale, map, nb, gq));
        store<u8>(aux + ONGRIDAUX + 1, roundGroup(aux, aux + LAUX, 1, idv, thisScale, map, nb, gq));
        const sm = sums(aux, aux + LAUX, 16);
        const sumqx = f32x4.extract_lane(sm, 0);
        const sumq2 = f32x4.extract_lane(sm, 1);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
          scale = sumqx / sumq2;
          best = scale * sumqx;
          memory.copy(aux + LBEST, aux + LAUX, 64);
          store<u16>(aux + ONGRID, load<u16>(aux + ONGRIDAUX));
        }
      }
      if (load<u16>(aux + ONGRID) != 0x0101 && scale > 0) {
        const idv = f32x4.splat(<f32>1 / scale);
        for (let k = 0; k < 2; k++) {
          if (load<u8>(aux + ONGRID + <usize>k) != 0) continue;
          roundGroup(aux, aux + LBEST, k, idv, scale, map, nb, gq);
        }
        const sm = sums(aux, aux + LBEST, 16);
        const sumq2 = f32x4.extract_lane(sm, 1);
        if (sumq2 > 0) scale = f32x4.extract_lane(sm, 0) / sumq2;
      }
      let sg = <u32>load<u16>(aux + SIGNS);
      if (scale < 0) {
        scale = -scale;
        sg = ~sg & (s ? 0xffff : 0x7f7f);
      }
      for (let k = 0; k < 2; k++) {
        const o = aux + LBEST + (<usize>k << 5);
        const gi = load<i32>(map + (<usize>index8(v128.load(o), v128.load(o, 16)) << 2));
        const i8 = 2 * ib + k;
        const sk = (sg >> (8 * k)) & 0xff;
        if (s) {
          store<u8>(dst + 2 + <usize>i8, <u8>gi);
          const qh = dst + 66 + <usize>(i8 >> 2);
          store<u8>(qh, load<u8>(qh) | <u8>((gi >> 8) << (2 * (i8 & 3))));
          store<u8>(dst + 34 + <usize>i8, <u8>sk);
        } else {
          store<u16>(dst + 2 + (<usize>i8 << 1), <u16>(gi | (sk << 9)));
        }
      }
      store<f32>(aux + SCALES + (<usize>ib << 2), scale);
      maxScale = max<f32>(maxScale, scale);
    }
    if (!truthy(maxScale)) {
      if (!s) memory.fill(dst + 2, 0, 64); // as ggml: IQ2_XS clears qs, IQ2_S keeps them
      continue;
    }
    const d = maxScale / 31;
    store<u16>(dst, <u16>f32ToF16(s ? d * F09875 : d));
    const id = <f32>1 / d;
    for (let ib = 0; ib < 16; ib++) {
      const l = scaleLevel(id, load<f32>(aux + SCALES + (<usize>ib << 2)));
      const p = dst + scalesAt + <usize>(ib >> 1);
      store<u8>(p, load<u8>(p) | <u8>(ib & 1 ? l << 4 : l));
    }
  }
}

/** quantize_row_iq2_xs_impl of x[0..n) into dst (qw required); map, nb, gq: iq2xs_grid's tables; aux 800 bytes. */
export function quantize_row_iq2_xs(dst: usize, x: usize, qw: usize, n: i32, map: usize, nb: usize, gq: usize, aux: usize): void {
  quantizeIq2(dst, x, qw, n, map, nb, gq, aux, false);
}

/** quantize_row_iq2_s_impl of x[0..n) into dst (qw or 0); map, nb, gq: iq2s_grid's tables; aux 800 bytes. */
export function quantize_row_iq2_s(dst: usize, x: usize, qw: usize, n: i32, map: usize, nb: usize, gq: usize, aux: usize): void {
  quantizeIq2(dst, x, qw, n, map, nb, gq, aux, true);
}

/**
 * The map entry of group k's levels at L (i32, read as ggml's int8 L), or 0 where their index falls
 * outside the map (only make_qp_quants' levels, kept when no trial won and the scale is NaN, can do
 * that: the reference reads undefined there, which packs as 0, and the super-block is zeroed anyway).
 */
// @ts-ignore: decorator
@inline function groupEntry(L: usize, k: i32, map: usize): i32 {
  const o = L + (<usize>k << 5);
  const u = index8(v128.load(o), v128.load(o, 16));
  return u >= 0 && u < KMAP_SIZE ? load<i32>(map + (<usize>u << 2)) : 0;
}

/** quantize_row_iq2_xxs_impl of x[0..n) into dst (qw required); map, nb, gq: iq2xxs_grid's tables; aux 800 bytes. */
export function quantize_row_iq2_xxs(dst: usize, x: usize, qw: usize, n: i32, map: usize, nb: usize, gq: usize, aux: usize): void {
  const q2 = aux + Q2;
  for (let ibl = 0; ibl < n >> 8; ibl++, x += 1024, dst += 66) {
    const qwb = qw + (<usize>ibl << 10);
    memory.fill(q2, 0, 64);
    let sumx2: f32 = 0;
    for (let i = 0; i < 256; i++) {
      const v = load<f32>(x + (<usize>i << 2));
      sumx2 += v * v;
    }
    const sigma2: f32 = sumx2 / 256;
    let maxScale: f32 = 0;
    for (let ib = 0; ib < 8; ib++) {
      const o = <usize>ib << 7;
      prepare(aux, x + o, qwb + o, sigma2, true, 4);
      let xmax = load<f32>(aux + XVAL);
      for (let i = 1; i < 32; i++) {
        const v = load<f32>(aux + XVAL + (<usize>i << 2));
        xmax = xmax > v ? xmax : v;
      }
      if (xmax < EPS) {
        store<f32>(aux + SCALES + (<usize>ib << 2), 0);
        memory.fill(aux + LBEST, 0, 128);
        continue;
      }
      let scale = kscale_qp(32, 4, aux + XVAL, aux + LQP, aux + WEIGHT);
      for (let i = 0; i < 32; i++) store<i32>(aux + LBEST + (<usize>i << 2), <i32>load<i8>(aux + LQP + <usize>i));
      const effMax = scale * 3;
      if (effMax <= 0) {
        store<f32>(aux + SCALES + (<usize>ib << 2), 0);
        memory.fill(aux + LBEST, 0, 128);
        continue;
      }
      let best: f32 = 0;
      for (let is = -6; is <= 6; is++) {
        const id: f32 = (<f32>5 + <f32>is * F01) / effMax;
        const thisScale: f32 = <f32>1 / id;
        const idv = f32x4.splat(id);
        for (let k = 0; k < 4; k++) roundGroup(aux, aux + LAUX, k, idv, thisScale, map, nb, gq);
        const sm = sums(aux, aux + LAUX, 32);
        const sumqx = f32x4.extract_lane(sm, 0);
        const sumq2 = f32x4.extract_lane(sm, 1);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
          scale = sumqx / sumq2;
          best = scale * sumqx;
          memory.copy(aux + LBEST, aux + LAUX, 128);
        }
      }
      if (scale > 0) {
        const idv = f32x4.splat(<f32>1 / scale);
        for (let k = 0; k < 4; k++) roundGroup(aux, aux + LBEST, k, idv, scale, map, nb, gq);
        const sm = sums(aux, aux + LBEST, 32);
        const sumq2 = f32x4.extract_lane(sm, 1);
        if (sumq2 > 0) scale = f32x4.extract_lane(sm, 0) / sumq2;
      }
      let sg = load<u32>(aux + SIGNS);
      if (scale < 0) {
        scale = -scale;
        sg = ~sg & 0x7f7f7f7f;
      }
      let lo: u32 = 0;
      let hi: u32 = 0;
      for (let k = 0; k < 4; k++) {
        lo |= <u32>groupEntry(aux + LBEST, k, map) << (8 * k);
        hi |= ((sg >> (8 * k)) & 0xff) << (7 * k);
      }
      const p = q2 + (<usize>ib << 3);
      store<u32>(p, load<u32>(p) | lo);
      store<u32>(p, load<u32>(p, 4) | hi, 4);
      store<f32>(aux + SCALES + (<usize>ib << 2), scale);
      maxScale = max<f32>(maxScale, scale);
    }
    memory.fill(dst, 0, 66);
    if (!truthy(maxScale)) continue;
    const d = maxScale / 31;
    store<u16>(dst, <u16>f32ToF16(d));
    const id = <f32>1 / d;
    for (let ib = 0; ib < 8; ib++) {
      const p = q2 + (<usize>ib << 3) + 4;
      store<u32>(p, load<u32>(p) | (scaleLevel(id, load<f32>(aux + SCALES + (<usize>ib << 2))) << 28));
    }
    memory.copy(dst + 2, q2, 64);
  }
}
