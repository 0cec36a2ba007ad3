// The i-quants IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S dotted with a Q8_K activation
// (block layouts in src/engine/quant/iq1.ts, iq2.ts, iq3.ts; codebooks in iq-grids.ts). Each block
// of 256 is taken 16 elements at a time: the codebook entries give 16 unsigned weights (at most
// 62), the weights' signs (byte masks m from iq-grids.ts KSIGNS64 / SIGNS64) go onto the
// activation, (x ^ m) − m, acc16 sums the products in i16 lanes (i16x8.extmul, or one relaxed
// dot), and scaled widens them times the sub-block scale with one i32x4.dot_i16x8_s. IQ1 weights
// are 8·(grid + delta) + 9 ∈ [0, 18]; the +9 comes off as 9·bsum. The integer block sum is exact,
// as in ggml; it is scaled by d_w·d_x (and 1/8 or 1/4 for the formats whose scales carry it) in f32.
// dequant_* mirror ggml's dequantize_row_* bit for bit.

import { f16, fmaI, hsumF, qKBsums, qKScales, rows4, rows4Batch } from './common';
import { IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID, KSIGNS64, KSIGNS_IQ2XS, SIGNS64 } from './iq-grids';

const Z: v128 = i32x4.splat(0);

/** x with the lanes of m negated (x ∈ [−127, 127], so no lane overflows). */
// @ts-ignore: decorator
@inline function signed(x: v128, m: v128): v128 {
  return i8x16.sub(v128.xor(x, m), m);
}

/** Two 8-byte codebook entries as one vector (two loads straight into lanes: no scalar round trip). */
// @ts-ignore: decorator
@inline function pair64(a: usize, b: usize): v128 {
  return v128.load64_lane(b, v128.load64_splat(a), 1);
}

/** Four 4-byte codebook entries as one vector. */
// @ts-ignore: decorator
@inline function quad32(a: usize, b: usize, c: usize, d: usize): v128 {
  return v128.load32_lane(d, v128.load32_lane(c, v128.load32_lane(b, v128.load32_splat(a), 1), 2), 3);
}

/**
 * acc + w·x over 16 lanes (w ∈ [0, 62], x ∈ [−127, 127]) as eight i16 lanes, which hold two calls'
 * sums (4·62·127 < 2^15): relaxed, one i16x8 relaxed dot (pmaddubsw; w is the 7-bit operand, a pair
 * sum ≤ 2·62·127 does not saturate), lane j = products 2j, 2j+1; plain, i16x8.extmul, lane j =
 * products j, j+8.
 */
// @ts-ignore: decorator
@inline function acc16(acc: v128, w: v128, x: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i16x8.add(acc, i16x8.relaxed_dot_i8x16_i7x16_s(x, w));
  return i16x8.add(acc, i16x8.add(i16x8.extmul_low_i8x16_s(w, x), i16x8.extmul_high_i8x16_s(w, x)));
}

/**
 * isum + ls·s for acc16's i16 sums s: one i32x4.dot_i16x8_s against splat(ls) (pmaddwd, as
 * llama.cpp's AVX2 path folds the scale in), which widens and scales at once. Lane k gets
 * ls·(s_2k + s_2k+1): the same four i32 lanes as the i32 relaxed dot (or the widened pairs) times ls.
 */
// @ts-ignore: decorator
@inline function scaled(isum: v128, s: v128, ls: i32): v128 {
  return i32x4.add(isum, i32x4.dot_i16x8_s(s, i16x8.splat(<i16>ls)));
}

/** Four rows' dots as one vector (rows4 takes four rows at a time; each is summed as by itself). */
// @ts-ignore: decorator
@inline function pack4(a: f32, b: f32, c: f32, d: f32): v128 {
  return f32x4.replace_lane(f32x4.replace_lane(f32x4.replace_lane(f32x4.splat(a), 1, b), 2, c), 3, d);
}

// ---- block sums (four i32 lanes) -----------------------------------------------------------------

// @ts-ignore: decorator
@inline function iq2xxsSum(wb: usize, xb: usize): v128 {
  let isum = Z;
  for (let ib = 0; ib < 8; ib++) {
    const q = wb + 2 + (<usize>ib << 3);
    const aux = load<u32>(q, 4);
    let s = Z;
    for (let h = 0; h < 2; h++) {
      const l = 2 * h;
      const w = pair64(IQ2XXS_GRID + (<usize>load<u8>(q + l) << 3), IQ2XXS_GRID + (<usize>load<u8>(q + l + 1) << 3));
      const m = pair64(KSIGNS64 + (<usize>((aux >> (7 * l)) & 127) << 3), KSIGNS64 + (<usize>((aux >> (7 * l + 7)) & 127) << 3));
      s = acc16(s, w, signed(v128.load(xb + (<usize>ib << 5) + (<usize>h << 4)), m));
    }
    isum = scaled(isum, s, 2 * <i32>(aux >> 28) + 1);
  }
  return isum;
}

// @ts-ignore: decorator
@inline function iq2xsSum(wb: usize, xb: usize): v128 {
  let isum = Z;
  for (let ib = 0; ib < 8; ib++) {
    const sc = <i32>load<u8>(wb + 66 + ib);
    for (let h = 0; h < 2; h++) {
      const q = wb + 2 + (<usize>ib << 3) + (<usize>h << 2);
      const q0 = <u32>load<u16>(q), q1 = <u32>load<u16>(q, 2);
      const w = pair64(IQ2XS_GRID + (<usize>(q0 & 511) << 3), IQ2XS_GRID + (<usize>(q1 & 511) << 3));
      const m = pair64(KSIGNS64 + (<usize>(q0 >> 9) << 3), KSIGNS64 + (<usize>(q1 >> 9) << 3));
      const s = acc16(Z, w, signed(v128.load(xb + (<usize>ib << 5) + (<usize>h << 4)), m));
      isum = scaled(isum, s, 2 * ((sc >> (4 * h)) & 15) + 1);
    }
  }
  return isum;
}

/**
 * IQ2_S sub-blocks ib, ib + 1: their eight codebook indices (8 bits from qs, 2 from qh) as byte
 * offsets of iq2s_grid entries, u16 lanes. With q16 = qh[ib] | qh[ib+1] << 8 in every lane, lane e
 * needs q16's bits 2e, 2e + 1 at 8, 9 (e < 4; bits 8 + 2(e − 4) for e ≥ 4): a multiply by
 * 2^(14 − 2e) puts them at 14, 15 (SIMD128 has no per-lane shifts), then one mask and shift.
 */
// @ts-ignore: decorator
@inline function iq2sOffsets(wb: usize, ib: i32): v128 {
  const q = i16x8.extend_low_i8x16_u(v128.load64_zero(wb + 2 + (<usize>ib << 2)));
  const m = i16x8.mul(i16x8.splat(<i16>load<u16>(wb + 66 + ib)), i16x8(16384, 4096, 1024, 256, 64, 16, 4, 1));
  const hb = i16x8.shr_u(v128.and(m, i16x8.splat(<i16>0xc000)), 6);
  return i16x8.shl(v128.or(q, hb), 3);
}

/** acc + one IQ2_S half sub-block (16 weights: grid entries at byte offsets a, b; signs bytes at sg) · x. */
// @ts-ignore: decorator
@inline function iq2sHalf(a: usize, b: usize, sg: usize, x: usize): v128 {
  const w = pair64(IQ2S_GRID + a, IQ2S_GRID + b);
  const m = pair64(SIGNS64 + (<usize>load<u8>(sg) << 3), SIGNS64 + (<usize>load<u8>(sg, 1) << 3));
  return acc16(Z, w, signed(v128.load(x), m));
}

/** IQ2_S's block sum with the indices by scalar shift/mask/or: faster in the relaxed build (docs/performance.md). */
// @ts-ignore: decorator
@inline function iq2sSumScalar(wb: usize, xb: usize): v128 {
  let isum = Z;
  for (let ib = 0; ib < 8; ib++) {
    const sc = <i32>load<u8>(wb + 74 + ib);
    const qh = <u32>load<u8>(wb + 66 + ib);
    for (let h = 0; h < 2; h++) {
      const l = 2 * h;
      const q = wb + 2 + (<usize>ib << 2) + l;
      const g0 = <u32>load<u8>(q) | ((qh << (8 - 2 * l)) & 0x300);
      const g1 = <u32>load<u8>(q, 1) | ((qh << (6 - 2 * l)) & 0x300);
      const w = pair64(IQ2S_GRID + (<usize>g0 << 3), IQ2S_GRID + (<usize>g1 << 3));
      const m = pair64(SIGNS64 + (<usize>load<u8>(q, 32) << 3), SIGNS64 + (<usize>load<u8>(q, 33) << 3));
      const s = acc16(Z, w, signed(v128.load(xb + (<usize>ib << 5) + (<usize>h << 4)), m));
      isum = scaled(isum, s, 2 * ((sc >> (4 * h)) & 15) + 1);
    }
  }
  return isum;
}

/** IQ2_S's block sum; the plain build takes the indices by iq2sOffsets, faster there (docs/performance.md). */
// @ts-ignore: decorator
@inline function iq2sSum(wb: usize, xb: usize): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return iq2sSumScalar(wb, xb);
  let isum = Z;
  for (let ib = 0; ib < 8; ib += 2) {
    const off = iq2sOffsets(wb, ib);
    const sc = <i32>load<u16>(wb + 74 + ib);
    const sg = wb + 34 + (<usize>ib << 2);
    const x = xb + (<usize>ib << 5);
    const e0 = <usize>i16x8.extract_lane_u(off, 0), e1 = <usize>i16x8.extract_lane_u(off, 1);
    const e2 = <usize>i16x8.extract_lane_u(off, 2), e3 = <usize>i16x8.extract_lane_u(off, 3);
    const e4 = <usize>i16x8.extract_lane_u(off, 4), e5 = <usize>i16x8.extract_lane_u(off, 5);
    const e6 = <usize>i16x8.extract_lane_u(off, 6), e7 = <usize>i16x8.extract_lane_u(off, 7);
    isum = scaled(isum, iq2sHalf(e0, e1, sg, x), 2 * (sc & 15) + 1);
    isum = scaled(isum, iq2sHalf(e2, e3, sg + 2, x + 16), 2 * ((sc >> 4) & 15) + 1);
    isum = scaled(isum, iq2sHalf(e4, e5, sg + 4, x + 32), 2 * ((sc >> 8) & 15) + 1);
    isum = scaled(isum, iq2sHalf(e6, e7, sg + 6, x + 48), 2 * (sc >> 12) + 1);
  }
  return isum;
}

// @ts-ignore: decorator
@inline function iq3xxsSum(wb: usize, xb: usize): v128 {
  let isum = Z;
  for (let ib = 0; ib < 8; ib++) {
    const aux = load<u32>(wb + 66 + (<usize>ib << 2));
    let s = Z;
    for (let h = 0; h < 2; h++) {
      const l = 2 * h;
      const q = wb + 2 + (<usize>ib << 3) + (<usize>h << 2);
      const w = quad32(
        IQ3XXS_GRID + (<usize>load<u8>(q) << 2), IQ3XXS_GRID + (<usize>load<u8>(q, 1) << 2),
        IQ3XXS_GRID + (<usize>load<u8>(q, 2) << 2), IQ3XXS_GRID + (<usize>load<u8>(q, 3) << 2),
      );
      const m = pair64(KSIGNS64 + (<usize>((aux >> (7 * l)) & 127) << 3), KSIGNS64 + (<usize>((aux >> (7 * l + 7)) & 127) << 3));
      s = acc16(s, w, signed(v128.load(xb + (<usize>ib << 5) + (<usize>h << 4)), m));
    }
    isum = scaled(isum, s, 2 * <i32>(aux >> 28) + 1);
  }
  return isum;
}

/** Byte address of IQ3_S codebook entry e (0..7) of sub-block ib: 8 index bits from qs, the 9th from qh. */
// @ts-ignore: decorator
@inline function iq3sEntry(wb: usize, ib: i32, qh: u32, e: i32): usize {
  return IQ3S_GRID + (<usize>(<u32>load<u8>(wb + 2 + (<usize>ib << 3) + e) | ((qh << (8 - e)) & 256)) << 2);
}

/** IQ3_S sub-block ib's eight codebook indices (qs, 9th bit from qh) as byte offsets of iq3s_grid entries, u16 lanes (lane e gets (qh << (8 − e)) & 256, a multiply by 2^(8−e): SIMD128 has no per-lane shifts); eight scalar shift/mask/or chains cost more. */
// @ts-ignore: decorator
@inline function iq3sOffsets(wb: usize, ib: i32, qh: u32): v128 {
  const q = i16x8.extend_low_i8x16_u(v128.load64_zero(wb + 2 + (<usize>ib << 3)));
  const hb = v128.and(i16x8.mul(i16x8.splat(<i16>qh), i16x8(256, 128, 64, 32, 16, 8, 4, 2)), i16x8.splat(256));
  return i16x8.shl(v128.or(q, hb), 2);
}

// @ts-ignore: decorator
@inline function iq3sSum(wb: usize, xb: usize): v128 {
  let isum = Z;
  for (let ib = 0; ib < 8; ib++) {
    const off = iq3sOffsets(wb, ib, <u32>load<u8>(wb + 66 + ib));
    const sg = wb + 74 + (<usize>ib << 2);
    const x = xb + (<usize>ib << 5);
    const w0 = quad32(
      IQ3S_GRID + <usize>i16x8.extract_lane_u(off, 0), IQ3S_GRID + <usize>i16x8.extract_lane_u(off, 1),
      IQ3S_GRID + <usize>i16x8.extract_lane_u(off, 2), IQ3S_GRID + <usize>i16x8.extract_lane_u(off, 3),
    );
    const m0 = pair64(SIGNS64 + (<usize>load<u8>(sg) << 3), SIGNS64 + (<usize>load<u8>(sg, 1) << 3));
    const w1 = quad32(
      IQ3S_GRID + <usize>i16x8.extract_lane_u(off, 4), IQ3S_GRID + <usize>i16x8.extract_lane_u(off, 5),
      IQ3S_GRID + <usize>i16x8.extract_lane_u(off, 6), IQ3S_GRID + <usize>i16x8.extract_lane_u(off, 7),
    );
    const m1 = pair64(SIGNS64 + (<usize>load<u8>(sg, 2) << 3), SIGNS64 + (<usize>load<u8>(sg, 3) << 3));
    const s = acc16(acc16(Z, w0, signed(v128.load(x), m0)), w1, signed(v128.load(x, 16), m1));
    const ls = 2 * ((<i32>load<u8>(wb + 106 + (ib >> 1)) >> (4 * (ib & 1))) & 15) + 1;
    isum = scaled(isum, s, ls);
  }
  return isum;
}

/** 9 + delta per 8-lane half, delta = −1 where bit 0 (lanes 0-7) or bit 1 (lanes 8-15) of the index is set. */
const IQ1_OFF: usize = memory.data<u64>([
  0x0a0a0a0a0a0a0a0a, 0x0a0a0a0a0a0a0a0a, 0x0808080808080808, 0x0a0a0a0a0a0a0a0a,
  0x0a0a0a0a0a0a0a0a, 0x0808080808080808, 0x0808080808080808, 0x0808080808080808,
], 16);

/** 8·grid + 9 + delta for two iq1s_grid entries; neg: IQ1_OFF's index of the two halves' deltas. */
// @ts-ignore: decorator
@inline function iq1Weights(g0: u32, g1: u32, neg: u32): v128 {
  const g = pair64(IQ1S_GRID + (<usize>g0 << 3), IQ1S_GRID + (<usize>g1 << 3));
  return i8x16.add(i8x16.shl(g, 3), v128.load(IQ1_OFF + (<usize>neg << 4)));
}

// @ts-ignore: decorator
@inline function iq1sSum(wb: usize, xb: usize, bs: usize): v128 {
  let isum = Z;
  let corr: i32 = 0;
  for (let ib = 0; ib < 8; ib++) {
    const qh = <u32>load<u16>(wb + 34 + (<usize>ib << 1));
    const ls = 2 * <i32>((qh >> 12) & 7) + 1;
    const neg: u32 = (qh >> 15) * 3;
    let s = Z;
    for (let h = 0; h < 2; h++) {
      const l = 2 * h;
      const q = wb + 2 + (<usize>ib << 2) + l;
      const g0 = <u32>load<u8>(q) | (((qh >> (3 * l)) & 7) << 8);
      const g1 = <u32>load<u8>(q, 1) | (((qh >> (3 * l + 3)) & 7) << 8);
      s = acc16(s, iq1Weights(g0, g1, neg), v128.load(xb + (<usize>ib << 5) + (<usize>h << 4)));
    }
    isum = scaled(isum, s, ls);
    corr += ls * 9 * (<i32>load<i16>(bs + (<usize>ib << 2)) + <i32>load<i16>(bs + (<usize>ib << 2), 2));
  }
  return i32x4.sub(isum, i32x4.replace_lane(Z, 0, corr));
}

/** IQ1_M's block scale d: the top nibbles of its four u16 scale words. */
// @ts-ignore: decorator
@inline function iq1mD(wb: usize): f32 {
  const s0 = <u32>load<u16>(wb + 48), s1 = <u32>load<u16>(wb + 50), s2 = <u32>load<u16>(wb + 52), s3 = <u32>load<u16>(wb + 54);
  return f16((s0 >> 12) | ((s1 >> 8) & 0x00f0) | ((s2 >> 4) & 0x0f00) | (s3 & 0xf000));
}

// @ts-ignore: decorator
@inline function iq1mSum(wb: usize, xb: usize, bs: usize): v128 {
  let isum = Z;
  let corr: i32 = 0;
  for (let ib = 0; ib < 8; ib++) {
    const sc = <i32>load<u16>(wb + 48 + (<usize>(ib >> 1) << 1));
    for (let h = 0; h < 2; h++) {
      const qh = <u32>load<u8>(wb + 32 + (<usize>ib << 1) + h);
      const q = wb + (<usize>ib << 2) + (<usize>h << 1);
      const g0 = <u32>load<u8>(q) | ((qh << 8) & 0x700);
      const g1 = <u32>load<u8>(q, 1) | ((qh << 4) & 0x700);
      const w = iq1Weights(g0, g1, ((qh >> 3) & 1) | ((qh >> 6) & 2));
      const s = acc16(Z, w, v128.load(xb + (<usize>ib << 5) + (<usize>h << 4)));
      const ls = 2 * ((sc >> (6 * (ib & 1) + 3 * h)) & 7) + 1;
      isum = scaled(isum, s, ls);
      corr += ls * 9 * <i32>load<i16>(bs + (<usize>ib << 2) + (<usize>h << 1));
    }
  }
  return i32x4.sub(isum, i32x4.replace_lane(Z, 0, corr));
}

// ---- one-row dots --------------------------------------------------------------------------------

// @ts-ignore: decorator
@inline function dot_iq2_xxs(w: usize, xq: usize, cols: i32): f32 {
  const dp = qKScales(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 66;
    acc = fmaI(acc, iq2xxsSum(wb, xq + (<usize>b << 8)), f16(load<u16>(wb)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc) * 0.125;
}

// @ts-ignore: decorator
@inline function dot_iq2_xs(w: usize, xq: usize, cols: i32): f32 {
  const dp = qKScales(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 74;
    acc = fmaI(acc, iq2xsSum(wb, xq + (<usize>b << 8)), f16(load<u16>(wb)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc) * 0.125;
}

// @ts-ignore: decorator
@inline function dot_iq2_s(w: usize, xq: usize, cols: i32): f32 {
  const dp = qKScales(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 82;
    acc = fmaI(acc, iq2sSum(wb, xq + (<usize>b << 8)), f16(load<u16>(wb)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc) * 0.125;
}

// @ts-ignore: decorator
@inline function dot_iq3_xxs(w: usize, xq: usize, cols: i32): f32 {
  const dp = qKScales(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 98;
    acc = fmaI(acc, iq3xxsSum(wb, xq + (<usize>b << 8)), f16(load<u16>(wb)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc) * 0.25;
}

// @ts-ignore: decorator
@inline function dot_iq3_s(w: usize, xq: usize, cols: i32): f32 {
  const dp = qKScales(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 110;
    acc = fmaI(acc, iq3sSum(wb, xq + (<usize>b << 8)), f16(load<u16>(wb)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc);
}

// @ts-ignore: decorator
@inline function dot_iq1_s(w: usize, xq: usize, cols: i32): f32 {
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 50;
    acc = fmaI(acc, iq1sSum(wb, xq + (<usize>b << 8), bp + (<usize>b << 5)), f16(load<u16>(wb)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc) * 0.125;
}

// @ts-ignore: decorator
@inline function dot_iq1_m(w: usize, xq: usize, cols: i32): f32 {
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 56;
    acc = fmaI(acc, iq1mSum(wb, xq + (<usize>b << 8), bp + (<usize>b << 5)), iq1mD(wb) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc) * 0.125;
}

function dot4_iq2_xxs(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  return pack4(dot_iq2_xxs(p0, xq, cols), dot_iq2_xxs(p1, xq, cols), dot_iq2_xxs(p2, xq, cols), dot_iq2_xxs(p3, xq, cols));
}
function dot4_iq2_xs(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  return pack4(dot_iq2_xs(p0, xq, cols), dot_iq2_xs(p1, xq, cols), dot_iq2_xs(p2, xq, cols), dot_iq2_xs(p3, xq, cols));
}
function dot4_iq2_s(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  return pack4(dot_iq2_s(p0, xq, cols), dot_iq2_s(p1, xq, cols), dot_iq2_s(p2, xq, cols), dot_iq2_s(p3, xq, cols));
}
function dot4_iq3_xxs(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  return pack4(dot_iq3_xxs(p0, xq, cols), dot_iq3_xxs(p1, xq, cols), dot_iq3_xxs(p2, xq, cols), dot_iq3_xxs(p3, xq, cols));
}
function dot4_iq3_s(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  return pack4(dot_iq3_s(p0, xq, cols), dot_iq3_s(p1, xq, cols), dot_iq3_s(p2, xq, cols), dot_iq3_s(p3, xq, cols));
}
function dot4_iq1_s(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  return pack4(dot_iq1_s(p0, xq, cols), dot_iq1_s(p1, xq, cols), dot_iq1_s(p2, xq, cols), dot_iq1_s(p3, xq, cols));
}
function dot4_iq1_m(p0: usize, p1: usize, p2: usize, p3: usize, xq: usize, cols: i32): v128 {
  return pack4(dot_iq1_m(p0, xq, cols), dot_iq1_m(p1, xq, cols), dot_iq1_m(p2, xq, cols), dot_iq1_m(p3, xq, cols));
}

// ---- exports: out[r] = W[r,:]·xq, and batches (each output as matvec's) ---------------------------

export function matvec_iq2_xxs(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_iq2_xxs, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_iq2_xxs(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_iq2_xxs, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_iq2_xs(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_iq2_xs, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_iq2_xs(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_iq2_xs, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_iq2_s(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_iq2_s, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_iq2_s(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_iq2_s, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_iq3_xxs(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_iq3_xxs, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_iq3_xxs(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_iq3_xxs, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_iq3_s(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_iq3_s, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_iq3_s(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_iq3_s, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_iq1_s(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_iq1_s, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_iq1_s(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_iq1_s, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function matvec_iq1_m(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  rows4(dot4_iq1_m, out, w, rowBytes, r0, r1, xq, cols);
}
export function matmul_iq1_m(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  rows4Batch(dot4_iq1_m, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}

// ---- dequantisation (ggml-quants.c dequantize_row_iq*, bit for bit) ------------------------------

/** out[i..i+8) = db·grid·(−1 where bit j of signs is set), from 8 codebook bytes at g. */
// @ts-ignore: decorator
@inline function put8(out: usize, i: i32, db: f32, g: usize, signs: u32): void {
  for (let j = 0; j < 8; j++) {
    const v = db * <f32>load<u8>(g + j);
    store<f32>(out + (<usize>(i + j) << 2), (signs >> j) & 1 ? -v : v);
  }
}

/** The same for 4 codebook bytes at g (IQ3). */
// @ts-ignore: decorator
@inline function put4(out: usize, i: i32, db: f32, g: usize, signs: u32): void {
  for (let j = 0; j < 4; j++) {
    const v = db * <f32>load<u8>(g + j);
    store<f32>(out + (<usize>(i + j) << 2), (signs >> j) & 1 ? -v : v);
  }
}

/** out[i..i+8) = dl·(grid + delta) from an iq1s_grid entry at g. */
// @ts-ignore: decorator
@inline function put8Iq1(out: usize, i: i32, dl: f32, g: usize, delta: f32): void {
  for (let j = 0; j < 8; j++) store<f32>(out + (<usize>(i + j) << 2), dl * (<f32>load<i8>(g + j) + delta));
}

export function dequant_iq2_xxs(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 66;
    const d = f16(load<u16>(wb));
    for (let ib = 0; ib < 8; ib++) {
      const q = wb + 2 + (<usize>ib << 3);
      const aux = load<u32>(q, 4);
      const db = d * (<f32>0.5 + <f32>(aux >> 28)) * <f32>0.25;
      for (let l = 0; l < 4; l++) {
        put8(out, 256 * b + 32 * ib + 8 * l, db, IQ2XXS_GRID + (<usize>load<u8>(q + l) << 3), load<u8>(KSIGNS_IQ2XS + ((aux >> (7 * l)) & 127)));
      }
    }
  }
}

export function dequant_iq2_xs(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 74;
    const d = f16(load<u16>(wb));
    for (let ib = 0; ib < 8; ib++) {
      const sc = <u32>load<u8>(wb + 66 + ib);
      const db0 = d * (<f32>0.5 + <f32>(sc & 15)) * <f32>0.25;
      const db1 = d * (<f32>0.5 + <f32>(sc >> 4)) * <f32>0.25;
      for (let l = 0; l < 4; l++) {
        const q = <u32>load<u16>(wb + 2 + (<usize>ib << 3) + (<usize>l << 1));
        put8(out, 256 * b + 32 * ib + 8 * l, l < 2 ? db0 : db1, IQ2XS_GRID + (<usize>(q & 511) << 3), load<u8>(KSIGNS_IQ2XS + (q >> 9)));
      }
    }
  }
}

export function dequant_iq2_s(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 82;
    const d = f16(load<u16>(wb));
    for (let ib = 0; ib < 8; ib++) {
      const sc = <u32>load<u8>(wb + 74 + ib);
      const qh = <u32>load<u8>(wb + 66 + ib);
      const db0 = d * (<f32>0.5 + <f32>(sc & 15)) * <f32>0.25;
      const db1 = d * (<f32>0.5 + <f32>(sc >> 4)) * <f32>0.25;
      for (let l = 0; l < 4; l++) {
        const q = wb + 2 + (<usize>ib << 2) + l;
        const g = <u32>load<u8>(q) | ((qh << (8 - 2 * l)) & 0x300);
        put8(out, 256 * b + 32 * ib + 8 * l, l < 2 ? db0 : db1, IQ2S_GRID + (<usize>g << 3), load<u8>(q, 32));
      }
    }
  }
}

export function dequant_iq3_xxs(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 98;
    const d = f16(load<u16>(wb));
    for (let ib = 0; ib < 8; ib++) {
      const aux = load<u32>(wb + 66 + (<usize>ib << 2));
      const db = d * (<f32>0.5 + <f32>(aux >> 28)) * <f32>0.5;
      const q = wb + 2 + (<usize>ib << 3);
      for (let l = 0; l < 4; l++) {
        const signs = <u32>load<u8>(KSIGNS_IQ2XS + ((aux >> (7 * l)) & 127));
        const i = 256 * b + 32 * ib + 8 * l;
        put4(out, i, db, IQ3XXS_GRID + (<usize>load<u8>(q + 2 * l) << 2), signs);
        put4(out, i + 4, db, IQ3XXS_GRID + (<usize>load<u8>(q + 2 * l + 1) << 2), signs >> 4);
      }
    }
  }
}

export function dequant_iq3_s(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 110;
    const d = f16(load<u16>(wb));
    for (let ib = 0; ib < 8; ib++) {
      const qh = <u32>load<u8>(wb + 66 + ib);
      const ls = 1 + 2 * ((<i32>load<u8>(wb + 106 + (ib >> 1)) >> (4 * (ib & 1))) & 15);
      const db = d * <f32>ls;
      for (let l = 0; l < 4; l++) {
        const signs = <u32>load<u8>(wb + 74 + (<usize>ib << 2) + l);
        const i = 256 * b + 32 * ib + 8 * l;
        put4(out, i, db, iq3sEntry(wb, ib, qh, 2 * l), signs);
        put4(out, i + 4, db, iq3sEntry(wb, ib, qh, 2 * l + 1), signs >> 4);
      }
    }
  }
}

export function dequant_iq1_s(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 50;
    const d = f16(load<u16>(wb));
    for (let ib = 0; ib < 8; ib++) {
      const qh = <u32>load<u16>(wb + 34 + (<usize>ib << 1));
      const ls = 2 * <i32>((qh >> 12) & 7) + 1;
      const dl = d * <f32>ls;
      const delta: f32 = qh & 0x8000 ? -0.125 : 0.125;
      for (let l = 0; l < 4; l++) {
        const g = <u32>load<u8>(wb + 2 + (<usize>ib << 2) + l) | (((qh >> (3 * l)) & 7) << 8);
        put8Iq1(out, 256 * b + 32 * ib + 8 * l, dl, IQ1S_GRID + (<usize>g << 3), delta);
      }
    }
  }
}

export function dequant_iq1_m(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const wb = w + <usize>b * 56;
    const d = iq1mD(wb);
    for (let ib = 0; ib < 8; ib++) {
      const sc = <i32>load<u16>(wb + 48 + (<usize>(ib >> 1) << 1));
      for (let l = 0; l < 4; l++) {
        const h = l >> 1;
        const qh = <u32>load<u8>(wb + 32 + (<usize>ib << 1) + h);
        const g = <u32>load<u8>(wb + (<usize>ib << 2) + l) | ((qh << (8 - 4 * (l & 1))) & 0x700);
        const ls = 2 * ((sc >> (6 * (ib & 1) + 3 * h)) & 7) + 1;
        const dl = d * <f32>ls;
        const delta: f32 = qh & (l & 1 ? 0x80 : 0x08) ? -0.125 : 0.125;
        put8Iq1(out, 256 * b + 32 * ib + 8 * l, dl, IQ1S_GRID + (<usize>g << 3), delta);
      }
    }
  }
}
