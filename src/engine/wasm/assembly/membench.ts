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
