// The IQ3_S and IQ3_XXS weight quantisers (ggml-quants.c quantize_row_iq3_s_impl,
// quantize_row_iq3_xxs_impl), bit for bit the TypeScript reference's (quant/iq3-quant.ts
// quantizeIq3SRef, quantizeIq3XxsRef): per 32 values the weights, the sign bits, the trial-scale
// search (each group of 4 rounded, and moved to its nearest listed grid neighbour when it falls off
// the grid), the requantisation with the best scale, then the packing. Every float32 operation is
// the reference's, in its order; a group of 4 is one v128, and the sums add its lanes in order.
// The grid's index map and neighbour lists come from the host (quant/iq3-quant.ts iq3Neighbours,
// copied in once): map i32[4096] (grid index, or −(offset + 1) into nb), nb u16 (n, then n indices).
// Blocks: IQ3_S   110 B per 256: f16 d | qs[64] | qh[8] | signs[32] | scales[4]
//         IQ3_XXS  98 B per 256: f16 d | qs[64] | u32 scales_and_signs[8]

import { f32ToF16 } from './common';
import { IQ3S_GRID, IQ3XXS_GRID } from './iq-grids';
import { addLanes, groupSigns } from './iq-quant-shared';

// Scratch at aux (byte offsets): one block of 32 and the super-block's scales.
const WEIGHT: usize = 0; // f32[32] the weights
const WAUX: usize = 128; // f32[32] their square roots (the neighbour search's weights)
const XVAL: usize = 256; // f32[32] |x| (IQ3_XXS: one element negated when the signs' parity is odd)
const LBEST: usize = 384; // i32[32] the best trial's levels 0..7
const LAUX: usize = 512; // i32[32] this trial's levels
const SCALES: usize = 640; // f32[8] the blocks' scales
const ONGRID: usize = 672; // u8[8] the best trial's groups that rounded onto the grid
const ONGRIDAUX: usize = 680; // u8[8] this trial's
const SIGNS: usize = 688; // u8[4] sign bits per 8
const Q3: usize = 704; // u8[96] IQ3_XXS's qs and scales_and_signs being built (800 bytes in all)

/** 1.5·2^23: t + MAGIC is t rounded half to even (|t| < 2^22), as nearest_int does. */
const MAGIC: f32 = 12582912.0;
const F02: f32 = <f32>0.2;
const F1033: f32 = <f32>1.033;
const F10125: f32 = <f32>1.0125;
/** ggml-quants.c GROUP_MAX_EPS_IQ3_XXS. */
const EPS_IQ3_XXS: f32 = <f32>1e-8;

/** A JavaScript truthiness test of a float: not 0 and not NaN. */
// @ts-ignore: decorator
@inline function truthy(v: f32): bool {
  return v != 0 && v == v;
}

/**
 * Four lanes of the reference's clamp(nearest_int(t), 0, 7) as i32: t + MAGIC is rounded, clamped to
 * [MAGIC, MAGIC + 7] (a NaN goes to MAGIC, level 0, as the reference's byte stores make it; beyond
 * 2^22 only the sign decides, as in the reference's clamp), and its low bits are the level.
 */
// @ts-ignore: decorator
@inline function round4(t: v128): v128 {
  const m = f32x4.splat(MAGIC);
  const r = f32x4.add(t, m);
  return i32x4.sub(f32x4.pmax(m, f32x4.pmin(r, f32x4.splat(MAGIC + 7))), m);
}

/** The levels of group xv at inverse scale id: round4(0.5·(id·x − 1)). */
// @ts-ignore: decorator
@inline function levels4(id: v128, xv: v128): v128 {
  return round4(f32x4.mul(f32x4.sub(f32x4.mul(id, xv), f32x4.splat(1)), f32x4.splat(0.5)));
}

/** The grid index of four levels (l0 | l1 << 3 | l2 << 6 | l3 << 9). */
// @ts-ignore: decorator
@inline function index4(l: v128): i32 {
  const s = i32x4.mul(l, i32x4(1, 8, 64, 512));
  return (i32x4.extract_lane(s, 0) | i32x4.extract_lane(s, 1)) | (i32x4.extract_lane(s, 2) | i32x4.extract_lane(s, 3));
}

/** Grid entry gi's odd values q = 2l + 1 as i32 lanes (IQ3_XXS's stored values are 4q: shift 2). */
// @ts-ignore: decorator
@inline function gridQ(grid: usize, gi: i32, shift: i32): v128 {
  const b = v128.load32_zero(grid + (<usize>gi << 2));
  return i32x4.shr_u(i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(b)), shift);
}

/** Grid entry gi's levels (q − 1)/2; gi −1 (no neighbour won) gives 0s, as the reference's undefined reads do. */
// @ts-ignore: decorator
@inline function gridLevels(grid: usize, gi: i32, shift: i32): v128 {
  if (gi < 0) return i32x4.splat(0);
  return i32x4.shr_u(i32x4.sub(gridQ(grid, gi, shift), i32x4.splat(1)), 1);
}

/**
 * iq3_find_best_neighbour (iq3-quant.ts bestNeighbour): of the neighbours listed at nb[at], the grid
 * index whose scale·q is nearest to xv in Σ w·(scale·q − x)² (first on ties), or −1 when none is
 * below +inf (NaN weights).
 */
function bestNeighbour(nb: usize, at: i32, grid: usize, shift: i32, xv: v128, wv: v128, scale: f32): i32 {
  const sc = f32x4.splat(scale);
  const p = nb + (<usize>at << 1);
  const n = <i32>load<u16>(p);
  let best = <f32>Infinity;
  let index = -1;
  for (let j = 1; j <= n; j++) {
    const gi = <i32>load<u16>(p + (<usize>j << 1));
    const e = f32x4.sub(f32x4.mul(sc, f32x4.convert_i32x4_u(gridQ(grid, gi, shift))), xv);
    const t = f32x4.mul(f32x4.mul(wv, e), e);
    const d2 = ((f32x4.extract_lane(t, 0) + f32x4.extract_lane(t, 1)) + f32x4.extract_lane(t, 2)) + f32x4.extract_lane(t, 3);
    if (d2 < best) {
      best = d2;
      index = gi;
    }
  }
  return index;
}

/**
 * Weights, |x| and sign bits of the block of 32 at x (iq3-quant.ts: the loop's head and
 * groupSigns); qw 0 for none (weights x²). With `even`, an odd count of minus signs in a group of 8
 * negates its element of least w·x² and flips its bit (7 bits stored).
 */
// @ts-ignore: decorator
@inline function prepare(aux: usize, x: usize, qw: usize, sigma2: f32, even: bool): void {
  const s2 = f32x4.splat(sigma2);
  const zero = f32x4.splat(0);
  for (let k = 0; k < 8; k++) {
    const o = <usize>k << 4;
    const v = v128.load(x + o);
    const vv = f32x4.mul(v, v);
    const w = qw ? f32x4.mul(v128.load(qw + o), f32x4.sqrt(f32x4.add(s2, vv))) : vv;
    v128.store(aux + WEIGHT + o, w);
    v128.store(aux + WAUX + o, f32x4.sqrt(w));
    // v >= 0 ? v : −v (not abs: −0 stays −0, a NaN is negated and counts as a minus sign, as in the reference)
    const ge = f32x4.ge(v, zero);
    v128.store(aux + XVAL + o, v128.bitselect(v, f32x4.neg(v), ge));
  }
  groupSigns(x, 4, even, aux + XVAL, aux + WEIGHT, aux + SIGNS);
}

/** The largest xval of the block, as the reference's `max > v ? max : v` finds it (from xval[0]). */
// @ts-ignore: decorator
@inline function blockMax(aux: usize): f32 {
  let max = load<f32>(aux + XVAL);
  for (let i = 1; i < 32; i++) {
    const v = load<f32>(aux + XVAL + (<usize>i << 2));
    max = max > v ? max : v;
  }
  return max;
}

/** Σ w·x·q and Σ w·q·q of group k at levels l added to sums in order (lane 0 first): the new [sumqx, sumq2] in lanes 0, 1. */
// @ts-ignore: decorator
@inline function addSums(aux: usize, k: i32, l: v128, sumqx: f32, sumq2: f32): v128 {
  const o = <usize>k << 4;
  const w = v128.load(aux + WEIGHT + o);
  const q = f32x4.convert_i32x4_s(i32x4.add(i32x4.shl(l, 1), i32x4.splat(1)));
  const tqx = f32x4.mul(f32x4.mul(w, v128.load(aux + XVAL + o)), q);
  const tqq = f32x4.mul(f32x4.mul(w, q), q);
  return addLanes(sumqx, sumq2, tqx, tqq);
}

/**
 * The block's scale search (from prepare()'s weights and xval, xmax its largest xval): the trial
 * scales is = −nTrial..nTrial, the requantisation of the groups off the grid (IQ3_S: of every group),
 * the refitted scale. Levels end in LBEST; returns the scale.
 */
// @ts-ignore: decorator
@inline function search(aux: usize, xmax: f32, grid: usize, shift: i32, map: usize, nb: usize, nTrial: i32, xxs: bool): f32 {
  memory.fill(aux + LBEST, 0, 128);
  let best: f32 = 0;
  let scale: f32 = xmax / 15;
  memory.fill(aux + ONGRID, xxs ? 1 : 0, 8);
  for (let is = -nTrial; is <= nTrial; is++) {
    const id: f32 = (<f32>15 + <f32>is * F02) / xmax;
    const thisScale: f32 = <f32>1 / id;
    const idv = f32x4.splat(id);
    let sumqx: f32 = 0;
    let sumq2: f32 = 0;
    for (let k = 0; k < 8; k++) {
      const o = <usize>k << 4;
      const xv = v128.load(aux + XVAL + o);
      let l = levels4(idv, xv);
      const gi = load<i32>(map + (<usize>index4(l) << 2));
      let on: u8 = 1;
      if (gi < 0) {
        on = 0;
        l = gridLevels(grid, bestNeighbour(nb, -gi - 1, grid, shift, xv, v128.load(aux + WAUX + o), thisScale), shift);
      }
      store<u8>(aux + ONGRIDAUX + <usize>k, on);
      v128.store(aux + LAUX + o, l);
      const s = addSums(aux, k, l, sumqx, sumq2);
      sumqx = f32x4.extract_lane(s, 0);
      sumq2 = f32x4.extract_lane(s, 1);
    }
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      scale = sumqx / sumq2;
      best = scale * sumqx;
      memory.copy(aux + LBEST, aux + LAUX, 128);
      memory.copy(aux + ONGRID, aux + ONGRIDAUX, 8);
    }
  }
  if (load<u64>(aux + ONGRID) != 0x0101010101010101 && scale > 0) {
    const idv = f32x4.splat(<f32>1 / scale);
    for (let k = 0; k < 8; k++) {
      if (xxs && load<u8>(aux + ONGRID + <usize>k) != 0) continue;
      const o = <usize>k << 4;
      const xv = v128.load(aux + XVAL + o);
      const l = levels4(idv, xv);
      let gi = load<i32>(map + (<usize>index4(l) << 2));
      if (gi < 0) gi = bestNeighbour(nb, -gi - 1, grid, shift, xv, v128.load(aux + WAUX + o), scale);
      v128.store(aux + LBEST + o, gridLevels(grid, gi, shift));
    }
    let sumqx: f32 = 0;
    let sumq2: f32 = 0;
    for (let k = 0; k < 8; k++) {
      const s = addSums(aux, k, v128.load(aux + LBEST + (<usize>k << 4)), sumqx, sumq2);
      sumqx = f32x4.extract_lane(s, 0);
      sumq2 = f32x4.extract_lane(s, 1);
    }
    if (sumq2 > 0) scale = sumqx / sumq2;
  }
  return scale;
}

/** Σ x² over the super-block of 256 at x, in order. */
// @ts-ignore: decorator
@inline function sumSquares(x: usize): f32 {
  let s: f32 = 0;
  for (let i = 0; i < 256; i++) {
    const v = load<f32>(x + (<usize>i << 2));
    s += v * v;
  }
  return s;
}

/** A block scale's 4-bit level: clamp(nearest_int(0.5·(id·scale − 1)), 0, 15), NaN → 0. */
// @ts-ignore: decorator
@inline function scaleLevel(id: f32, s: f32): u32 {
  const r = <f32>0.5 * (id * s - 1) + MAGIC;
  const c = r > MAGIC + 15 ? MAGIC + 15 : r;
  return reinterpret<u32>(c > MAGIC ? c : MAGIC) - reinterpret<u32>(MAGIC);
}

/** The grid index of the block's group k from its best levels. */
// @ts-ignore: decorator
@inline function groupIndex(aux: usize, map: usize, k: i32): i32 {
  return load<i32>(map + (<usize>index4(v128.load(aux + LBEST + (<usize>k << 4))) << 2));
}

/** quantize_row_iq3_s_impl of x[0..n) (n a multiple of 256) into dst; qw f32[n] the importances or 0; aux 800 bytes of scratch. */
export function quantize_row_iq3_s(dst: usize, x: usize, qw: usize, n: i32, map: usize, nb: usize, aux: usize): void {
  for (let ibl = 0; ibl < n >> 8; ibl++, x += 1024, dst += 110) {
    const qwb = qw ? qw + (<usize>ibl << 10) : <usize>0;
    memory.fill(dst, 0, 110);
    // as ggml, qs and signs advance only past blocks that are not all zero
    let qs = dst + 2;
    let signs = dst + 74;
    const sigma2: f32 = (2 * sumSquares(x)) / 256;
    let maxScale: f32 = 0;
    for (let ib = 0; ib < 8; ib++) {
      const o = <usize>ib << 7;
      prepare(aux, x + o, qwb ? qwb + o : <usize>0, sigma2, false);
      const xmax = blockMax(aux);
      if (!truthy(xmax)) {
        store<f32>(aux + SCALES + (<usize>ib << 2), 0);
        continue;
      }
      let scale = search(aux, xmax, IQ3S_GRID, 0, map, nb, 9, false);
      let sg = load<u32>(aux + SIGNS);
      if (scale < 0) {
        scale = -scale;
        sg = ~sg;
      }
      let h = 0;
      for (let k = 0; k < 8; k++) {
        const gi = groupIndex(aux, map, k);
        store<u8>(qs + <usize>k, <u8>gi);
        h |= (gi >> 8) << k;
      }
      store<u8>(dst + 66 + <usize>ib, <u8>h);
      qs += 8;
      store<u32>(signs, sg);
      signs += 4;
      store<f32>(aux + SCALES + (<usize>ib << 2), scale);
      maxScale = max<f32>(maxScale, scale);
    }
    if (!truthy(maxScale)) continue;
    const d = maxScale / 31;
    store<u16>(dst, <u16>f32ToF16(d * F1033));
    const id = <f32>1 / d;
    for (let ib = 0; ib < 8; ib += 2) {
      const l1 = scaleLevel(id, load<f32>(aux + SCALES + (<usize>ib << 2)));
      const l2 = scaleLevel(id, load<f32>(aux + SCALES + (<usize>(ib + 1) << 2)));
      store<u8>(dst + 106 + <usize>(ib >> 1), <u8>(l1 | (l2 << 4)));
    }
  }
}

/** quantize_row_iq3_xxs_impl (grid 256) of x[0..n) (n a multiple of 256) into dst; qw f32[n] the importances or 0; aux 800 bytes of scratch. */
export function quantize_row_iq3_xxs(dst: usize, x: usize, qw: usize, n: i32, map: usize, nb: usize, aux: usize): void {
  const q3 = aux + Q3;
  for (let ibl = 0; ibl < n >> 8; ibl++, x += 1024, dst += 98) {
    const qwb = qw ? qw + (<usize>ibl << 10) : <usize>0;
    memory.fill(q3, 0, 96);
    const sigma2: f32 = (2 * sumSquares(x)) / 256;
    let maxScale: f32 = 0;
    for (let ib = 0; ib < 8; ib++) {
      const o = <usize>ib << 7;
      prepare(aux, x + o, qwb ? qwb + o : <usize>0, sigma2, true);
      const xmax = blockMax(aux);
      if (xmax < EPS_IQ3_XXS) {
        store<f32>(aux + SCALES + (<usize>ib << 2), 0);
        continue;
      }
      let scale = search(aux, xmax, IQ3XXS_GRID, 2, map, nb, 15, true);
      let s0 = <u32>load<u8>(aux + SIGNS);
      let s1 = <u32>load<u8>(aux + SIGNS + 1);
      let s2 = <u32>load<u8>(aux + SIGNS + 2);
      let s3 = <u32>load<u8>(aux + SIGNS + 3);
      if (scale < 0) {
        scale = -scale;
        s0 = ~s0 & 127;
        s1 = ~s1 & 127;
        s2 = ~s2 & 127;
        s3 = ~s3 & 127;
      }
      for (let k = 0; k < 8; k++) store<u8>(q3 + (<usize>ib << 3) + <usize>k, <u8>groupIndex(aux, map, k));
      store<u32>(q3 + 64 + (<usize>ib << 2), s0 | (s1 << 7) | (s2 << 14) | (s3 << 21));
      store<f32>(aux + SCALES + (<usize>ib << 2), scale);
      maxScale = max<f32>(maxScale, scale);
    }
    if (!truthy(maxScale)) {
      memory.fill(dst, 0, 98);
      continue;
    }
    const d = maxScale / 31;
    store<u16>(dst, <u16>f32ToF16(d * F10125));
    const id = <f32>1 / d;
    for (let ib = 0; ib < 8; ib++) {
      const p = q3 + 64 + (<usize>ib << 2);
      store<u32>(p, load<u32>(p) | (scaleLevel(id, load<f32>(aux + SCALES + (<usize>ib << 2))) << 28));
    }
    memory.copy(dst + 2, q3, 96);
  }
}
