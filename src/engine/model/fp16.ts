// Half-precision rounding, for the places where llama.cpp stores or computes in f16 and Pantheon
// rounds the same way to give the same numbers: the KV cache (F16 by default, llama-context.cpp
// type_k/type_v), flash attention's F16 query and accumulator (ggml-cpu ops.cpp
// ggml_compute_forward_flash_attn_ext_f16_one_chunk) and GELU's F16 table (ggml-cpu vec.h
// GGML_GELU_FP16). Rounding is IEEE round-to-nearest-even, as F16C's _cvtss_sh and ggml's
// software fallback both do.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE binary16 bits of the float32 nearest to `x` (round to nearest, ties to even). */
export function f32ToF16Bits(x: number): number {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const e = (b >>> 23) & 0xff;
  const m = b & 0x7fffff;
  if (e === 0xff) return sign | 0x7c00 | (m ? 0x200 : 0); // inf, nan
  const exp = e - 112; // rebias 127 → 15
  if (exp >= 0x1f) return sign | 0x7c00; // too large: inf
  if (exp <= 0) {
    // f16 subnormal (or zero): value = mant × 2^-24
    if (exp < -10) return sign;
    const mant = m | 0x800000;
    const shift = 14 - exp;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (exp << 10) | (m >>> 13);
  const rem = m & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++; // a carry into the exponent is correct (up to inf)
  return sign | h;
}

/** float value of every f16 bit pattern (256 KiB, built once). */
export const F16_TO_F32: Float32Array = (() => {
  const t = new Float32Array(65536);
  const u = new Uint32Array(t.buffer);
  for (let h = 0; h < 65536; h++) {
    const s = (h & 0x8000) << 16;
    const e = (h >> 10) & 0x1f;
    const m = h & 0x3ff;
    if (e === 0) t[h] = (s ? -1 : 1) * m * 5.960464477539063e-8; // 2^-24
    else if (e === 31) u[h] = s | 0x7f800000 | (m << 13);
    else u[h] = s | ((e + 112) << 23) | (m << 13);
  }
  return t;
})();

/** `x` rounded to the nearest f16 value, as a number. */
export function f16Round(x: number): number {
  return F16_TO_F32[f32ToF16Bits(x)];
}
