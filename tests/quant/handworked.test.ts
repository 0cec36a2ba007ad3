// Blocks written out by hand, with the expected values worked in the comments from the layouts in
// ggml-common.h and the rules of ggml-quants.c (not from this code).
import { describe, expect, it } from 'vitest';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { bf16ToF32, dequantizeRow, f16ToF32, f32ToBf16, f32ToF16, quantizeActivation, quantizeRow, vecDot } from '../../src/engine/quant/index.js';

describe('Q4_0 by hand (18 bytes: f16 d, 16 bytes of nibbles; x = d·(q - 8))', () => {
  // Block A: x[j] = j - 8 for j < 16 (−8 … 7), x[16 + j] = j/2 − 4 (−4, −3.5, … 3.5).
  // Largest magnitude is x[0] = −8, so d = −8 / −8 = 1 (f16 0x3C00, bytes 00 3C), id = 1.
  // q = min(15, trunc(x + 8.5)): first half q = j; second half q = trunc(4.5 + j/2) = 4 + ⌊(j+1)/2⌋.
  // Byte j = q[j] | q[16 + j] << 4.
  const a = new Float32Array(32);
  for (let j = 0; j < 16; j++) {
    a[j] = j - 8;
    a[16 + j] = j / 2 - 4;
  }
  const aBytes = [0x00, 0x3c];
  for (let j = 0; j < 16; j++) aBytes.push(j | ((4 + Math.floor((j + 1) / 2)) << 4));

  // Block B: largest magnitude is +16 (x[5]), so d = 16 / −8 = −2 (f16 0xC000, bytes 00 C0), id = −0.5.
  //   x = 16  → 16·−0.5 + 8.5 = 0.5  → q = 0  → (0 − 8)·−2 = 16
  //   x = −14 → 7 + 8.5 = 15.5       → q = 15 → (15 − 8)·−2 = −14
  //   x = −16 → 8 + 8.5 = 16.5       → q = min(15, 16) = 15 → −14 (Q4_0 cannot hold −16 here)
  //   x = 1   → −0.5 + 8.5 = 8       → q = 8  → 0
  //   x = 3   → −1.5 + 8.5 = 7       → q = 7  → 2
  //   everything else 0 → q = 8 (trunc 8.5) → 0
  const b = new Float32Array(32);
  b[5] = 16;
  b[6] = -14;
  b[21] = -16;
  b[7] = 1;
  b[22] = 3;
  const bBytes = [0x00, 0xc0];
  for (let j = 0; j < 16; j++) bBytes.push(0x88);
  bBytes[2 + 5] = 0 | (15 << 4); // x[5] = 16, x[21] = −16
  bBytes[2 + 6] = 15 | (7 << 4); // x[6] = −14, x[22] = 3
  bBytes[2 + 7] = 8 | (8 << 4); // x[7] = 1, x[23] = 0

  it('quantises both blocks to the hand-packed bytes', () => {
    const x = new Float32Array(64);
    x.set(a, 0);
    x.set(b, 32);
    const out = new Uint8Array(36);
    quantizeRow(GgmlType.Q4_0, x, out, 0, 64);
    expect(Array.from(out)).toEqual([...aBytes, ...bBytes]);
  });

  it('dequantises to the hand-computed values', () => {
    const out = new Float32Array(64);
    dequantizeRow(GgmlType.Q4_0, new Uint8Array([...aBytes, ...bBytes]), 0, out, 64);
    const expectA = Array.from(a, (v, j) => (j < 16 ? v : Math.floor((j - 16 + 1) / 2) - 4));
    const expectB = new Array<number>(32).fill(-0); // (8 − 8)·−2 is −0 in float, as in C
    expectB[5] = 16;
    expectB[6] = -14;
    expectB[21] = -14;
    expectB[22] = 2;
    expect(Array.from(out.subarray(0, 32))).toEqual(expectA);
    expect(Array.from(out.subarray(32))).toEqual(expectB);
  });

  it('dots block A with an all-ones activation through Q8_0', () => {
    // Activation: amax 1, d = 1/127 rounded to f16 = 129/16384 = 0.00787353515625, every q = 127.
    // Σ(q_w − 8) = Σ(j − 8) + Σ(⌊(j+1)/2⌋ − 4) = −8 + 0 = −8, so sumi = −8·127 = −1016 and the
    // dot is −1016 · 1 · 129/16384 = −7.99951171875 (the f32 dot is −8).
    const act = quantizeActivation(GgmlType.Q4_0, new Float32Array(32).fill(1));
    expect(act.type).toBe(GgmlType.Q8_0);
    expect(Array.from(act.data.subarray(0, 2))).toEqual([0x08, 0x20]); // f16 0x2008 = 129/16384
    expect(act.data.subarray(2).every((q) => q === 127)).toBe(true);
    expect(vecDot(GgmlType.Q4_0, new Uint8Array(aBytes), 0, act.data, 0, 32)).toBe(-7.99951171875);
  });
});

describe('Q8_0 by hand (34 bytes: f16 d, 32 int8; x = d·q)', () => {
  // amax = 127 → d = 1 (f16 0x3C00), q = roundf(x) with ties away from zero.
  const x = new Float32Array(32);
  x.set([127, -127, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49, 100.2]);
  const q = [127, -127, 1, -1, 2, 3, -3, 0, 100];
  const bytes = [0x00, 0x3c, ...q.map((v) => v & 0xff), ...new Array<number>(23).fill(0)];

  it('quantises with roundf (ties away from zero)', () => {
    const out = new Uint8Array(34);
    quantizeRow(GgmlType.Q8_0, x, out, 0, 32);
    expect(Array.from(out)).toEqual(bytes);
  });

  it('dequantises to d·q', () => {
    const out = new Float32Array(32);
    dequantizeRow(GgmlType.Q8_0, new Uint8Array(bytes), 0, out, 32);
    expect(Array.from(out.subarray(0, 9))).toEqual(q);
  });

  it('dots with itself as the integer sum of squares times d·d', () => {
    // Σq² = 127² + 127² + 1 + 1 + 4 + 9 + 9 + 0 + 100² = 42282, d = 1.
    const w = new Uint8Array(bytes);
    expect(vecDot(GgmlType.Q8_0, w, 0, w, 0, 32)).toBe(42282);
  });

  it('a block of zeros has d = 0 and q = 0', () => {
    const out = new Uint8Array(34).fill(0xff);
    quantizeRow(GgmlType.Q8_0, new Float32Array(32), out, 0, 32);
    expect(out.every((v) => v === 0)).toBe(true);
  });
});

describe('half and bfloat16 conversions (IEEE 754 values worked by hand)', () => {
  it('rounds float → half to nearest even', () => {
    expect(f32ToF16(1)).toBe(0x3c00);
    expect(f32ToF16(-2)).toBe(0xc000);
    expect(f32ToF16(65504)).toBe(0x7bff); // largest half
    expect(f32ToF16(65520)).toBe(0x7c00); // halfway to 65536 rounds (to even) to inf
    expect(f32ToF16(65519)).toBe(0x7bff);
    expect(f32ToF16(1 + 2 ** -11)).toBe(0x3c00); // tie → even mantissa 0
    expect(f32ToF16(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie → even mantissa 2
    expect(f32ToF16(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(f32ToF16(2 ** -25)).toBe(0x0000); // tie with 0 → even
    expect(f32ToF16(3 * 2 ** -26)).toBe(0x0001);
    expect(f32ToF16(2 ** -14 - 2 ** -25)).toBe(0x0400); // rounds up into the normals
    expect(f32ToF16(-0)).toBe(0x8000);
    expect(f16ToF32(f32ToF16(NaN))).toBeNaN();
  });

  it('reads every half back exactly', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      const v = f16ToF32(h);
      if (!Number.isNaN(v) && f32ToF16(v) !== h) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });

  it('rounds float → bfloat16 to nearest even', () => {
    expect(f32ToBf16(1)).toBe(0x3f80);
    expect(f32ToBf16(1 + 2 ** -8)).toBe(0x3f80); // tie → even
    expect(f32ToBf16(1 + 3 * 2 ** -8)).toBe(0x3f82); // tie → even
    expect(f32ToBf16(1 + 2 ** -8 + 2 ** -20)).toBe(0x3f81);
    expect(bf16ToF32(0xc040)).toBe(-3);
    expect(bf16ToF32(f32ToBf16(NaN))).toBeNaN();
  });
});
