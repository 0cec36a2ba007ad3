// attn_f16 called N times on one layer's cache (the bench/attn-f16-ab.ts data), for instruction counts
// under callgrind, which are repeatable on a busy machine where timings are not. Instructions per
// (head, position) = (Ir at N2 calls − Ir at N1 calls) / ((N2 − N1) · heads · positions), e.g.
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null --smc-check=all-non-file \
//     node --no-liftoff --single-threaded bin/run-ts.mjs bench/attn-f16-calls.ts DIR 300 [positions heads kvHeads]
// (--no-liftoff: optimised code from the first call; --single-threaded: no background compiles).
// DIR ending in ":finite": attn_f16 told the rows are finite (no scan).
import { setup } from './attn-f16-setup.js';

const [dir, callsArg, posArg, headArg, kvArg] = process.argv.slice(2);
if (!dir || !callsArg) throw new Error('usage: bench/attn-f16-calls.ts DIR CALLS [positions heads kvHeads]');
const calls = Number(callsArg), positions = Number(posArg ?? 128), nHead = Number(headArg ?? 12), nHeadKv = Number(kvArg ?? nHead), hd = 64;
const finite = dir.endsWith(':finite');
const { call, first } = setup(finite ? dir.slice(0, -7) : dir, nHead, nHeadKv, hd, positions, finite);
for (let i = 0; i < calls; i++) call();
console.log(`${calls} calls, ${nHead} heads over ${nHeadKv}, ${positions} positions; out[0] ${first()}`);
