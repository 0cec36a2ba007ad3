// attn_f16 called N times on one layer's cache (the bench/attn-f16-ab.ts data), for instruction counts
// under callgrind, which are repeatable on a busy machine where timings are not. Instructions per
// (head, position) = (Ir at N2 calls − Ir at N1 calls) / ((N2 − N1) · heads · positions), e.g.
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null --smc-check=all-non-file \
//     node --no-liftoff --single-threaded bin/run-ts.mjs bench/attn-f16-calls.ts DIR 300 [positions heads kvHeads]
// (--no-liftoff: optimised code from the first call; --single-threaded: no background compiles).
import { KernelInstance } from '../src/engine/wasm/instance.js';
import { loadKernelModule } from '../src/engine/wasm/loader.js';

const [dir, callsArg, posArg, headArg, kvArg] = process.argv.slice(2);
if (!dir || !callsArg) throw new Error('usage: bench/attn-f16-calls.ts DIR CALLS [positions heads kvHeads]');
const calls = Number(callsArg), positions = Number(posArg ?? 128), nHead = Number(headArg ?? 12), nHeadKv = Number(kvArg ?? nHead), hd = 64;
const k = new KernelInstance(loadKernelModule({ dir }));
const a = k.arena;
const kv = nHeadKv * hd;
const n = positions * kv;
const src = a.alloc(n * 4);
const kc = a.alloc(n * 2);
const vc = a.alloc(n * 2);
a.f32(src, n).set(new Float32Array(n).map((_, i) => Math.sin(i * 0.731) * 1.7));
k.kvStore(kc, src, n);
a.f32(src, n).set(new Float32Array(n).map((_, i) => Math.cos(i * 0.377) * 0.9));
k.kvStore(vc, src, n);
const q = a.alloc(nHead * hd * 4);
a.f32(q, nHead * hd).set(new Float32Array(nHead * hd).map((_, i) => Math.sin(i * 1.3) * 2));
const out = a.alloc(nHead * hd * 4);
const scratch = a.alloc(k.attnScratchBytes(nHead, nHeadKv, hd, hd, positions));
for (let i = 0; i < calls; i++) k.attention('f16', out, q, kc, vc, kv, kv, 0, positions - 1, nHead, nHeadKv, hd, hd, 1 / Math.sqrt(hd), scratch);
console.log(`${calls} calls, ${nHead} heads over ${nHeadKv}, ${positions} positions; out[0] ${a.f32(out, 1)[0]}`);
