// Activation quantisation: f32 x[cols] → the weight type's vec_dot_type (ggml type_traits_cpu), done
// once per matvec. Layouts are described in common.ts. Numbers follow what llama.cpp runs on x86
// (byte for byte the scalar quantizeActQ8_0 / quantizeActQ8_1 / quantizeQ8K in src/engine/quant):
//   Q8_0  ggml-cpu/arch/x86/quants.c quantize_row_q8_0 (AVX2 branch): d = amax/127 stored as f16,
//         q = round-half-even(x·(127/amax))  (not the reference's roundf(x·(1/d)))
//   Q8_1  quantize_row_q8_1 (AVX2 branch): same, plus s = f16(d·Σq)
//   Q8_K  quantize_row_q8_K = ggml-quants.c quantize_row_q8_K_ref: iscale = −127/max (max = the
//         element of largest |x|), q = min(127, nearest_int(x·iscale)) (ties to even),
//         d = 1/iscale kept as f32, bsums = Σq per 16 lanes

import { f16, f32ToF16, q8Aux, q8Scales, qKBsums, qKScales } from './common';

/** Bytes the quantised activation of `cols` elements takes for activation kind `act` (see ACT_*). */
export function act_bytes(act: i32, cols: i32): i32 {
  if (act == ACT_Q8_0 || act == ACT_Q8_1) return cols + (cols >> 5) * 8;
  if (act == ACT_Q8_K) return cols + (cols >> 8) * 4 + (cols >> 4) * 2;
  return cols * 4;
}

export const ACT_F32: i32 = 0;
export const ACT_Q8_0: i32 = 3;
export const ACT_Q8_1: i32 = 4;
export const ACT_Q8_K: i32 = 5;

/** xq = x (F32 weights take the activation as it is). */
export function quantize_f32(xq: usize, x: usize, cols: i32): void {
  memory.copy(xq, x, <usize>cols << 2);
}

/** Shared body of q8_0 / q8_1: returns nothing, writes qs, d and (q8_1 ? s : Σq). */
// @ts-ignore: decorator
@inline function quantizeQ8(xq: usize, x: usize, cols: i32, withS: bool): void {
  const nb = cols >> 5;
  const dp = q8Scales(xq, cols);
  const ap = q8Aux(xq, cols);
  for (let b = 0; b < nb; b++) {
    const xb = x + (<usize>b << 7);
    let amax: f32 = 0;
    for (let j = 0; j < 32; j++) amax = max<f32>(amax, abs<f32>(load<f32>(xb + (<usize>j << 2))));
    const d: f32 = amax / 127;
    const id: f32 = amax != 0 ? <f32>127.0 / amax : 0;
    let sum: i32 = 0;
    const qb = xq + (<usize>b << 5);
    for (let j = 0; j < 32; j++) {
      const q = <i32>nearest<f32>(load<f32>(xb + (<usize>j << 2)) * id);
      store<i8>(qb + j, <i8>q);
      sum += q;
    }
    store<f32>(dp + (<usize>b << 2), f16(f32ToF16(d)));
    if (withS) store<f32>(ap + (<usize>b << 2), f16(f32ToF16(<f32>sum * d)));
    else store<i32>(ap + (<usize>b << 2), sum);
  }
}

export function quantize_q8_0(xq: usize, x: usize, cols: i32): void {
  quantizeQ8(xq, x, cols, false);
}

export function quantize_q8_1(xq: usize, x: usize, cols: i32): void {
  quantizeQ8(xq, x, cols, true);
}

export function quantize_q8_K(xq: usize, x: usize, cols: i32): void {
  const nb = cols >> 8;
  const dp = qKScales(xq, cols);
  const bp = qKBsums(xq, cols);
  for (let b = 0; b < nb; b++) {
    const xb = x + (<usize>b << 10);
    const qb = xq + (<usize>b << 8);
    let amax: f32 = 0;
    let mx: f32 = 0;
    for (let j = 0; j < 256; j++) {
      const v = load<f32>(xb + (<usize>j << 2));
      if (abs<f32>(v) > amax) {
        amax = abs<f32>(v);
        mx = v;
      }
    }
    if (amax == 0) {
      store<f32>(dp + (<usize>b << 2), 0);
      memory.fill(qb, 0, 256);
      for (let g = 0; g < 16; g++) store<i16>(bp + (<usize>(b * 16 + g) << 1), 0);
      continue;
    }
    const iscale: f32 = <f32>-127.0 / mx;
    for (let g = 0; g < 16; g++) {
      let sum: i32 = 0;
      for (let j = g * 16; j < g * 16 + 16; j++) {
        const q = min<i32>(127, <i32>nearest<f32>(iscale * load<f32>(xb + (<usize>j << 2))));
        store<i8>(qb + j, <i8>q);
        sum += q;
      }
      store<i16>(bp + (<usize>(b * 16 + g) << 1), <i16>sum);
    }
    store<f32>(dp + (<usize>b << 2), <f32>1.0 / iscale);
  }
}
