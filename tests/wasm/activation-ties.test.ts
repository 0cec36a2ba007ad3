// The WebAssembly activation quantisers on exact ties: the same hand-worked bytes as
// tests/quant/activation.test.ts (llama.cpp's x86 path rounds x·(127/amax) half to even), which
// random inputs in kernels.test.ts never reach.
import { describe, expect, it } from 'vitest';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { actBytes, type ActKind } from '../../src/engine/wasm/layout.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';

function quantize(k: KernelInstance, act: ActKind, x: Float32Array): { q: number[]; view: DataView } {
  const cols = x.length;
  const xp = k.arena.scratch(cols * 4 + actBytes(act, cols));
  k.arena.f32(xp, cols).set(x);
  k.quantize(act, xp + cols * 4, xp, cols);
  const bytes = k.arena.u8(xp + cols * 4, actBytes(act, cols)).slice();
  return { q: Array.from(new Int8Array(bytes.buffer, 0, cols)), view: new DataView(bytes.buffer) };
}

describe('wasm activation quantisation on ties', () => {
  const k = new KernelInstance(loadKernelModule({ simd: 'simd' })); // activation.ts has no relaxed-SIMD code
  // amax = 254: d = 2, id = 0.5, x·id = x/2; halves go to the even neighbour.
  const x = new Float32Array(32);
  x.set([1, 3, 5, -1, -3, -5, 7, 254, -254]);
  const even = [0, 2, 2, 0, -2, -2, 4, 127, -127, ...new Array<number>(23).fill(0)];

  it('q8_0: ties to even, d = 2, Σq = 0+2+2+0-2-2+4+127-127 = 4', () => {
    const { q, view } = quantize(k, 'q8_0', x);
    expect(q).toEqual(even);
    expect(view.getFloat32(32, true)).toBe(2);
    expect(view.getInt32(36, true)).toBe(4);
  });

  it('q8_1: ties to even, s = d·Σq = 8', () => {
    const { q, view } = quantize(k, 'q8_1', x);
    expect(q).toEqual(even);
    expect(view.getFloat32(36, true)).toBe(8);
  });

  it('q8_0 multiplies by 127/amax (3.5 → 4), not by 1/d (3.4999998 → 3)', () => {
    const v = new Float32Array(32);
    v[0] = 1.0009765625;
    v[1] = 0.027585968375205994;
    expect(quantize(k, 'q8_0', v).q.slice(0, 2)).toEqual([127, 4]);
  });

  it('q8_K: nearest_int ties to even', () => {
    const v = new Float32Array(256);
    v.set([1, 3, 5, -1, -3, -5, 7, -254]);
    v[16] = 9;
    const { q, view } = quantize(k, 'q8_K', v);
    expect(q.slice(0, 17)).toEqual([0, 2, 2, 0, -2, -2, 4, -127, 0, 0, 0, 0, 0, 0, 0, 0, 4]);
    expect(view.getFloat32(256, true)).toBe(2);
    expect(view.getInt16(260, true)).toBe(-123);
    expect(view.getInt16(262, true)).toBe(4);
  });

  it('q8_K: the first element of largest |x| sets the sign of the scale, wherever it sits', () => {
    const v = new Float32Array(512);
    v[5] = 3;
    v[9] = -3; // same magnitude, later: iscale = −127/3 from v[5]
    v[255] = 1.5;
    v[256 + 255] = -6; // second block: the max in its last lane, iscale = 127/6
    v[256 + 10] = 3;
    const { q, view } = quantize(k, 'q8_K', v);
    expect([q[5], q[9], q[255]]).toEqual([-127, 127, -64]); // 1.5·(−127/3) = −63.5 → −64 (ties to even)
    expect([q[256 + 255], q[256 + 10]]).toEqual([-127, 64]); // 3·127/6 = 63.5 → 64
    expect(view.getFloat32(512, true)).toBe(Math.fround(1 / Math.fround(-127 / 3)));
  });

  it('a block holding NaN or Inf quantises without trapping or hanging', () => {
    for (const act of ['q8_0', 'q8_1', 'q8_K'] as const) {
      const v = new Float32Array(256).fill(0.5);
      v[3] = NaN;
      v[7] = Infinity;
      expect(quantize(k, act, v).q).toHaveLength(256);
      const w = new Float32Array(256).fill(NaN);
      expect(quantize(k, act, w).q).toHaveLength(256);
    }
  });
});
