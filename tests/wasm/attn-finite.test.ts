// Finiteness tracked at store time (issue 6): kv_store reports an infinity or NaN half, the cache's
// owner keeps a sticky per-layer flag, and attn_f16 skips scanning the rows while it is clear.
// Skipping must change no bit on finite caches (plain build here, relaxed build in Chromium), and a
// cache that was given an infinity or NaN through the store path must still get the exact pass.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { f32ToF16Bits } from '../../src/engine/quant/half.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { CHROMIUM, inChromium } from '../chromium.js';
import { BUILDS, skipBuild } from './builds.js';
import { randomFloats } from './gen.js';

const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');

interface Case { nHead: number; nHeadKv: number; hd: number; size: number; from: number; to: number; k: number[]; v: number[]; q: number[] }

/** In the page (or here): each case's attn_f16 output with the scan (finite 0) and without (finite 1). */
function scanAndSkip({ wasm, cases }: { wasm: number[]; cases: Case[] }): { scan: number[]; skip: number[] }[] {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  const base = up(ex.heap_base());
  return cases.map((c) => {
    const kc = base, vc = up(kc + c.k.length * 2), q = up(vc + c.v.length * 2), o = up(q + c.q.length * 4), scratch = up(o + c.nHead * c.hd * 4);
    const end = scratch + ex.attn_scratch_bytes(c.nHead, c.nHeadKv, c.hd, c.hd, c.size);
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    new Uint16Array(memory.buffer, kc, c.k.length).set(c.k);
    new Uint16Array(memory.buffer, vc, c.v.length).set(c.v);
    new Float32Array(memory.buffer, q, c.q.length).set(c.q);
    const run = (finite: number) => {
      new Float32Array(memory.buffer, o, c.nHead * c.hd).fill(-1);
      ex.attn_f16(o, q, kc, vc, c.nHeadKv * c.hd, c.nHeadKv * c.hd, c.from, c.to, c.nHead, c.nHeadKv, c.hd, c.hd, 1 / Math.sqrt(c.hd), scratch, finite);
      return [...new Float32Array(memory.buffer, o, c.nHead * c.hd)];
    };
    return { scan: run(0), skip: run(1) };
  });
}

/** Finite caches of several shapes (MHA, GQA, a head size not a multiple of 64), with halves up to 65504. */
function finiteCases(): Case[] {
  const cases: Case[] = [];
  let seed = 500;
  for (const [nHead, nHeadKv, hd] of [[4, 4, 64], [6, 2, 64], [2, 2, 80], [4, 1, 128]]) {
    const size = 70;
    const k = [...randomFloats(size * nHeadKv * hd, seed++, 3)].map(f32ToF16Bits);
    const v = [...randomFloats(size * nHeadKv * hd, seed++, 4)].map(f32ToF16Bits);
    for (let i = 5; i < v.length; i += 97) v[i] = 0x7bff; // 65504, the largest finite half
    const q = [...randomFloats(nHead * hd, seed++, 1.5)];
    for (const [from, to] of [[0, size - 1], [17, 40], [3, 3]]) cases.push({ nHead, nHeadKv, hd, size, from, to, k, v, q });
  }
  return cases;
}

describe('kv_store reports infinities and NaNs; attn_f16 finite = 1 skips the scan', () => {
  const k = new WasmBackend({ simd: 'simd' }).kernels;

  it('kv_store: true exactly when a stored half has exponent 31 (fp16.ts f32ToF16Bits), and the same bits', () => {
    const src = k.arena.alloc(64 * 4), dst = k.arena.alloc(64 * 2);
    const values = [0, -0, 1, 65504, -65504, 65519.99, 65520, -65520, 1e6, Infinity, -Infinity, NaN, 6e-8, 1e-9];
    for (const x of values) {
      const row = randomFloats(64, 7, 100);
      row[37] = x;
      k.arena.f32(src, 64).set(row);
      const bad = k.kvStore(dst, src, 64);
      const want = [...row].map(f32ToF16Bits);
      expect([...new Uint16Array(k.arena.memory.buffer, dst, 64)], `${x}`).toEqual(want);
      expect(bad, `${x}`).toBe(want.some((h) => (h & 0x7c00) === 0x7c00));
    }
  });

  // kv_store converts eight lanes at a time (the normal halves' formula, with the subnormal, zero,
  // infinity and NaN lanes replaced) and the last n % 8 one by one: every f32 class in every lane
  // position, rounding ties, and the range edges, in both builds (relaxed where this engine has it).
  for (const simd of BUILDS) it.skipIf(skipBuild(simd))(`kv_store (${simd} build): random f32 bit patterns, ties and range edges equal f32ToF16Bits in every lane`, () => {
    const kk = new WasmBackend({ simd }).kernels;
    const bits = new Uint32Array(4096 + 61);
    let s = 12345;
    for (let i = 0; i < bits.length; i++) bits[i] = s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const edges = [
      0x00000000, 0x80000000, 0x00000001, 0x33000000, 0x33000001, 0x337fffff, 0x38000000, 0x387fffff, 0x38800000, 0x38800fff, 0x38801000, 0x38801001,
      0x38803000, 0x3f801000, 0x3f803000, 0x477fe000, 0x477fefff, 0x477ff000, 0x477fffff, 0x47800000, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7f800001,
      0x7fc00000, 0xffffffff, 0x3f800000, 0xbf800000,
    ];
    edges.forEach((e, i) => { bits[(i * 37) % bits.length] = e; bits[bits.length - 1 - i] = e; });
    const f = new Float32Array(bits.buffer);
    for (const n of [bits.length, 8, 7, 13]) {
      const src = kk.arena.alloc(n * 4), dst = kk.arena.alloc(n * 2);
      for (let at = 0; at + n <= f.length; at += n) {
        kk.arena.f32(src, n).set(f.subarray(at, at + n));
        const bad = kk.kvStore(dst, src, n);
        const want = [...f.subarray(at, at + n)].map(f32ToF16Bits);
        expect([...new Uint16Array(kk.arena.memory.buffer, dst, n)], `n=${n} at ${at}`).toEqual(want);
        expect(bad, `n=${n} at ${at}`).toBe(want.some((h) => (h & 0x7c00) === 0x7c00));
        if (n === bits.length) break;
      }
      kk.arena.free(src, n * 4);
      kk.arena.free(dst, n * 2);
    }
  });

  it('skipping the scan gives the scanning call\'s bits on finite caches (plain build)', () => {
    const cases = finiteCases();
    const got = scanAndSkip({ wasm: [...readFileSync(join(WASM_DIR, 'kernels.wasm'))], cases });
    got.forEach((g, i) => expect(g.skip, `case ${i}`).toEqual(g.scan));
  });

  it.skipIf(!existsSync(CHROMIUM))('in Chromium, the relaxed build: the same', async () => {
    const cases = finiteCases();
    const got = await inChromium((page) => page.evaluate(scanAndSkip, { wasm: [...readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'))], cases }));
    got.forEach((g, i) => expect(g.skip, `case ${i}`).toEqual(g.scan));
  });

  it('a NaN in the rows at a position of tiny weight: the scan is what gets the exact result (skipping it would not)', () => {
    // (a big weight would not do: the raw pass reads the NaN as 1.5·2^16, and its sums' overflow check catches that)
    const hd = 64, size = 8;
    const q = [...randomFloats(hd, 31, 1.5)];
    const k = [...randomFloats(size * hd, 32, 1)].map(f32ToF16Bits);
    for (let i = 0; i < hd; i++) k[2 * hd + i] = f32ToF16Bits(-8 * q[i]); // position 2: score far below the others
    const v = [...randomFloats(size * hd, 33, 1)].map(f32ToF16Bits);
    v[2 * hd + 5] = 0x7e00;
    const [g] = scanAndSkip({ wasm: [...readFileSync(join(WASM_DIR, 'kernels.wasm'))], cases: [{ nHead: 1, nHeadKv: 1, hd, size, from: 0, to: size - 1, k, v, q }] });
    expect(g.scan[5]).toBeNaN();
    expect(g.skip[5]).not.toBeNaN();
  });
});

// attn_part's argument block (assembly/attn-part.ts), for n tokens from pos at mode 0 ('f16').
const shape = { nLayer: 2, nHead: 4, nHeadKv: 2, hd: 16 };
const positions = 12;

describe('attn_part keeps a sticky flag per layer', () => {
  const k = new WasmBackend({ simd: 'simd' }).kernels;
  const a = k.arena;
  const { nLayer, nHead, nHeadKv, hd } = shape;
  const qDim = nHead * hd, kDim = nHeadKv * hd, oDim = nHead * hd;

  it('a key ≥ 65520 stored in layer 0 sets layer 0\'s flag only, and every output equals kv_store + attn_f16 with the scan', () => {
    // the attn_part side: its caches, flags, argument block; the reference: its own caches
    const cache = Array.from({ length: nLayer }, () => [a.alloc(positions * kDim * 2), a.alloc(positions * kDim * 2)]);
    const refCache = Array.from({ length: nLayer }, () => [a.alloc(positions * kDim * 2), a.alloc(positions * kDim * 2)]);
    const flags = a.alloc(nLayer * 4);
    const flagView = () => [...new Int32Array(a.memory.buffer, flags, nLayer)];
    new Int32Array(a.memory.buffer, flags, nLayer).fill(0);
    const params = a.alloc(20 * 4), scratch = a.alloc(k.attnScratchBytes(nHead, nHeadKv, hd, hd, positions));
    const qp = a.alloc(qDim * 4), kp = a.alloc(kDim * 4), vp = a.alloc(kDim * 4), op = a.alloc(oDim * 4), ro = a.alloc(oDim * 4);
    const F = new Float32Array(1);
    const scaleBits = () => ((F[0] = 0.25), new Int32Array(F.buffer)[0]);
    for (let pos = 0; pos < positions; pos++) {
      for (let l = 0; l < nLayer; l++) {
        const seed = 50 * pos + 7 * l;
        const q = randomFloats(qDim, seed, 2), kn = randomFloats(kDim, seed + 1, 2), vn = randomFloats(kDim, seed + 2, 2);
        if (l === 0 && pos === 4) kn[5] = 70000; // an infinity half in layer 0's keys, from position 4 on
        a.f32(qp, qDim).set(q);
        a.f32(kp, kDim).set(kn);
        a.f32(vp, kDim).set(vn);
        const w = new Int32Array(a.memory.buffer, params, 20);
        w.set([0, op, qp, kp, vp, cache[l][0], cache[l][1], pos, 1, 0, nHead, nHeadKv, hd, hd, scaleBits(), scratch, flags + l * 4]);
        a.f32(op, oDim).fill(NaN);
        k.attnPart(params);
        const got = a.f32(op, oDim).slice();
        k.kvStore(refCache[l][0] + pos * kDim * 2, kp, kDim);
        k.kvStore(refCache[l][1] + pos * kDim * 2, vp, kDim);
        k.attention('f16', { out: ro, q: qp, kc: refCache[l][0], vc: refCache[l][1], strideK: kDim, strideV: kDim, nHead, nHeadKv, hdK: hd, hdV: hd, scale: 0.25, scratch }, 0, pos);
        expect(got, `position ${pos}, layer ${l}`).toEqual(a.f32(ro, oDim).slice());
      }
      expect(flagView(), `after position ${pos}`).toEqual([pos >= 4 ? 1 : 0, 0]);
    }
  });
});

describe('pool split attention with an infinity and a NaN stored', () => {
  const pool = new PoolBackend({ simd: 'simd', threads: 2 });
  afterAll(() => pool.dispose());

  it('equals kv_store + attn_f16 with the scan on one thread, bit for bit', () => {
    const ps = { nLayer: 2, nHead: 4, nHeadKv: 2, headDimK: 16, headDimV: 16 };
    const kDim = 32, qDim = 64, oDim = 64;
    const k = new WasmBackend({ simd: 'simd' }).kernels;
    const ra = k.arena;
    const kc = [ra.alloc(positions * kDim * 2), ra.alloc(positions * kDim * 2)];
    const vc = [ra.alloc(positions * kDim * 2), ra.alloc(positions * kDim * 2)];
    const scratch = ra.alloc(k.attnScratchBytes(4, 2, 16, 16, positions));
    const rq = ra.alloc(qDim * 4), rk = ra.alloc(kDim * 4), rv = ra.alloc(kDim * 4), ro = ra.alloc(oDim * 4);
    const split = pool.splitAttention(ps, positions)!;
    expect(split.parts).toBe(2);
    const q1 = randomFloats(16, 77, 2);
    let nan = 0;
    for (let pos = 0; pos < positions; pos++) {
      for (let l = 0; l < 2; l++) {
        const seed = 900 + 10 * pos + l;
        const q = randomFloats(qDim, seed, 2), kn = randomFloats(kDim, seed + 1, 2), vn = randomFloats(kDim, seed + 2, 2);
        // both threads' shares: a key ≥ 65520 (KV head 0, layer 0) and a NaN value (KV head 1, layer 1)
        // at a position of tiny weight (layer 1's queries all q1, its key −8·q1), which only the
        // exact pass turns into NaN (the raw pass's sums' overflow check would catch a big weight)
        if (l === 0 && pos === 3) kn[2] = -80000;
        if (l === 1) for (let h = 0; h < 4; h++) q.set(q1, h * 16);
        if (l === 1 && pos === 6) {
          for (let i = 0; i < 16; i++) kn[16 + i] = -8 * q1[i];
          vn[16 + 9] = NaN;
        }
        const out = new Float32Array(oDim).fill(-1);
        split.run(l, out, q, kn, vn, pos, 1, 'f16', 0, 0.25);
        ra.f32(rq, qDim).set(q);
        ra.f32(rk, kDim).set(kn);
        ra.f32(rv, kDim).set(vn);
        k.kvStore(kc[l] + pos * kDim * 2, rk, kDim);
        k.kvStore(vc[l] + pos * kDim * 2, rv, kDim);
        k.attention('f16', { out: ro, q: rq, kc: kc[l], vc: vc[l], strideK: kDim, strideV: kDim, nHead: 4, nHeadKv: 2, hdK: 16, hdV: 16, scale: 0.25, scratch }, 0, pos);
        expect(out, `position ${pos}, layer ${l}`).toEqual(ra.f32(ro, oDim).slice());
        nan += out.filter((x) => Number.isNaN(x)).length;
      }
    }
    expect(nan).toBeGreaterThan(0);
    split.dispose();
  });
});
