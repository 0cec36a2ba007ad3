// Q4_0 weights in groups of four rows (relaxed build), written once at load by layout_q4_0.
//
// Rows 4g … 4g+3 of a tensor (g < rows/4) become one group of the same 4·rowBytes bytes, at the
// same place; per block b, at 72·b in the group:
//   d[4] f16 (rows 0-3) | 64 B quants: vector j (j < 4) = qs[4j … 4j+3] of row 0, of row 1, 2, 3
// so lo4(vector j) holds elements 4j … 4j+3 of each row, one row per i32 lane, and hi4 elements
// 16+4j …: one relaxed dot with the activation's four bytes broadcast gives each row's partial sum
// in its own lane (legacy.ts dotG_q4_0), with no horizontal sum of four rows. The last rows % 4 rows
// stay in ggml's layout. The plain build keeps ggml's layout throughout (its i16 dots pair adjacent
// bytes, which the transposed vectors do not help); layout_q4_0 then only moves the bytes.

/** Bytes of one group's block: four f16 scales and four rows' 16 quant bytes. */
export const Q4G_BLOCK: usize = 72;

/** True when this build stores Q4_0 in groups of four rows. */
// @ts-ignore: decorator
@inline export function q4Grouped(): bool {
  return ASC_FEATURE_RELAXED_SIMD;
}

/**
 * The 16 quant bytes of row k (k < 4) of the group block at a, as ggml stores them (byte i: elements
 * i, i + 16): the four u32 at a + 8 + 16j + 4k, j < 4.
 */
// @ts-ignore: decorator
@inline export function q4gQs(a: usize, k: usize): v128 {
  const p = a + 8 + (k << 2);
  let v = v128.load32_zero(p);
  v = v128.load32_lane(p + 16, v, 1);
  v = v128.load32_lane(p + 32, v, 2);
  return v128.load32_lane(p + 48, v, 3);
}

/**
 * dst ← the rows × cols Q4_0 tensor at src (ggml's rows) in the build's layout. src must not
 * overlap dst's first 4·rowBytes bytes' reach: src ≥ dst + 4·rowBytes (the backends fill the rows
 * one group further on and lay them out forward: group g is written over source group g − 1, read
 * already), or src + rows·rowBytes ≤ dst.
 */
export function layout_q4_0(dst: usize, src: usize, rows: i32, cols: i32): void {
  const nb = cols >> 5;
  const rb = <usize>nb * 18;
  let done = 0;
  if (q4Grouped()) {
    for (let g = 0; g + 4 <= rows; g += 4) {
      const s = src + <usize>g * rb, d = dst + <usize>g * rb;
      for (let b = 0; b < nb; b++) {
        const a = d + <usize>b * Q4G_BLOCK;
        const s0 = s + <usize>b * 18, s1 = s0 + rb, s2 = s1 + rb, s3 = s2 + rb;
        // the four rows' qs as u32 lanes r0..r3, transposed: vector j = lane j of each row
        const q0 = v128.load(s0, 2), q1 = v128.load(s1, 2), q2 = v128.load(s2, 2), q3 = v128.load(s3, 2);
        const l01 = i32x4.shuffle(q0, q1, 0, 4, 1, 5), h01 = i32x4.shuffle(q0, q1, 2, 6, 3, 7);
        const l23 = i32x4.shuffle(q2, q3, 0, 4, 1, 5), h23 = i32x4.shuffle(q2, q3, 2, 6, 3, 7);
        store<u64>(a, <u64>load<u16>(s0) | (<u64>load<u16>(s1) << 16) | (<u64>load<u16>(s2) << 32) | (<u64>load<u16>(s3) << 48));
        v128.store(a, i64x2.shuffle(l01, l23, 0, 2), 8);
        v128.store(a, i64x2.shuffle(l01, l23, 1, 3), 24);
        v128.store(a, i64x2.shuffle(h01, h23, 0, 2), 40);
        v128.store(a, i64x2.shuffle(h01, h23, 1, 3), 56);
      }
      done = g + 4;
    }
  }
  memory.copy(dst + <usize>done * rb, src + <usize>done * rb, <usize>(rows - done) * rb);
}
