// Q4_K weights in groups of four rows (relaxed build), written once at load by layout_q4_K, and the
// matvec that reads them with one row per i32 lane (matvecG_q4_K; kquants.ts dispatches to it).
//
// Rows 4g … 4g+3 of a tensor (g < rows/4) become one group of the same 4·rowBytes bytes, at the
// same place; per block b, at 576·b in the group, the four rows' 144-byte blocks interleaved by u32
// word: each 16-byte vector holds one word of each row, row k's in lane k (vecOff):
//   bytes   0-15  d | dmin << 16 of rows 0-3 (H)
//          16-63  the 12 packed scale bytes as three vectors U0, U1, U2 (row k's u32 in lane k)
//          64-575 quant vector (c, i), c < 4, i < 8: lane k = qs[32c + 4i … 32c + 4i + 3] of row
//                 k, whose low nibbles are elements 4i … 4i+3 of sub-block 2c and high nibbles
//                 those of sub-block 2c + 1; in the order blockG reads them: chunks 0 and 2, then
//                 1 and 3, two vectors of each at a time
// The scales unpack for all four rows at once (as kquants.ts dot4K45 does after its transpose), and
// one relaxed dot of a quant vector's nibbles with the activation's four bytes broadcast gives each
// row's sum in its own lane: no horizontal sums of rows and no per-row scale shuffles. The last
// rows % 4 rows stay in ggml's layout. The plain build keeps ggml's layout throughout (layout_q4_K
// only moves the bytes), as for Q4_0 (layout.ts).
//
// Bit for bit kquants.ts dot_q4_K per row: the integer sums are exact in any order; with rows in
// lanes, dot_q4_K's f32x4 accumulator (lane j: s_j·S_j + s_j+4·S_j+4 scaled by d·d_x, summed over
// the blocks) becomes four accumulators F0 … F3 (lane k: row k's lane j), its accm one more (M),
// added at the end in hsumF's order, (F0 + F2) + (F1 + F3) − M.

import { STREAMS, f16HiIf, f16Sub, qKBsums, qKScales } from './common';

/** Bytes of one group's block: four rows' 144-byte Q4_K blocks. */
export const Q4KG_BLOCK: usize = 576;

/** True when this build stores Q4_K in groups of four rows. */
// @ts-ignore: decorator
@inline export function q4kGrouped(): bool {
  return ASC_FEATURE_RELAXED_SIMD;
}

// Vector constants, loaded where used (V8 rebuilds a v128.const at every use inside a loop; legacy.ts).
const KG: usize = memory.data<u8>([
  0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, //   0 nibble mask
  0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, 0x3f, //  16 6-bit mask
  3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, //                                                  32 2-bit mask
  0x3f, 0, 0x3f, 0, 0x3f, 0, 0x3f, 0, 0x3f, 0, 0x3f, 0, 0x3f, 0, 0x3f, 0, //                         48 i16 0x003f
  0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, //                         64 i16 0x00ff
  // 80 + 16j: swizzles of a scale vector (lane k: row k's scales j, j+1 … as bytes) to sub-block
  // j's scale of row k in i16 lanes 2k and 2k + 1 (index 0x80: a zero byte, relaxed or not)
  0, 0x80, 0, 0x80, 4, 0x80, 4, 0x80, 8, 0x80, 8, 0x80, 12, 0x80, 12, 0x80,
  1, 0x80, 1, 0x80, 5, 0x80, 5, 0x80, 9, 0x80, 9, 0x80, 13, 0x80, 13, 0x80,
  2, 0x80, 2, 0x80, 6, 0x80, 6, 0x80, 10, 0x80, 10, 0x80, 14, 0x80, 14, 0x80,
  3, 0x80, 3, 0x80, 7, 0x80, 7, 0x80, 11, 0x80, 11, 0x80, 15, 0x80, 15, 0x80,
  // 144 + 16j: the same to sub-block j's scale of row k in i32 lane k
  0, 0x80, 0x80, 0x80, 4, 0x80, 0x80, 0x80, 8, 0x80, 0x80, 0x80, 12, 0x80, 0x80, 0x80,
  1, 0x80, 0x80, 0x80, 5, 0x80, 0x80, 0x80, 9, 0x80, 0x80, 0x80, 13, 0x80, 0x80, 0x80,
  2, 0x80, 0x80, 0x80, 6, 0x80, 0x80, 0x80, 10, 0x80, 0x80, 0x80, 14, 0x80, 0x80, 0x80,
  3, 0x80, 0x80, 0x80, 7, 0x80, 0x80, 0x80, 11, 0x80, 0x80, 0x80, 15, 0x80, 0x80, 0x80,
  // 208: the dot check's operands (dot32Native): 127 and 0xff (a byte the i7 operand may not hold)
  0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f,
  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
  // 240, 256: bytes 0, 1 (and 2, 3) of each lane as that lane's i16 pair (q4k-gemm.ts: minimums m_2k, m_2k+1)
  0, 0x80, 1, 0x80, 4, 0x80, 5, 0x80, 8, 0x80, 9, 0x80, 12, 0x80, 13, 0x80,
  2, 0x80, 3, 0x80, 6, 0x80, 7, 0x80, 10, 0x80, 11, 0x80, 14, 0x80, 15, 0x80,
], 16);
// @ts-ignore: decorator
@inline export function kg(off: usize): v128 {
  return v128.load(KG + off);
}

// ---- layout -------------------------------------------------------------------------------------

/**
 * dst ← the rows × cols Q4_K tensor at src (ggml's rows; src = dst, the backends' case, or a region
 * not overlapping dst) in the build's layout, each group of four rows interleaved in place through
 * tmp (4·rowBytes bytes; unused by the plain build, which keeps ggml's rows).
 */
export function layout_q4_K(dst: usize, src: usize, tmp: usize, rows: i32, cols: i32): void {
  const nb = cols >> 8;
  const rb = <usize>nb * 144;
  if (src != dst) memory.copy(dst, src, <usize>rows * rb);
  if (!q4kGrouped()) return;
  for (let g = 0; g + 4 <= rows; g += 4) {
    const d = dst + <usize>g * rb;
    memory.copy(tmp, d, 4 * rb);
    for (let b = 0; b < nb; b++) {
      const a = d + <usize>b * Q4KG_BLOCK;
      const s0 = tmp + <usize>b * 144, s1 = s0 + rb, s2 = s1 + rb, s3 = s2 + rb;
      // 16 bytes of each row at a time (piece p: words 4p … 4p+3), transposed to four vectors of rows 0-3
      for (let p: usize = 0; p < 9; p++) {
        const o = p << 4;
        const q0 = v128.load(s0 + o), q1 = v128.load(s1 + o), q2 = v128.load(s2 + o), q3 = v128.load(s3 + o);
        const l01 = i32x4.shuffle(q0, q1, 0, 4, 1, 5), h01 = i32x4.shuffle(q0, q1, 2, 6, 3, 7);
        const l23 = i32x4.shuffle(q2, q3, 0, 4, 1, 5), h23 = i32x4.shuffle(q2, q3, 2, 6, 3, 7);
        v128.store(a + vecOff(p, 0), i64x2.shuffle(l01, l23, 0, 2));
        v128.store(a + vecOff(p, 1), i64x2.shuffle(l01, l23, 1, 3));
        v128.store(a + vecOff(p, 2), i64x2.shuffle(h01, h23, 0, 2));
        v128.store(a + vecOff(p, 3), i64x2.shuffle(h01, h23, 1, 3));
      }
    }
  }
}

/** One ggml block (144 B) for readers of single rows (dequant_row_q4_K). */
export const Q4KG_ROW: usize = memory.data(144, 16);

/**
 * Where word l (l < 4) of piece p (p < 9: bytes 16p … 16p+15) of each row's block lies in the group
 * block: the header (p = 0) at 16l; quant vector (c, i) (piece 1 + 2c + (i >> 2), word i & 3) at
 * 64 + 256·(c & 1) + 64·(i >> 1) + 16·(2·(c >> 1) + (i & 1)), the order blockG reads them.
 */
// @ts-ignore: decorator
@inline function vecOff(p: usize, l: usize): usize {
  if (p == 0) return l << 4;
  const c = (p - 1) >> 1, i = (((p - 1) & 1) << 2) + l;
  return 64 + ((c & 1) << 8) + ((i >> 1) << 6) + ((((c >> 1) << 1) + (i & 1)) << 4);
}

/** dst ← row k's 144-byte block (ggml's layout) of the group block at a (row k's words are lane k of each vector). */
// @ts-ignore: decorator
@inline export function q4kgBlock(dst: usize, a: usize, k: usize): void {
  for (let p: usize = 0; p < 9; p++) {
    const s = a + (k << 2);
    let v = v128.load32_zero(s + vecOff(p, 0));
    v = v128.load32_lane(s + vecOff(p, 1), v, 1);
    v = v128.load32_lane(s + vecOff(p, 2), v, 2);
    v128.store(dst + (p << 4), v128.load32_lane(s + vecOff(p, 3), v, 3));
  }
}

// ---- matvec ---------------------------------------------------------------------------------------

/**
 * The activation's minimum terms of one block, made once per block for the groups that pass over
 * it (groupsG): the bsum pairs B_j = bsum_2j + bsum_2j+1 (|B_j| ≤ 2·16·128, i16) as i16 pairs
 * [B0, B2], [B1, B3], [B4, B6], [B5, B7], four times each: one i32x4.dot_i16x8_s with the rows'
 * minimums split into even and odd bytes (blockG) then gives each row's Σ_j m_j·B_j in its lane.
 * (Every block's copy made once per matvec was no faster, 19.7 against 19.8 GB/s at 4096×14336,
 * and took 8 KiB of static data, more than tests/model/pool-shards.test.ts's 4 MiB memories leave.)
 */
const QX: usize = memory.data(64, 16);

/** p ← the B pairs of the block whose bsums are at bs (64 B). */
// @ts-ignore: decorator
@inline function prepBlock(p: usize, bs: usize): void {
  const B = i16x8.narrow_i32x4_s(i32x4.extadd_pairwise_i16x8_s(v128.load(bs)), i32x4.extadd_pairwise_i16x8_s(v128.load(bs, 16)));
  v128.store(p, i8x16.shuffle(B, B, 0, 1, 4, 5, 0, 1, 4, 5, 0, 1, 4, 5, 0, 1, 4, 5));
  v128.store(p, i8x16.shuffle(B, B, 2, 3, 6, 7, 2, 3, 6, 7, 2, 3, 6, 7, 2, 3, 6, 7), 16);
  v128.store(p, i8x16.shuffle(B, B, 8, 9, 12, 13, 8, 9, 12, 13, 8, 9, 12, 13, 8, 9, 12, 13), 32);
  v128.store(p, i8x16.shuffle(B, B, 10, 11, 14, 15, 10, 11, 14, 15, 10, 11, 14, 15, 10, 11, 14, 15), 48);
}

/** Nibbles h (0: low, 1: high) of q. */
// @ts-ignore: decorator
@inline export function nib(q: v128, h: i32): v128 {
  if (h) return v128.and(i16x8.shr_u(q, 4), kg(0));
  return v128.and(q, kg(0));
}
/** Pair sums of nibbles h of q with four activation bytes broadcast (xv): row k in i16 lanes 2k, 2k+1 (|·| ≤ 2·15·128). */
// @ts-ignore: decorator
@inline function dd16(xv: v128, q: v128, h: i32): v128 {
  return i16x8.relaxed_dot_i8x16_i7x16_s(xv, nib(q, h));
}

/** acc + Σ of nibbles h of q times four activation bytes broadcast (xv): row k in i32 lane k. */
// @ts-ignore: decorator
@inline function dd32(xv: v128, q: v128, h: i32, acc: v128): v128 {
  return i32x4.relaxed_dot_i8x16_i7x16_add_s(xv, nib(q, h), acc);
}

/**
 * True when the i32 relaxed dot is one instruction here (x64 vpdpbusd with AVX-VNNI, Arm's sdot),
 * not pmaddubsw, pmaddwd and an add (x64 without it): 127 against the byte 0xff, which the i7
 * operand may not hold, gives 4·127·255 (unsigned, vpdpbusd) or 4·127·−1 (signed, sdot) in each
 * lane, and 2·32767 where pmaddubsw saturates. The matvec then takes the i32 dots (dot32), else
 * the i16 ones (pmaddubsw and paddw per 16 bytes where the i32 dot is three instructions, and one
 * pmaddwd per sub-block); the integer sums are the same.
 */
// @ts-ignore: decorator
@inline function dot32Native(): bool {
  const r = i32x4.relaxed_dot_i8x16_i7x16_add_s(kg(208), kg(224), i32x4.splat(0));
  return i32x4.extract_lane(r, 0) != 65534;
}

/** Tests turn the i32 dots off (0) to run the i16 ones where both would serve. */
let dot32Allowed = true;

/** Whether the kernels take the i32 dots: allowed and one instruction here (q4k-gemm.ts too). */
// @ts-ignore: decorator
@inline export function q4kDot32(): bool {
  return dot32Allowed && dot32Native();
}

/** Whether matvec_q4_K may take the i32 dots where they are one instruction (1, the default); 0 forces the i16 dots. */
export function q4k_dot32_allow(on: i32): void {
  dot32Allowed = on != 0;
}

/** 1 when matvec_q4_K takes the i32 dots here. */
export function q4k_dot32_active(): i32 {
  if (!q4kGrouped()) return 0;
  return dot32Allowed && dot32Native() ? 1 : 0;
}

/** F_j at acc + 16j += f32(T)·dd (lane-wise: dot_q4_K's fmaI on its isum lane j, one row per lane). */
// @ts-ignore: decorator
@inline export function addF(acc: usize, j: i32, T: v128, dd: v128): void {
  const p = acc + (<usize>j << 4);
  v128.store(p, f32x4.add(v128.load(p), f32x4.mul(f32x4.convert_i32x4_s(T), dd)));
}

/**
 * Block b of one group (a: its group block; xb, dxp: the activation block's bytes and d_x; xp: its
 * B pairs, prepBlock) added to the group's accumulators at acc (F0 … F3, M).
 */
// @ts-ignore: decorator
@inline function blockG(acc: usize, a: usize, xb: usize, dxp: usize, xp: usize, dot32: bool): void {
  const H = v128.load(a), U0 = v128.load(a, 16), U1 = v128.load(a, 32), U2 = v128.load(a, 48);
  const dx = v128.load32_splat(dxp);
  const k3 = kg(32), kf = kg(0), k3f = kg(16);
  // minimums m_0..3 (U1's low six bits) and m_4..7 (U2's high nibbles, U1's top two bits) as bytes
  // [m_4k, m_4k+1, m_4k+2, m_4k+3] per lane, split into i16 even bytes (m_0, m_2 | m_4, m_6) and odd
  // bytes (m_1, m_3 | m_5, m_7) against the B pairs: Σ_j m_j·B_j per row in its lane (exact)
  const m1 = v128.or(v128.and(i32x4.shr_u(U2, 4), kf), i32x4.shl(v128.and(i32x4.shr_u(U1, 6), k3), 4));
  const b02 = v128.load(xp), b13 = v128.load(xp, 16), b46 = v128.load(xp, 32), b57 = v128.load(xp, 48);
  const mins = i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(v128.and(U1, kg(48)), b02), i32x4.dot_i16x8_s(v128.and(i16x8.shr_u(U1, 8), k3f), b13)),
    i32x4.add(i32x4.dot_i16x8_s(v128.and(m1, kg(64)), b46), i32x4.dot_i16x8_s(i16x8.shr_u(m1, 8), b57)),
  );
  // d and dmin: f16HiMul unless one of the block's eight halves is subnormal (Q4_K of small weights)
  const sub = f16Sub(H);
  const dmin = f16HiIf(H, sub), dw = f16HiIf(i32x4.shl(H, 16), sub);
  // accm += (dmin·d_x)·minsum
  v128.store(acc, f32x4.add(v128.load(acc, 64), f32x4.mul(f32x4.mul(dmin, dx), f32x4.convert_i32x4_s(mins))), 64);
  const dd = f32x4.mul(dw, dx);
  // scales s_0..3 (U0's low six bits) and s_4..7 (U2's low nibbles, U0's top two bits)
  const s0 = v128.and(U0, k3f);
  const s1 = v128.or(v128.and(U2, kf), i32x4.shl(v128.and(i32x4.shr_u(U0, 6), k3), 4));
  // lane j of dot_q4_K's isum, s_j·S_j + s_j+4·S_j+4: sub-blocks j and j + 4 are nibbles j & 1 of
  // chunks j >> 1 and (j >> 1) + 2; chunks c and c + 2 in one pass (lanes 2c, 2c + 1)
  for (let c = 0; c < 2; c++) {
    // quant vectors (c, i), (c + 2, i) in the order read, 64 B per step t (vecOff): (c, 2t), (c, 2t + 1), (c + 2, 2t), (c + 2, 2t + 1)
    const q = a + 64 + (<usize>c << 8), x = xb + (<usize>c << 6);
    let l0 = i32x4.splat(0), h0 = l0, l2 = l0, h2 = l0;
    let t0: usize = 0;
    if (!dot32) {
      // the i16 sums start with step 0's, not with an add to zero (4 vector adds fewer per chunk)
      const v0 = v128.load(q), u0 = v128.load(q, 16), v2 = v128.load(q, 32), u2 = v128.load(q, 48);
      l0 = i16x8.add(dd16(v128.load32_splat(x), v0, 0), dd16(v128.load32_splat(x, 4), u0, 0));
      h0 = i16x8.add(dd16(v128.load32_splat(x, 32), v0, 1), dd16(v128.load32_splat(x, 36), u0, 1));
      l2 = i16x8.add(dd16(v128.load32_splat(x, 128), v2, 0), dd16(v128.load32_splat(x, 132), u2, 0));
      h2 = i16x8.add(dd16(v128.load32_splat(x, 160), v2, 1), dd16(v128.load32_splat(x, 164), u2, 1));
      t0 = 1;
    }
    for (let t: usize = t0; t < 4; t++) {
      const qt = q + (t << 6), xt = x + (t << 3);
      const v0 = v128.load(qt), u0 = v128.load(qt, 16), v2 = v128.load(qt, 32), u2 = v128.load(qt, 48);
      if (dot32) {
        l0 = dd32(v128.load32_splat(xt), v0, 0, l0);
        l0 = dd32(v128.load32_splat(xt, 4), u0, 0, l0);
        h0 = dd32(v128.load32_splat(xt, 32), v0, 1, h0);
        h0 = dd32(v128.load32_splat(xt, 36), u0, 1, h0);
        l2 = dd32(v128.load32_splat(xt, 128), v2, 0, l2);
        l2 = dd32(v128.load32_splat(xt, 132), u2, 0, l2);
        h2 = dd32(v128.load32_splat(xt, 160), v2, 1, h2);
        h2 = dd32(v128.load32_splat(xt, 164), u2, 1, h2);
      } else {
        l0 = i16x8.add(l0, i16x8.add(dd16(v128.load32_splat(xt), v0, 0), dd16(v128.load32_splat(xt, 4), u0, 0)));
        h0 = i16x8.add(h0, i16x8.add(dd16(v128.load32_splat(xt, 32), v0, 1), dd16(v128.load32_splat(xt, 36), u0, 1)));
        l2 = i16x8.add(l2, i16x8.add(dd16(v128.load32_splat(xt, 128), v2, 0), dd16(v128.load32_splat(xt, 132), u2, 0)));
        h2 = i16x8.add(h2, i16x8.add(dd16(v128.load32_splat(xt, 160), v2, 1), dd16(v128.load32_splat(xt, 164), u2, 1)));
      }
    }
    // the swizzles of sub-blocks 2c, 2c + 1 (i32 lanes: dot32; i16 pairs)
    const mt: usize = dot32 ? 144 : 80;
    const mlo = kg(mt + (<usize>c << 5)), mhi = kg(mt + 16 + (<usize>c << 5));
    addF(acc, 2 * c, i32x4.add(scaleS(l0, s0, mlo, dot32), scaleS(l2, s1, mlo, dot32)), dd);
    addF(acc, 2 * c + 1, i32x4.add(scaleS(h0, s0, mhi, dot32), scaleS(h2, s1, mhi, dot32)), dd);
  }
}

/** A sub-block's sums (dot32: i32 lanes; else i16 pair sums) times its scale, sc's byte picked by the swizzle m. */
// @ts-ignore: decorator
@inline export function scaleS(t: v128, sc: v128, m: v128, dot32: bool): v128 {
  if (dot32) return i32x4.mul(t, i8x16.relaxed_swizzle(sc, m));
  return i32x4.dot_i16x8_s(t, i8x16.relaxed_swizzle(sc, m));
}

/** Accumulators of four groups, 80 B each: F0 … F3, M (blockG). */
const ACC: usize = memory.data(4 * 80, 16);

/** Zeroes the accumulators of group s. */
// @ts-ignore: decorator
@inline function zeroAcc(s: usize): void {
  const acc = ACC + s * 80, z = f32x4.splat(0);
  v128.store(acc, z);
  v128.store(acc, z, 16);
  v128.store(acc, z, 32);
  v128.store(acc, z, 48);
  v128.store(acc, z, 64);
}
/** Group s's four rows · x, in hsumF's order: (F0 + F2) + (F1 + F3) − M. */
// @ts-ignore: decorator
@inline function resultAcc(s: usize): v128 {
  const acc = ACC + s * 80;
  const h = f32x4.add(f32x4.add(v128.load(acc), v128.load(acc, 32)), f32x4.add(v128.load(acc, 16), v128.load(acc, 48)));
  return f32x4.sub(h, v128.load(acc, 64));
}

/**
 * Four groups at g, g + d, g + 2d, g + 3d (four), or the one at g, block by block; lane k of the
 * vector stored at o + s·od is row k of group s · xq. The four groups' blocks are read by code of
 * their own, each load always from one stream (a load looping over the streams measured 2× slower
 * from L3 and DRAM: the prefetchers follow each load instruction's stride).
 */
// @ts-ignore: decorator
@inline function groupsG(four: bool, o: usize, od: usize, g: usize, d: usize, xq: usize, cols: i32, dot32: bool): void {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols), bp = qKBsums(xq, cols);
  zeroAcc(0);
  if (four) {
    zeroAcc(1);
    zeroAcc(2);
    zeroAcc(3);
  }
  for (let b = 0; b < nb; b++) {
    const xb = xq + (<usize>b << 8), dxp = dp + (<usize>b << 2);
    prepBlock(QX, bp + (<usize>b << 5));
    const a = g + <usize>b * Q4KG_BLOCK;
    blockG(ACC, a, xb, dxp, QX, dot32);
    if (four) {
      blockG(ACC + 80, a + d, xb, dxp, QX, dot32);
      blockG(ACC + 160, a + 2 * d, xb, dxp, QX, dot32);
      blockG(ACC + 240, a + 3 * d, xb, dxp, QX, dot32);
    }
  }
  v128.store(o, resultAcc(0));
  if (four) {
    v128.store(o + od, resultAcc(1));
    v128.store(o + 2 * od, resultAcc(2));
    v128.store(o + 3 * od, resultAcc(3));
  }
}

// groupsG per choice, each its own function so that the flags stay constants in its loops (as
// arms of one function, binaryen merged the copies into one that tests the flags at run time)
function groups4x32(o: usize, od: usize, g: usize, d: usize, xq: usize, cols: i32): void {
  groupsG(true, o, od, g, d, xq, cols, true);
}
function groups4x16(o: usize, od: usize, g: usize, d: usize, xq: usize, cols: i32): void {
  groupsG(true, o, od, g, d, xq, cols, false);
}
function groups1x32(o: usize, g: usize, xq: usize, cols: i32): void {
  groupsG(false, o, 0, g, 0, xq, cols, true);
}
function groups1x16(o: usize, g: usize, xq: usize, cols: i32): void {
  groupsG(false, o, 0, g, 0, xq, cols, false);
}

/** Where a partial first group's four rows go before its lanes are stored. */
const PART: usize = memory.data(16, 16);

/**
 * Relaxed build: out[r] = row r · xq for the rows r in [r0, r1) that lie in whole groups of the
 * Q4_K tensor at w (rows below r1 & ~3); returns r1 & ~3, where ggml's rows begin (r1 is a multiple
 * of 4 or the tensor's last row + 1, as for Q4_0: kquants.ts matvec_q4_K takes the rest). A partial
 * first group is computed whole and stored in part. The groups go STREAMS at a time, one from each
 * of STREAMS parts of the range (matvec_q4_0's streams), the rest side by side.
 */
export function matvecG_q4_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): i32 {
  const t = r1 & ~3;
  let g0 = r0 & ~3;
  if (g0 >= t) return t;
  const dot32 = q4kDot32();
  const gb = 4 * rowBytes;
  if (g0 < r0) {
    if (dot32) groups1x32(PART, w + <usize>g0 * rowBytes, xq, cols);
    else groups1x16(PART, w + <usize>g0 * rowBytes, xq, cols);
    for (let r = r0; r < g0 + 4; r++) store<f32>(out + (<usize>r << 2), load<f32>(PART + (<usize>(r - g0) << 2)));
    g0 += 4;
  }
  if (g0 < t) {
    const groups = (t - g0) >> 2, q = groups / STREAMS;
    const base = w + <usize>g0 * rowBytes, o = out + (<usize>g0 << 2);
    for (let k = 0; k < STREAMS; k += 4) {
      for (let i = 0; i < q; i++) {
        const j = k * q + i;
        if (dot32) groups4x32(o + (<usize>j << 4), <usize>q << 4, base + <usize>j * gb, <usize>q * gb, xq, cols);
        else groups4x16(o + (<usize>j << 4), <usize>q << 4, base + <usize>j * gb, <usize>q * gb, xq, cols);
      }
    }
    for (let j = STREAMS * q; j < groups; j++) {
      if (dot32) groups1x32(o + (<usize>j << 4), base + <usize>j * gb, xq, cols);
      else groups1x16(o + (<usize>j << 4), base + <usize>j * gb, xq, cols);
    }
  }
  return t;
}
