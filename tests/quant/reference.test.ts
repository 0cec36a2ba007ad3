// Exactness against ggml: every dequantisation equals ggml's to_float bit for bit, and every
// reference quantiser reproduces ggml_quantize_chunk's bytes. The truth is ggml's own output
// (quant-reference.gguf) and an independently quantised file (tinyllamas stories260K Q8_0).
import { describe, expect, it } from 'vitest';
import { readGgufHeaderSync, readTensorBytes } from '../../src/engine/gguf/file.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeRow, dequantizeTensor, quantizeRows } from '../../src/engine/quant/index.js';
import { sharedModel } from '../helpers.js';
import { COLS, fixtureBytes, fixtureF32, fixtureTypes, ROWS } from './fixture.js';

const N = ROWS * COLS;

/** Indices where two float arrays differ bitwise (NaN-aware, -0 ≠ +0). */
function bitDiffs(a: Float32Array, b: Float32Array): number[] {
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  const out: number[] = [];
  for (let i = 0; i < a.length; i++) if (ua[i] !== ub[i]) out.push(i);
  return out;
}

function byteDiffs(a: Uint8Array, b: Uint8Array): number {
  let n = Math.abs(a.length - b.length);
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) n++;
  return n;
}

function rmse(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] - b[i]) ** 2;
  return Math.sqrt(s / a.length);
}

describe('quant-reference.gguf (ggml)', () => {
  const types = fixtureTypes();
  const source = fixtureF32('source');

  it('holds every type this module implements a quantiser for', () => {
    expect(types.map(([n]) => n).sort()).toEqual(
      ['bf16', 'f16', 'iq4_nl', 'iq4_xs', 'q2_K', 'q3_K', 'q4_0', 'q4_1', 'q4_K', 'q5_0', 'q5_1', 'q5_K', 'q6_K', 'q8_0', 'tq1_0', 'tq2_0'].sort(),
    );
  });

  for (const [name, type] of types) {
    it(`${name}: dequantisation equals ggml's deq.${name} bit for bit`, () => {
      const out = new Float32Array(N);
      dequantizeRow(type, fixtureBytes(`q.${name}`), 0, out, N);
      expect(bitDiffs(out, fixtureF32(`deq.${name}`))).toEqual([]);
    });

    it(`${name}: the reference quantiser reproduces ggml's q.${name} byte for byte`, () => {
      const mine = quantizeRows(type, source, ROWS, COLS);
      const ref = fixtureBytes(`q.${name}`);
      expect(mine.length).toBe(ref.length);
      expect(byteDiffs(mine, ref)).toBe(0);
    });
  }

  it('dequantising row by row at byte offsets equals the whole-tensor result', () => {
    const q = fixtureBytes('q.q4_K');
    const rowBytes = q.length / ROWS;
    const whole = dequantizeTensor({ type: GgmlType.Q4_K, elements: N }, q);
    const row = new Float32Array(COLS);
    for (let r = 0; r < ROWS; r++) {
      dequantizeRow(GgmlType.Q4_K, q, r * rowBytes, row, COLS);
      expect(bitDiffs(row, whole.subarray(r * COLS, (r + 1) * COLS))).toEqual([]);
    }
  });

  it('the quantisation error ordering is what the bit widths imply', () => {
    const err = (name: string) => rmse(fixtureF32(`deq.${name}`), source);
    expect(err('q8_0')).toBeLessThan(err('q6_K'));
    expect(err('q6_K')).toBeLessThan(err('q5_K'));
    expect(err('q5_K')).toBeLessThan(err('q4_K'));
    expect(err('q4_K')).toBeLessThan(err('q3_K'));
    expect(err('q3_K')).toBeLessThan(err('q2_K'));
  });
});

describe('tinyllamas-stories-260k-q8_0.gguf (quantised by llama.cpp in 2023 from stories260K)', () => {
  const qFile = sharedModel('tinyllamas-stories-260k-q8_0.gguf');
  const fFile = sharedModel('stories260K.gguf');
  const hq = readGgufHeaderSync(qFile);
  const hf = readGgufHeaderSync(fFile);

  for (const name of ['blk.0.ffn_down.weight', 'blk.2.ffn_up.weight', 'token_embd.weight']) {
    it(`${name}: Q8_0 of the f32 weights is byte-identical to the file`, () => {
      const fb = readTensorBytes(fFile, hf, name);
      const f = new Float32Array(fb.buffer.slice(fb.byteOffset, fb.byteOffset + fb.length));
      // Quantised as one flat array, as the old converter did (it matters for ffn_down's rows of 172).
      const mine = quantizeRows(GgmlType.Q8_0, f, 1, f.length);
      expect(byteDiffs(mine, readTensorBytes(qFile, hq, name))).toBe(0);
    });
  }

  it('a flat-block tensor (rows of 172) dequantises flat and stays within Q8_0 error of the f32 weights', () => {
    const info = hq.tensors.find((t) => t.name === 'blk.4.ffn_down.weight')!;
    expect(info.flatBlocks).toBe(true);
    expect(info.dims).toEqual([172, 64]);
    const deq = dequantizeTensor(info, readTensorBytes(qFile, hq, info.name));
    const fb = readTensorBytes(fFile, hf, info.name);
    const f = new Float32Array(fb.buffer.slice(fb.byteOffset, fb.byteOffset + fb.length));
    expect(deq.length).toBe(172 * 64);
    // Q8_0 error bound per block of 32: half a step (d/2, d = amax/127) plus |q| ≤ 127 times the
    // rounding of d to half (relative 2^-11).
    for (let b = 0; b < f.length / 32; b++) {
      let amax = 0;
      for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(f[32 * b + j]));
      const bound = amax * (0.5 / 127 + 2 ** -11);
      for (let j = 0; j < 32; j++) expect(Math.abs(deq[32 * b + j] - f[32 * b + j])).toBeLessThanOrEqual(bound);
    }
  });
});
