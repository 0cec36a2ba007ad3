// The scale searches ggml's quantisers use when they are given an importance matrix
// (ggml-quants.c make_qkx3_quants, make_qp_quants). Same float32 rounding at each step as ggml
// (fr after every operation), so the chosen levels match byte for byte. Arrays carry an element
// offset so callers never allocate per group.

import { fr, nearestInt } from './half.js';
import { GROUP_MAX_EPS, makeQkx2Quants } from './kscales.js';
import { kernelFits, scaleKernel } from './quant-kernel.js';

const F01 = fr(0.1);

/**
 * make_qkx3_quants with weights: the same search as make_qkx2_quants (the min/max fit, nstep+1
 * trial scales refit by weighted least squares, the lowest weighted error wins); ggml's only
 * difference, `max <= min` for `max == min`, is the same test since min ≤ max. So it is
 * makeQkx2Quants (kscales.ts), kernel and reference.
 */
export const makeQkx3Quants = makeQkx2Quants;

/**
 * Unsigned levels L ∈ [0, nmax] for non-negative x ≈ scale·L (make_qp_quants): 9 trial scales
 * around nmax/max by weighted squared error, then up to 5 passes moving single levels while the
 * weighted fit improves. Used for the 4- and 6-bit scales of the K-quant super-blocks. Returns the scale.
 */
export function makeQpQuantsRef(n: number, nmax: number, x: Float32Array, L: Uint8Array, qw: Float32Array): number {
  let max = 0;
  for (let i = 0; i < n; i++) max = Math.max(max, x[i]);
  if (max < GROUP_MAX_EPS) {
    L.fill(0, 0, n);
    return 0;
  }
  let iscale = fr(nmax / max);
  const scale = fr(1 / iscale);
  let bestMse = 0;
  for (let i = 0; i < n; i++) {
    // ggml stores this l in the uint8 L and reads it back: a negative x (IQ2_XXS's sign-flipped element) wraps
    const l = nearestInt(fr(iscale * x[i])) & 255;
    const diff = fr(x[i] - fr(scale * l));
    bestMse = fr(bestMse + fr(fr(qw[i] * diff) * diff));
  }
  for (let is = -4; is <= 4; is++) {
    if (is === 0) continue;
    const iscaleIs = fr(fr(fr(F01 * is) + nmax) / max);
    const scaleIs = fr(1 / iscaleIs);
    let mse = 0;
    for (let i = 0; i < n; i++) {
      const l = Math.min(nmax, nearestInt(fr(iscaleIs * x[i])));
      const diff = fr(x[i] - fr(scaleIs * l));
      mse = fr(mse + fr(fr(qw[i] * diff) * diff));
    }
    if (mse < bestMse) {
      bestMse = mse;
      iscale = iscaleIs;
    }
  }
  let sumlx = 0;
  let suml2 = 0;
  for (let i = 0; i < n; i++) {
    const l = Math.min(nmax, nearestInt(fr(iscale * x[i])));
    L[i] = l;
    const w = qw[i];
    sumlx = fr(sumlx + fr(fr(w * x[i]) * l));
    suml2 = fr(suml2 + fr(fr(w * l) * l));
  }
  for (let itry = 0; itry < 5; itry++) {
    let changed = 0;
    for (let i = 0; i < n; i++) {
      const w = qw[i];
      const li = L[i];
      let slx = fr(sumlx - fr(fr(w * x[i]) * li));
      let sl2 = fr(suml2 - fr(fr(w * li) * li));
      if (slx > 0 && sl2 > 0) {
        const nl = Math.min(nmax, nearestInt(fr(fr(x[i] * sl2) / slx)));
        if (nl !== li) {
          slx = fr(slx + fr(fr(w * x[i]) * nl));
          sl2 = fr(sl2 + fr(fr(w * nl) * nl));
          if (fr(fr(slx * slx) * suml2) > fr(fr(sumlx * sumlx) * sl2)) {
            L[i] = nl;
            sumlx = slx;
            suml2 = sl2;
            changed++;
          }
        }
      }
    }
    if (!changed) break;
  }
  return suml2 > 0 ? fr(sumlx / suml2) : 0;
}

/** makeQpQuantsRef's result, by the WebAssembly kernel when there is one (quant-kernel.ts). */
export function makeQpQuants(n: number, nmax: number, x: Float32Array, L: Uint8Array, qw: Float32Array): number {
  const k = kernelFits(n) ? scaleKernel() : null;
  if (!k) return makeQpQuantsRef(n, nmax, x, L, qw);
  const f = k.f32;
  for (let i = 0; i < n; i++) {
    f[k.x + i] = x[i];
    f[k.w + i] = qw[i];
  }
  const scale = k.qp(n, nmax, k.addr.x, k.addr.L, k.addr.w);
  const u8 = k.u8;
  for (let i = 0; i < n; i++) L[i] = u8[k.L + i];
  return scale;
}
