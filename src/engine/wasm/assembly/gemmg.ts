// The tiling loop of the prompt GEMMs that read grouped rows in place (q4k-gemm.ts for Q4_K,
// q6k-gemm.ts for Q6_K; relaxed build): GEMMG_GROUPS groups of four rows (4·rowBytes each; 128 KiB
// of Q4_K at 14336 columns) stay in L2 while each group of four tokens passes over them, its
// activations in L1. The kernels differ only in their tile (one group against four tokens) and in
// the per-token pointer it takes: the activation bytes (Q4_K) or the activations' bsums (Q6_K).
// The last rows % 4, which stay in ggml's layout, go through the matvec per token.

import { qKBsums } from './common';
import { matvec_q4_K, matvec_q6_K } from './kquants';
import { WIDE_SRC, WQ8_K_BLOCK, tiles16, tiles32 } from './q4k-gemm';
import { q4kDot32 } from './q4k-group';
import { tile6 } from './q6k-gemm';

/** Groups of rows that stay in L2 while the token groups pass. */
const GEMMG_GROUPS: i32 = 4;
/** The tiles: Q4_K with the i32 dot (AVX-VNNI), Q4_K with i16 dots, Q6_K. */
const TILE_Q4_K_32 = 0, TILE_Q4_K_16 = 1, TILE_Q6_K = 2;
/** A partial first group's results (four tokens × four rows) before the rows in range are stored. */
const PART: usize = memory.data(64, 16);

/** One group at g against four tokens (p0 … p3: their pointers, as the tile wants them): token t's four rows stored at o + t·os (t < live). */
// @ts-ignore: decorator
@inline function tile(kind: i32, o: usize, os: usize, live: i32, g: usize, p0: usize, p1: usize, p2: usize, p3: usize, xw: usize, nb: i32): void {
  if (kind == TILE_Q6_K) tile6(o, os, live, g, p0, p1, p2, p3, xw, nb);
  else if (kind == TILE_Q4_K_32) tiles32(o, os, live, g, p0, p1, p2, p3, xw, nb);
  else tiles16(o, os, live, g, p0, p1, p2, p3, xw, nb);
}

/**
 * out[t·outStride + r] = row r · x_t for the rows r in [r0, r1) and t < n, from the widened batch
 * at xw (token t's pointer for the tile: p + t·xStride): the grouped rows below r1 & ~3 by tiles (a
 * partial first group is computed whole and its rows in range stored), ggml's rows after them by
 * the matvec per token.
 */
function gemmG(kind: i32, out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32, p: usize): void {
  const end = r1 & ~3;
  const g0 = r0 & ~3;
  const nb = cols >> 8;
  const xs = <usize>load<u32>(xw, WIDE_SRC + 4);
  const os = <usize>outStride << 2;
  const tg = (n + 3) >> 2;
  for (let c0 = g0; c0 < end; c0 += 4 * GEMMG_GROUPS) {
    const c1 = min<i32>(end, c0 + 4 * GEMMG_GROUPS);
    for (let k = 0; k < tg; k++) {
      const live = min<i32>(4, n - 4 * k);
      // tokens past n read the last token's bytes (their widened d and sums are zero; not stored)
      const t0 = 4 * k;
      const p0 = p + <usize>t0 * xs;
      const p1 = p + <usize>min<i32>(t0 + 1, n - 1) * xs, p2 = p + <usize>min<i32>(t0 + 2, n - 1) * xs, p3 = p + <usize>min<i32>(t0 + 3, n - 1) * xs;
      const wk = xw + <usize>(k * nb) * WQ8_K_BLOCK;
      const ok = out + <usize>t0 * os;
      for (let g = c0; g < c1; g += 4) {
        const gp = w + <usize>g * rowBytes;
        if (g < r0) {
          tile(kind, PART, 16, live, gp, p0, p1, p2, p3, wk, nb);
          for (let t = 0; t < live; t++) {
            for (let r = r0; r < g + 4; r++) store<f32>(ok + <usize>t * os + (<usize>r << 2), load<f32>(PART + (<usize>t << 4) + (<usize>(r - g) << 2)));
          }
        } else tile(kind, ok + (<usize>g << 2), os, live, gp, p0, p1, p2, p3, wk, nb);
      }
    }
  }
  // ggml's last rows (r1 & ~3 … r1), or the whole range when it lies there
  const e = max<i32>(r0, end);
  if (e >= r1) return;
  const xq = <usize>load<u32>(xw, WIDE_SRC);
  for (let t = 0; t < n; t++) {
    const o = out + (<usize>(t * outStride) << 2), x = xq + <usize>t * xs;
    if (kind == TILE_Q6_K) matvec_q6_K(o, w, rowBytes, e, r1, x, cols);
    else matvec_q4_K(o, w, rowBytes, e, r1, x, cols);
  }
}

/** gemmG for Q4_K (q4k-gemm.ts's tiles): token t's activation bytes are the widened batch's source row t. */
export function gemmG_q4_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32): void {
  const kind = q4kDot32() ? TILE_Q4_K_32 : TILE_Q4_K_16;
  gemmG(kind, out, w, rowBytes, r0, r1, xw, cols, n, outStride, <usize>load<u32>(xw, WIDE_SRC));
}

/** gemmG for Q6_K (q6k-gemm.ts's tile): token t's pointer is its bsums, for the −32 offset. */
export function gemmG_q6_K(out: usize, w: usize, rowBytes: usize, r0: i32, r1: i32, xw: usize, cols: i32, n: i32, outStride: i32): void {
  gemmG(TILE_Q6_K, out, w, rowBytes, r0, r1, xw, cols, n, outStride, qKBsums(<usize>load<u32>(xw, WIDE_SRC), cols));
}
