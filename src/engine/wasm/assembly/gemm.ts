// Prompt matmul (many tokens × one weight matrix) for Q8_0, Q4_0, Q5_0, Q4_K and Q6_K on plain
// SIMD128, in two steps:
//   1. widen_*: the batch's quantised activations (layouts in common.ts) are copied once into
//      groups of four tokens with every int8 already widened to i16 and the four tokens' scales
//      side by side as one f32x4, so no weight block ever widens an activation again;
//   2. gemm_*: the rows of a block of GEMM_ROWS rows are unpacked once into scratch as i16 (for
//      K-quants with the sub-block scale multiplied in, still exact in i16) and stay in L1 while
//      every group of four tokens passes (the widened batch stays in L2): each weight block is
//      dotted with the four tokens by i32x4.dot_i16x8_s, the four integer sums folded into one
//      i32x4 (one lane per token) and scaled by one f32x4 multiply: d_w · [d_x0, d_x1, d_x2, d_x3].
// The integer sums per block are the same as the one-token kernels'; only the order of the float
// additions differs, so results match matvec to within float rounding, not bit for bit
// (tests/wasm/gemm.test.ts).
//
// Widened layouts, per group of four tokens (tokens past n are zero, so they add nothing):
//   q8_0 (32-element blocks): per block  d[4] f32 | x[4][32] i16                       272 B
//   q8_K (256-element blocks): per block d[4] f32 | sum32[8][4] i32 | x[4][256] i16   2192 B
//     sum32[j][t] = Σ of token t's 32 activations in sub-block j (for Q4_K's minimums)

import { f16, lo4, hi4, bits, q8Scales, qKBsums, qKScales } from './common';

const Z: v128 = i32x4.splat(0);

/** Rows per cache block. */
const GEMM_ROWS: i32 = 4;

export const WQ8_0_BLOCK: i32 = 272;
export const WQ8_K_BLOCK: i32 = 2192;

// ---- widening -----------------------------------------------------------------------------------

/** Bytes of the widened copy of n activations of `cols` (kind 0: q8_0, 1: q8_K). */
export function widen_bytes(kind: i32, n: i32, cols: i32): i32 {
  const groups = (n + 3) >> 2;
  return kind == 0 ? groups * (cols >> 5) * WQ8_0_BLOCK : groups * (cols >> 8) * WQ8_K_BLOCK;
}

/** dst ← the widened q8_0 copy of n activations at xq, xqStride bytes apart. */
export function widen_q8_0(dst: usize, xq: usize, n: i32, cols: i32, xqStride: usize): void {
  const nb = cols >> 5;
  const dOff = q8Scales(0, cols);
  const groups = (n + 3) >> 2;
  for (let g = 0; g < groups; g++) {
    const gp = dst + <usize>(g * nb) * WQ8_0_BLOCK;
    for (let t = 0; t < 4; t++) {
      const tok = g * 4 + t;
      const xt = xq + <usize>tok * xqStride;
      for (let b = 0; b < nb; b++) {
        const bp = gp + <usize>b * WQ8_0_BLOCK;
        const xp = bp + 16 + (<usize>t << 6);
        if (tok < n) {
          store<f32>(bp + (<usize>t << 2), load<f32>(xt + dOff + (<usize>b << 2)));
          const x0 = v128.load(xt + (<usize>b << 5));
          const x1 = v128.load(xt + (<usize>b << 5), 16);
          v128.store(xp, i16x8.extend_low_i8x16_s(x0));
          v128.store(xp, i16x8.extend_high_i8x16_s(x0), 16);
          v128.store(xp, i16x8.extend_low_i8x16_s(x1), 32);
          v128.store(xp, i16x8.extend_high_i8x16_s(x1), 48);
        } else {
          store<f32>(bp + (<usize>t << 2), 0);
          v128.store(xp, Z);
          v128.store(xp, Z, 16);
          v128.store(xp, Z, 32);
          v128.store(xp, Z, 48);
        }
      }
    }
  }
}

/** dst ← the widened q8_K copy of n activations at xq, xqStride bytes apart. */
export function widen_q8_K(dst: usize, xq: usize, n: i32, cols: i32, xqStride: usize): void {
  const nb = cols >> 8;
  const dOff = qKScales(0, cols);
  const sOff = qKBsums(0, cols);
  const groups = (n + 3) >> 2;
  for (let g = 0; g < groups; g++) {
    const gp = dst + <usize>(g * nb) * WQ8_K_BLOCK;
    for (let t = 0; t < 4; t++) {
      const tok = g * 4 + t;
      const xt = xq + <usize>tok * xqStride;
      for (let b = 0; b < nb; b++) {
        const bp = gp + <usize>b * WQ8_K_BLOCK;
        const xp = bp + 144 + (<usize>t << 9);
        const live = tok < n;
        store<f32>(bp + (<usize>t << 2), live ? load<f32>(xt + dOff + (<usize>b << 2)) : 0);
        for (let j = 0; j < 8; j++) {
          // bsums are per 16 (quantize_row_q8_K): a 32-element sub-block is two of them
          const bs = xt + sOff + (<usize>(b * 16 + 2 * j) << 1);
          store<i32>(bp + 16 + (<usize>(j * 4 + t) << 2), live ? <i32>load<i16>(bs) + <i32>load<i16>(bs, 2) : 0);
        }
        for (let k = 0; k < 16; k++) {
          const x = live ? v128.load(xt + (<usize>b << 8) + (<usize>k << 4)) : Z;
          v128.store(xp + (<usize>k << 5), i16x8.extend_low_i8x16_s(x));
          v128.store(xp + (<usize>k << 5), i16x8.extend_high_i8x16_s(x), 16);
        }
      }
    }
  }
}

// ---- helpers ------------------------------------------------------------------------------------

/** Σ (lanes) of 16 i16 weights (lo, hi) times the 16 i16 activations at p, as i32x4. */
// @ts-ignore: decorator
@inline function d16(lo: v128, hi: v128, p: usize): v128 {
  return i32x4.add(i32x4.dot_i16x8_s(lo, v128.load(p)), i32x4.dot_i16x8_s(hi, v128.load(p, 16)));
}

/** 32 weights as four i16x8 (a, b, c, d = elements 0-7, 8-15, 16-23, 24-31) dotted with 32 activations at p. */
// @ts-ignore: decorator
@inline function d32(a: v128, b: v128, c: v128, d: v128, p: usize): v128 {
  return i32x4.add(d16(a, b, p), d16(c, d, p + 32));
}

/** [Σa, Σb, Σc, Σd]: the lane sums of four i32x4, one lane each. */
// @ts-ignore: decorator
@inline function fold4(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = i32x4.add(i8x16.shuffle(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(a, b, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  const cd = i32x4.add(i8x16.shuffle(c, d, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), i8x16.shuffle(c, d, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  return i32x4.add(i8x16.shuffle(ab, cd, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), i8x16.shuffle(ab, cd, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31));
}

/** acc + f32(isum) · d_w · dx (dx: the four tokens' activation scales). */
// @ts-ignore: decorator
@inline function scaleAdd(acc: v128, isum: v128, dw: f32, dx: v128): v128 {
  return f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(isum), f32x4.mul(f32x4.splat(dw), dx)));
}

/** Write the four lanes of acc (tokens 4g..4g+3, those below n) to out[t·outStride + r]. */
// @ts-ignore: decorator
@inline function put4(out: usize, os: usize, acc: v128, live: i32): void {
  store<f32>(out, f32x4.extract_lane(acc, 0));
  if (live > 1) store<f32>(out + os, f32x4.extract_lane(acc, 1));
  if (live > 2) store<f32>(out + 2 * os, f32x4.extract_lane(acc, 2));
  if (live > 3) store<f32>(out + 3 * os, f32x4.extract_lane(acc, 3));
}

// ---- rows prepared once per row block ------------------------------------------------------------
// Each row of a block of GEMM_ROWS rows is unpacked into scratch once (quants widened to i16, with
// the K-quants' sub-block scales multiplied in), then dotted with every group of four tokens.
// Prepared 32-element block, PREP_32 bytes: q[32] i16 | d f32 | 12 B pad

const PREP_32: i32 = 80;

/** Prepare one row of a 32-element format (kind 0: Q8_0, 1: Q4_0, 2: Q5_0) as signed i16 quants. */
// @ts-ignore: decorator
@inline function prep_32(kind: i32, dst: usize, w: usize, nb: i32): void {
  const bm = i8x16(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  for (let b = 0; b < nb; b++) {
    const pb = dst + <usize>b * PREP_32;
    let w0: v128, w1: v128;
    let wb: usize;
    if (kind == 0) {
      wb = w + <usize>b * 34;
      w0 = v128.load(wb, 2);
      w1 = v128.load(wb, 18);
    } else if (kind == 1) {
      // x = d·(q − 8); low nibbles are elements 0-15, high nibbles 16-31
      wb = w + <usize>b * 18;
      const q = v128.load(wb, 2);
      w0 = i8x16.sub(lo4(q), i8x16.splat(8));
      w1 = i8x16.sub(hi4(q), i8x16.splat(8));
    } else {
      // x = d·(q − 16), the 5th bit of element j is bit j of qh
      wb = w + <usize>b * 22;
      const qhv = i32x4.splat(load<u32>(wb, 2));
      const q = v128.load(wb, 6);
      const hl = v128.and(i8x16.eq(v128.and(i8x16.swizzle(qhv, i8x16(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1)), bm), bm), i8x16.splat(16));
      const hh = v128.and(i8x16.eq(v128.and(i8x16.swizzle(qhv, i8x16(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3)), bm), bm), i8x16.splat(16));
      w0 = i8x16.sub(v128.or(lo4(q), hl), i8x16.splat(16));
      w1 = i8x16.sub(v128.or(hi4(q), hh), i8x16.splat(16));
    }
    v128.store(pb, i16x8.extend_low_i8x16_s(w0));
    v128.store(pb, i16x8.extend_high_i8x16_s(w0), 16);
    v128.store(pb, i16x8.extend_low_i8x16_s(w1), 32);
    v128.store(pb, i16x8.extend_high_i8x16_s(w1), 48);
    store<f32>(pb, f16(load<u16>(wb)), 64);
  }
}

/** One prepared 32-element-format row against one group of four tokens. */
// @ts-ignore: decorator
@inline function row_prep32(p: usize, xg: usize, nb: i32): v128 {
  let acc = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const pb = p + <usize>b * PREP_32;
    const xb = xg + <usize>b * WQ8_0_BLOCK;
    const a = v128.load(pb), bb = v128.load(pb, 16), c = v128.load(pb, 32), d = v128.load(pb, 48);
    const isum = fold4(d32(a, bb, c, d, xb + 16), d32(a, bb, c, d, xb + 80), d32(a, bb, c, d, xb + 144), d32(a, bb, c, d, xb + 208));
    acc = scaleAdd(acc, isum, load<f32>(pb, 64), v128.load(xb));
  }
  return acc;
}

// K-quants: with the scales multiplied in, a 256-element block needs one float scale.
// Prepared block, PREP_K bytes: q·sc[256] i16 | d f32 | dmin f32 | 8 B pad | m[8] i32

const PREP_K: i32 = 560;

/** Prepare one Q4_K row (dequantize_row_q4_K's order: sub-block j = elements 32j..32j+31). */
// @ts-ignore: decorator
@inline function prep_q4_K(dst: usize, w: usize, nb: i32): void {
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 144;
    const pb = dst + <usize>b * PREP_K;
    // get_scale_min_k4 (ggml-quants.c): six-bit scales sc[0..7] and mins m[0..7]
    const u0 = load<u32>(wb, 4), u1 = load<u32>(wb, 8), u2 = load<u32>(wb, 12);
    const sLo = u0 & 0x3f3f3f3f;
    const sHi = (u2 & 0x0f0f0f0f) | (((u0 >> 6) & 0x03030303) << 4);
    const mLo = u1 & 0x3f3f3f3f;
    const mHi = ((u2 >> 4) & 0x0f0f0f0f) | (((u1 >> 6) & 0x03030303) << 4);
    for (let c = 0; c < 4; c++) {
      // chunk c: 32 bytes; low nibbles are sub-block 2c, high nibbles sub-block 2c+1
      const q0 = v128.load(wb + 16 + (<usize>c << 5));
      const q1 = v128.load(wb + 16 + (<usize>c << 5), 16);
      const scs = c < 2 ? sLo : sHi;
      const sh = (c & 1) << 4;
      // quant·scale ≤ 15·63 fits i16
      const scA = i16x8.splat(<i16>((scs >> sh) & 0xff));
      const scB = i16x8.splat(<i16>((scs >> (sh + 8)) & 0xff));
      const l0 = lo4(q0), l1 = lo4(q1), h0 = hi4(q0), h1 = hi4(q1);
      const p = pb + (<usize>c << 7);
      v128.store(p, i16x8.mul(i16x8.extend_low_i8x16_u(l0), scA));
      v128.store(p, i16x8.mul(i16x8.extend_high_i8x16_u(l0), scA), 16);
      v128.store(p, i16x8.mul(i16x8.extend_low_i8x16_u(l1), scA), 32);
      v128.store(p, i16x8.mul(i16x8.extend_high_i8x16_u(l1), scA), 48);
      v128.store(p, i16x8.mul(i16x8.extend_low_i8x16_u(h0), scB), 64);
      v128.store(p, i16x8.mul(i16x8.extend_high_i8x16_u(h0), scB), 80);
      v128.store(p, i16x8.mul(i16x8.extend_low_i8x16_u(h1), scB), 96);
      v128.store(p, i16x8.mul(i16x8.extend_high_i8x16_u(h1), scB), 112);
    }
    store<f32>(pb, f16(load<u16>(wb)), 512);
    store<f32>(pb, f16(load<u16>(wb, 2)), 516);
    v128.store(pb, i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(i32x4(mLo, mHi, 0, 0))), 528);
    v128.store(pb, i32x4.extend_high_i16x8_u(i16x8.extend_low_i8x16_u(i32x4(mLo, mHi, 0, 0))), 544);
  }
}

/** Prepare one Q6_K row (dequantize_row_q6_K's element order and −32 offset, scale per 16). */
// @ts-ignore: decorator
@inline function prep_q6_K(dst: usize, w: usize, nb: i32): void {
  const off = i8x16.splat(32);
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 210;
    const pb = dst + <usize>b * PREP_K;
    for (let n = 0; n < 2; n++) {
      const ql = wb + (<usize>n << 6);
      const qh = wb + 128 + (<usize>n << 5);
      const sc = wb + 192 + (<usize>n << 3);
      for (let v = 0; v < 2; v++) {
        const qa = v128.load(ql + (<usize>v << 4));
        const qc = v128.load(ql + 32 + (<usize>v << 4));
        const h = v128.load(qh + (<usize>v << 4));
        // elements n·128 + 32k + 16v + i: nibbles of qa (k = 0, 2) or qc (k = 1, 3), high bits
        // from h at 2k; scale sc[2k + v]. quant − 32 times scale is at most 4096 in magnitude.
        for (let k = 0; k < 4; k++) {
          let nib: v128;
          if (k == 0) nib = lo4(qa);
          else if (k == 1) nib = lo4(qc);
          else if (k == 2) nib = hi4(qa);
          else nib = hi4(qc);
          const q = i8x16.sub(v128.or(nib, i16x8.shl(bits(h, 2 * k, 3), 4)), off);
          const s = i16x8.splat(<i16>load<i8>(sc + 2 * k + v));
          const p = pb + (<usize>((n << 7) + (k << 5) + (v << 4)) << 1);
          v128.store(p, i16x8.mul(i16x8.extend_low_i8x16_s(q), s));
          v128.store(p, i16x8.mul(i16x8.extend_high_i8x16_s(q), s), 16);
        }
      }
    }
    store<f32>(pb, f16(load<u16>(wb, 208)), 512);
    store<f32>(pb, 0, 516);
    v128.store(pb, Z, 528);
    v128.store(pb, Z, 544);
  }
}

/** One prepared K-quant row against one group of four tokens; `mins`: Q4_K's minimum term. */
// @ts-ignore: decorator
@inline function row_prepK(p: usize, xg: usize, nb: i32, mins: bool): v128 {
  let acc = f32x4.splat(0);
  let accm = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const pb = p + <usize>b * PREP_K;
    const xb = xg + <usize>b * WQ8_K_BLOCK;
    let s0 = Z, s1 = Z, s2 = Z, s3 = Z;
    for (let j = 0; j < 8; j++) {
      const pj = pb + (<usize>j << 6);
      const a = v128.load(pj), bb = v128.load(pj, 16), c = v128.load(pj, 32), d = v128.load(pj, 48);
      const xa = xb + 144 + (<usize>j << 6);
      s0 = i32x4.add(s0, d32(a, bb, c, d, xa));
      s1 = i32x4.add(s1, d32(a, bb, c, d, xa + 512));
      s2 = i32x4.add(s2, d32(a, bb, c, d, xa + 1024));
      s3 = i32x4.add(s3, d32(a, bb, c, d, xa + 1536));
    }
    const dx = v128.load(xb);
    acc = scaleAdd(acc, fold4(s0, s1, s2, s3), load<f32>(pb, 512), dx);
    if (mins) {
      // Σ_j m_j · sum32_j, one lane per token
      let ms = Z;
      for (let j = 0; j < 8; j++) ms = i32x4.add(ms, i32x4.mul(v128.load(xb + 16 + (<usize>j << 4)), i32x4.splat(load<i32>(pb + 528 + (<usize>j << 2)))));
      accm = scaleAdd(accm, ms, load<f32>(pb, 516), dx);
    }
  }
  return mins ? f32x4.sub(acc, accm) : acc;
}

// ---- exported kernels ---------------------------------------------------------------------------
// gemm_<type>(out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch): out[t·outStride + r] =
// W[r,:]·x_t for r in [r0, r1), t < n, from the widened activations xw; scratch: gemm_scratch_bytes(cols)
// bytes the kernel overwrites (its prepared rows).

/** Bytes of scratch a gemm kernel needs for rows of `cols`: GEMM_ROWS prepared rows (PREP_32 per 32 ≥ PREP_K per 256). */
export function gemm_scratch_bytes(cols: i32): i32 {
  return GEMM_ROWS * (cols >> 5) * PREP_32;
}

/**
 * Rows [r0, r1) in blocks of GEMM_ROWS (kind 0-4: Q8_0, Q4_0, Q5_0, Q4_K, Q6_K): the block's rows
 * prepared into scratch, then each against every group of four tokens.
 */
// @ts-ignore: decorator
@inline function gemmLoop(kind: i32, out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  const os = <usize>outStride << 2;
  const groups = (n + 3) >> 2;
  const k = kind >= 3;
  const nb = k ? cols >> 8 : cols >> 5;
  const groupBytes = <usize>nb * (k ? WQ8_K_BLOCK : WQ8_0_BLOCK);
  const prepBytes = <usize>nb * (k ? PREP_K : PREP_32);
  for (let rb = r0; rb < r1; rb += GEMM_ROWS) {
    const re = min<i32>(r1, rb + GEMM_ROWS);
    for (let r = rb; r < re; r++) {
      const dst = scratch + <usize>(r - rb) * prepBytes;
      const src = w + <usize>r * rowBytes;
      if (kind == 3) prep_q4_K(dst, src, nb);
      else if (kind == 4) prep_q6_K(dst, src, nb);
      else prep_32(kind, dst, src, nb);
    }
    for (let g = 0; g < groups; g++) {
      const xg = xw + <usize>g * groupBytes;
      const o = out + (<usize>(g * 4 * outStride) << 2);
      const live = min<i32>(4, n - g * 4);
      for (let r = rb; r < re; r++) {
        const p = scratch + <usize>(r - rb) * prepBytes;
        put4(o + (<usize>r << 2), os, k ? row_prepK(p, xg, nb, kind == 3) : row_prep32(p, xg, nb), live);
      }
    }
  }
}

export function gemm_q8_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  gemmLoop(0, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
export function gemm_q4_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  gemmLoop(1, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
export function gemm_q5_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  gemmLoop(2, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
export function gemm_q4_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  gemmLoop(3, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
export function gemm_q6_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, scratch: usize): void {
  gemmLoop(4, out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
}
