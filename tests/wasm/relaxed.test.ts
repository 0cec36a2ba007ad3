// The relaxed-SIMD build (i32x4.relaxed_dot_i8x16_i7x16_add_s) must agree with the scalar reference
// as closely as the plain build does: its 7-bit operand is always a weight in [0, 127], where relaxed
// dot products are deterministic, so every block's integer sum is exact; only the grouping of
// products into the four i32 lanes differs (4 consecutive lanes vs pairs from low/high halves), so
// float rounding differs by an ulp here and there. Node 20 cannot run it (no relaxed SIMD; behind
// --experimental-wasm-relaxed-simd its V8 11.3 returns doubled dot products, which the probe
// catches), so both builds are compared inside Chromium's current V8 — the engine Electron ships —
// when a Chromium is installed (PANTHEON_CHROMIUM, default /usr/bin/chromium).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM, inChromium } from '../chromium.js';
import { describe, expect, it } from 'vitest';
import { ggmlTypeInfo, ggmlTypeName, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { canQuantize, dequantizeRow, quantizeActivation, vecDot } from '../../src/engine/quant/index.js';
import { actBytes, KERNEL_TYPES } from '../../src/engine/wasm/layout.js';
import { hasRelaxedSimd, loadKernelModule, relaxedProbe } from '../../src/engine/wasm/loader.js';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { EXPECT_RELAXED } from './builds.js';
import { movedLayout, quantisedWeights, randomBlocks, randomFloats } from './gen.js';

const WASM_DIR = join(loadKernelModule({ simd: 'simd' }).path, '..');

interface Case { name: string; suffix: string; act: string; rows: number; cols: number; rb: number; ab: number; n: number; w: number[]; x: number[]; lay: string }

/** In the page: instantiate a kernel build and run each case's quantise + matmul (n rows) + matvec. */
function runInPage({ wasm, cases }: { wasm: number[]; cases: Case[] }): number[][] {
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
  const ex = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(wasm)), { env: { memory } }).exports as Record<string, (...a: number[]) => number>;
  const up = (p: number) => Math.ceil(p / 64) * 64;
  return cases.map((c) => {
    const w = up(ex.heap_base());
    const x = up(w + c.w.length);
    const xq = up(x + c.x.length * 4);
    const out = up(xq + c.n * c.ab);
    const one = up(out + c.n * c.rows * 4);
    // Q4_0, Q4_K, Q6_K: the build's stored layout, laid out by layout_* (Q4_K through four rows of temp) from a copy past the end
    const lay = c.lay ? ex[c.lay] : undefined;
    const stage = up(one + c.rows * 4);
    const temp = up(stage + c.w.length);
    const end = lay ? temp + 4 * c.rb : stage;
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    new Uint8Array(memory.buffer).set(c.w, lay ? stage : w);
    if (lay && c.suffix === 'q4_K') lay(w, stage, temp, c.rows, c.cols);
    else if (lay) lay(w, stage, c.rows, c.cols);
    new Float32Array(memory.buffer, x, c.x.length).set(c.x);
    for (let t = 0; t < c.n; t++) ex[`quantize_${c.act}`](xq + t * c.ab, x + t * c.cols * 4, c.cols);
    ex[`matmul_${c.suffix}`](out, w, c.rb, 0, c.rows, xq, c.cols, c.n, c.ab, c.rows);
    ex[`matvec_${c.suffix}`](one, w, c.rb, 0, c.rows, xq, c.cols);
    return [...new Float32Array(memory.buffer, out, c.n * c.rows), ...new Float32Array(memory.buffer, one, c.rows)];
  });
}

describe('relaxed SIMD', () => {
  it('is chosen only when the probe runs correctly; asking for it without support is an error', () => {
    expect(loadKernelModule().simd).toBe(hasRelaxedSimd() ? 'relaxed' : 'simd');
    if (!hasRelaxedSimd()) expect(() => loadKernelModule({ simd: 'relaxed' })).toThrow(/relaxed SIMD/);
  });

  // CI's Node 24 part sets PANTHEON_EXPECT_RELAXED=1: there the build Electron runs must be the one
  // the backends chose, or every model test of that run would check the plain build again.
  it.runIf(EXPECT_RELAXED)('PANTHEON_EXPECT_RELAXED=1: this engine runs relaxed SIMD and the wasm and pool backends chose the relaxed build', () => {
    expect(hasRelaxedSimd(), `${process.version} has no usable relaxed SIMD`).toBe(true);
    const wasm = new WasmBackend();
    const pool = new PoolBackend({ threads: 2 });
    try {
      expect([wasm.name, pool.name]).toEqual(['wasm-relaxed', 'wasm-relaxed-pool']);
      expect(wasm.kernels.simd).toBe('relaxed');
    } finally {
      pool.dispose();
    }
  });

  it.skipIf(!existsSync(CHROMIUM))('in Chromium: the probe passes; relaxed kernels match the scalar reference (2e-6 / 2e-5 of Σ|w·x|) and plain kernels match Node bit for bit', async () => {
    const cases: Case[] = [];
    let seed = 1;
    for (const kt of KERNEL_TYPES.values()) {
      const bs = ggmlTypeInfo(kt.type)!.blockSize;
      const rows = 9;
      const cols = bs === 1 ? 101 : bs === 32 ? 352 : 768;
      for (const w of [randomBlocks(kt.type, rows, cols, seed++), bs > 1 && canQuantize(kt.type) ? quantisedWeights(kt.type, rows, cols, seed++) : undefined]) {
        if (!w) continue;
        const n = 2;
        cases.push({ name: ggmlTypeName(kt.type), suffix: kt.suffix, act: kt.act, rows, cols, rb: rowBytes(kt.type, cols), ab: actBytes(kt.act, cols), n, w: [...w], x: [...randomFloats(n * cols, seed++, 2)], lay: movedLayout(kt.type, cols) });
      }
    }
    await inChromium(async (page) => {
      const probe = await page.evaluate((b) => (new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(b))).exports.f as () => number)(), [...relaxedProbe()]);
      expect(probe).toBe(22);
      const plain = await page.evaluate(runInPage, { wasm: [...readFileSync(join(WASM_DIR, 'kernels.wasm'))], cases });
      const relaxed = await page.evaluate(runInPage, { wasm: [...readFileSync(join(WASM_DIR, 'kernels-relaxed.wasm'))], cases });
      const plainNode = runInPage({ wasm: [...readFileSync(join(WASM_DIR, 'kernels.wasm'))], cases });
      cases.forEach((c, i) => {
        const type = [...KERNEL_TYPES.values()].find((k) => k.suffix === c.suffix)!.type;
        const w = new Uint8Array(c.w);
        // Chromium's plain build agrees with Node's exactly (same module, another engine) …
        expect(plain[i], c.name).toEqual(plainNode[i]);
        // … and the relaxed build is as close to the scalar reference as kernels.test.ts demands.
        const tol = ggmlTypeInfo(type)!.blockSize === 1 ? 2e-5 : 2e-6;
        for (let t = 0; t < c.n; t++) {
          const x = new Float32Array(c.x.slice(t * c.cols, (t + 1) * c.cols));
          const act = quantizeActivation(type, x).data;
          for (let r = 0; r < c.rows; r++) {
            const ref = vecDot(type, w, r * c.rb, act, 0, c.cols);
            const row = new Float32Array(c.cols);
            dequantizeRow(type, w, r * c.rb, row, c.cols);
            const scale = row.reduce((s, v, j) => s + Math.abs(v * x[j]), 0);
            expect(Math.abs(relaxed[i][t * c.rows + r] - ref), `${c.name} row ${r}`).toBeLessThanOrEqual(tol * scale + 1e-30);
            if (t === 0) expect(relaxed[i][c.n * c.rows + r], 'matvec = matmul column').toBe(relaxed[i][r]);
          }
        }
      });
    });
  });
});
