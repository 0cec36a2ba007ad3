// What the IQ2 and IQ3 WebAssembly quantisers (quantize-iq2.ts, quantize-iq3.ts) share: the sign
// bits of ggml's quantize_row_iq2_xs/xxs/s and iq3_xxs/s_impl (quant/iq-signs.ts groupSigns is the
// TypeScript reference), and the trial sums added lane by lane in the reference's order.

const zero: v128 = f32x4.splat(0);

/**
 * Bit i of group g's byte at signs + g: element 8g + i of x is not ≥ 0. With `even` (IQ2_XXS,
 * IQ2_XS, IQ3_XXS) a group with an odd count of minus signs flips its element of least w·x² (its
 * |x| at xval negated, its bit toggled) and keeps 7 bits, the 8th being the parity. x, xval and
 * weight: f32[8·ng] each.
 */
// @ts-ignore: decorator
@inline export function groupSigns(x: usize, ng: i32, even: bool, xval: usize, weight: usize, signs: usize): void {
  for (let g = 0; g < ng; g++) {
    const o = <usize>g << 5;
    const lo = i32x4.bitmask(f32x4.ge(v128.load(x + o), zero));
    const hi = i32x4.bitmask(f32x4.ge(v128.load(x + o + 16), zero));
    let s = ~(lo | (hi << 4)) & 0xff;
    if (even && (popcnt<i32>(s) & 1) != 0) {
      let imin = 0;
      let wmin: f32 = (load<f32>(weight + o) * load<f32>(x + o)) * load<f32>(x + o);
      for (let i = 1; i < 8; i++) {
        const xi = load<f32>(x + o + (<usize>i << 2));
        const ax = (load<f32>(weight + o + (<usize>i << 2)) * xi) * xi;
        if (ax < wmin) {
          wmin = ax;
          imin = i;
        }
      }
      const p = xval + o + (<usize>imin << 2);
      store<f32>(p, -load<f32>(p));
      s ^= 1 << imin;
    }
    store<u8>(signs + <usize>g, <u8>(even ? s & 127 : s));
  }
}

/**
 * [sumqx + Σ tqx, sumq2 + Σ tqq] as lanes 0 and 1, each sum adding the four lanes in order, one at
 * a time, as the reference's scalar loop does (so every float32 is its).
 */
// @ts-ignore: decorator
@inline export function addLanes(sumqx: f32, sumq2: f32, tqx: v128, tqq: v128): v128 {
  let sx = sumqx + f32x4.extract_lane(tqx, 0);
  let s2 = sumq2 + f32x4.extract_lane(tqq, 0);
  sx += f32x4.extract_lane(tqx, 1);
  s2 += f32x4.extract_lane(tqq, 1);
  sx += f32x4.extract_lane(tqx, 2);
  s2 += f32x4.extract_lane(tqq, 2);
  sx += f32x4.extract_lane(tqx, 3);
  s2 += f32x4.extract_lane(tqq, 3);
  return f32x4.replace_lane(f32x4.splat(sx), 1, s2);
}
