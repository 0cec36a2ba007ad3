// Memory bandwidth probes for bench/kernels.ts: the same engine, the same loads, no arithmetic to
// speak of, so the matvec kernels can be compared with what the memory system delivers.

/** Reads bytes [p, p + n) (n a multiple of 64) 64 bytes per step; returns a checksum so nothing is elided. */
export function mem_sum(p: usize, n: usize): i32 {
  let a = i32x4.splat(0), b = i32x4.splat(0), c = i32x4.splat(0), d = i32x4.splat(0);
  const end = p + n;
  for (let q = p; q < end; q += 64) {
    a = i32x4.add(a, v128.load(q));
    b = i32x4.add(b, v128.load(q, 16));
    c = i32x4.add(c, v128.load(q, 32));
    d = i32x4.add(d, v128.load(q, 48));
  }
  const s = i32x4.add(i32x4.add(a, b), i32x4.add(c, d));
  return i32x4.extract_lane(s, 0) ^ i32x4.extract_lane(s, 1) ^ i32x4.extract_lane(s, 2) ^ i32x4.extract_lane(s, 3);
}

/** memory.copy of n bytes. */
export function mem_copy(dst: usize, src: usize, n: usize): void {
  memory.copy(dst, src, n);
}

/**
 * The integer dot instruction's peak on this CPU: `iters` steps of twelve independent chains, each
 * step one dot per chain (relaxed build: i32x4.relaxed_dot_i8x16_i7x16_add_s, 16 multiply-adds;
 * plain: i32x4.dot_i16x8_s plus an add, 8). Returns a checksum so nothing is elided; the caller
 * times it (bench/kernels.ts --gemm: the ceiling of any prompt GEMM built on that instruction).
 */
export function dot_peak(iters: i32, seed: i32): i32 {
  const a = i8x16.splat(<i8>seed), b = i8x16.splat(<i8>(seed + 1));
  let s0 = i32x4.splat(0), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0;
  let s6 = s0, s7 = s0, s8 = s0, s9 = s0, s10 = s0, s11 = s0;
  for (let i = 0; i < iters; i++) {
    s0 = pd(a, b, s0); s1 = pd(a, b, s1); s2 = pd(a, b, s2); s3 = pd(a, b, s3);
    s4 = pd(a, b, s4); s5 = pd(a, b, s5); s6 = pd(a, b, s6); s7 = pd(a, b, s7);
    s8 = pd(a, b, s8); s9 = pd(a, b, s9); s10 = pd(a, b, s10); s11 = pd(a, b, s11);
  }
  const t = i32x4.add(i32x4.add(i32x4.add(s0, s1), i32x4.add(s2, s3)), i32x4.add(i32x4.add(s4, s5), i32x4.add(s6, s7)));
  const u = i32x4.add(t, i32x4.add(i32x4.add(s8, s9), i32x4.add(s10, s11)));
  return i32x4.extract_lane(u, 0) ^ i32x4.extract_lane(u, 3);
}

/** Multiply-adds per dot_peak step and chain: 16 relaxed, 8 plain. */
export function dot_peak_macs(): i32 {
  return ASC_FEATURE_RELAXED_SIMD ? 16 : 8;
}

// @ts-ignore: decorator
@inline function pd(a: v128, b: v128, s: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, s);
  return i32x4.add(s, i32x4.dot_i16x8_s(a, b));
}

/**
 * Reads bytes [p, p + n) as k sequential streams of n/k bytes each (n a multiple of 64·k), 64 bytes
 * of each per step: what one thread gets from memory with k streams at once (bench/kernels.ts; why
 * the matvecs read STREAMS of them, common.ts). Returns a checksum so nothing is elided.
 */
export function mem_sum_streams(p: usize, n: usize, k: i32): i32 {
  let a = i32x4.splat(0);
  const len = n / <usize>k;
  for (let q: usize = 0; q < len; q += 64) {
    for (let s = 0; s < k; s++) {
      const b = p + <usize>s * len + q;
      a = i32x4.add(a, i32x4.add(i32x4.add(v128.load(b), v128.load(b, 16)), i32x4.add(v128.load(b, 32), v128.load(b, 48))));
    }
  }
  return i32x4.extract_lane(a, 0) ^ i32x4.extract_lane(a, 3);
}
