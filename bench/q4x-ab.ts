// A/B of the Q4_0 matvec of two kernel builds in one process, one thread: each build's own
// layout (layout_q4_0 when it has one), the same matrix, timed alternately, best of N rounds.
// GB/s of weight bytes; a matrix in L3 (rows × cols ≈ 18 MiB) and one from DRAM (≈ 256 MiB).
//
//   node bin/run-ts.mjs bench/q4x-ab.ts OLD_WASM_DIR NEW_WASM_DIR [cols=8192] [rounds=7] [ROWS L]
//   (with ROWS L: a stack of L matrices of ROWS × cols instead, e.g. 4864 48 with cols 896)
import { GgmlType, rowBytes } from '../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../src/engine/quant/index.js';
import { newSharedMemory } from '../src/engine/wasm/arena.js';
import { KernelInstance } from '../src/engine/wasm/instance.js';
import { actBytes } from '../src/engine/wasm/layout.js';
import { loadKernelModule } from '../src/engine/wasm/loader.js';

const [oldDir, newDir] = process.argv.slice(2, 4);
const cols = Number(process.argv[4] ?? 8192), rounds = Number(process.argv[5] ?? 7);
const rows0 = Number(process.argv[6] ?? 0), stack = Number(process.argv[7] ?? 0);
const rb = rowBytes(GgmlType.Q4_0, cols);
const tile = quantizeRows(GgmlType.Q4_0, new Float32Array(16 * cols).map((_, i) => Math.sin(i * 0.37) * Math.cos(i * 0.011)), 16, cols);
const x = new Float32Array(cols).map((_, i) => Math.sin(i));

/** A stack of L rows × cols matrices in one build's layout, and a pass of matvecs over them all. */
function setup(dir: string, rows: number, L: number) {
  const k = new KernelInstance(loadKernelModule({ dir }), newSharedMemory(L * (rows + 4) * rb + 2 ** 22));
  const a = k.arena;
  const slack = 4 * rb;
  let hasLayout = true;
  try { k.kernel('layout_q4_0'); } catch { hasLayout = false; }
  const ws = Array.from({ length: L }, () => {
    const p = a.alloc(rows * rb + slack);
    const src = a.u8(p + slack, rows * rb);
    for (let o = 0; o < src.length; o += tile.length) src.set(tile.subarray(0, Math.min(tile.length, src.length - o)), o);
    if (hasLayout) k.call('layout_q4_0', p, p + slack, rows, cols);
    return hasLayout ? p : p + slack;
  });
  const xp = a.alloc(cols * 4), xq = a.alloc(actBytes('q8_0', cols)), out = a.alloc(rows * 4);
  a.f32(xp, cols).set(x);
  k.quantize('q8_0', xq, xp, cols);
  const mv = k.kernel('matvec_q4_0');
  return { run: () => { for (const w of ws) mv(out, w, rb, 0, rows, xq, cols); }, out: () => a.f32(out, rows).slice() };
}

const shapes: [string, number, number][] = stack
  ? [[`stack of ${stack} × ${rows0} × ${cols}`, rows0, stack]]
  : [18, 256].map((mib) => [`${mib} MiB`, Math.ceil((mib * 2 ** 20) / rb / 4) * 4, 1]);
for (const [label, rows, L] of shapes) {
  const A = setup(oldDir, rows, L), B = setup(newDir, rows, L);
  A.run(); B.run();
  const same = A.out().every((v, i) => Object.is(v, B.out()[i]));
  let ta = Infinity, tb = Infinity;
  for (let r = 0; r < rounds; r++) {
    for (const [which, f] of [['a', A.run], ['b', B.run]] as const) {
      const reps = rows * L * rb < 2 ** 26 ? 5 : 1;
      for (let i = 0; i < reps; i++) {
        const t0 = performance.now();
        f();
        const t = performance.now() - t0;
        if (which === 'a') ta = Math.min(ta, t); else tb = Math.min(tb, t);
      }
    }
  }
  const gb = (t: number) => ((L * rows * rb) / (t * 1e6)).toFixed(2);
  console.log(`${label} (${rows} × ${cols}): old ${gb(ta)} GB/s, new ${gb(tb)} GB/s, new/old ${(ta / tb).toFixed(3)}; outputs ${same ? 'identical' : 'DIFFER'}`);
}
