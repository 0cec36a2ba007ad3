// The 32-element block formats: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL. Block layouts (ggml-common.h):
//   Q4_0   18 B  { f16 d; u8 qs[16] }                 x = d·(q − 8)
//   Q4_1   20 B  { f16 d; f16 m; u8 qs[16] }          x = d·q + m
//   Q5_0   22 B  { f16 d; u8 qh[4]; u8 qs[16] }       x = d·(q − 16), q = nibble | bit<<4
//   Q5_1   24 B  { f16 d; f16 m; u8 qh[4]; u8 qs[16] } x = d·q + m
//   Q8_0   34 B  { f16 d; i8 qs[32] }                 x = d·q
//   IQ4_NL 18 B  { f16 d; u8 qs[16] }                 x = d·kvalues_iq4nl[nibble]
// Nibble j of byte k: low nibble → element k, high nibble → element k + 16. The 5th bit of element
// j is bit j of qh (little-endian u32). Dots follow ggml_vec_dot_*_q8_0 / _q8_1: an exact integer
// sum per block, times d_w·d_x; offsets (−8, −16) are taken out with the activation's Σq, and the
// Q4_1/Q5_1 minimum adds m·s.

import { TILE_ACC, TOKEN_BLOCK, dotS, dotU, dotUw, f16, f16x4At, fmaI, hi4, hsumF, lo4, q8Aux, q8Scales, sum4, whi, wlo } from './common';

// kvalues_iq4nl (ggml-common.h)
// @ts-ignore: decorator
@inline function iq4Table(): v128 {
  return i8x16(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
}

/** 16 lanes of 0x10 where bit (base + lane) of qh is set: the 5th bit of Q5 elements base..base+15. */
// @ts-ignore: decorator
@inline function fifthBits(qhv: v128, sel: v128): v128 {
  const bm = i8x16(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  return v128.and(i8x16.eq(v128.and(i8x16.swizzle(qhv, sel), bm), bm), i8x16.splat(0x10));
}
// @ts-ignore: decorator
@inline function selLo(): v128 {
  return i8x16(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
}
// @ts-ignore: decorator
@inline function selHi(): v128 {
  return i8x16(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
}
/** An i32x4 with v in lane 0: subtracts an offset·Σx from a block's lane sums. */
// @ts-ignore: decorator
@inline function lane0(v: i32): v128 {
  return i32x4.replace_lane(i32x4.splat(0), 0, v);
}

// ---- dots over one row ------------------------------------------------------------------------

// @ts-ignore: decorator
@inline function dot_q4_0(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const ap = q8Aux(xq, cols);
  let acc = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 18;
    const xb = xq + (<usize>b << 5);
    const q = v128.load(wb, 2);
    let s = dotU(lo4(q), v128.load(xb), lane0(-8 * load<i32>(ap + (<usize>b << 2))));
    s = dotU(hi4(q), v128.load(xb, 16), s);
    acc = fmaI(acc, s, f16(load<u16>(wb)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc);
}

// @ts-ignore: decorator
@inline function dot_q4_1(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const sp = q8Aux(xq, cols);
  let acc = f32x4.splat(0);
  let accm: f32 = 0;
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 20;
    const xb = xq + (<usize>b << 5);
    const q = v128.load(wb, 4);
    const s = dotU(hi4(q), v128.load(xb, 16), dotU(lo4(q), v128.load(xb), i32x4.splat(0)));
    acc = fmaI(acc, s, f16(load<u16>(wb)) * load<f32>(dp + (<usize>b << 2)));
    accm += f16(load<u16>(wb, 2)) * load<f32>(sp + (<usize>b << 2));
  }
  return hsumF(acc) + accm;
}

// @ts-ignore: decorator
@inline function dot_q5_1(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const sp = q8Aux(xq, cols);
  let acc = f32x4.splat(0);
  let accm: f32 = 0;
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 24;
    const xb = xq + (<usize>b << 5);
    const qhv = i32x4.splat(load<u32>(wb, 4));
    const q = v128.load(wb, 8);
    let s = dotU(v128.or(lo4(q), fifthBits(qhv, selLo())), v128.load(xb), i32x4.splat(0));
    s = dotU(v128.or(hi4(q), fifthBits(qhv, selHi())), v128.load(xb, 16), s);
    acc = fmaI(acc, s, f16(load<u16>(wb)) * load<f32>(dp + (<usize>b << 2)));
    accm += f16(load<u16>(wb, 2)) * load<f32>(sp + (<usize>b << 2));
  }
  return hsumF(acc) + accm;
}

// @ts-ignore: decorator
@inline function dot_iq4_nl(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const kv = iq4Table();
  let acc = f32x4.splat(0);
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 18;
    const xb = xq + (<usize>b << 5);
    const q = v128.load(wb, 2);
    const s = dotS(i8x16.swizzle(kv, hi4(q)), v128.load(xb, 16), dotS(i8x16.swizzle(kv, lo4(q)), v128.load(xb), i32x4.splat(0)));
    acc = fmaI(acc, s, f16(load<u16>(wb)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc);
}

// ---- dots over four blocks at a time (generation) ----------------------------------------------
// matvec's dots: four blocks' exact integer sums are folded into one i32x4 (one lane per block)
// and scaled by one f32x4 multiply with the four blocks' d_w·d_x, the halves converted four at a
// time (f16x4At). The integer sums are dot_*'s; only the order of the float additions differs.
// (Two rows per pass, sharing each widened activation vector, measured slower: V8 spills the
// eight live block sums.)

/** Row w · x (Q8_0). */
// @ts-ignore: decorator
@inline function dot4_q8_0(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  let acc = f32x4.splat(0);
  let b = 0;
  for (; b + 4 <= nb; b += 4) {
    const pa = w + <usize>b * 34;
    const xb = xq + (<usize>b << 5);
    const a0 = q8BlockX(pa, xb), a1 = q8BlockX(pa + 34, xb + 32), a2 = q8BlockX(pa + 68, xb + 64), a3 = q8BlockX(pa + 102, xb + 96);
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(sum4(a0, a1, a2, a3)), f32x4.mul(f16x4At(pa, 34), v128.load(dp + (<usize>b << 2)))));
  }
  for (; b < nb; b++) {
    const pa = w + <usize>b * 34;
    acc = fmaI(acc, q8BlockX(pa, xq + (<usize>b << 5)), f16(load<u16>(pa)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc);
}
// @ts-ignore: decorator
@inline function q8BlockX(wj: usize, xb: usize): v128 {
  return dotS(v128.load(wj, 18), v128.load(xb, 16), dotS(v128.load(wj, 2), v128.load(xb), i32x4.splat(0)));
}

/** The 32 Q5_0 quants of the block at wj minus 16, as signed bytes: elements 0-15 (lo), 16-31 (hi). */
// The fifth bit of element j is bit j of qh: broadcast qh's bytes over the lanes they cover, test
// each lane's bit, and where it is clear set the top nibble (nibble | 0xF0 = nibble − 16 as i8),
// as ggml's x86 dot does with bytes_from_bits_32.
// @ts-ignore: decorator
@inline function q5Lo(wj: usize): v128 {
  const qh = v128.load32_zero(wj, 2);
  const bm = i8x16(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  const set = i8x16.eq(v128.and(i8x16.shuffle(qh, qh, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1), bm), bm);
  return v128.or(lo4(v128.load(wj, 6)), v128.andnot(i8x16.splat(-16), set));
}
// @ts-ignore: decorator
@inline function q5Hi(wj: usize): v128 {
  const qh = v128.load32_zero(wj, 2);
  const bm = i8x16(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
  const set = i8x16.eq(v128.and(i8x16.shuffle(qh, qh, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3), bm), bm);
  return v128.or(hi4(v128.load(wj, 6)), v128.andnot(i8x16.splat(-16), set));
}
/** Row w · x (Q5_0): the quants minus 16 as signed bytes, so no Σx correction. */
// @ts-ignore: decorator
@inline function dot4_q5_0(w: usize, xq: usize, cols: i32): f32 {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  let acc = f32x4.splat(0);
  let b = 0;
  for (; b + 4 <= nb; b += 4) {
    const pa = w + <usize>b * 22;
    const xb = xq + (<usize>b << 5);
    const a0 = q5BlockX(pa, xb), a1 = q5BlockX(pa + 22, xb + 32), a2 = q5BlockX(pa + 44, xb + 64), a3 = q5BlockX(pa + 66, xb + 96);
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(sum4(a0, a1, a2, a3)), f32x4.mul(f16x4At(pa, 22), v128.load(dp + (<usize>b << 2)))));
  }
  for (; b < nb; b++) {
    const pa = w + <usize>b * 22;
    acc = fmaI(acc, q5BlockX(pa, xq + (<usize>b << 5)), f16(load<u16>(pa)) * load<f32>(dp + (<usize>b << 2)));
  }
  return hsumF(acc);
}
// @ts-ignore: decorator
@inline function q5BlockX(wj: usize, xb: usize): v128 {
  return dotS(q5Hi(wj), v128.load(xb, 16), dotS(q5Lo(wj), v128.load(xb), i32x4.splat(0)));
}

// ---- tiles: one row against up to four activations ---------------------------------------------
// For prompt batches. Each weight block is loaded and unpacked (and, in the plain build, widened to
// i16) once for the tile's tokens; each token's sums are formed exactly as by the one-token dot
// above (the same integers, the same float operations in the same order), so matmul equals matvec
// bit for bit. Accumulators live in TILE_ACC (16 bytes per token and accumulator).

/** Writes W·x_t for t < nt into out + t·outStride (bytes); x_t at xq + t·stride. */
// @ts-ignore: decorator
@inline function tile_q4_0(out: usize, outStride: usize, w: usize, xq: usize, stride: usize, nt: i32, cols: i32): void {
  const nb = cols >> 5;
  const dOff = q8Scales(0, cols);
  const aOff = q8Aux(0, cols);
  for (let t = 0; t < nt; t++) v128.store(TILE_ACC + (<usize>t << 4), f32x4.splat(0));
  for (let b = 0; b < nb; b++) {
    const wb = w + <usize>b * 18;
    const q = v128.load(wb, 2);
    const lo = lo4(q), hi = hi4(q);
    const ll = wlo(lo), lh = whi(lo), hl = wlo(hi), hh = whi(hi);
    const dw = f16(load<u16>(wb));
    for (let t = 0; t < nt; t++) {
      const xt = xq + <usize>t * stride;
      const xb = xt + (<usize>b << 5);
      let s = dotUw(lo, ll, lh, v128.load(xb), lane0(-8 * load<i32>(xt + aOff + (<usize>b << 2))));
      s = dotUw(hi, hl, hh, v128.load(xb, 16), s);
      const at = TILE_ACC + (<usize>t << 4);
      v128.store(at, fmaI(v128.load(at), s, dw * load<f32>(xt + dOff + (<usize>b << 2))));
    }
  }
  for (let t = 0; t < nt; t++) store<f32>(out + <usize>t * outStride, hsumF(v128.load(TILE_ACC + (<usize>t << 4))));
}


/** Tokens per tile. */
const TILE: i32 = 4;

// ---- exported kernels (signatures as in float.ts) ----------------------------------------------

export function matvec_q8_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dot4_q8_0(w + <usize>r * rowBytes, xq, cols));
}
export function matmul_q8_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  // prompt batches take gemm_q8_0 (gemm.ts); this one-token-at-a-time form equals matvec bit for bit
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) store<f32>(out + (<usize>(t * outStride + r) << 2), dot4_q8_0(wr, xq + <usize>t * xqStride, cols));
  }
}
export function dequant_q8_0(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 34;
    const d = f16(load<u16>(wb));
    for (let j = 0; j < 32; j++) store<f32>(out + (<usize>(b * 32 + j) << 2), <f32>load<i8>(wb + 2 + j) * d);
  }
}

export function matvec_q4_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dot_q4_0(w + <usize>r * rowBytes, xq, cols));
}
export function matmul_q4_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  // token blocks (cache blocking), then every row against the block's tokens, a tile at a time
  const os = <usize>outStride << 2;
  for (let t0 = 0; t0 < n; t0 += TOKEN_BLOCK) {
    const t1 = min<i32>(n, t0 + TOKEN_BLOCK);
    for (let r = r0; r < r1; r++) {
      const wr = w + <usize>r * rowBytes;
      for (let t = t0; t < t1; t += TILE) tile_q4_0(out + (<usize>(t * outStride + r) << 2), os, wr, xq + <usize>t * xqStride, xqStride, min<i32>(TILE, t1 - t), cols);
    }
  }
}
export function dequant_q4_0(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 18;
    const d = f16(load<u16>(wb));
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(wb + 2 + j);
      store<f32>(o + (<usize>j << 2), <f32>((q & 15) - 8) * d);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>((q >> 4) - 8) * d);
    }
  }
}

export function matvec_q4_1(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dot_q4_1(w + <usize>r * rowBytes, xq, cols));
}
export function matmul_q4_1(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) store<f32>(out + (<usize>(t * outStride + r) << 2), dot_q4_1(wr, xq + <usize>t * xqStride, cols));
  }
}
export function dequant_q4_1(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 20;
    const d = f16(load<u16>(wb));
    const m = f16(load<u16>(wb, 2));
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(wb + 4 + j);
      store<f32>(o + (<usize>j << 2), <f32>(q & 15) * d + m);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>(q >> 4) * d + m);
    }
  }
}

export function matvec_q5_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dot4_q5_0(w + <usize>r * rowBytes, xq, cols));
}
export function matmul_q5_0(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  // prompt batches take gemm_q5_0 (gemm.ts); this one-token-at-a-time form equals matvec bit for bit
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) store<f32>(out + (<usize>(t * outStride + r) << 2), dot4_q5_0(wr, xq + <usize>t * xqStride, cols));
  }
}
export function dequant_q5_0(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 22;
    const d = f16(load<u16>(wb));
    const qh = load<u32>(wb, 2);
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(wb + 6 + j);
      const h0 = <i32>((qh >> j) << 4) & 0x10;
      const h1 = <i32>(qh >> (j + 12)) & 0x10;
      store<f32>(o + (<usize>j << 2), <f32>(((q & 15) | h0) - 16) * d);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>(((q >> 4) | h1) - 16) * d);
    }
  }
}

export function matvec_q5_1(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dot_q5_1(w + <usize>r * rowBytes, xq, cols));
}
export function matmul_q5_1(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) store<f32>(out + (<usize>(t * outStride + r) << 2), dot_q5_1(wr, xq + <usize>t * xqStride, cols));
  }
}
export function dequant_q5_1(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 24;
    const d = f16(load<u16>(wb));
    const m = f16(load<u16>(wb, 2));
    const qh = load<u32>(wb, 4);
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(wb + 8 + j);
      const h0 = <i32>((qh >> j) << 4) & 0x10;
      const h1 = <i32>(qh >> (j + 12)) & 0x10;
      store<f32>(o + (<usize>j << 2), <f32>((q & 15) | h0) * d + m);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>((q >> 4) | h1) * d + m);
    }
  }
}

export function matvec_iq4_nl(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dot_iq4_nl(w + <usize>r * rowBytes, xq, cols));
}
export function matmul_iq4_nl(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) store<f32>(out + (<usize>(t * outStride + r) << 2), dot_iq4_nl(wr, xq + <usize>t * xqStride, cols));
  }
}
export function dequant_iq4_nl(out: usize, w: usize, cols: i32): void {
  for (let b = 0; b < (cols >> 5); b++) {
    const wb = w + <usize>b * 18;
    const d = f16(load<u16>(wb));
    const o = out + (<usize>b << 7);
    for (let j = 0; j < 16; j++) {
      const q = <i32>load<u8>(wb + 2 + j);
      store<f32>(o + (<usize>j << 2), <f32>load<i8>(IQ4NL + (q & 15)) * d);
      store<f32>(o + (<usize>(j + 16) << 2), <f32>load<i8>(IQ4NL + (q >> 4)) * d);
    }
  }
}

/** kvalues_iq4nl in memory, for scalar lookups (ggml-common.h). */
export const IQ4NL: usize = memory.data<i8>([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]);
