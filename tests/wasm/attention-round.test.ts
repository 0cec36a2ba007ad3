// The attention kernel's f32 → nearest-half rounding (assembly/attention.ts roundHalf, exported as
// round_half, and the fast pass's roundHalfFinite, round_half_finite, on |x| < 65520) against fp16.ts's roundF16 (IEEE binary16, ties to even; checked on hand-worked values
// in tests/model/ops.test.ts), on bit patterns chosen so that every case of the rounding is reached:
//  - every exponent (f32 subnormals, f16 subnormals, normals, overflow, inf/NaN) and both signs,
//    with all 2^14 patterns of the mantissa bits the rounding looks at (the 13 it drops and the one
//    it keeps for ties to even) under four patterns of the upper 9 (all zeros, all ones: the carry
//    into the exponent, and two others);
//  - every f32 of the four binades where the rounding changes regime: [2^-24, 2^-23) (the smallest
//    half steps), [2^-15, 2^-14) (the largest subnormal halves) and [2^-14, 2^-13) (the smallest
//    normal ones), and [2^15, 2^16) (the largest halves, and overflow from 65520).
import { describe, expect, it } from 'vitest';
import { roundF16 } from '../../src/engine/quant/half.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';

const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));
const CHUNK = 1 << 20;
const xp = k.arena.alloc(CHUNK * 4);
const rp = k.arena.alloc(CHUNK * 4);

/**
 * Round the f32 bit patterns in `bits` in the kernel (round_half, or round_half_finite, which is
 * only asked about |x| < 65520); the first mismatch, or null.
 */
function firstMismatch(bits: Uint32Array, fn = 'round_half'): [number, number, number] | null {
  const x = new Float32Array(bits.buffer, bits.byteOffset, bits.length);
  for (let o = 0; o < bits.length; o += CHUNK) {
    const n = Math.min(CHUNK, bits.length - o);
    new Uint32Array(k.arena.memory.buffer, xp, n).set(bits.subarray(o, o + n));
    k.call(fn, rp, xp, n);
    const r = k.arena.f32(rp, n);
    for (let i = 0; i < n; i++) {
      if (fn === 'round_half_finite' && !(Math.abs(x[o + i]) < 65520)) continue;
      const want = roundF16(x[o + i]);
      const got = r[i];
      if (got !== want && !(Number.isNaN(got) && Number.isNaN(want))) return [x[o + i], got, want];
      // a zero keeps its sign
      if (got === 0 && Object.is(got, -0) !== Object.is(want, -0)) return [x[o + i], got, want];
    }
  }
  return null;
}

describe('round_half (f32 → nearest half, as f32)', () => {
  it('every exponent and sign, all 2^14 patterns of the low mantissa bits', () => {
    const highs = [0, 0x1ff, 0x0a5, 0x15a];
    const bits = new Uint32Array(2 * 256 * highs.length * 16384);
    let n = 0;
    for (const sign of [0, 0x80000000])
      for (let e = 0; e < 256; e++)
        for (const hi of highs) for (let lo = 0; lo < 16384; lo++) bits[n++] = (sign | (e << 23) | (hi << 14) | lo) >>> 0;
    expect(firstMismatch(bits)).toBeNull();
    expect(firstMismatch(bits, 'round_half_finite')).toBeNull();
  });

  it('every f32 in [2^-24, 2^-23), [2^-15, 2^-13) and [2^15, 2^16)', () => {
    const bits = new Uint32Array(1 << 23);
    for (const e of [103, 112, 113, 142]) {
      for (let m = 0; m < 1 << 23; m++) bits[m] = (e << 23) | m;
      expect(firstMismatch(bits)).toBeNull();
      expect(firstMismatch(bits, 'round_half_finite')).toBeNull();
    }
  });
});
