// The Q3_K weight quantiser (ggml-quants.c quantize_row_q3_K_ref), bit for bit the scalar
// reference's (quant/q3k.ts quantizeQ3KRef): make_q3_quants per group of 16 (kscales.ts), 6-bit
// group scales, requantisation, the high-bit mask and the 2-bit packing.
// Block (110 bytes): u8 hmask[32] | u8 qs[64] | u8 scales[12] | f16 d.

import { f16, f32ToF16 } from './common';
import { clampf, kscale_q3 } from './kscales';

const MAGIC: f32 = 12582912.0;

/** Group j's signed scale (sc - 32) from the 12 packed bytes at s. */
// @ts-ignore: decorator
@inline function scaleAt(s: usize, j: i32): i32 {
  const low = j < 8 ? <i32>load<u8>(s + <usize>j) & 0xf : <i32>load<u8>(s + <usize>(j - 8)) >> 4;
  const high = (<i32>load<u8>(s + 8 + <usize>(j % 4)) >> (2 * (j >> 2))) & 3;
  return (low | (high << 4)) - 32;
}

/** quantize_row_q3_K_ref of x[0..n) (n a multiple of 256) into dst; aux: 320 bytes of scratch. */
export function quantize_row_q3_K_ref(dst: usize, x: usize, n: i32, aux: usize): void {
  const L = aux;
  const scales = aux + 256;
  for (let i = 0; i < n; i += 256, x += 1024, dst += 110) {
    for (let j = 0; j < 16; j++) store<f32>(scales + (<usize>j << 2), kscale_q3(16, 4, x + (<usize>j << 6), L + (<usize>j << 4), 1));
    let amax: f32 = 0;
    let maxScale: f32 = 0;
    for (let j = 0; j < 16; j++) {
      const v = load<f32>(scales + (<usize>j << 2));
      if (abs<f32>(v) > amax) { amax = abs<f32>(v); maxScale = v; }
    }
    const s = dst + 96;
    memory.fill(s, 0, 12);
    if (maxScale != 0 && maxScale == maxScale) {
      const iscale: f32 = <f32>-32 / maxScale;
      for (let j = 0; j < 16; j++) {
        let l = (<i32>((iscale * load<f32>(scales + (<usize>j << 2)) + MAGIC) - MAGIC) << 24) >> 24;
        l = max<i32>(-32, min<i32>(31, l)) + 32;
        if (j < 8) store<u8>(s + <usize>j, <u8>(l & 0xf));
        else store<u8>(s + <usize>(j - 8), load<u8>(s + <usize>(j - 8)) | <u8>((l & 0xf) << 4));
        l >>= 4;
        store<u8>(s + 8 + <usize>(j % 4), load<u8>(s + 8 + <usize>(j % 4)) | <u8>(l << (2 * (j >> 2))));
      }
      store<u16>(dst + 108, <u16>f32ToF16(<f32>1 / iscale));
    } else {
      store<u16>(dst + 108, 0);
    }
    const dAll = f16(load<u16>(dst + 108));
    for (let j = 0; j < 16; j++) {
      const d: f32 = dAll * <f32>scaleAt(s, j);
      if (!(d != 0 && d == d)) continue;
      for (let ii = 0; ii < 16; ii++) {
        const l = (load<f32>(x + (<usize>(16 * j + ii) << 2)) / d + MAGIC) - MAGIC;
        store<i8>(L + <usize>(16 * j + ii), <i8><i32>(clampf(l, -4, 3) + 4));
      }
    }
    memory.fill(dst, 0, 32);
    let m = 0;
    let hm = 1;
    for (let j = 0; j < 256; j++) {
      const lj = load<i8>(L + <usize>j);
      if (lj > 3) {
        store<u8>(dst + <usize>m, load<u8>(dst + <usize>m) | <u8>hm);
        store<i8>(L + <usize>j, lj - 4);
      }
      if (++m == 32) {
        m = 0;
        hm <<= 1;
      }
    }
    for (let j = 0; j < 256; j += 128) {
      for (let l = 0; l < 32; l++) {
        const p = L + <usize>(j + l);
        store<u8>(dst + 32 + <usize>(j / 4 + l), <u8>(<u32>load<u8>(p) | (<u32>load<u8>(p + 32) << 2) | (<u32>load<u8>(p + 64) << 4) | (<u32>load<u8>(p + 96) << 6)));
      }
    }
  }
}
