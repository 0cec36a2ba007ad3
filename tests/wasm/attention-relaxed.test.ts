// The relaxed-SIMD build's attention: V += v·vs is relaxed SIMD's madd there when the engine fuses it
// (one rounding, as ggml's _mm512_fmadd_ps), so it must give the scalar reference's bits exactly, as
// the plain build does (tests/model/ops-attention.test.ts). Node 20 cannot run relaxed SIMD, so both
// builds run inside Chromium's current V8 (the engine Electron ships; on x64 with FMA3 its madd is
// fused) when a Chromium is installed (PANTHEON_CHROMIUM, default /usr/bin/chromium).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM, inChromium } from '../chromium.js';
import { describe, expect, it } from 'vitest';
import { attention, createAttentionScratch, type AttentionDims, type AttentionMode } from '../../src/engine/model/attention.js';
import { F16, f32ToF16Bits, roundF16 } from '../../src/engine/quant/half.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { randomFloats, rng } from './gen.js';

const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');

interface Case { d: AttentionDims; size: number; from: number; to: number; mode: AttentionMode; scale: number; k: number[]; v: number[]; q: number[] }

/** In the page (or here): instantiate a kernel build, run every case; outputs, then the fused flag. */
function runInPage({ wasm, cases }: { wasm: number[]; cases: Case[] }): { out: number[][]; fused: number } {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  const base = up(ex.heap_base());
  const out = cases.map((c) => {
    const { nHead, nHeadKv, headDimK: hdK, headDimV: hdV } = c.d;
    const kc = base;
    const vc = up(kc + c.k.length * 2);
    const q = up(vc + c.v.length * 2);
    const o = up(q + c.q.length * 4);
    const scratch = up(o + nHead * hdV * 4);
    const end = scratch + ex.attn_scratch_bytes(nHead, nHeadKv, hdK, hdV, c.size);
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    new Uint16Array(memory.buffer, kc, c.k.length).set(c.k);
    new Uint16Array(memory.buffer, vc, c.v.length).set(c.v);
    new Float32Array(memory.buffer, q, c.q.length).set(c.q);
    ex[c.mode === 'f16' ? 'attn_f16' : 'attn_f32'](o, q, kc, vc, nHeadKv * hdK, nHeadKv * hdV, c.from, c.to, nHead, nHeadKv, hdK, hdV, c.scale, scratch);
    return [...new Float32Array(memory.buffer, o, nHead * hdV)];
  });
  return { out, fused: ex.attn_fused_madd(base) };
}

/**
 * Two positions where rounding v·vs to f32 before adding it changes the f16 accumulator: scores 1
 * and 0.5 (q = e0, keys 1 and 0.5 on e0, scale 1), so acc = v0 after position 0, then
 * acc = f16(f32(v0 + v1·vs)) with vs = expf(−0.5); every lane's (v0, v1) is a pair (found by search)
 * where the fused sum and the sum of the rounded product round to different halves.
 */
function maddCase(seed: number): Case {
  const d: AttentionDims = { nHead: 1, nHeadKv: 1, headDimK: 64, headDimV: 64 };
  const vs = Math.fround(Math.exp(Math.fround(0.5 - 1)));
  const r = rng(seed);
  const v0: number[] = [];
  const v1: number[] = [];
  while (v0.length < 64) {
    const a = f32ToF16Bits((r() - 0.5) * 8);
    const b = f32ToF16Bits((r() - 0.5) * 8);
    const fused = roundF16(Math.fround(F16[a] + F16[b] * vs));
    const unfused = roundF16(Math.fround(F16[a] + Math.fround(F16[b] * vs)));
    if (fused !== unfused) {
      v0.push(a);
      v1.push(b);
    }
  }
  const k = new Array<number>(128).fill(0);
  k[0] = f32ToF16Bits(1);
  k[64] = f32ToF16Bits(0.5);
  const q = new Array<number>(64).fill(0);
  q[0] = 1;
  return { d, size: 2, from: 0, to: 1, mode: 'f16', scale: 1, k, v: [...v0, ...v1], q };
}

/** The scalar reference's output for a case. */
function reference(c: Case): number[] {
  const kvDimK = c.d.nHeadKv * c.d.headDimK;
  const kvDimV = c.d.nHeadKv * c.d.headDimV;
  const cache = { size: c.size, kvDimK, kvDimV, k: [Uint16Array.from(c.k)], v: [Uint16Array.from(c.v)], nonFinite: new Uint8Array(1) };
  const ref = new Float32Array(c.d.nHead * c.d.headDimV);
  attention(ref, 0, Float32Array.from(c.q), 0, cache, 0, c.from, c.to, c.d, c.scale, c.mode, createAttentionScratch(c.d, c.size));
  return [...ref];
}

describe('relaxed SIMD attention', () => {
  it('the plain build gives the reference\'s bits where rounding v·vs first would not', () => {
    const c = maddCase(7);
    expect(runInPage({ wasm: [...readFileSync(join(WASM_DIR, 'kernels.wasm'))], cases: [c] }).out[0]).toEqual(reference(c));
  });

  it.skipIf(!existsSync(CHROMIUM))('in Chromium: the madd is fused, and the relaxed build gives the reference\'s bits (f16) and the plain build\'s (f32)', async () => {
    const shapes: AttentionDims[] = [
      { nHead: 4, nHeadKv: 4, headDimK: 64, headDimV: 64 },
      { nHead: 14, nHeadKv: 2, headDimK: 64, headDimV: 64 },
      { nHead: 2, nHeadKv: 2, headDimK: 80, headDimV: 80 },
      { nHead: 4, nHeadKv: 1, headDimK: 128, headDimV: 128 },
    ];
    const size = 80;
    const cases: Case[] = [];
    let seed = 40;
    for (const d of shapes) {
      // the K spread sets how often the running maximum moves and how small e^(s − M) gets
      for (const kScale of [1, 6]) {
        const k = [...randomFloats(size * d.nHeadKv * d.headDimK, seed++, kScale)].map(f32ToF16Bits);
        const v = [...randomFloats(size * d.nHeadKv * d.headDimV, seed++, 3)].map(f32ToF16Bits);
        const q = [...randomFloats(d.nHead * d.headDimK, seed++, 1.5)];
        for (const mode of ['f16', 'f32'] as AttentionMode[]) {
          for (const [from, to] of [[0, size - 1], [9, 50]]) cases.push({ d, size, from, to, mode, scale: 1 / Math.sqrt(d.headDimK), k, v, q });
        }
      }
    }
    cases.push(maddCase(seed));
    // the fast pass's hand-offs to the exact one: an infinity in K, a NaN in V, an accumulator that
    // overflows f16; and halves at the edges of the format (subnormals, zeros of both signs, 65504)
    const d: AttentionDims = { nHead: 4, nHeadKv: 2, headDimK: 64, headDimV: 64 };
    const base = (): Case => ({
      d, size: 24, from: 0, to: 23, mode: 'f16', scale: 0.125,
      k: [...randomFloats(24 * 128, seed + 1, 2)].map(f32ToF16Bits),
      v: [...randomFloats(24 * 128, seed + 2, 3)].map(f32ToF16Bits),
      q: [...randomFloats(256, seed + 3, 1.5)],
    });
    const inf = base();
    inf.k[300] = 0x7c00;
    const nan = base();
    nan.v[1000] = 0x7e00;
    const big = base();
    for (let i = 0; i < 24 * 128; i += 3) big.v[i] = f32ToF16Bits(20000);
    const edge = base();
    const edges = [0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff];
    for (const kv of [edge.k, edge.v]) for (let i = 0; i < kv.length; i += 2) kv[i] = edges[(i >> 1) % edges.length];
    cases.push(inf, nan, big, edge);
    const relaxed = await inChromium((page) => page.evaluate(runInPage, { wasm: [...readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'))], cases }));
    expect(relaxed.fused).toBe(1);
    const plain = runInPage({ wasm: [...readFileSync(join(WASM_DIR, 'kernels.wasm'))], cases });
    expect(plain.fused).toBe(0);
    cases.forEach((c, i) => {
      const what = `${c.mode} ${c.d.nHead}→${c.d.nHeadKv} × ${c.d.headDimK}, positions ${c.from}..${c.to}`;
      if (c.mode === 'f32') {
        expect(relaxed.out[i], what).toEqual(plain.out[i]);
        return;
      }
      const ref = reference(c);
      expect(relaxed.out[i], what).toEqual(ref);
      expect(plain.out[i], what).toEqual(ref);
    });
  });
});
