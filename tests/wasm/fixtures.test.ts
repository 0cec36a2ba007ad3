// The WebAssembly dequantise-row reproduces ggml's own dequantisation (deq.<type> in
// ../shared/fixtures/quant-reference.gguf, made by llama.cpp's ggml) bit for bit, for every type
// the fixture holds; and the SIMD half→float conversion is exact for all 65536 halves.
import { describe, expect, it } from 'vitest';
import { ggmlTypeName } from '../../src/engine/gguf/ggml-types.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { kernelType } from '../../src/engine/wasm/layout.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { COLS, fixtureBytes, fixtureF32, fixtureTypes, ROWS } from '../quant/fixture.js';

const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));

describe('dequant_<type> reproduces ggml (quant-reference.gguf)', () => {
  for (const [name, type] of fixtureTypes()) {
    const kt = kernelType(type);
    if (!kt) continue; // a fixture type without a WebAssembly kernel (none today)
    it(`${ggmlTypeName(type)}: ${ROWS} rows of ${COLS}`, () => {
      const q = fixtureBytes(`q.${name}`);
      const deq = fixtureF32(`deq.${name}`);
      const rb = q.length / ROWS;
      const w = k.arena.alloc(q.length);
      k.arena.u8(w, q.length).set(q);
      const o = k.arena.scratch(COLS * 4);
      for (let r = 0; r < ROWS; r++) {
        k.dequant(kt, o, w + r * rb, COLS);
        expect(k.arena.f32(o, COLS)).toEqual(deq.subarray(r * COLS, (r + 1) * COLS));
      }
    });
  }
});

/** IEEE 754 binary16 by its definition: (−1)^s · 2^(e−15) · 1.m, subnormal 2^-14 · 0.m. */
function halfByDefinition(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 31;
  const m = h & 1023;
  if (e === 31) return m ? NaN : s * Infinity;
  return e === 0 ? s * 2 ** -14 * (m / 1024) : s * 2 ** (e - 15) * (1 + m / 1024);
}

it('dequant_f16 (SIMD lanes and scalar tail) is exact for every half', () => {
  const all = new Uint16Array(65536 + 3).map((_, i) => i & 0xffff); // 3 extra: the scalar tail
  const w = k.arena.alloc(all.byteLength);
  new Uint16Array(k.arena.u8(w, all.byteLength).buffer, w, all.length).set(all);
  const o = k.arena.alloc(all.length * 4);
  k.dequant(kernelType(1)!, o, w, all.length);
  const got = k.arena.f32(o, all.length);
  for (let i = 0; i < all.length; i++) {
    const want = halfByDefinition(all[i]);
    if (Number.isNaN(want)) expect(got[i]).toBeNaN();
    else expect(Object.is(got[i], want), `half 0x${all[i].toString(16)}: ${got[i]} vs ${want}`).toBe(true);
  }
});
