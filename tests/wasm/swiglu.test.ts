// swiglu (assembly/ffn.ts: e^−x by a polynomial in f64, four lanes at a time, and swiglu_ref's own
// arithmetic for lanes whose f64 silu lies near an f32 rounding midpoint) against swiglu_ref, the
// scalar loop it replaced, bit for bit: gates of every magnitude and sign, ±0, ±Inf, NaN, the edges
// of the fast path's range, inputs found near midpoints, lengths not a multiple of four, out = gate
// and out apart. Both builds: the plain one here, the relaxed one (its polynomial by relaxed madd,
// fused on x64) inside Chromium's V8 when a Chromium is installed (PANTHEON_CHROMIUM, default
// /usr/bin/chromium), as tests/wasm/relaxed.test.ts does.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM, inChromium } from '../chromium.js';
import { describe, expect, it } from 'vitest';
import { silu } from '../../src/engine/model/ops.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { randomFloats, rng } from './gen.js';

const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');

// The plain build's polynomial, transcribed (the same IEEE f64 operations in the same order, as
// ffn.ts silu2 with madd = mul then add): s = x / (1 + e), e = 2^k·P(u) ≈ e^−x.
const C = [
  1.0000000000000135, -1.0000000000000013, 0.49999999999433037, -0.16666666666615143, 0.04166666704332249,
  -0.008333333367563363, 0.0013888801319594057, -0.00019841190256754374, 2.488466410538577e-05, -2.7632826366889156e-06,
];
const LOG2E = 1.4426950408889634, LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
const ROUND = 6755399441055744.0;
function polyExpNeg(x: number): number {
  const y = x * -LOG2E + ROUND;
  const k = y - ROUND;
  const u = k * LN2_LO + (k * LN2_HI + x);
  const u2 = u * u, u4 = u2 * u2;
  const q0 = (C[3] * u + C[2]) * u2 + (C[1] * u + C[0]);
  const q1 = (C[7] * u + C[6]) * u2 + (C[5] * u + C[4]);
  return (((C[9] * u + C[8]) * u4 + q1) * u4 + q0) * 2 ** k;
}

/**
 * Gates (found by a search over [−12, 12]) where the polynomial's silu and the reference's round to
 * different f32: without the fallback to the reference's arithmetic, swiglu would differ here.
 */
const STRADDLE = [-11.853901863098145, -11.783219337463379, -9.423911094665527, -6.722277641296387, -1.0942147970199585, -0.40361547470092773, 0.9798005223274231];

/** Whether an f64's low 29 mantissa bits lie within 2^12 of 2^28 (near a midpoint between two f32). */
const f64 = new Float64Array(1);
const lo32 = new Uint32Array(f64.buffer);
function nearMidpoint(s: number): boolean {
  f64[0] = s;
  return Math.abs((lo32[0] & 0x1fffffff) - 0x10000000) <= 4096;
}

/**
 * Gate and up values for the comparisons: hidden-state-like, wide, every magnitude; then gates near
 * midpoints, the special values and STRADDLE last (the runs over the last 48 reach every step).
 */
function inputs(): { gate: Float32Array; up: Float32Array; near: number } {
  const r = rng(5);
  const g: number[] = [];
  g.push(...randomFloats(20000, 1, 2)); // σ ≈ 2, a few ×8 outliers
  for (let i = 0; i < 20000; i++) g.push((r() - 0.5) * 200); // ±100
  for (let i = 0; i < 20000; i++) g.push((r() < 0.5 ? -1 : 1) * 10 ** (r() * 49 - 45)); // 1e-45 … 1e4
  // gates whose silu lies within 2^12 f64 ulps of an f32 midpoint: the lanes handed to the reference
  let near = 0;
  for (let i = 0; near < 300 && i < 3e7; i++) {
    const x = Math.fround((r() - 0.5) * 40);
    if (nearMidpoint(silu(x))) {
      g.push(x);
      near++;
    }
  }
  const edge = 2 ** -124;
  g.push(0, -0, Infinity, -Infinity, NaN, 80, -80, Math.fround(80 * (1 + 2 ** -23)), Math.fround(-80 * (1 + 2 ** -23)),
    edge, -edge, Math.fround(edge * (1 - 2 ** -24)), -Math.fround(edge * (1 - 2 ** -24)), 2 ** -126, 2 ** -149, -(2 ** -149),
    88.72, -88.72, 103.9, -103.9, 700, -745, 3.4028234663852886e38, -3.4028234663852886e38, 1, -1, 2, -2);
  g.push(...STRADDLE);
  const gate = Float32Array.from(g);
  const up = randomFloats(gate.length, 2, 1);
  up.set([0, -0, Infinity, -Infinity, NaN, 1e30], 7);
  up.set([0, -0, Infinity, NaN], gate.length - 30);
  return { gate, up, near };
}

/**
 * One build's swiglu against its swiglu_ref over (gate, up), every f32 compared by its bits (any NaN
 * equal to any NaN): the whole arrays from each of the first 8 elements, in place (out = gate) and
 * apart; then every run of 1 … 48 − j elements from the j-th of the last 48, apart (so the eight-
 * and four-lane steps and the tail each meet the special values and gates near midpoints).
 * Returns the mismatches found (at most 10), as text.
 */
function runBuild({ wasm, gate, up }: { wasm: number[]; gate: number[]; up: number[] }): string[] {
  const n = gate.length;
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const at = Math.ceil(ex.heap_base() / 64) * 64;
  const g = at, u = g + n * 4 + 64, o1 = u + n * 4 + 64, o2 = o1 + n * 4 + 64;
  const end = o2 + n * 4 + 64;
  if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
  new Float32Array(memory.buffer, u, n).set(up);
  const G = new Float32Array(memory.buffer, g, n);
  const bad: string[] = [];
  const compare = (what: string, from: number, a: number, b: number, m: number) => {
    const fa = new Float32Array(memory.buffer, a, m), fb = new Float32Array(memory.buffer, b, m);
    const ia = new Uint32Array(memory.buffer, a, m), ib = new Uint32Array(memory.buffer, b, m);
    for (let i = 0; i < m && bad.length < 10; i++) {
      if (ia[i] !== ib[i] && !(fa[i] !== fa[i] && fb[i] !== fb[i])) bad.push(`${what}: gate ${gate[from + i]} up ${up[from + i]}: ${fa[i]} vs ${fb[i]}`);
    }
  };
  for (let j = 0; j < 8; j++) {
    const m = n - j, gj = g + j * 4, uj = u + j * 4;
    for (const [out, name] of [[o1, 'swiglu'], [o2, 'swiglu_ref']] as const) {
      G.set(gate);
      ex[name](gj, gj, uj, m);
      new Float32Array(memory.buffer, out, m).set(new Float32Array(memory.buffer, gj, m));
    }
    compare(`in place from ${j}`, j, o1, o2, m);
    G.set(gate);
    ex.swiglu(o1, gj, uj, m);
    ex.swiglu_ref(o2, gj, uj, m);
    compare(`apart from ${j}`, j, o1, o2, m);
  }
  for (let j = n - 48; j < n; j++) {
    for (let m = 1; j + m <= n; m++) {
      ex.swiglu(o1, g + j * 4, u + j * 4, m);
      ex.swiglu_ref(o2, g + j * 4, u + j * 4, m);
      compare(`${m} from ${j}`, j, o1, o2, m);
    }
  }
  return bad;
}

describe('swiglu = swiglu_ref bit for bit', () => {
  const { gate, up, near } = inputs();

  it('plain build: every input kind, in place and apart, any length and alignment', () => {
    expect(near).toBe(300);
    expect(runBuild({ wasm: [...readFileSync(join(WASM_DIR, 'kernels.wasm'))], gate: [...gate], up: [...up] })).toEqual([]);
  });

  it('the polynomial alone is within 2^-45.3 of e^−x on [−80, 80], yet rounds differently on the STRADDLE gates, which swiglu gets right', () => {
    const r = rng(9);
    let worst = 0;
    for (let i = 0; i < 200000; i++) {
      const x = (r() - 0.5) * 160;
      worst = Math.max(worst, Math.abs(polyExpNeg(x) / Math.exp(-x) - 1));
    }
    expect(worst).toBeLessThan(2 ** -45.3);
    expect(worst).toBeGreaterThan(2 ** -47); // the bound is near tight: the fit's error, not Math.exp's
    // each in its own eight-lane step (at lane j), among gates of 0.5
    const k = new KernelInstance(loadKernelModule({ simd: 'simd' }));
    const n = STRADDLE.length * 8;
    const g = k.arena.alloc(n * 4), u = k.arena.alloc(n * 4), o = k.arena.alloc(n * 4);
    k.arena.f32(g, n).set(STRADDLE.flatMap((x, j) => Array.from({ length: 8 }, (_, l) => (l === j ? x : 0.5))));
    k.arena.f32(u, n).fill(1);
    k.call('swiglu_ref', o, g, u, n);
    const ref = [...k.arena.f32(o, n)];
    k.call('swiglu', o, g, u, n);
    expect([...k.arena.f32(o, n)]).toEqual(ref);
    STRADDLE.forEach((x, j) => {
      expect(Math.fround(x / (1 + polyExpNeg(x))), `gate ${x}`).not.toBe(ref[j * 9]);
      expect(Math.fround(silu(x)), `gate ${x}`).toBe(ref[j * 9]);
      expect(nearMidpoint(x / (1 + polyExpNeg(x))), `gate ${x}`).toBe(true);
    });
  });

  it.skipIf(!existsSync(CHROMIUM))('in Chromium: the relaxed build, and the plain build as in Node', async () => {
    await inChromium(async (page) => {
      for (const file of ['kernels-relaxed.wasm', 'kernels.wasm']) {
        expect(await page.evaluate(runBuild, { wasm: [...readFileSync(join(WASM_DIR, file))], gate: [...gate], up: [...up] }), file).toEqual([]);
      }
    });
  });
});
