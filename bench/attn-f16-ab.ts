// A/B of attn_f16 between two kernel builds, alternating in one process (the machine is shared and
// noisy): node bin/run-ts.mjs bench/attn-f16-ab.ts DIR_A DIR_B [positions...]. Shapes: llama 110M (12
// heads, head dim 64) and qwen2 0.5B (14 heads over 2 KV heads); one layer's cache, warm (L2), best
// of many calls; prints µs per call and ns per (head, position). A DIR ending in ":finite" calls
// attn_f16 with finite = 1 (no scan of the rows; builds before the argument ignore it).
import { setup } from './attn-f16-setup.js';

const [dirA, dirB, ...rest] = process.argv.slice(2);
const lengths = rest.length ? rest.map(Number) : [41, 128, 512];


for (const [name, nHead, nHeadKv, hd] of [['llama 110M', 12, 12, 64], ['qwen2 0.5B', 14, 2, 64]] as [string, number, number, number][]) {
  for (const positions of lengths) {
    const make = (d: string) => (d.endsWith(':finite') ? setup(d.slice(0, -7), nHead, nHeadKv, hd, positions, true) : setup(d, nHead, nHeadKv, hd, positions)).call;
    const fa = make(dirA);
    const fb = make(dirB);
    let ba = Infinity;
    let bb = Infinity;
    const reps = Math.max(4, Math.round(20000 / positions));
    for (let r = 0; r < 60; r++) {
      for (const [f, isA] of [[fa, true], [fb, false]] as [() => void, boolean][]) {
        const t0 = performance.now();
        for (let i = 0; i < reps; i++) f();
        const t = ((performance.now() - t0) / reps) * 1000;
        if (isA) ba = Math.min(ba, t);
        else bb = Math.min(bb, t);
      }
    }
    const ns = (us: number) => ((us * 1000) / (nHead * positions)).toFixed(0);
    console.log(`${name.padEnd(11)} ${String(positions).padStart(5)}  A ${ba.toFixed(1).padStart(7)} µs (${ns(ba)} ns/hp)  B ${bb.toFixed(1).padStart(7)} µs (${ns(bb)} ns/hp)  B/A ${(bb / ba).toFixed(3)}`);
  }
}
