// A/B of the prompt matmul between two kernel builds on one thread: for each type, the two builds'
// WasmBackend.matmul on the same batch, alternating, best of N by thread CPU time (process.cpuUsage:
// robust to a busy machine descheduling us, unlike wall time). GMAC/s.
//   node bin/run-ts.mjs bench/gemm-ab.ts DIR_A DIR_B [types] [--rows=R --cols=C --tokens=N --runs=K] [--i16] [--amp=A]
// --i16: the relaxed Q4_K kernels with their i16 dots (what x64 without AVX-VNNI runs) in both builds.
// --amp=A: weights of magnitude A instead of 1 (0.02: a trained model's, with subnormal f16 d in Q6_K).
import { WasmBackend } from '../src/engine/backend/wasm.js';
import type { KernelInstance } from '../src/engine/wasm/instance.js';
import { ggmlTypeByName, ggmlTypeName } from '../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../src/engine/quant/index.js';
import { cpuMs } from './cpu-ms.js';

const args = process.argv.slice(2);
const opt = (k: string, d: number) => Number(args.find((a) => a.startsWith(`--${k}=`))?.split('=')[1] ?? d);
const [dirA, dirB] = args.filter((a) => !a.startsWith('--'));
const types = (args.filter((a) => !a.startsWith('--'))[2] ?? 'q4_K,q6_K').split(',').map((n) => ggmlTypeByName(n)!);
const ROWS = opt('rows', 2048), COLS = opt('cols', 768), N = opt('tokens', 128), RUNS = opt('runs', 7), AMP = opt('amp', 1);

console.log(`${N} tokens × [${ROWS}, ${COLS}], GMAC/s by CPU time, best of ${RUNS} alternating; A=${dirA} B=${dirB}${args.includes('--i16') ? ', i16 dots' : ''}`);
for (const type of types) {
  const tile = quantizeRows(type, new Float32Array(16 * COLS).map((_, i) => AMP * Math.sin(i * 0.37) * Math.cos(i * 0.011)), 16, COLS);
  const x = new Float32Array(N * COLS).map((_, i) => Math.sin(i * 0.013));
  const runs = [dirA, dirB].map((dir) => {
    const be = new WasmBackend({ dir });
    if (args.includes('--i16')) (be as unknown as { k: KernelInstance }).k.call('q4k_dot32_allow', 0);
    const h = be.addWeight({ name: 'w', type, rows: ROWS, cols: COLS }, (dst, from) => {
      for (let o = 0; o < dst.length; o++) dst[o] = tile[(from + o) % tile.length];
    });
    const out = new Float32Array(N * ROWS);
    const run = () => be.matmul(out, h, x, N);
    run();
    return { run, best: Infinity };
  });
  for (let i = 0; i < RUNS; i++) for (const r of runs) r.best = Math.min(r.best, cpuMs(r.run));
  const g = (ms: number) => ((ROWS * COLS * N) / (ms / 1000) / 1e9).toFixed(2);
  console.log(`${ggmlTypeName(type).padEnd(6)} A ${g(runs[0].best)}  B ${g(runs[1].best)}  B/A ${(runs[0].best / runs[1].best).toFixed(3)}`);
}
