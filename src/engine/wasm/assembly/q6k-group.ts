// Q6_K weights in groups of four rows (relaxed build), written once at load by layout_q6_K, and
// the kernels that read them (kquants.ts dispatches matvec_q6_K, matmul_q6_K and
// dequant_row_q6_K here; gemm.ts prepares its rows with q6gDecode).
//
// Rows 4g … 4g+3 of a tensor (g < rows/4) become one group of the same 4·rowBytes bytes, at the
// same place; per super-block b, at 840·b in the group (q_r[e]: the 6-bit quant of element e of
// row r, 0..63; sc_r[j]: its i8 scale of elements 16j … 16j+15):
//   0    quants: pair p (p < 8, elements 32p … 32p+31) at 96p, two packs k at 96p + 48k, each
//        three vectors A, B, C that hold four weight vectors W0 … W3 (W_m: i = 2k + m/2, h = m % 2):
//          lane r of W_m = q_r[e], q_r[e+1], q_r[e+16], q_r[e+17],  e = 32p + 4i + 2h
//          A = W0 | (W3 & 3) << 6,  B = W1 | (W3 >> 2 & 3) << 6,  C = W2 | (W3 >> 4) << 6
//   768  scales: pair p at 768 + 8p: sc_r[2p], sc_r[2p+1] for r = 0 … 3 (one i16x8.load8x8_s)
//   832  d: the four rows' f16
// With the activation's bytes in the same order (prepX: x[e], x[e+1], x[e+16], x[e+17], one u32
// per (p, i, h)), one i16 relaxed dot (pmaddubsw) of W_m against that u32 broadcast gives each
// row's products in its own lanes: i16 lane 2r the two of sub-block 2p, lane 2r+1 the two of 2p+1.
// The two h of one i add in i16 (|·| ≤ 4·63·127), and one i16x8.dot (pmaddwd) with the pair's
// scales scales both sub-blocks and adds them: lane r of the i32 sum. No horizontal sums and no
// scale splats: 2.5 vector ops per 16 weights for the dot, where the ggml-layout kernel spends
// three and a scalar-to-vector scale broadcast. Groups go two at a time (dotG2Body), so each
// broadcast serves eight rows (docs/performance.md, "Q6_K in groups of four rows").
//
// Bit for bit dot_q6_K (kquants.ts) per row: its four i32 lanes i (products 4i … 4i+3 of
// every 16 elements, and the −32 offset of the pairs p = i, i + 4 through the bsums) are kept here
// as four i32x4 sums S_i with the rows in lanes, each converted and scaled as dot_q6_K's lane i
// (f32(S_i)·(d·d_x), added to its own f32x4), and the four added at the end in hsumF's order.
// The last rows % 4 rows stay in ggml's layout (kquants.ts dot4_q6_K reads them). The plain build
// keeps ggml's layout throughout; layout_q6_K then only moves the bytes.

import { f16, f16Top, qKBsums, qKScales } from './common';

const Z: v128 = i32x4.splat(0);

/** Bytes of one group's super-block: four rows' 210. */
export const Q6G_BLOCK: usize = 840;
/** Offsets in a group block: the scale pairs, the four f16 d. */
export const G_SC: usize = 768;
export const G_D: usize = 832;

/** True when this build stores Q6_K in groups of four rows. */
// @ts-ignore: decorator
@inline export function q6Grouped(): bool {
  return ASC_FEATURE_RELAXED_SIMD;
}

// Vector constants, loaded where used (V8 rebuilds a v128.const at every use in a loop).
const KG: usize = memory.data<u8>([
  0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, //  0 6-bit mask
  0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, // 16 bits 6-7
  0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, // 32 nibble mask
  0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, // 48 bits 0-1
  0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, // 64 bits 2-3
  0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, // 80 bits 4-5
], 16);
// @ts-ignore: decorator
@inline export function kg(off: usize): v128 {
  return v128.load(KG + off);
}

/** 256 u8 per row of a group block, the quants decoded (q6Decode, q6gDecode): four rows. Per instance (its own memory). */
const QT: usize = memory.data(1024, 16);

/**
 * Activation bytes in the group order (prepX), for activations of up to X_COLS columns (the 8B's
 * 14336; 16 KiB is what the module's four pages of static data have left); longer ones take the
 * same order from registers (dotGBody's px = false), five shuffles more per pack.
 */
const X_COLS: i32 = 16384;
const XP: usize = memory.data(X_COLS, 16);

/**
 * The 16-bit units of 32 bytes lo, hi interleaved: [lo.u0, hi.u0, lo.u1, hi.u1, …] (lo: units
 * 0-3, hi: 4-7) — elements e, e+1, e+16, e+17 side by side for e = 0, 2, 4, 6 (unpackLo) and 8 …
 * 14 (unpackHi) of a pair's 32.
 */
// @ts-ignore: decorator
@inline export function unpackLo(lo: v128, hi: v128): v128 {
  return i8x16.shuffle(lo, hi, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
}
// @ts-ignore: decorator
@inline export function unpackHi(lo: v128, hi: v128): v128 {
  return i8x16.shuffle(lo, hi, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
}

/** XP ← the q8_K activation's quants at xq in the group order: per pair p, unpackLo | unpackHi of its 32 bytes. */
function prepX(xq: usize, cols: i32): void {
  for (let c = 0; c < (cols >> 5); c++) {
    const x0 = v128.load(xq + (<usize>c << 5)), x1 = v128.load(xq + (<usize>c << 5), 16);
    v128.store(XP + (<usize>c << 5), unpackLo(x0, x1));
    v128.store(XP + (<usize>c << 5), unpackHi(x0, x1), 16);
  }
}

/** W3 of a pack from the top two bits of A, B, C (bits 0-1, 2-3, 4-5): one final shift for all three. */
// @ts-ignore: decorator
@inline export function w3(a: v128, b: v128, c: v128): v128 {
  const m = kg(16);
  const t = v128.or(v128.or(i16x8.shr_u(v128.and(a, m), 4), i16x8.shr_u(v128.and(b, m), 2)), v128.and(c, m));
  return i16x8.shr_u(t, 2);
}

/** The activation's u32 m (< 4) of unpacked vector u, broadcast. */
// @ts-ignore: decorator
@inline function lane4(u: v128, m: i32): v128 {
  if (m == 0) return i32x4.shuffle(u, u, 0, 0, 0, 0);
  if (m == 1) return i32x4.shuffle(u, u, 1, 1, 1, 1);
  if (m == 2) return i32x4.shuffle(u, u, 2, 2, 2, 2);
  return i32x4.shuffle(u, u, 3, 3, 3, 3);
}

/**
 * −32·Σ_{p ∈ {i, i+4}} (sc_r[2p]·bsum[2p] + sc_r[2p+1]·bsum[2p+1]) per row lane r: lane i of
 * dot_q6_K's offset term (kquants.ts q6KSum: bsumDotS, i16 dots of the bsums and scales in pairs).
 */
// @ts-ignore: decorator
@inline export function offset(a: usize, bs: usize, i: i32): v128 {
  const lo = i32x4.dot_i16x8_s(v128.load8x8_s(a + G_SC + (<usize>i << 3)), v128.load32_splat(bs + (<usize>i << 2)));
  const hi = i32x4.dot_i16x8_s(v128.load8x8_s(a + G_SC + (<usize>(i + 4) << 3)), v128.load32_splat(bs + (<usize>(i + 4) << 2)));
  return i32x4.shl(i32x4.sub(i32x4.splat(0), i32x4.add(lo, hi)), 5);
}

/** The activation's u32s for a pack's W0 … W3, broadcast: from XP at x (px), else unpacked from the pair's 32 bytes at y (k: its half). */
// @ts-ignore: decorator
@inline function xu(px: bool, x: usize, y: usize, k: i32): v128 {
  if (px) return Z;
  return k == 0 ? unpackLo(v128.load(y), v128.load(y, 16)) : unpackHi(v128.load(y), v128.load(y, 16));
}
// @ts-ignore: decorator
@inline function xm(px: bool, x: usize, u: v128, m: i32): v128 {
  if (px) {
    if (m == 0) return v128.load32_splat(x);
    if (m == 1) return v128.load32_splat(x, 4);
    if (m == 2) return v128.load32_splat(x, 8);
    return v128.load32_splat(x, 12);
  }
  return lane4(u, m);
}

/** One pack (A, B, C: its three vectors; sc: the pair's scales): the i32 terms of S_2k (lo) … */
// @ts-ignore: decorator
@inline function packLo(A: v128, B: v128, x0: v128, x1: v128, sc: v128): v128 {
  const m = kg(0);
  const p = i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(x0, v128.and(A, m)), i16x8.relaxed_dot_i8x16_i7x16_s(x1, v128.and(B, m)));
  return i32x4.dot_i16x8_s(p, sc);
}
/** … and of S_2k+1. */
// @ts-ignore: decorator
@inline function packHi(A: v128, B: v128, C: v128, x2: v128, x3: v128, sc: v128): v128 {
  const p = i16x8.add(i16x8.relaxed_dot_i8x16_i7x16_s(x2, v128.and(C, kg(0))), i16x8.relaxed_dot_i8x16_i7x16_s(x3, w3(A, B, C)));
  return i32x4.dot_i16x8_s(p, sc);
}

/** acc + f32(s)·dd lane-wise (dot_q6_K's fmaI). */
// @ts-ignore: decorator
@inline export function fma(acc: v128, s: v128, dd: v128): v128 {
  return f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(s), dd));
}

/** The block's four d times d_x, lane r: row r's (dot_q6_K's f16(d)·d_x). */
// @ts-ignore: decorator
@inline function dScale(a: usize, dx: usize): v128 {
  return f32x4.mul(f16Top(i32x4.shl(v128.load16x4_u(a + G_D), 16)), v128.load32_splat(dx));
}

/**
 * Lane r = dot_q6_K of row r of the group at g with xq. px: the activation's order from XP
 * (prepX ran for xq), else unpacked here from xq per pair.
 */
// @ts-ignore: decorator
@inline function dotGBody(px: bool, g: usize, xq: usize, cols: i32): v128 {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  // acc_i: lane r = row r's f32 lane i of dot_q6_K; acc0, acc1 take k = 0 (i = 0, 1), then rotate
  let acc0 = f32x4.splat(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  for (let b = 0; b < nb; b++) {
    const a = g + <usize>b * Q6G_BLOCK;
    const bs = bp + (<usize>b << 5);
    const dd = dScale(a, dp + (<usize>b << 2));
    for (let k = 0; k < 2; k++) {
      // S_i for i = 2k (s0: W0, W1 of each pack k) and 2k + 1 (s1: W2, W3)
      let s0 = offset(a, bs, 2 * k), s1 = offset(a, bs, 2 * k + 1);
      for (let p = 0; p < 8; p++) {
        const q = a + <usize>p * 96 + <usize>k * 48;
        const x = XP + (<usize>b << 8) + (<usize>p << 5) + (<usize>k << 4), y = xq + (<usize>b << 8) + (<usize>p << 5);
        const u = xu(px, x, y, k);
        const A = v128.load(q), B = v128.load(q, 16), C = v128.load(q, 32);
        const sc = v128.load8x8_s(a + G_SC + (<usize>p << 3));
        s0 = i32x4.add(s0, packLo(A, B, xm(px, x, u, 0), xm(px, x, u, 1), sc));
        s1 = i32x4.add(s1, packHi(A, B, C, xm(px, x, u, 2), xm(px, x, u, 3), sc));
      }
      const n0 = fma(acc0, s0, dd), n1 = fma(acc1, s1, dd);
      acc0 = acc2;
      acc1 = acc3;
      acc2 = n0;
      acc3 = n1;
    }
  }
  // hsumF's order per row: (lane 0 + lane 2) + (lane 1 + lane 3)
  return f32x4.add(f32x4.add(acc0, acc2), f32x4.add(acc1, acc3));
}

/** dotGBody of the two groups at g and g + d at once (two streams, the activation's loads shared in L1), stored at o and o + od. */
// @ts-ignore: decorator
@inline function dotG2Body(px: bool, o: usize, od: usize, g: usize, d: usize, xq: usize, cols: i32): void {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  let acc0 = f32x4.splat(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  let bcc0 = acc0, bcc1 = acc0, bcc2 = acc0, bcc3 = acc0;
  for (let b = 0; b < nb; b++) {
    const a = g + <usize>b * Q6G_BLOCK, e = a + d;
    const bs = bp + (<usize>b << 5);
    const dd = dScale(a, dp + (<usize>b << 2)), de = dScale(e, dp + (<usize>b << 2));
    for (let k = 0; k < 2; k++) {
      let s0 = offset(a, bs, 2 * k), s1 = offset(a, bs, 2 * k + 1);
      let t0 = offset(e, bs, 2 * k), t1 = offset(e, bs, 2 * k + 1);
      // running pointers (V8 folds the constant offsets into the loads): both groups' pack k of
      // pair p and pair scales, the activation's u32s (x) or bytes (y)
      let qa = a + <usize>k * 48, qe = e + <usize>k * 48, sa = a + G_SC, se = e + G_SC;
      let x = XP + (<usize>b << 8) + (<usize>k << 4), y = xq + (<usize>b << 8);
      for (let p = 0; p < 8; p++) {
        const u = xu(px, x, y, k);
        let A = v128.load(qa), B = v128.load(qa, 16), C = v128.load(qa, 32);
        let sc = v128.load8x8_s(sa);
        s0 = i32x4.add(s0, packLo(A, B, xm(px, x, u, 0), xm(px, x, u, 1), sc));
        s1 = i32x4.add(s1, packHi(A, B, C, xm(px, x, u, 2), xm(px, x, u, 3), sc));
        A = v128.load(qe);
        B = v128.load(qe, 16);
        C = v128.load(qe, 32);
        sc = v128.load8x8_s(se);
        t0 = i32x4.add(t0, packLo(A, B, xm(px, x, u, 0), xm(px, x, u, 1), sc));
        t1 = i32x4.add(t1, packHi(A, B, C, xm(px, x, u, 2), xm(px, x, u, 3), sc));
        qa += 96;
        qe += 96;
        sa += 8;
        se += 8;
        x += 32;
        y += 32;
      }
      const n0 = fma(acc0, s0, dd), n1 = fma(acc1, s1, dd);
      acc0 = acc2;
      acc1 = acc3;
      acc2 = n0;
      acc3 = n1;
      const m0 = fma(bcc0, t0, de), m1 = fma(bcc1, t1, de);
      bcc0 = bcc2;
      bcc1 = bcc3;
      bcc2 = m0;
      bcc3 = m1;
    }
  }
  v128.store(o, f32x4.add(f32x4.add(acc0, acc2), f32x4.add(acc1, acc3)));
  v128.store(o + od, f32x4.add(f32x4.add(bcc0, bcc2), f32x4.add(bcc1, bcc3)));
}

function dotGp(g: usize, xq: usize, cols: i32): v128 {
  return dotGBody(true, g, xq, cols);
}
function dotGu(g: usize, xq: usize, cols: i32): v128 {
  return dotGBody(false, g, xq, cols);
}
function dotG2p(o: usize, od: usize, g: usize, d: usize, xq: usize, cols: i32): void {
  dotG2Body(true, o, od, g, d, xq, cols);
}
function dotG2u(o: usize, od: usize, g: usize, d: usize, xq: usize, cols: i32): void {
  dotG2Body(false, o, od, g, d, xq, cols);
}

/** Lanes [k0, 4) of v to out + 4·(r + k). */
// @ts-ignore: decorator
@inline function putFrom(out: usize, r: i32, v: v128, k0: i32): void {
  if (k0 <= 0) store<f32>(out + (<usize>r << 2), f32x4.extract_lane(v, 0));
  if (k0 <= 1) store<f32>(out + (<usize>(r + 1) << 2), f32x4.extract_lane(v, 1));
  if (k0 <= 2) store<f32>(out + (<usize>(r + 2) << 2), f32x4.extract_lane(v, 2));
  store<f32>(out + (<usize>(r + 3) << 2), f32x4.extract_lane(v, 3));
}

/**
 * Relaxed: out[r] = row r · xq for the rows of [r0, r1) that are in groups (r < r1 & ~3; r1 is a
 * multiple of 4 or the tensor's last row + 1, as matvec_q4_0's); a partial first group is computed
 * whole and stored in part. The groups of the two halves of the range go in step (dotG2: two
 * sequential streams; four or eight parts taken in pairs measured slower). Returns the first row
 * left to the caller: max(r0, r1 & ~3), the start of the rows in ggml's layout.
 */
export function matvecG_q6_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): i32 {
  const t = r1 & ~3;
  let g = r0 & ~3;
  if (g >= t) return max(r0, t);
  const px = cols <= X_COLS;
  if (px) prepX(xq, cols);
  if (g < r0) {
    putFrom(out, g, px ? dotGp(w + <usize>g * rowBytes, xq, cols) : dotGu(w + <usize>g * rowBytes, xq, cols), r0 - g);
    g += 4;
  }
  // the groups in two parts of h, two streams in step (dotG2), then the odd one
  const h = (t - g) >> 3, gb = 4 * rowBytes;
  const base = w + <usize>g * rowBytes, o = out + (<usize>g << 2);
  for (let i = 0; i < h; i++) {
    if (px) dotG2p(o + (<usize>i << 4), <usize>h << 4, base + <usize>i * gb, <usize>h * gb, xq, cols);
    else dotG2u(o + (<usize>i << 4), <usize>h << 4, base + <usize>i * gb, <usize>h * gb, xq, cols);
  }
  for (let i = 2 * h; i < (t - g) >> 2; i++) {
    const v = px ? dotGp(base + <usize>i * gb, xq, cols) : dotGu(base + <usize>i * gb, xq, cols);
    v128.store(o + (<usize>i << 4), v);
  }
  return max(r0, t);
}

// ---- layout and readback ------------------------------------------------------------------------

/** dst[256] ← the quants q (0..63) of the ggml Q6_K block at wb, in element order (dequantize_row_q6_K's). */
// @ts-ignore: decorator
@inline function q6Decode(dst: usize, wb: usize): void {
  const nm = kg(32), m2 = kg(48);
  for (let n = 0; n < 2; n++) {
    const ql = wb + (<usize>n << 6), qh = wb + 128 + (<usize>n << 5), o = dst + (<usize>n << 7);
    const qa0 = v128.load(ql), qa1 = v128.load(ql, 16), qc0 = v128.load(ql, 32), qc1 = v128.load(ql, 48);
    const h0 = v128.load(qh), h1 = v128.load(qh, 16);
    // elements 128n + 32j + l: nibbles of ql (j = 0, 2) or ql + 32 (j = 1, 3), high bits 2j of qh[l]
    v128.store(o, v128.or(v128.and(qa0, nm), i16x8.shl(v128.and(h0, m2), 4)));
    v128.store(o, v128.or(v128.and(qa1, nm), i16x8.shl(v128.and(h1, m2), 4)), 16);
    v128.store(o, v128.or(v128.and(qc0, nm), i16x8.shl(v128.and(i16x8.shr_u(h0, 2), m2), 4)), 32);
    v128.store(o, v128.or(v128.and(qc1, nm), i16x8.shl(v128.and(i16x8.shr_u(h1, 2), m2), 4)), 48);
    v128.store(o, v128.or(v128.and(i16x8.shr_u(qa0, 4), nm), v128.and(h0, kg(80))), 64);
    v128.store(o, v128.or(v128.and(i16x8.shr_u(qa1, 4), nm), v128.and(h1, kg(80))), 80);
    v128.store(o, v128.or(v128.and(i16x8.shr_u(qc0, 4), nm), i16x8.shl(v128.and(i16x8.shr_u(h0, 6), m2), 4)), 96);
    v128.store(o, v128.or(v128.and(i16x8.shr_u(qc1, 4), nm), i16x8.shl(v128.and(i16x8.shr_u(h1, 6), m2), 4)), 112);
  }
}

/**
 * QT + 256·r ← the quants of row r (r < 4) of the group block at a, in element order: each pack's
 * weight vectors (lane r: row r's u32) transposed to rows, then the pair's 16-bit units
 * de-interleaved (unpackLo/Hi undone).
 */
export function q6gDecode(a: usize): usize {
  const m = kg(0);
  for (let p = 0; p < 8; p++) {
    const q = a + <usize>p * 96;
    // u_k,r: row r's u32s of pack k (W0 … W3 lane r), the pair's unpackLo (k = 0) / unpackHi
    let A = v128.load(q), B = v128.load(q, 16), C = v128.load(q, 32);
    let w0 = v128.and(A, m), w1 = v128.and(B, m), w2 = v128.and(C, m), w3v = w3(A, B, C);
    let l01 = i32x4.shuffle(w0, w1, 0, 4, 1, 5), l23 = i32x4.shuffle(w2, w3v, 0, 4, 1, 5);
    let h01 = i32x4.shuffle(w0, w1, 2, 6, 3, 7), h23 = i32x4.shuffle(w2, w3v, 2, 6, 3, 7);
    const u00 = i64x2.shuffle(l01, l23, 0, 2), u01 = i64x2.shuffle(l01, l23, 1, 3);
    const u02 = i64x2.shuffle(h01, h23, 0, 2), u03 = i64x2.shuffle(h01, h23, 1, 3);
    A = v128.load(q, 48);
    B = v128.load(q, 64);
    C = v128.load(q, 80);
    w0 = v128.and(A, m);
    w1 = v128.and(B, m);
    w2 = v128.and(C, m);
    w3v = w3(A, B, C);
    l01 = i32x4.shuffle(w0, w1, 0, 4, 1, 5);
    l23 = i32x4.shuffle(w2, w3v, 0, 4, 1, 5);
    h01 = i32x4.shuffle(w0, w1, 2, 6, 3, 7);
    h23 = i32x4.shuffle(w2, w3v, 2, 6, 3, 7);
    const u10 = i64x2.shuffle(l01, l23, 0, 2), u11 = i64x2.shuffle(l01, l23, 1, 3);
    const u12 = i64x2.shuffle(h01, h23, 0, 2), u13 = i64x2.shuffle(h01, h23, 1, 3);
    const o = QT + (<usize>p << 5);
    putPair(o, u00, u10);
    putPair(o + 256, u01, u11);
    putPair(o + 512, u02, u12);
    putPair(o + 768, u03, u13);
  }
  return QT;
}

/** The 32 elements of a pair at o from its unpackLo (u0) and unpackHi (u1): even and odd 16-bit units. */
// @ts-ignore: decorator
@inline function putPair(o: usize, u0: v128, u1: v128): void {
  v128.store(o, i8x16.shuffle(u0, u1, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29));
  v128.store(o, i8x16.shuffle(u0, u1, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31), 16);
}

/** The i8 scale of sub-block j (16 elements) of row r in the group block at a. */
// @ts-ignore: decorator
@inline export function q6gScale(a: usize, r: usize, j: i32): i32 {
  return <i32>load<i8>(a + G_SC + (<usize>(j >> 1) << 3) + (r << 1) + <usize>(j & 1));
}

/** The f16 d of row r in the group block at a. */
// @ts-ignore: decorator
@inline export function q6gD(a: usize, r: usize): u32 {
  return <u32>load<u16>(a + G_D + (r << 1));
}

/**
 * dst ← the rows × cols Q6_K tensor at src (ggml's rows) in the build's layout, with
 * layout_q4_0's contract on src and dst (src ≥ dst + 4·rowBytes, group g written over source
 * group g − 1; or src + rows·rowBytes ≤ dst).
 */
export function layout_q6_K(dst: usize, src: usize, rows: i32, cols: i32): void {
  const nb = cols >> 8;
  const rb = <usize>nb * 210;
  let done = 0;
  if (q6Grouped()) {
    for (let g = 0; g + 4 <= rows; g += 4) {
      const s = src + <usize>g * rb, d = dst + <usize>g * rb;
      for (let b = 0; b < nb; b++) {
        const a = d + <usize>b * Q6G_BLOCK;
        for (let r = 0; r < 4; r++) {
          const wb = s + <usize>r * rb + <usize>b * 210;
          q6Decode(QT + (<usize>r << 8), wb);
          for (let p = 0; p < 8; p++) store<u16>(a + G_SC + (<usize>p << 3) + (<usize>r << 1), load<u16>(wb + 192 + (<usize>p << 1)));
          store<u16>(a + G_D + (<usize>r << 1), load<u16>(wb, 208));
        }
        for (let p = 0; p < 8; p++) {
          const o = QT + (<usize>p << 5);
          const x0 = v128.load(o), y0 = v128.load(o, 16), x1 = v128.load(o, 256), y1 = v128.load(o, 272);
          const x2 = v128.load(o, 512), y2 = v128.load(o, 528), x3 = v128.load(o, 768), y3 = v128.load(o, 784);
          putPack(a + <usize>p * 96, unpackLo(x0, y0), unpackLo(x1, y1), unpackLo(x2, y2), unpackLo(x3, y3));
          putPack(a + <usize>p * 96 + 48, unpackHi(x0, y0), unpackHi(x1, y1), unpackHi(x2, y2), unpackHi(x3, y3));
        }
      }
      done = g + 4;
    }
  }
  memory.copy(dst + <usize>done * rb, src + <usize>done * rb, <usize>(rows - done) * rb);
}

/** A pack at o from the four rows' u32s (u_r: row r's, W0 … W3 in its lanes): transposed to W_m (lane r), then A, B, C. */
// @ts-ignore: decorator
@inline function putPack(o: usize, u0: v128, u1: v128, u2: v128, u3: v128): void {
  const l01 = i32x4.shuffle(u0, u1, 0, 4, 1, 5), l23 = i32x4.shuffle(u2, u3, 0, 4, 1, 5);
  const h01 = i32x4.shuffle(u0, u1, 2, 6, 3, 7), h23 = i32x4.shuffle(u2, u3, 2, 6, 3, 7);
  const w0 = i64x2.shuffle(l01, l23, 0, 2), w1 = i64x2.shuffle(l01, l23, 1, 3);
  const w2 = i64x2.shuffle(h01, h23, 0, 2), w3v = i64x2.shuffle(h01, h23, 1, 3);
  v128.store(o, v128.or(w0, i16x8.shl(v128.and(w3v, kg(48)), 6)));
  v128.store(o, v128.or(w1, i16x8.shl(v128.and(w3v, kg(64)), 4)), 16);
  v128.store(o, v128.or(w2, i16x8.shl(v128.and(w3v, kg(80)), 2)), 32);
}

/** Row k (k < 4) of the group at g, dequantised: dequant_q6_K's numbers, d·sc·(q − 32) per element. */
export function dequantG_q6_K(out: usize, g: usize, k: i32, cols: i32): void {
  for (let b = 0; b < (cols >> 8); b++) {
    const a = g + <usize>b * Q6G_BLOCK;
    const q = q6gDecode(a) + (<usize>k << 8);
    const d = f16(q6gD(a, <usize>k));
    for (let e = 0; e < 256; e++) {
      const v = d * <f32>q6gScale(a, <usize>k, e >> 4) * <f32>(<i32>load<u8>(q + e) - 32);
      store<f32>(out + (<usize>(b * 256 + e) << 2), v);
    }
  }
}
