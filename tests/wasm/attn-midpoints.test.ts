// attn_f16's per-position f16 rounding of the V accumulator at exact ties, in both kernel builds (the
// relaxed one inside Chromium, as tests/wasm/attention-relaxed.test.ts runs it). With q = 0 every
// score is 0, so every weight e^(s − M) is exactly 1 and acc + v is a sum of two halves: whenever
// their exponents differ, it lies on a midpoint between two halves about half the time, so ties to
// even (and not away from zero, or a rounding left to the end) decide the result. Checked against
// a hand-worked example and against the scalar reference (src/engine/model/attention.ts).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attention, createAttentionScratch, type AttentionDims } from '../../src/engine/model/attention.js';
import { f32ToF16Bits } from '../../src/engine/quant/half.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { CHROMIUM, inChromium } from '../chromium.js';
import { rng } from './gen.js';

const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');
const HD = 64;

interface Case { size: number; v: number[] }

/** attn_f16 of one head (head size 64, q = 0, scale 1) over positions 0..size − 1 of each case, in a build. */
function runBuild({ wasm, cases }: { wasm: number[]; cases: Case[] }): number[][] {
  const hd = 64;
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  return cases.map((c) => {
    const kc = up(ex.heap_base());
    const vc = up(kc + c.size * hd * 2);
    const q = up(vc + c.size * hd * 2);
    const o = up(q + hd * 4);
    const scratch = up(o + hd * 4);
    const end = scratch + ex.attn_scratch_bytes(1, 1, hd, hd, c.size);
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    new Uint16Array(memory.buffer, kc, c.size * hd).fill(0x3c00); // keys all 1 (the scores are 0 anyway)
    new Uint16Array(memory.buffer, vc, c.v.length).set(c.v);
    new Float32Array(memory.buffer, q, hd).fill(0);
    ex.attn_f16(o, q, kc, vc, hd, hd, 0, c.size - 1, 1, 1, hd, hd, 1, scratch);
    return [...new Float32Array(memory.buffer, o, hd)];
  });
}

/** The scalar reference's output. */
function reference(c: Case): number[] {
  const d: AttentionDims = { nHead: 1, nHeadKv: 1, headDimK: HD, headDimV: HD };
  const cache = { size: c.size, kvDimK: HD, kvDimV: HD, k: [new Uint16Array(c.size * HD).fill(0x3c00)], v: [Uint16Array.from(c.v)], nonFinite: new Uint8Array(1) };
  const out = new Float32Array(HD);
  attention(out, 0, new Float32Array(HD), 0, cache, 0, 0, c.size - 1, d, 1, 'f16', createAttentionScratch(d, c.size));
  return [...out];
}

/**
 * Random finite halves with exponents from subnormal up to 2^4 and either sign: sums of two land on
 * ties at every scale, the subnormal boundary included.
 */
function tieHalves(n: number, seed: number): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => ((r() < 0.5 ? 0x8000 : 0) | (Math.floor(r() * 20) << 10) | Math.floor(r() * 1024)));
}

/**
 * Five positions; lanes 0..3 worked by hand, the rest random (tieHalves). Lane 0: 1024, then 0.5 four
 * times: each 1024.5 is a tie that goes to the even 1024 (exact sums would reach 1026, ties away
 * from zero 1025.5 → 1026 …), so acc = 1024; lane 1 the same negated; lane 2: 2^-13 (ulp 2^-23),
 * then 2^-24 four times: ties again, acc = 2^-13; lane 3: subnormals 3·2^-24 then 2^-24 four times,
 * exact, acc = 7·2^-24. S = 5 (every weight 1), out = acc · fround(1/5).
 */
function handCase(): Case {
  const v = tieHalves(5 * HD, 3);
  const lanes = [[1024, 0.5], [-1024, -0.5], [2 ** -13, 2 ** -24], [3 * 2 ** -24, 2 ** -24]];
  lanes.forEach(([first, rest], l) => {
    v[l] = f32ToF16Bits(first);
    for (let t = 1; t < 5; t++) v[t * HD + l] = f32ToF16Bits(rest);
  });
  return { size: 5, v };
}

const inv5 = Math.fround(1 / 5);
const hand = [1024, -1024, 2 ** -13, 7 * 2 ** -24].map((x) => Math.fround(x * inv5));
const cases: Case[] = [handCase(), { size: 41, v: tieHalves(41 * HD, 5) }, { size: 200, v: tieHalves(200 * HD, 6) }];

describe('attn_f16 at f16 midpoints', () => {
  it('the plain build: ties to even per position, by hand and as the reference', () => {
    const out = runBuild({ wasm: [...readFileSync(join(WASM_DIR, 'kernels.wasm'))], cases });
    expect(out[0].slice(0, 4)).toEqual(hand);
    cases.forEach((c, i) => expect(out[i], `${c.size} positions`).toEqual(reference(c)));
  });

  it.skipIf(!existsSync(CHROMIUM))('in Chromium, the relaxed build: the same', async () => {
    const out = await inChromium((page) => page.evaluate(runBuild, { wasm: [...readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'))], cases }));
    expect(out[0].slice(0, 4)).toEqual(hand);
    cases.forEach((c, i) => expect(out[i], `${c.size} positions`).toEqual(reference(c)));
  });
});
