// F32, F16 and BF16 weights. The activation is f32 and, for F16/BF16 too, not rounded (Pantheon's
// choice, with llama.cpp's per-CPU behaviour, in src/engine/quant/float.ts), so each kernel widens
// weights to f32 and multiplies-adds.
// ggml_vec_dot_f16 accumulates in ggml_float (double) in its generic path; we accumulate in f32
// over 16 lanes, so results agree to float rounding, not bit for bit. Within Pantheon the F16/BF16
// order is fixed (dot_f16) and every kernel here keeps it: matvec and matmul agree bit for bit
// (tests/wasm/bitexact-float.test.ts computes the same order independently).

import { STREAMS, f16, f16Hi, f16Top, hsumF } from './common';

const Z: v128 = i32x4.splat(0);

// ---- vector constants ---------------------------------------------------------------------------
// Loaded from memory where used: V8 rebuilds a v128.const at every use inside a loop (3
// instructions each), while a load is one instruction off the ALU ports (as in legacy.ts).

const K: usize = memory.data<u8>([
  0x00, 0x7c, 0x00, 0x7c, 0x00, 0x7c, 0x00, 0x7c, 0x00, 0x7c, 0x00, 0x7c, 0x00, 0x7c, 0x00, 0x7c, //  0 i16 f16 exponent
  0x00, 0x04, 0x00, 0x04, 0x00, 0x04, 0x00, 0x04, 0x00, 0x04, 0x00, 0x04, 0x00, 0x04, 0x00, 0x04, // 16 i16 exponent 1
  0x00, 0x08, 0x00, 0x08, 0x00, 0x08, 0x00, 0x08, 0x00, 0x08, 0x00, 0x08, 0x00, 0x08, 0x00, 0x08, // 32 i16 exponent 2
  0xff, 0x8f, 0xff, 0x8f, 0xff, 0x8f, 0xff, 0x8f, 0xff, 0x8f, 0xff, 0x8f, 0xff, 0x8f, 0xff, 0x8f, // 48 i16 sign, exponent, mantissa
  0x00, 0x38, 0x00, 0x38, 0x00, 0x38, 0x00, 0x38, 0x00, 0x38, 0x00, 0x38, 0x00, 0x38, 0x00, 0x38, // 64 i16 (127 − 15) << 7
  0x00, 0xe0, 0xff, 0x8f, 0x00, 0xe0, 0xff, 0x8f, 0x00, 0xe0, 0xff, 0x8f, 0x00, 0xe0, 0xff, 0x8f, // 80 raw half mask 0x8FFFE000
  0x00, 0x00, 0x80, 0x0c, 0x00, 0x00, 0x80, 0x0c, 0x00, 0x00, 0x80, 0x0c, 0x00, 0x00, 0x80, 0x0c, // 96 2^-102
  0x00, 0x00, 0x80, 0x46, 0x00, 0x00, 0x80, 0x46, 0x00, 0x00, 0x80, 0x46, 0x00, 0x00, 0x80, 0x46, // 112 2^14
  0x00, 0x00, 0x80, 0x38, 0x00, 0x00, 0x80, 0x38, 0x00, 0x00, 0x80, 0x38, 0x00, 0x00, 0x80, 0x38, // 128 2^-14
  0x00, 0x00, 0x80, 0x4e, 0x00, 0x00, 0x80, 0x4e, 0x00, 0x00, 0x80, 0x4e, 0x00, 0x00, 0x80, 0x4e, // 144 2^30
  0x00, 0x00, 0x80, 0x49, 0x00, 0x00, 0x80, 0x49, 0x00, 0x00, 0x80, 0x49, 0x00, 0x00, 0x80, 0x49, // 160 2^20
  0x00, 0x00, 0x80, 0x3a, 0x00, 0x00, 0x80, 0x3a, 0x00, 0x00, 0x80, 0x3a, 0x00, 0x00, 0x80, 0x3a, // 176 2^-10
], 16);
// @ts-ignore: decorator
@inline function kv(off: usize): v128 {
  return v128.load(K + off);
}

// ---- half → f32 ---------------------------------------------------------------------------------
// Widening a half to f32 is exact, so any method gives the same bits; only speed differs. The
// fast path (~4 integer ops per 4 lanes, no float op) is right for normal halves; a group of
// halves holding a zero, subnormal, Inf or NaN takes the exact slow path instead (halfWiden).

/** Lanes of an i16x8 of halves whose exponent is 0 or 31 (zero, subnormal, Inf, NaN) → all ones. */
// @ts-ignore: decorator
@inline function special(h: v128): v128 {
  // e·1024 + 1024 is 1024 for e = 0, 0x8000 (negative) for e = 31, 2048..0x7c00 otherwise.
  return i16x8.lt_s(i16x8.add(v128.and(h, kv(0)), kv(16)), kv(32));
}

/**
 * 8 normal halves → f32 bits, exactly, as two i16x8 halves of the result: the top 16 bits of each
 * f32 (sign, 8-bit exponent, 7 mantissa bits: an arithmetic shift by 3 puts exponent and mantissa
 * in place with the sign copied into bits 14..12, the mask clears the copies, adding 112 << 7
 * rebiases the exponent) and the bottom 16 (the 3 low mantissa bits, shifted to the top).
 * normalLo / normalHi interleave them into the low and high 4 lanes as f32x4.
 */
// @ts-ignore: decorator
@inline function normalTop(h: v128): v128 {
  return i16x8.add(v128.and(i16x8.shr_s(h, 3), kv(48)), kv(64));
}
// @ts-ignore: decorator
@inline function normalBottom(h: v128): v128 {
  return i16x8.shl(h, 13);
}
// @ts-ignore: decorator
@inline function normalLo(bottom: v128, top: v128): v128 {
  return i8x16.shuffle(bottom, top, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
}
// @ts-ignore: decorator
@inline function normalHi(bottom: v128, top: v128): v128 {
  return i8x16.shuffle(bottom, top, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
}

/** 8 halves (one v128) → the low 4 as f32x4, exact for every half (see halfWiden). */
// @ts-ignore: decorator
@inline function halfLo(h: v128): v128 {
  return halfWiden(i32x4.extend_low_i16x8_u(h));
}
// @ts-ignore: decorator
@inline function halfHi(h: v128): v128 {
  return halfWiden(i32x4.extend_high_i16x8_u(h));
}
/** Four halves in u32 lanes → f32x4, exact for every half without subnormal float operands (common.ts f16Top). */
// @ts-ignore: decorator
@inline function halfWiden(u: v128): v128 {
  return f16Top(i32x4.shl(u, 16));
}

/** 8 bfloat16 → the low (high) 4 as f32x4: each in the top 16 bits of a lane, zeros below. */
// @ts-ignore: decorator
@inline function bf16Lo(h: v128): v128 {
  return i8x16.shuffle(Z, h, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
}
// @ts-ignore: decorator
@inline function bf16Hi(h: v128): v128 {
  return i8x16.shuffle(Z, h, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
}

// ---- dots over one row ------------------------------------------------------------------------

// @ts-ignore: decorator
@inline function dot_f32(w: usize, x: usize, cols: i32): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= cols; i += 16) {
    const o = <usize>i << 2;
    a0 = f32x4.add(a0, f32x4.mul(v128.load(w + o), v128.load(x + o)));
    a1 = f32x4.add(a1, f32x4.mul(v128.load(w + o, 16), v128.load(x + o, 16)));
    a2 = f32x4.add(a2, f32x4.mul(v128.load(w + o, 32), v128.load(x + o, 32)));
    a3 = f32x4.add(a3, f32x4.mul(v128.load(w + o, 48), v128.load(x + o, 48)));
  }
  for (; i + 4 <= cols; i += 4) {
    const o = <usize>i << 2;
    a0 = f32x4.add(a0, f32x4.mul(v128.load(w + o), v128.load(x + o)));
  }
  let s = hsumF(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  for (; i < cols; i++) s += load<f32>(w + (<usize>i << 2)) * load<f32>(x + (<usize>i << 2));
  return s;
}

/** dot_f32 for rows wa and wb at once (two weight streams in flight, x loaded once) → outA, outB. */
// @ts-ignore: decorator
@inline function dot2_f32(outA: usize, outB: usize, wa: usize, wb: usize, x: usize, cols: i32): void {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= cols; i += 16) {
    const o = <usize>i << 2;
    let v = v128.load(x + o);
    a0 = f32x4.add(a0, f32x4.mul(v128.load(wa + o), v));
    b0 = f32x4.add(b0, f32x4.mul(v128.load(wb + o), v));
    v = v128.load(x + o, 16);
    a1 = f32x4.add(a1, f32x4.mul(v128.load(wa + o, 16), v));
    b1 = f32x4.add(b1, f32x4.mul(v128.load(wb + o, 16), v));
    v = v128.load(x + o, 32);
    a2 = f32x4.add(a2, f32x4.mul(v128.load(wa + o, 32), v));
    b2 = f32x4.add(b2, f32x4.mul(v128.load(wb + o, 32), v));
    v = v128.load(x + o, 48);
    a3 = f32x4.add(a3, f32x4.mul(v128.load(wa + o, 48), v));
    b3 = f32x4.add(b3, f32x4.mul(v128.load(wb + o, 48), v));
  }
  for (; i + 4 <= cols; i += 4) {
    const o = <usize>i << 2;
    const v = v128.load(x + o);
    a0 = f32x4.add(a0, f32x4.mul(v128.load(wa + o), v));
    b0 = f32x4.add(b0, f32x4.mul(v128.load(wb + o), v));
  }
  let s = hsumF(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  let t = hsumF(f32x4.add(f32x4.add(b0, b1), f32x4.add(b2, b3)));
  for (; i < cols; i++) {
    const xi = load<f32>(x + (<usize>i << 2));
    s += load<f32>(wa + (<usize>i << 2)) * xi;
    t += load<f32>(wb + (<usize>i << 2)) * xi;
  }
  store<f32>(outA, s);
  store<f32>(outB, t);
}

/**
 * W[r,:]·x for an F16 row: lane j of accumulator k sums columns 16i + 4k + j in order of i; then
 * hsumF((a0 + a1) + (a2 + a3)) and the columns past the last 16 one by one. This order is the
 * contract every F16 kernel keeps (matmul_f16's tiles give the same bits).
 */
// @ts-ignore: decorator
@inline function dot_f16(w: usize, x: usize, cols: i32): f32 {
  return dotHalves(w, x, cols, false);
}

/** dot_f16 of plain halves, or (stored) of a stored row, decoding every half exactly (P's inverse). */
// @ts-ignore: decorator
@inline function dotHalves(w: usize, x: usize, cols: i32, stored: bool): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= cols; i += 16) {
    const h0 = v128.load(w + (<usize>i << 1));
    const h1 = v128.load(w + (<usize>i << 1), 16);
    const o = x + (<usize>i << 2);
    // each branch multiplies as it widens, so the rare one needs few registers and V8 keeps the
    // accumulators in registers
    if (stored || v128.any_true(v128.or(special(h0), special(h1)))) {
      a0 = f32x4.add(a0, f32x4.mul(exact(halfLo(h0), stored), v128.load(o)));
      a1 = f32x4.add(a1, f32x4.mul(exact(halfHi(h0), stored), v128.load(o, 16)));
      a2 = f32x4.add(a2, f32x4.mul(exact(halfLo(h1), stored), v128.load(o, 32)));
      a3 = f32x4.add(a3, f32x4.mul(exact(halfHi(h1), stored), v128.load(o, 48)));
    } else {
      const b0 = normalBottom(h0), t0 = normalTop(h0), b1 = normalBottom(h1), t1 = normalTop(h1);
      a0 = f32x4.add(a0, f32x4.mul(normalLo(b0, t0), v128.load(o)));
      a1 = f32x4.add(a1, f32x4.mul(normalHi(b0, t0), v128.load(o, 16)));
      a2 = f32x4.add(a2, f32x4.mul(normalLo(b1, t1), v128.load(o, 32)));
      a3 = f32x4.add(a3, f32x4.mul(normalHi(b1, t1), v128.load(o, 48)));
    }
  }
  let s = hsumF(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  for (; i < cols; i++) {
    const h = <u32>load<u16>(w + (<usize>i << 1));
    s += (stored ? storedF32(h) : f16(h)) * load<f32>(x + (<usize>i << 2));
  }
  return s;
}

/** Four exactly widened halves, decoded from P (stored) or as they are. */
// @ts-ignore: decorator
@inline function exact(v: v128, stored: bool): v128 {
  return stored ? decodeF(v) : v;
}

// ---- F16 matvec by raw widening -----------------------------------------------------------------
// A half's bits, sign-extended to 32 and shifted left by 13 with bits 30..28 cleared, are the f32
// half·2^-112 exactly, for every finite half (exponent 31 gives a finite wrong value). The backends
// store each half h of a weight as P(h) (layout_f16, "stored F16 halves" below), which is h·2^10
// for every |h| < 64: a zero stays zero and every other stored half is normal, so the raw widening
// gives the normal f32 h·2^-102 (2^-126 at the smallest), never a subnormal f32 operand (a ~100-cycle
// microcode assist on x86). Multiplied by x·2^102 (exact while |x| < 2^26), each product has the
// real value h·x, so it rounds to the same f32 as dot_f16's, and with the same additions the result
// is the same bits. A v128 of 8 halves at p holds half 2k + 1 in the top 16 bits of i32 lane k,
// which (h >>s 3) & 0x8FFFE000 widens (rawTop: two ops); the v128 at p − 2 holds half 2k there,
// widened the same way (one more load instead of a third op, a shift by 16: more GB/s; at a
// row's start it reads the last 2 bytes of the row's bitmap into the bits the mask clears). The
// lanes hold columns 2k and 2k+1, so the scaled activation is stored in that order (scaleX) and the
// accumulators are interleaved back into dot_f16's lanes before the final sum. Groups holding a
// half with |h| ≥ 64, Inf or NaN (stored otherwise: see P) are decoded exactly instead, found by the
// row's bitmap (dot2_f16_marked, below: no check in the hot loop; trained weights have none).
// matvec_f16 takes this path on stored rows when cols ≤ ROW_MAX (xs lives in ROW) and every
// |x| < 2^26, and runs two rows at once (more weight bytes in flight: faster at memory speed on one
// thread); stored rows otherwise take dotStored, plain rows (cols·2 bytes, only ever given by
// tests) dot_f16.

/**
 * xs[0, c16) = x·2^102 with each group of 8 columns stored as 0, 2, 4, 6, 1, 3, 5, 7; false (xs
 * unusable) when some |x| ≥ 2^26 or x is NaN.
 */
// @ts-ignore: decorator
@inline function scaleX(xs: usize, x: usize, c16: i32): bool {
  const k = f32x4.splat(5.0706024009129176e30); // 2^102
  let m = f32x4.splat(0);
  for (let i = 0; i < c16; i += 8) {
    const o = <usize>i << 2;
    const a = v128.load(x + o), b = v128.load(x + o, 16);
    m = f32x4.max(m, f32x4.max(f32x4.abs(a), f32x4.abs(b))); // NaN propagates
    v128.store(xs + o, f32x4.mul(i8x16.shuffle(a, b, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27), k));
    v128.store(xs + o, f32x4.mul(i8x16.shuffle(a, b, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31), k), 16);
  }
  m = f32x4.max(m, i8x16.shuffle(m, m, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  return f32x4.extract_lane(m, 0) < 67108864 && f32x4.extract_lane(m, 1) < 67108864; // 2^26
}

/** The halves in the top 16 bits of h's i32 lanes → half·2^-112 as f32x4 (exact unless subnormal, Inf or NaN; a stored half s = P(h) gives h·2^-102 unless marked). */
// @ts-ignore: decorator
@inline function rawTop(h: v128): v128 {
  return v128.and(i32x4.shr_s(h, 3), kv(80));
}

/** The raw dot's end: e/o accumulators back into dot_f16's lanes, the sum, the tail (stored halves) from column i. */
// @ts-ignore: decorator
@inline function rawFinish(e0: v128, o0: v128, e1: v128, o1: v128, w: usize, x: usize, i: i32, cols: i32): f32 {
  const a0 = i8x16.shuffle(e0, o0, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const a1 = i8x16.shuffle(e0, o0, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  const a2 = i8x16.shuffle(e1, o1, 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const a3 = i8x16.shuffle(e1, o1, 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  let s = hsumF(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  for (; i < cols; i++) s += storedF32(load<u16>(w + (<usize>i << 1))) * load<f32>(x + (<usize>i << 2));
  return s;
}

// ---- F16 rows as the backends store them -------------------------------------------------------
// The backends store an F16 weight row by row as markBytes(cols) of bitmap, then the row's cols·2
// bytes of halves, each half h stored as P(h), written once at load (layout_f16), and hand the
// kernels the address of row 0's halves: row r's bitmap is the markBytes before its halves, so
// matmul and dequant read the halves at the row stride as ever, and matvec reads the bitmap just
// before the row, in the same sequential stream (after the row, the bitmap was a cache miss the
// loop waits for, costing much time per token). Rows of fewer than 16 columns have no
// bitmap and keep their halves as they are (stored and plain rows are then the same).
//
// P is a permutation of the 65,536 half patterns, so every weight has one stored form and getRow
// decodes a row from its halves alone (the pool copies only those from a worker):
//   |h| < 64:            h·2^10, exactly (a subnormal m·2^-24 becomes the normal m·2^-14; ±0 stays)
//   |h| ≥ 64, finite:    h·2^-20 when h is not a multiple of 64, else h·2^-30 (a subnormal)
//   Inf, NaN:            h
// The first line fills the zeros, the halves with exponent 11..30 and the multiples of 2^-14 among
// exponents 1..10; the second the rest below 2^-4 (the patterns the first leaves free, exactly as
// many: P is P(h) = f(h) for f = ·2^10 on |h| < 64, extended to a bijection by walking back along
// f). Decoding (storedF32, decodeF): a stored value s with s·2^14 an integer, or ±Inf, is h·2^10,
// so h = s·2^-10; otherwise h = s·2^30 if |s| < 2^-14, else s·2^20 (NaN stays NaN).
// Bit g of the bitmap (u32 word g >> 5) is set when halves 16g..16g+15 hold a half with |h| ≥ 64,
// Inf or NaN: the groups the raw widening gets wrong, which matvec decodes exactly (trained weights
// have none; marking subnormal halves instead flagged too many groups).

/** Bytes of one row's bitmap: 16 per 128 groups of 16 halves (layout.ts storedRowBytes agrees). */
// @ts-ignore: decorator
@inline function markBytes(cols: i32): usize {
  return <usize>(((cols >> 4) + 127) >> 7) << 4;
}

/** True when rows of rowBytes are stored rows (bitmap, halves as P(h)) rather than plain halves. */
// @ts-ignore: decorator
@inline function isStored(rowBytes: usize, cols: i32): bool {
  const mb = markBytes(cols);
  return mb != 0 && rowBytes == (<usize>cols << 1) + mb;
}

/** P(h): the stored bits of the half h (see above). */
function storedHalf(h: u32): u32 {
  const sign = h & 0x8000, a = h & 0x7fff, e = a >> 10;
  if (a == 0 || e == 31) return h;
  if (e == 0) return sign | ((reinterpret<u32>(<f32>a * 6.103515625e-5) >> 13) - (112 << 10)); // a·2^-14, normal
  if (e <= 20) return h + (10 << 10);
  const q = (a & 0x3ff) | 0x400, sh = 31 - e; // h = q·2^(e − 25); a multiple of 64 when q % 2^sh == 0
  return (q & ((1 << sh) - 1)) == 0 ? sign | (q >> sh) : h - (20 << 10);
}

/** The weight a stored half s holds, as f32: the inverse of P, exactly. */
// @ts-ignore: decorator
@inline function storedF32(s: u32): f32 {
  const v = f16(s);
  const t = v * 16384; // 2^14
  if (t == nearest<f32>(t)) return v * 0.0009765625; // 2^-10 (±Inf too); a NaN goes below and stays NaN
  return v * (abs<f32>(v) < 6.103515625e-5 ? 1073741824 : 1048576); // 2^30, 2^20
}

/** storedF32 lane-wise, on the exactly widened stored halves v (f32x4). */
// @ts-ignore: decorator
@inline function decodeF(v: v128): v128 {
  const t = f32x4.mul(v, kv(112));
  const big = v128.bitselect(kv(144), kv(160), f32x4.lt(f32x4.abs(v), kv(128)));
  return f32x4.mul(v, v128.bitselect(big, kv(176), f32x4.ne(t, f32x4.nearest(t))));
}

/** Lanes of an i16x8 of halves with |h| ≥ 64, Inf or NaN (exponent ≥ 21) → all ones. */
// @ts-ignore: decorator
@inline function bigOrInf(h: v128): v128 {
  return i16x8.ge_u(v128.and(h, i16x8.splat(0x7fff)), i16x8.splat(0x5400));
}

/** Lanes of an i16x8 of halves that are subnormal or have |h| ≥ 64 (exponent ≥ 21) → all ones. */
// @ts-ignore: decorator
@inline function notShifted(h: v128): v128 {
  const a = v128.and(h, i16x8.splat(0x7fff));
  return v128.or(i16x8.lt_u(i16x8.sub(a, i16x8.splat(1)), i16x8.splat(0x3ff)), i16x8.ge_u(a, i16x8.splat(0x5400)));
}

/** P on the cols halves at w, in place. */
function storeHalves(w: usize, cols: i32): void {
  let i = 0;
  for (; i + 8 <= cols; i += 8) {
    const p = w + (<usize>i << 1);
    const h = v128.load(p);
    if (v128.any_true(notShifted(h))) {
      for (let j: usize = 0; j < 16; j += 2) store<u16>(p + j, storedHalf(load<u16>(p + j)));
    } else {
      // zeros and normal halves below 64: exponent + 10, zeros kept
      v128.store(p, i16x8.add(h, v128.andnot(i16x8.splat(10 << 10), i16x8.eq(v128.and(h, i16x8.splat(0x7fff)), Z))));
    }
  }
  for (; i < cols; i++) store<u16>(w + (<usize>i << 1), storedHalf(load<u16>(w + (<usize>i << 1))));
}

/**
 * One row of halves at w → f32: plain halves (ggml's row) when stored is false, else a stored row
 * (the inverse of P on every half).
 */
// @ts-ignore: decorator
@inline function widenRow(out: usize, w: usize, cols: i32, stored: bool): void {
  let i = 0;
  for (; i + 8 <= cols; i += 8) {
    const h = v128.load(w + (<usize>i << 1));
    let lo: v128, hi: v128;
    if (v128.any_true(special(h))) {
      lo = halfLo(h);
      hi = halfHi(h);
    } else {
      const b = normalBottom(h), t = normalTop(h);
      lo = normalLo(b, t);
      hi = normalHi(b, t);
    }
    v128.store(out + (<usize>i << 2), stored ? decodeF(lo) : lo);
    v128.store(out + (<usize>i << 2), stored ? decodeF(hi) : hi, 16);
  }
  for (; i < cols; i++) {
    const h = <u32>load<u16>(w + (<usize>i << 1));
    store<f32>(out + (<usize>i << 2), stored ? storedF32(h) : f16(h));
  }
}

/** W[r,:]·x for a stored row, in dot_f16's order (decoding every half: the fallback of matvec and matmul). */
// @ts-ignore: decorator
@inline function dotStored(w: usize, x: usize, cols: i32): f32 {
  return dotHalves(w, x, cols, true);
}

/** W[r,:]·x (dot_f16's bits, from xs = scaleX(x)) for rows wa and wb (bitmaps ba, bb) at once, checking nothing inside a run of clear groups. */
// @ts-ignore: decorator
@inline function dot2_f16_marked(outA: usize, outB: usize, wa: usize, wb: usize, ba: usize, bb: usize, xs: usize, x: usize, cols: i32): void {
  let e0 = f32x4.splat(0), o0 = f32x4.splat(0), e1 = f32x4.splat(0), o1 = f32x4.splat(0);
  let f0 = f32x4.splat(0), p0 = f32x4.splat(0), f1 = f32x4.splat(0), p1 = f32x4.splat(0);
  const groups = cols >> 4;
  let g = 0;
  for (let k = 0; g < groups; k++) {
    // the groups of word k either row marks; each pass runs up to the next one, then widens it exactly
    let m = load<u32>(ba + (<usize>k << 2)) | load<u32>(bb + (<usize>k << 2));
    const gEnd = min(g + 32, groups);
    while (g < gEnd) {
      const stop = m == 0 ? gEnd : (k << 5) + <i32>ctz(m);
      for (; g < stop; g++) {
        const ib = <usize>g << 5;
        const pa = wa + ib - 2, pb = wb + ib - 2; // even halves at pa, odd at pa + 2 (rawTop)
        const o = xs + (ib << 1);
        let v = v128.load(o);
        e0 = f32x4.add(e0, f32x4.mul(rawTop(v128.load(pa)), v));
        f0 = f32x4.add(f0, f32x4.mul(rawTop(v128.load(pb)), v));
        v = v128.load(o, 16);
        o0 = f32x4.add(o0, f32x4.mul(rawTop(v128.load(pa, 2)), v));
        p0 = f32x4.add(p0, f32x4.mul(rawTop(v128.load(pb, 2)), v));
        v = v128.load(o, 32);
        e1 = f32x4.add(e1, f32x4.mul(rawTop(v128.load(pa, 16)), v));
        f1 = f32x4.add(f1, f32x4.mul(rawTop(v128.load(pb, 16)), v));
        v = v128.load(o, 48);
        o1 = f32x4.add(o1, f32x4.mul(rawTop(v128.load(pa, 18)), v));
        p1 = f32x4.add(p1, f32x4.mul(rawTop(v128.load(pb, 18)), v));
      }
      if (g >= gEnd) break;
      m &= m - 1;
      const ib = <usize>g << 5;
      const a0 = v128.load(wa + ib), a1 = v128.load(wa + ib, 16);
      const b0 = v128.load(wb + ib), b1 = v128.load(wb + ib, 16);
      const o = xs + (ib << 1);
      let v = f32x4.mul(v128.load(o), kv(96)); // x itself (xs·2^-102, exact)
      e0 = f32x4.add(e0, f32x4.mul(decodeF(halfWiden(a0)), v));
      f0 = f32x4.add(f0, f32x4.mul(decodeF(halfWiden(b0)), v));
      v = f32x4.mul(v128.load(o, 16), kv(96));
      o0 = f32x4.add(o0, f32x4.mul(decodeF(f16Hi(a0)), v));
      p0 = f32x4.add(p0, f32x4.mul(decodeF(f16Hi(b0)), v));
      v = f32x4.mul(v128.load(o, 32), kv(96));
      e1 = f32x4.add(e1, f32x4.mul(decodeF(halfWiden(a1)), v));
      f1 = f32x4.add(f1, f32x4.mul(decodeF(halfWiden(b1)), v));
      v = f32x4.mul(v128.load(o, 48), kv(96));
      o1 = f32x4.add(o1, f32x4.mul(decodeF(f16Hi(a1)), v));
      p1 = f32x4.add(p1, f32x4.mul(decodeF(f16Hi(b1)), v));
      g++;
    }
  }
  store<f32>(outA, rawFinish(e0, o0, e1, o1, wa, x, groups << 4, cols));
  store<f32>(outB, rawFinish(f0, p0, f1, p1, wb, x, groups << 4, cols));
}

/** W[r,:]·x for a BF16 row, in dot_f16's order. */
// @ts-ignore: decorator
@inline function dot_bf16(w: usize, x: usize, cols: i32): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= cols; i += 16) {
    const h0 = v128.load(w + (<usize>i << 1));
    const h1 = v128.load(w + (<usize>i << 1), 16);
    const o = x + (<usize>i << 2);
    a0 = f32x4.add(a0, f32x4.mul(bf16Lo(h0), v128.load(o)));
    a1 = f32x4.add(a1, f32x4.mul(bf16Hi(h0), v128.load(o, 16)));
    a2 = f32x4.add(a2, f32x4.mul(bf16Lo(h1), v128.load(o, 32)));
    a3 = f32x4.add(a3, f32x4.mul(bf16Hi(h1), v128.load(o, 48)));
  }
  let s = hsumF(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  for (; i < cols; i++) s += reinterpret<f32>(<u32>load<u16>(w + (<usize>i << 1)) << 16) * load<f32>(x + (<usize>i << 2));
  return s;
}

/** dot_bf16 for rows wa and wb at once (two weight streams in flight, x loaded once) → outA, outB. */
// @ts-ignore: decorator
@inline function dot2_bf16(outA: usize, outB: usize, wa: usize, wb: usize, x: usize, cols: i32): void {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= cols; i += 16) {
    const ha0 = v128.load(wa + (<usize>i << 1)), ha1 = v128.load(wa + (<usize>i << 1), 16);
    const hb0 = v128.load(wb + (<usize>i << 1)), hb1 = v128.load(wb + (<usize>i << 1), 16);
    const o = x + (<usize>i << 2);
    let v = v128.load(o);
    a0 = f32x4.add(a0, f32x4.mul(bf16Lo(ha0), v));
    b0 = f32x4.add(b0, f32x4.mul(bf16Lo(hb0), v));
    v = v128.load(o, 16);
    a1 = f32x4.add(a1, f32x4.mul(bf16Hi(ha0), v));
    b1 = f32x4.add(b1, f32x4.mul(bf16Hi(hb0), v));
    v = v128.load(o, 32);
    a2 = f32x4.add(a2, f32x4.mul(bf16Lo(ha1), v));
    b2 = f32x4.add(b2, f32x4.mul(bf16Lo(hb1), v));
    v = v128.load(o, 48);
    a3 = f32x4.add(a3, f32x4.mul(bf16Hi(ha1), v));
    b3 = f32x4.add(b3, f32x4.mul(bf16Hi(hb1), v));
  }
  let s = hsumF(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  let t = hsumF(f32x4.add(f32x4.add(b0, b1), f32x4.add(b2, b3)));
  for (; i < cols; i++) {
    const xi = load<f32>(x + (<usize>i << 2));
    s += reinterpret<f32>(<u32>load<u16>(wa + (<usize>i << 1)) << 16) * xi;
    t += reinterpret<f32>(<u32>load<u16>(wb + (<usize>i << 1)) << 16) * xi;
  }
  store<f32>(outA, s);
  store<f32>(outB, t);
}

// ---- prompt matmul ----------------------------------------------------------------------------
// matmul_f16 / _bf16 widen weight rows to f32 two at a time (dequant_*: the very values dot_f16 /
// dot_bf16 multiply) into ROW and ROW2, then dot the pair with the tokens four at a time
// (tile2x4), each token's lanes adding in dot_f16's order, so every result equals matvec's bit
// for bit. dot_f16 keeps four accumulators a0-a3 per token (lanes of
// columns 16i + 4k + j); two rows × four tokens × four would need 32 registers, so the tile makes
// one pass per accumulator k with eight (one per row and token), 16 columns a step: two weight
// loads and four activation loads feed eight products, where one row against four tokens needed
// eight activation loads (two passes of two accumulators). The passes run over chunks of CHUNK
// columns, so a chunk's activations (4 · 2 KiB) and rows (2 · 2 KiB) come from L2 once and stay in
// L1 for the other three passes; the accumulators wait in TACC between chunks. The result is
// hsumF((a0 + a1) + (a2 + a3)), then the columns past the last 16 one by one.

/** Longest row matmul widens (48 KiB each for ROW, ROW2); longer rows take dot_f16 / dot_bf16 per token. */
const ROW_MAX: i32 = 12288;
/** Per-instance scratch (every thread's instance has its own memory): the two widened rows. */
const ROW: usize = memory.data(ROW_MAX << 2, 16);
const ROW2: usize = memory.data(ROW_MAX << 2, 16);
/** Columns per chunk of tile2x4. */
const CHUNK: i32 = 512;
/** tile2x4's accumulators: [k 0-3][row 0-1][token 0-3] f32x4. */
const TACC: usize = memory.data(512, 16);

/**
 * One pass of tile2x4: accumulator k of rows wa (and wb when two) with tokens x + t·xs, t < 4,
 * over columns [i0, i1) (multiples of 16), from and back to TACC.
 */
// @ts-ignore: decorator
@inline function tilePass(wa: usize, wb: usize, two: bool, x: usize, xs: usize, i0: i32, i1: i32, k: i32): void {
  const acc = TACC + (<usize>k << 7);
  let a0 = v128.load(acc), a1 = v128.load(acc, 16), a2 = v128.load(acc, 32), a3 = v128.load(acc, 48);
  let b0 = Z, b1 = Z, b2 = Z, b3 = Z;
  if (two) { b0 = v128.load(acc, 64); b1 = v128.load(acc, 80); b2 = v128.load(acc, 96); b3 = v128.load(acc, 112); }
  const x1 = x + xs, x2 = x + 2 * xs, x3 = x + 3 * xs;
  for (let o = (<usize>i0 << 2) + (<usize>k << 4), e = <usize>i1 << 2; o < e; o += 64) {
    const u = v128.load(wa + o);
    const v = two ? v128.load(wb + o) : Z;
    let xv = v128.load(x + o);
    a0 = f32x4.add(a0, f32x4.mul(u, xv));
    if (two) b0 = f32x4.add(b0, f32x4.mul(v, xv));
    xv = v128.load(x1 + o);
    a1 = f32x4.add(a1, f32x4.mul(u, xv));
    if (two) b1 = f32x4.add(b1, f32x4.mul(v, xv));
    xv = v128.load(x2 + o);
    a2 = f32x4.add(a2, f32x4.mul(u, xv));
    if (two) b2 = f32x4.add(b2, f32x4.mul(v, xv));
    xv = v128.load(x3 + o);
    a3 = f32x4.add(a3, f32x4.mul(u, xv));
    if (two) b3 = f32x4.add(b3, f32x4.mul(v, xv));
  }
  v128.store(acc, a0); v128.store(acc, a1, 16); v128.store(acc, a2, 32); v128.store(acc, a3, 48);
  if (two) { v128.store(acc, b0, 64); v128.store(acc, b1, 80); v128.store(acc, b2, 96); v128.store(acc, b3, 112); }
}

/** hsumF((a0 + a1) + (a2 + a3)) of TACC's row rr, token t, plus the tail columns [c16, cols) of w · x. */
// @ts-ignore: decorator
@inline function tileFinish(rr: usize, t: usize, w: usize, x: usize, c16: i32, cols: i32): f32 {
  const p = TACC + (rr << 6) + (t << 4);
  let s = hsumF(f32x4.add(f32x4.add(v128.load(p), v128.load(p, 128)), f32x4.add(v128.load(p, 256), v128.load(p, 384))));
  for (let i = c16; i < cols; i++) s += load<f32>(w + (<usize>i << 2)) * load<f32>(x + (<usize>i << 2));
  return s;
}

/**
 * out + 4rr + t·os = row rr (wa, and wb when two) · token t (x + t·xs) for t < 4, in dot_f16's order.
 */
// @ts-ignore: decorator
@inline function tile2x4(out: usize, os: usize, wa: usize, wb: usize, two: bool, x: usize, xs: usize, cols: i32): void {
  const c16 = cols & ~15;
  for (let p: usize = 0; p < 512; p += 16) v128.store(TACC + p, Z);
  for (let c = 0; c < c16; c += CHUNK) {
    const e = min(c + CHUNK, c16);
    for (let k = 0; k < 4; k++) tilePass(wa, wb, two, x, xs, c, e, k);
  }
  for (let t: usize = 0; t < 4; t++) {
    const xt = x + t * xs;
    store<f32>(out + t * os, tileFinish(0, t, wa, xt, c16, cols));
    if (two) store<f32>(out + t * os + 4, tileFinish(1, t, wb, xt, c16, cols));
  }
}

/** The widened row w · x for one token, in dot_f16's order. */
// @ts-ignore: decorator
@inline function dot1(w: usize, x: usize, cols: i32): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= cols; i += 16) {
    const o = <usize>i << 2;
    a0 = f32x4.add(a0, f32x4.mul(v128.load(w + o), v128.load(x + o)));
    a1 = f32x4.add(a1, f32x4.mul(v128.load(w + o, 16), v128.load(x + o, 16)));
    a2 = f32x4.add(a2, f32x4.mul(v128.load(w + o, 32), v128.load(x + o, 32)));
    a3 = f32x4.add(a3, f32x4.mul(v128.load(w + o, 48), v128.load(x + o, 48)));
  }
  let s = hsumF(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)));
  for (; i < cols; i++) s += load<f32>(w + (<usize>i << 2)) * load<f32>(x + (<usize>i << 2));
  return s;
}

/**
 * out[t·outStride + r (+ 1 when two)] = row r at wa (and row r + 1 at wb) · x_t for every token:
 * four tokens at a time through tile2x4, the rest one by one.
 */
// @ts-ignore: decorator
@inline function rowsTimesTokens(out: usize, r: i32, wa: usize, wb: usize, two: bool, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  const os = <usize>outStride << 2;
  let t = 0;
  for (; t + 4 <= n; t += 4) tile2x4(out + (<usize>(t * outStride + r) << 2), os, wa, wb, two, xq + <usize>t * xqStride, xqStride, cols);
  for (; t < n; t++) {
    const o = out + (<usize>(t * outStride + r) << 2), x = xq + <usize>t * xqStride;
    store<f32>(o, dot1(wa, x, cols));
    if (two) store<f32>(o, dot1(wb, x, cols), 4);
  }
}

/** Row w widened to f32 at dst: BF16 (bf16), or F16 stored (layout_f16) or plain (constant flags: one loop each). */
// @ts-ignore: decorator
@inline function widenHalves(bf16: bool, stored: bool, dst: usize, w: usize, cols: i32): void {
  if (bf16) dequant_bf16(dst, w, cols);
  else if (stored) widenRow(dst, w, cols, true);
  else widenRow(dst, w, cols, false);
}

/**
 * matmul_f16 / matmul_bf16: rows widened two at a time into ROW and ROW2 against the tokens
 * (rowsTimesTokens); rows longer than ROW_MAX take the one-token dot per token.
 */
// @ts-ignore: decorator
@inline function matmulHalves(bf16: bool, stored: bool, out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  if (cols > ROW_MAX) {
    for (let r = r0; r < r1; r++) {
      const wr = w + <usize>r * rowBytes;
      for (let t = 0; t < n; t++) {
        const x = xq + <usize>t * xqStride;
        store<f32>(out + (<usize>(t * outStride + r) << 2), bf16 ? dot_bf16(wr, x, cols) : stored ? dotStored(wr, x, cols) : dot_f16(wr, x, cols));
      }
    }
    return;
  }
  for (let r = r0; r < r1; r += 2) {
    const wr = w + <usize>r * rowBytes;
    widenHalves(bf16, stored, ROW, wr, cols);
    if (r + 1 == r1) {
      rowsTimesTokens(out, r, ROW, 0, false, xq, cols, n, xqStride, outStride);
      break;
    }
    widenHalves(bf16, stored, ROW2, wr + rowBytes, cols);
    rowsTimesTokens(out, r, ROW, ROW2, true, xq, cols, n, xqStride, outStride);
  }
}

// ---- exported kernels -------------------------------------------------------------------------
// matvec_T(out, w, rowBytes, r0, r1, xq, cols): out[r] = W[r,:]·x for r in [r0, r1).
// matmul_T(..., n, xqStride, outStride): out[t·outStride + r] = W[r,:]·x_t; each row is read once
// and reused for the n activations while it sits in L1.
// dequant_T(out, w, cols): one row of W → f32.

export function matvec_f32(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  // rows in STREAMS parts, two parts a call, as matvec_f16
  const q = (r1 - r0) / STREAMS;
  for (let k = 0; k < q; k++) {
    for (let g = 0; g < STREAMS; g += 2) {
      const ra = r0 + g * q + k, rb = ra + q;
      dot2_f32(out + (<usize>ra << 2), out + (<usize>rb << 2), w + <usize>ra * rowBytes, w + <usize>rb * rowBytes, xq, cols);
    }
  }
  for (let r = r0 + STREAMS * q; r < r1; r++) store<f32>(out + (<usize>r << 2), dot_f32(w + <usize>r * rowBytes, xq, cols));
}
export function matmul_f32(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  for (let r = r0; r < r1; r++) {
    const wr = w + <usize>r * rowBytes;
    for (let t = 0; t < n; t++) store<f32>(out + (<usize>(t * outStride + r) << 2), dot_f32(wr, xq + <usize>t * xqStride, cols));
  }
}
export function dequant_f32(out: usize, w: usize, cols: i32): void {
  memory.copy(out, w, <usize>cols << 2);
}

export function matvec_f16(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  if (!isStored(rowBytes, cols)) {
    for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dot_f16(w + <usize>r * rowBytes, xq, cols));
  } else if (cols <= ROW_MAX && scaleX(ROW, xq, cols & ~15)) {
    const mb = markBytes(cols); // a stored row's bitmap precedes its halves
    // the range in STREAMS parts of q rows, two parts a call (rows ra and ra + q): sequential
    // weight streams in separate pages, which the hardware prefetcher follows better than
    // adjacent rows (common.ts STREAMS); then the last rows (fewer than STREAMS) in pairs
    const q = (r1 - r0) / STREAMS;
    for (let k = 0; k < q; k++) {
      for (let g = 0; g < STREAMS; g += 2) {
        const ra = r0 + g * q + k;
        const wa = w + <usize>ra * rowBytes, wb = w + <usize>(ra + q) * rowBytes;
        dot2_f16_marked(out + (<usize>ra << 2), out + (<usize>(ra + q) << 2), wa, wb, wa - mb, wb - mb, ROW, xq, cols);
      }
    }
    for (let r = r0 + STREAMS * q; r < r1; r += 2) {
      const rb = min(r + 1, r1 - 1); // the last row alone: with itself
      const wa = w + <usize>r * rowBytes, wb = w + <usize>rb * rowBytes;
      dot2_f16_marked(out + (<usize>r << 2), out + (<usize>rb << 2), wa, wb, wa - mb, wb - mb, ROW, xq, cols);
    }
  } else {
    for (let r = r0; r < r1; r++) store<f32>(out + (<usize>r << 2), dotStored(w + <usize>r * rowBytes, xq, cols));
  }
}
/** Bytes of a row as the backends store F16 weights: the row's bitmap, then its halves (see markBytes). */
export function f16_row_bytes(cols: i32): usize {
  return (<usize>cols << 1) + markBytes(cols);
}

/**
 * Rows of halves written contiguously at p (cols·2 bytes each) → rows of f16_row_bytes(cols), each
 * a bitmap and then the halves as P(h), in place (the memory at p must hold rows · f16_row_bytes(cols)
 * bytes). The kernels then take w = p + f16_row_bytes(cols) − cols·2, row 0's halves. Rows of
 * fewer than 16 columns stay as they are.
 */
export function layout_f16(p: usize, rows: i32, cols: i32): void {
  const m = <usize>cols << 1;
  const mb = markBytes(cols);
  if (mb == 0) return;
  const rb = m + mb;
  // last row first: row r moves up by (r + 1)·mb, onto its own bytes and rows already moved
  for (let r = rows - 1; r >= 0; r--) memory.copy(p + <usize>r * rb + mb, p + <usize>r * m, m);
  const groups = cols >> 4;
  for (let r = 0; r < rows; r++) {
    const bits = p + <usize>r * rb;
    const wr = bits + mb;
    memory.fill(bits, 0, mb);
    for (let g = 0; g < groups; g++) {
      const h = wr + (<usize>g << 5);
      if (v128.any_true(v128.or(bigOrInf(v128.load(h)), bigOrInf(v128.load(h, 16))))) {
        const word = bits + (<usize>(g >> 5) << 2);
        store<u32>(word, load<u32>(word) | (<u32>1 << (g & 31)));
      }
    }
    storeHalves(wr, cols);
  }
}

export function matmul_f16(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  matmulHalves(false, isStored(rowBytes, cols), out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
/** One row of plain halves → f32 (ggml's F16 row; stored rows: dequant_row_f16). */
export function dequant_f16(out: usize, w: usize, cols: i32): void {
  widenRow(out, w, cols, false);
}
/**
 * Row r of the rows at w (rowBytes apart) → f32: the weights themselves, for stored rows (decoded
 * from the halves alone, so a copy of just the row's halves will do) and plain rows alike.
 */
export function dequant_row_f16(out: usize, w: usize, rowBytes: usize, rows: i32, r: i32, cols: i32): void {
  const wr = w + <usize>r * rowBytes;
  if (isStored(rowBytes, cols)) widenRow(out, wr, cols, true);
  else dequant_f16(out, wr, cols);
}

export function matvec_bf16(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32): void {
  // rows r0 + k and r0 + half + k together, as matvec_f16
  const half = (r1 - r0) >> 1;
  for (let r = r0; r < r0 + half; r++) {
    const rb = r + half;
    dot2_bf16(out + (<usize>r << 2), out + (<usize>rb << 2), w + <usize>r * rowBytes, w + <usize>rb * rowBytes, xq, cols);
  }
  if (((r1 - r0) & 1) != 0) store<f32>(out + (<usize>(r1 - 1) << 2), dot_bf16(w + <usize>(r1 - 1) * rowBytes, xq, cols));
}
export function matmul_bf16(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xq: usize, cols: i32, n: i32, xqStride: usize, outStride: i32): void {
  matmulHalves(true, false, out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
}
export function dequant_bf16(out: usize, w: usize, cols: i32): void {
  let i = 0;
  for (; i + 8 <= cols; i += 8) {
    const h = v128.load(w + (<usize>i << 1));
    v128.store(out + (<usize>i << 2), bf16Lo(h));
    v128.store(out + (<usize>i << 2), bf16Hi(h), 16);
  }
  for (; i < cols; i++) store<f32>(out + (<usize>i << 2), reinterpret<f32>(<u32>load<u16>(w + (<usize>i << 1)) << 16));
}
