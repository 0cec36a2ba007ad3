// `npm run bench:quantize`: Pantheon's quantisers against ggml's (ggml_quantize_chunk from
// node-llama-cpp's libggml-base, bench/llama-tools.ts), one thread each, on rows of an 8B
// model's shapes (Llama-3-8B: rows of 4096 for q/k/v/o/gate/up, 14336 for down), with and
// without an importance matrix. Both quantise the same rows; the bytes are checked equal, and
// the throughput (M elements/s) and Pantheon/ggml ratio printed per type, best of REPEATS runs.
//   node bin/run-ts.mjs bench/quantize-speed.ts [--rows N] [--types Q4_K,Q6_K,...]

import { GgmlType, ggmlTypeByName, ggmlTypeName } from '../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../src/engine/quant/index.js';
import { ggmlQuantize } from './llama-tools.js';
import { fillNormal, fnv1a, uniform } from './random-weights.js';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const ROWS = Number(opt('rows') ?? 64);
const REPEATS = 3;
const TYPES = (opt('types') ?? 'Q4_K,Q5_K,Q6_K,Q3_K,Q2_K,IQ4_XS,Q4_0,Q8_0,IQ3_S').split(',').map((t) => ggmlTypeByName(t)!);
const SHAPES = [4096, 14336];

function best(f: () => number): number {
  let b = Infinity;
  for (let i = 0; i < REPEATS; i++) b = Math.min(b, f());
  return b;
}

console.log(`rows of ${SHAPES.join(' and ')} (${ROWS} each), 1 thread each, best of ${REPEATS}; M elements/s`);
console.log('type      imatrix  pantheon     ggml   ratio  bytes');
for (const type of TYPES) {
  for (const withIm of [false, true]) {
    if (!withIm && type === GgmlType.IQ3_S) continue;
    let tP = 0;
    let tG = 0;
    let same = true;
    let n = 0;
    for (const cols of SHAPES) {
      const x = fillNormal(new Float32Array(ROWS * cols), 0.02, uniform(fnv1a(`speed.${cols}`)));
      const im = withIm ? fillNormal(new Float32Array(cols), 1, uniform(fnv1a(`speed.im.${cols}`))).map((v) => Math.exp(v)) : undefined;
      let mine: Uint8Array = new Uint8Array(0);
      tP += best(() => {
        const t0 = performance.now();
        mine = quantizeRows(type, x, ROWS, cols, im);
        return (performance.now() - t0) / 1000;
      });
      let theirs: Uint8Array = new Uint8Array(0);
      tG += best(() => {
        const r = ggmlQuantize(type, x, ROWS, cols, im);
        theirs = r.bytes;
        return r.seconds;
      });
      same &&= Buffer.compare(mine, theirs) === 0;
      n += ROWS * cols;
    }
    const p = n / tP / 1e6;
    const g = n / tG / 1e6;
    console.log(`${ggmlTypeName(type).padEnd(9)} ${withIm ? 'yes' : 'no '}     ${p.toFixed(2).padStart(8)} ${g.toFixed(2).padStart(8)}  ${(p / g).toFixed(3).padStart(6)}  ${same ? 'equal' : 'DIFFER'}`);
  }
}
