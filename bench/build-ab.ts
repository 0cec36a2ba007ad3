// Two kernel builds A/B in one process, pass by pass: qwen2-0.5b's per-layer products as a generated
// token meets them (q, k, v, o, gate, up, down × 24 layers, and the tied 151936 × 896 Q8_0 output
// unless `noout`; SHAPE=110m: the llama 110M's 12 layers and 32000-row output) on a pool of THREADS threads per build, the two pools alternating passes (the
// idle one's workers asleep), so the host's drift falls on both alike. Prints each build's median
// ms per pass and GB/s, and the median of the paired ratios B/A. The pool built second has run up
// to 5% faster here with the same build on both sides: run it both ways (A B, then B A) and take
// √(ratio₁ / ratio₂); A/A that way gave 0.986–0.994.
//
//   node bin/run-ts.mjs bench/build-ab.ts DIR_A DIR_B [TYPE=Q8_0] [THREADS=2] [PASSES=40] [noout|model]
//   (DIR_*: folders holding kernels-relaxed.wasm / kernels.wasm, e.g. copies of build/wasm)
// `model` makes the calls as the forward pass does (q, k, v in one matmulShared with biases, gate
// and up in one matmulGated, o and down added into the residual by matvecAdd, the output through
// matvecTop with 40 top logits) instead of one matvec per matrix. BAND_A=… BAND_B=… give the two
// pools different PoolOptions.band (the same DIR twice then compares the split instead of builds).
// SHARDS_A=… SHARDS_B=… give them PoolOptions.shards; POOL_A=/other/checkout/src/engine/backend/pool.ts
// (or POOL_B) takes that pool's code from another checkout (the pool before and after a change).
import { PoolBackend } from '../src/engine/backend/pool.js';
import { ggmlTypeByName, rowBytes } from '../src/engine/gguf/ggml-types.js';
import { quantizeRows } from '../src/engine/quant/index.js';

const [dirA, dirB] = process.argv.slice(2, 4);
if (!dirA || !dirB) throw new Error('usage: build-ab.ts DIR_A DIR_B [TYPE] [THREADS] [PASSES] [noout]');
const type = ggmlTypeByName(process.argv[4] ?? 'Q8_0')!;
const threads = Number(process.argv[5] ?? 2);
const passes = Number(process.argv[6] ?? 40);
const withOut = process.argv[7] !== 'noout';
const asModel = process.argv[7] === 'model';
// SHAPE=110m: the llama 110M's layers instead (12 of them, n_embd 768, ffn 2048, no GQA, vocab 32000)
const small = process.env.SHAPE === '110m';
const [nLayer, nEmbd, nKv, nFf, nVocab] = small ? [12, 768, 768, 2048, 32000] : [24, 896, 128, 4864, 151936];
const shapes: [number, number][] = [[nEmbd, nEmbd], [nKv, nEmbd], [nKv, nEmbd], [nEmbd, nEmbd], [nFf, nEmbd], [nFf, nEmbd], [nEmbd, nFf]];

const data = new Map<string, Uint8Array>();
function weights(t: number, rows: number, cols: number): Uint8Array {
  const k = `${t}:${rows}x${cols}`;
  let d = data.get(k);
  if (!d) {
    const f = new Float32Array(rows * cols);
    let s = 1;
    for (let i = 0; i < f.length; i++) { s = (s * 1103515245 + 12345) >>> 0; f[i] = ((s >>> 8) / 2 ** 24 - 0.5) * 0.04; }
    d = quantizeRows(t, f, rows, cols);
    data.set(k, d);
  }
  return d;
}

const q8 = ggmlTypeByName('Q8_0')!;
const poolFrom = async (path?: string): Promise<typeof PoolBackend> => (path ? ((await import(path)) as { PoolBackend: typeof PoolBackend }).PoolBackend : PoolBackend);
const [PoolA, PoolB] = [await poolFrom(process.env.POOL_A), await poolFrom(process.env.POOL_B)];
function build(dir: string, band?: number, shards?: number, Pool = PoolBackend) {
  const be = new Pool({ threads, dir, band, shards });
  const ws = [];
  for (let l = 0; l < nLayer; l++) for (const [r, c] of shapes) {
    const d = weights(type, r, c);
    ws.push(be.addWeight({ name: `w${l}-${r}`, type, rows: r, cols: c }, (dst, off) => dst.set(d.subarray(off, off + dst.length))));
  }
  if (withOut) {
    // one 8192-row tile of the output, repeated (quantising 136M values would take minutes)
    const tile = weights(q8, 8192, nEmbd);
    ws.push(be.addWeight({ name: 'output', type: q8, rows: nVocab, cols: nEmbd }, (dst, off) => { for (let o = 0; o < dst.length; o++) dst[o] = tile[(off + o) % tile.length]; }));
  }
  return { be, ws };
}
const bytes = shapes.reduce((b, [r, c]) => b + r * rowBytes(type, c), 0) * nLayer + (withOut ? nVocab * rowBytes(q8, nEmbd) : 0);
// BAND_A / BAND_B: the pools' PoolOptions.band (default: the pool's), to A/B the split itself
const bandOf = (v?: string) => (v === undefined ? undefined : Number(v));
const A = build(dirA, bandOf(process.env.BAND_A), bandOf(process.env.SHARDS_A), PoolA), B = build(dirB, bandOf(process.env.BAND_B), bandOf(process.env.SHARDS_B), PoolB);
const xs = new Map<number, Float32Array>([[nEmbd, new Float32Array(nEmbd).map((_, i) => Math.sin(i))], [nFf, new Float32Array(nFf).map((_, i) => Math.cos(i))]]);
const outs = new Map<number, Float32Array>([nEmbd, nFf, nKv, nVocab].map((n) => [n, new Float32Array(n)]));

const bias = (n: number) => new Float32Array(n).map((_, i) => Math.sin(i) * 0.01);
const biases = small ? undefined : [bias(nEmbd), bias(nKv), bias(nKv)]; // qwen2 has q/k/v biases, llama none
const qkv = [new Float32Array(nEmbd), new Float32Array(nKv), new Float32Array(nKv)];
const resid = new Float32Array(nEmbd);
const stats = { want: 40, valid: false, max: 0, sum: 0, count: 0, ids: new Int32Array(64) };
/** One layer as forward.ts calls it: ws = q, k, v, o, gate, up, down. */
function layer(be: PoolBackend, ws: ReturnType<PoolBackend['addWeight']>[]): void {
  be.matmulShared(qkv, ws.slice(0, 3), xs.get(nEmbd)!, 1, biases);
  be.matvecAdd(resid, ws[3], xs.get(nEmbd)!);
  be.matmulGated(outs.get(nFf)!, ws[4], ws[5], xs.get(nEmbd)!, 1);
  be.matvecAdd(resid, ws[6], xs.get(nFf)!);
}
function pass(v: ReturnType<typeof build>): number {
  v.be.hold?.(true);
  const t0 = performance.now();
  if (asModel) {
    for (let l = 0; l < nLayer; l++) layer(v.be, v.ws.slice(7 * l, 7 * l + 7));
    if (withOut) v.be.matvecTop(outs.get(nVocab)!, v.ws[v.ws.length - 1], xs.get(nEmbd)!, stats);
  } else for (const w of v.ws) v.be.matvec(outs.get(w.spec.rows)!, w, xs.get(w.spec.cols)!);
  const ms = performance.now() - t0;
  v.be.hold?.(false);
  return ms;
}
for (let i = 0; i < 3; i++) { pass(A); pass(B); }
const ta: number[] = [], tb: number[] = [], ratio: number[] = [];
for (let i = 0; i < passes; i++) {
  let a: number, b: number;
  if (i % 2) { a = pass(A); b = pass(B); } else { b = pass(B); a = pass(A); }
  ta.push(a); tb.push(b); ratio.push(a / b);
}
const med = (v: number[]) => { const s = [...v].sort((x, y) => x - y); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const line = (name: string, t: number[]) => `${name}: ${med(t).toFixed(2)} ms per pass, ${(bytes / med(t) / 1e6).toFixed(1)} GB/s`;
console.log(`${process.argv[4] ?? 'Q8_0'}, ${threads} thread(s), ${passes} alternating passes of ${(bytes / 2 ** 20).toFixed(0)} MiB`);
console.log(line(`A ${dirA}`, ta));
console.log(line(`B ${dirB}`, tb));
console.log(`speed B/A (median of pairs): ${med(ratio).toFixed(3)}; B faster in ${ratio.filter((r) => r > 1).length} of ${passes}`);
A.be.dispose?.(); B.be.dispose?.();
process.exit(0);
