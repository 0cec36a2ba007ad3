// Every WebAssembly kernel against the scalar reference in src/engine/quant (ggml's generic C,
// itself checked against ggml's numbers in tests/quant): activation quantisation byte for byte,
// matvec/matmul within float-rounding tolerance, dequantise-row exactly.
//
// Tolerance. The integer block sums are exact in both implementations; they differ only in the
// order their float products and sums are rounded. So |wasm − ref| ≤ tol · Σ_i |w_i·x_i|, with
// tol = 2e-6 for the block formats (a few roundings per block, ≤ 96 blocks here) and 2e-5 for
// F32/F16/BF16 (one rounding per element, summed in a different order over ≤ 1029 elements).
import { describe, expect, it } from 'vitest';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { GgmlType, ggmlTypeInfo, ggmlTypeName, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { canQuantize, dequantizeRow, f16ToF32, quantizeActivation, vecDot } from '../../src/engine/quant/index.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { actBytes, KERNEL_TYPES, takesGemm, type ActKind, type KernelType } from '../../src/engine/wasm/layout.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { absDot, fillFrom, quantisedWeights, randomBlocks, randomFloats } from './gen.js';

const TYPES = [...KERNEL_TYPES.values()];

function shapesFor(type: number): { rows: number; cols: number }[] {
  const bs = ggmlTypeInfo(type)!.blockSize;
  if (bs === 1) return [{ rows: 3, cols: 1 }, { rows: 5, cols: 15 }, { rows: 7, cols: 37 }, { rows: 4, cols: 1029 }];
  if (bs === 32) return [{ rows: 1, cols: 32 }, { rows: 7, cols: 96 }, { rows: 5, cols: 352 }];
  return [{ rows: 1, cols: 256 }, { rows: 6, cols: 768 }, { rows: 3, cols: 2816 }];
}

describe('activation quantisation matches the scalar quantizeActivation byte for byte', () => {
  const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));
  const byAct = new Map<ActKind, KernelType>();
  for (const kt of TYPES) if (!byAct.has(kt.act)) byAct.set(kt.act, kt);
  for (const [act, kt] of byAct) {
    it(`${act} (for ${ggmlTypeName(kt.type)})`, () => {
      const cols = act === 'q8_K' ? 768 : act.startsWith('q8') ? 352 : 37;
      for (const seed of [1, 2, 3]) {
        const x = randomFloats(cols, seed, seed === 3 ? 1e-3 : 4);
        if (seed === 2) x.fill(0, 0, 256); // an all-zero block
        const xp = k.arena.scratch(cols * 4 + actBytes(act, cols));
        const xq = xp + cols * 4;
        k.arena.f32(xp, cols).set(x);
        k.quantize(act, xq, xp, cols);
        const mine = k.arena.u8(xq, actBytes(act, cols)).slice();
        const md = new DataView(mine.buffer);
        const ref = quantizeActivation(kt.type, x).data;
        const rd = new DataView(ref.buffer, ref.byteOffset, ref.byteLength);
        if (act === 'f32') {
          for (let i = 0; i < cols; i++) expect(md.getFloat32(4 * i, true)).toBe(rd.getFloat32(4 * i, true));
        } else if (act === 'q8_0' || act === 'q8_1') {
          const nb = cols / 32;
          const bsz = act === 'q8_0' ? 34 : 36;
          for (let b = 0; b < nb; b++) {
            expect(md.getFloat32(cols + 4 * b, true)).toBe(f16ToF32(rd.getUint16(b * bsz, true)));
            const q = ref.subarray(b * bsz + bsz - 32, b * bsz + bsz);
            expect([...mine.subarray(32 * b, 32 * b + 32)]).toEqual([...q]);
            const aux = cols + 4 * nb + 4 * b;
            if (act === 'q8_1') expect(md.getFloat32(aux, true)).toBe(f16ToF32(rd.getUint16(b * bsz + 2, true)));
            else expect(md.getInt32(aux, true)).toBe([...new Int8Array(q.buffer, q.byteOffset, 32)].reduce((s, v) => s + v, 0));
          }
        } else {
          const nb = cols / 256;
          for (let b = 0; b < nb; b++) {
            const o = b * 292; // block_q8_K: f32 d, i8 qs[256], i16 bsums[16]
            expect(md.getFloat32(cols + 4 * b, true)).toBe(rd.getFloat32(o, true));
            expect([...mine.subarray(256 * b, 256 * b + 256)]).toEqual([...ref.subarray(o + 4, o + 260)]);
            for (let g = 0; g < 16; g++) expect(md.getInt16(cols + 4 * nb + 2 * (16 * b + g), true)).toBe(rd.getInt16(o + 260 + 2 * g, true));
          }
        }
      }
    });
  }
});

describe('WasmBackend matvec / matmul / getRow against the scalar reference', () => {
  const be = new WasmBackend({ simd: 'simd' });
  for (const kt of TYPES) {
    const name = ggmlTypeName(kt.type);
    const tol = ggmlTypeInfo(kt.type)!.blockSize === 1 ? 2e-5 : 2e-6;
    it(`${name}: rel. error ≤ ${tol} of Σ|w·x|, every shape; getRow exact`, () => {
      let seed = 10;
      for (const { rows, cols } of shapesFor(kt.type)) {
        for (const data of [randomBlocks(kt.type, rows, cols, seed++), ggmlTypeInfo(kt.type)!.blockSize > 1 && canQuantize(kt.type) ? quantisedWeights(kt.type, rows, cols, seed++) : undefined]) {
          if (!data) continue;
          const rb = rowBytes(kt.type, cols);
          const h = be.addWeight({ name: `${name}-${rows}x${cols}`, type: kt.type, rows, cols }, fillFrom(data));
          const x = randomFloats(cols, seed++, 2);
          const out = new Float32Array(rows);
          be.matvec(out, h, x);
          const act = quantizeActivation(kt.type, x).data;
          for (let r = 0; r < rows; r++) {
            const ref = vecDot(kt.type, data, r * rb, act, 0, cols);
            const bound = tol * absDot(kt.type, data, r * rb, x, cols) + 1e-30;
            expect(Math.abs(out[r] - ref), `${name} ${rows}x${cols} row ${r}: ${out[r]} vs ${ref}`).toBeLessThanOrEqual(bound);
          }
          // matmul over a batch of 3 equals three matvecs exactly (same kernel, same order; batches
          // under GEMM_MIN_TOKENS take it for every type); the gemm kernels (assembly/gemm.ts, 8+
          // tokens) sum in another order: within the same bound of the reference.
          const n = 3;
          const xs = randomFloats(n * cols, seed++, 2);
          const outs = new Float32Array(n * rows);
          be.matmul(outs, h, xs, n);
          for (let t = 0; t < n; t++) {
            const xt = xs.subarray(t * cols, (t + 1) * cols);
            be.matvec(out, h, xt);
            if (!takesGemm(kt, n)) {
              expect([...outs.subarray(t * rows, (t + 1) * rows)]).toEqual([...out]);
              continue;
            }
            const actT = quantizeActivation(kt.type, xt).data;
            for (let r = 0; r < rows; r++) {
              const ref = vecDot(kt.type, data, r * rb, actT, 0, cols);
              const bound = tol * absDot(kt.type, data, r * rb, xt, cols) + 1e-30;
              expect(Math.abs(outs[t * rows + r] - ref), `${name} ${rows}x${cols} matmul token ${t} row ${r}`).toBeLessThanOrEqual(bound);
            }
          }
          const got = new Float32Array(cols);
          const want = new Float32Array(cols);
          for (const r of [0, rows - 1]) {
            be.getRow(got, h, r);
            dequantizeRow(kt.type, data, r * rb, want, cols);
            expect(got).toEqual(want);
          }
        }
      }
    });
  }

  it('F16 and BF16 take the activation in f32, unrounded, as the scalar reference does', () => {
    expect(KERNEL_TYPES.get(GgmlType.F16)!.act).toBe('f32');
    expect(KERNEL_TYPES.get(GgmlType.BF16)!.act).toBe('f32');
    // W = ones, x = 1 + 2^-12 (no half or bfloat16 holds it): unrounded, 32 products sum to 32 + 2^-7;
    // x rounded first would give exactly 32.
    const x = new Float32Array(32).fill(1 + 2 ** -12);
    for (const [type, one] of [[GgmlType.F16, 0x3c00], [GgmlType.BF16, 0x3f80]] as const) {
      const data = new Uint8Array(3 * 32 * 2);
      for (let i = 0; i < 3 * 32; i++) [data[2 * i], data[2 * i + 1]] = [one & 0xff, one >> 8];
      const h = be.addWeight({ name: `ones-${type}`, type, rows: 3, cols: 32 }, fillFrom(data));
      const out = new Float32Array(3);
      be.matvec(out, h, x);
      expect([...out]).toEqual([32 + 2 ** -7, 32 + 2 ** -7, 32 + 2 ** -7]);
    }
  });

  it('rejects a type without a kernel, naming the tensor', () => {
    expect(() => be.addWeight({ name: 'blk.0.ffn_up.weight', type: 26 /* I32 */, rows: 1, cols: 256 }, () => {})).toThrow(/blk\.0\.ffn_up\.weight.*I32/);
    expect(be.supports(26)).toBe(false);
    expect(be.supports(12)).toBe(true);
  });
});
