// Activation quantisation as llama.cpp runs it on x86 (ggml-cpu/arch/x86/quants.c): Q8_0/Q8_1 use
// id = 127/amax and round x·id half to even (_mm256_round_ps, _MM_ROUND_NEAREST); Q8_K is
// quantize_row_q8_K_ref, whose nearest_int also rounds half to even. The weight quantisers keep
// ggml's reference (id = 1/d, roundf: ties away from zero). Worked by hand below.
import { describe, expect, it } from 'vitest';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { quantizeActivation, quantizeRow } from '../../src/engine/quant/index.js';

const i8 = (b: Uint8Array): number[] => Array.from(new Int8Array(b.buffer, b.byteOffset, b.length));

describe('Q8_0 / Q8_1 activations: ties to even, id = 127/amax', () => {
  // amax = 254 → d = 254/127 = 2 (f16 0x4000), id = 127/254 = 0.5 exactly, so x·id = x/2:
  //   x      1     3     5    -1    -3    -5     7     254  -254
  //   x/2   .5   1.5   2.5   -.5  -1.5  -2.5   3.5   127  -127
  //   even   0     2     2    -0    -2    -2     4    127  -127   (x86 activation path)
  //   away   1     2     3    -1    -2    -3     4    127  -127   (roundf: the reference weight path)
  const x = new Float32Array(32);
  x.set([1, 3, 5, -1, -3, -5, 7, 254, -254]);
  const even = [0, 2, 2, 0, -2, -2, 4, 127, -127, ...new Array<number>(23).fill(0)];
  const away = [1, 2, 3, -1, -2, -3, 4, 127, -127, ...new Array<number>(23).fill(0)];

  it('Q8_0 (Q4_0 weights) rounds halves to even', () => {
    const a = quantizeActivation(GgmlType.Q4_0, x);
    expect(a.type).toBe(GgmlType.Q8_0);
    expect(Array.from(a.data.subarray(0, 2))).toEqual([0x00, 0x40]);
    expect(i8(a.data.subarray(2, 34))).toEqual(even);
  });

  it('the Q8_0 weight quantiser still rounds them away from zero (quantize_row_q8_0_ref)', () => {
    const out = new Uint8Array(34);
    quantizeRow(GgmlType.Q8_0, x, out, 0, 32);
    expect(i8(out.subarray(2, 34))).toEqual(away);
  });

  it('Q8_1 (Q4_1 weights) rounds halves to even; s = d·Σq = 2·(0+2+2-2-2+4+127-127) = 8', () => {
    const a = quantizeActivation(GgmlType.Q4_1, x);
    expect(a.type).toBe(GgmlType.Q8_1);
    expect(Array.from(a.data.subarray(0, 4))).toEqual([0x00, 0x40, 0x00, 0x48]); // f16 2, f16 8
    expect(i8(a.data.subarray(4, 36))).toEqual(even);
  });

  it('multiplies by 127/amax, not by 1/d', () => {
    // amax = 1.0009765625 (1 + 2^-10): d = f32(amax/127) and f32(1/d) = 126.87609100341797, but
    // f32(127/amax) = 126.8760986328125, one ulp higher. For x = f32(0.027585968375205994),
    // x·(1/d) = 3.4999998 (→ 3) while x·(127/amax) = 3.5 exactly (→ 4, even).
    const v = new Float32Array(32);
    v[0] = 1.0009765625;
    v[1] = 0.027585968375205994;
    expect(Math.fround(v[1] * Math.fround(127 / v[0]))).toBe(3.5);
    expect(Math.fround(v[1] * Math.fround(1 / Math.fround(v[0] / 127)))).toBeLessThan(3.5);
    const a = quantizeActivation(GgmlType.Q8_0, v);
    expect(i8(a.data.subarray(2, 4))).toEqual([127, 4]);
    const w = new Uint8Array(34);
    quantizeRow(GgmlType.Q8_0, v, w, 0, 32);
    expect(i8(w.subarray(2, 4))).toEqual([127, 3]);
  });
});

describe('Q8_K activations (quantize_row_q8_K_ref, as x86 runs it): nearest_int ties to even', () => {
  it('rounds halves to even, d = 1/iscale, bsums per 16', () => {
    // max = -254 (largest |x|) → iscale = -127/-254 = 0.5, d = 2; x·iscale = x/2 as above.
    const x = new Float32Array(256);
    x.set([1, 3, 5, -1, -3, -5, 7, -254]);
    x[16] = 9; // 4.5 → 4
    const a = quantizeActivation(GgmlType.Q4_K, x);
    expect(a.type).toBe(GgmlType.Q8_K);
    const dv = new DataView(a.data.buffer, a.data.byteOffset);
    expect(dv.getFloat32(0, true)).toBe(2);
    expect(i8(a.data.subarray(4, 4 + 17))).toEqual([0, 2, 2, 0, -2, -2, 4, -127, 0, 0, 0, 0, 0, 0, 0, 0, 4]);
    expect(dv.getInt16(260, true)).toBe(0 + 2 + 2 - 2 - 2 + 4 - 127);
    expect(dv.getInt16(262, true)).toBe(4);
  });
});
