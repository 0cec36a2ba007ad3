// Bit-level comparison of kernel outputs with a reference, shared by the bit-exactness tests.

/** The f32 bit patterns of v. */
export const bits = (v: ArrayLike<number>): number[] => [...new Uint32Array(Float32Array.from(v).buffer)];

/** Index of the first output whose f32 bits differ from the reference's (any NaN equals any NaN), or −1. */
export function firstBitMismatch(mine: ArrayLike<number>, ref: ArrayLike<number>): number {
  const a = bits(mine), b = bits(ref);
  return a.findIndex((x, j) => x !== b[j] && !(Number.isNaN(mine[j]) && Number.isNaN(ref[j])));
}
