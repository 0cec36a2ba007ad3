// Kernels against hand-worked values.

import { describe, expect, it } from 'vitest';
import { f32ToF16Bits, roundF16 } from '../../src/engine/quant/half.js';
import { gelu, geluTanh, layernorm, rmsnorm, rope, ropeCache } from '../../src/engine/model/ops.js';

describe('f16 rounding', () => {
  it('rounds to nearest, ties to even, with overflow and subnormals (IEEE 754 binary16)', () => {
    expect(f32ToF16Bits(1)).toBe(0x3c00);
    expect(f32ToF16Bits(-2)).toBe(0xc000);
    expect(f32ToF16Bits(65504)).toBe(0x7bff); // largest half
    expect(f32ToF16Bits(65520)).toBe(0x7c00); // halfway to 2^16 rounds up to inf
    expect(f32ToF16Bits(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(f32ToF16Bits(2 ** -25)).toBe(0x0000); // half of it: tie to even (0)
    expect(f32ToF16Bits(3 * 2 ** -25)).toBe(0x0002); // 1.5 × smallest: tie to even (2)
    expect(f32ToF16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie between 1 and 1+2^-10: even
    expect(f32ToF16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie between 1+2^-10 and 1+2^-9: even
    expect(roundF16(0.1)).toBe(0.0999755859375); // 0x2e66
  });
});

describe('norms', () => {
  it('rmsnorm: [3, 4] → mean square 12.5', () => {
    const out = new Float32Array(2);
    rmsnorm(out, new Float32Array([3, 4]), new Float32Array([1, 2]), 0, 2);
    expect(out[0]).toBeCloseTo(3 / Math.sqrt(12.5), 6);
    expect(out[1]).toBeCloseTo((2 * 4) / Math.sqrt(12.5), 6);
  });
  it('layernorm: [1, 3] → mean 2, variance 1', () => {
    const out = new Float32Array(2);
    layernorm(out, new Float32Array([1, 3]), new Float32Array([2, 2]), new Float32Array([0.5, 0.5]), 0, 2);
    expect(Array.from(out)).toEqual([-1.5, 2.5]);
  });
});

describe('rope', () => {
  it('rotates pairs by pos · base^(-2i/n): norm pairs neighbours, neox pairs halves', () => {
    const cache = new Float32Array(4);
    ropeCache(cache, 1, 4, 100, 1, null); // θ0 = 1, θ1 = 100^(-1/2) = 0.1
    const norm = new Float32Array([1, 0, 1, 0]);
    rope(norm, 0, cache, 4, 'norm');
    expect(norm[0]).toBeCloseTo(Math.cos(1), 6);
    expect(norm[1]).toBeCloseTo(Math.sin(1), 6);
    expect(norm[2]).toBeCloseTo(Math.cos(0.1), 6);
    expect(norm[3]).toBeCloseTo(Math.sin(0.1), 6);
    const neox = new Float32Array([1, 1, 0, 0]);
    rope(neox, 0, cache, 4, 'neox');
    expect(neox[0]).toBeCloseTo(Math.cos(1), 6);
    expect(neox[2]).toBeCloseTo(Math.sin(1), 6);
    expect(neox[1]).toBeCloseTo(Math.cos(0.1), 6);
    expect(neox[3]).toBeCloseTo(Math.sin(0.1), 6);
  });
});

describe('gelu', () => {
  it('is the tanh approximation at f16 inputs, clamped outside ±10 (ggml GGML_GELU_FP16)', () => {
    expect(geluTanh(1)).toBeCloseTo(0.8411920, 6); // 0.5·(1 + tanh(√(2/π)·1.044715))
    expect(gelu(1)).toBe(roundF16(geluTanh(1)));
    expect(gelu(-11)).toBe(0);
    expect(gelu(12.5)).toBe(12.5);
  });
});
