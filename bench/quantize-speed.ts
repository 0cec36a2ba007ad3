// `npm run bench:quantize`: Pantheon's quantisers against ggml's (ggml_quantize_chunk from
// node-llama-cpp's libggml-base, bench/llama-tools.ts), one thread each, on rows of an 8B
// model's shapes (Llama-3-8B: rows of 4096 for q/k/v/o/gate/up, 14336 for down), with and
// without an importance matrix. Both quantise the same rows; the bytes are checked equal, and
// the throughput (M elements/s) printed per type: Pantheon with its TypeScript reference scale
// searches (`ref`, the quantiser before the WebAssembly kernels), with the kernels (`pantheon`),
// and ggml, with the ratios pantheon/ggml. Times are CPU time (Pantheon: the process's, ggml: its
// thread's), best of REPEATS runs taken in turn, so a loaded machine slows both alike; --wall
// prints wall-clock times instead.
//   node bin/run-ts.mjs bench/quantize-speed.ts [--rows N] [--types Q4_K,Q6_K,...] [--wall]

import { GgmlType, ggmlTypeByName, ggmlTypeName } from '../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../src/engine/quant/index.js';
import { useScaleKernel } from '../src/engine/quant/quant-kernel.js';
import { ggmlQuantize } from './llama-tools.js';
import { fillNormal, fnv1a, uniform } from './random-weights.js';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const ROWS = Number(opt('rows') ?? 64);
const REPEATS = 3;
const TYPES = (opt('types') ?? 'Q4_K,Q5_K,Q6_K,Q3_K,Q2_K,IQ4_XS,Q4_0,Q8_0,IQ3_S,IQ3_XXS,IQ2_S,IQ2_XS,IQ2_XXS,IQ1_M,IQ1_S')
  .split(',').map((t) => ggmlTypeByName(t)!);
// The grid types are quantised with an importance matrix only (llama.cpp's recipe requires one for them).
const IMATRIX_ONLY = new Set([GgmlType.IQ3_S, GgmlType.IQ3_XXS, GgmlType.IQ2_S, GgmlType.IQ2_XS, GgmlType.IQ2_XXS, GgmlType.IQ1_M, GgmlType.IQ1_S]);
const SHAPES = [4096, 14336];
const WALL = args.includes('--wall');

/** Seconds f took: CPU time of this process (or wall time with --wall). */
function timed(f: () => void): number {
  if (WALL) {
    const t0 = performance.now();
    f();
    return (performance.now() - t0) / 1000;
  }
  const c0 = process.cpuUsage();
  f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e6;
}

console.log(`rows of ${SHAPES.join(' and ')} (${ROWS} each), 1 thread each, best of ${REPEATS}, ${WALL ? 'wall' : 'CPU'} time; M elements/s`);
console.log('type      imatrix       ref pantheon     ggml  ref/ggml  ratio  bytes');
for (const type of TYPES) {
  for (const withIm of [false, true]) {
    if (!withIm && IMATRIX_ONLY.has(type)) continue;
    const t = [Infinity, Infinity, Infinity];
    let tR = 0, tP = 0, tG = 0;
    let same = true;
    let n = 0;
    for (const cols of SHAPES) {
      const x = fillNormal(new Float32Array(ROWS * cols), 0.02, uniform(fnv1a(`speed.${cols}`)));
      const im = withIm ? fillNormal(new Float32Array(cols), 1, uniform(fnv1a(`speed.im.${cols}`))).map((v) => Math.exp(v)) : undefined;
      let mine: Uint8Array = new Uint8Array(0);
      let ref: Uint8Array = new Uint8Array(0);
      let theirs: Uint8Array = new Uint8Array(0);
      t.fill(Infinity);
      // warm-up (untimed): a model's quantisation runs millions of rows, so the JIT's steady state is what counts
      for (const on of [false, true]) {
        useScaleKernel(on);
        for (let r = 0; r < 4; r++) quantizeRows(type, x.subarray(0, 8 * cols), 8, cols, im);
      }
      for (let r = 0; r < REPEATS; r++) {
        useScaleKernel(false);
        t[0] = Math.min(t[0], timed(() => { ref = quantizeRows(type, x, ROWS, cols, im); }));
        useScaleKernel(true);
        t[1] = Math.min(t[1], timed(() => { mine = quantizeRows(type, x, ROWS, cols, im); }));
        const g = ggmlQuantize(type, x, ROWS, cols, im);
        theirs = g.bytes;
        t[2] = Math.min(t[2], WALL ? g.seconds : g.cpuSeconds);
      }
      tR += t[0];
      tP += t[1];
      tG += t[2];
      same &&= Buffer.compare(mine, theirs) === 0 && Buffer.compare(ref, theirs) === 0;
      n += ROWS * cols;
    }
    const [r, p, g] = [tR, tP, tG].map((v) => n / v / 1e6);
    const f = (v: number, w = 8) => v.toFixed(2).padStart(w);
    console.log(`${ggmlTypeName(type).padEnd(9)} ${withIm ? 'yes' : 'no '}     ${f(r)} ${f(p)} ${f(g)}  ${(r / g).toFixed(3).padStart(8)} ${(p / g).toFixed(3).padStart(6)}  ${same ? 'equal' : 'DIFFER'}`);
  }
}
