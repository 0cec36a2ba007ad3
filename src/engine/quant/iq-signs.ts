// The sign handling the grid quantisers share (ggml-quants.c quantize_row_iq2_*_impl, iq3_*_impl):
// a group of 8 stored as |x| with sign bits.

import { fr } from './half.js';

/**
 * |x| of group k (8 elements at x[xb + 8k]) into xval[8k..] and its sign bits; with `even`, an odd count
 * of minus signs flips the sign of the element of least weight·x² (7 stored bits imply the 8th).
 */
export function groupSigns(xval: Float32Array, weight: Float32Array, x: Float32Array, xb: number, k: number, even: boolean): number {
  let nflip = 0;
  let s = 0;
  for (let i = 0; i < 8; i++) {
    const v = x[xb + 8 * k + i];
    if (v >= 0) xval[8 * k + i] = v;
    else {
      xval[8 * k + i] = -v;
      nflip++;
      s |= 1 << i;
    }
  }
  if (even && nflip % 2) {
    let imin = 0;
    let min = fr(fr(weight[8 * k] * x[xb + 8 * k]) * x[xb + 8 * k]);
    for (let i = 1; i < 8; i++) {
      const ax = fr(fr(weight[8 * k + i] * x[xb + 8 * k + i]) * x[xb + 8 * k + i]);
      if (ax < min) {
        min = ax;
        imin = i;
      }
    }
    xval[8 * k + imin] = -xval[8 * k + imin];
    s ^= 1 << imin;
  }
  return even ? s & 127 : s;
}
