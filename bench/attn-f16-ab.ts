// A/B of attn_f16 between two kernel builds, alternating in one process (the machine is shared and
// noisy): node bin/run-ts.mjs bench/attn-f16-ab.ts DIR_A DIR_B [positions...]. Shapes: llama 110M (12
// heads, head dim 64) and qwen2 0.5B (14 heads over 2 KV heads); one layer's cache, warm (L2), best
// of many calls; prints µs per call and ns per (head, position).
import { KernelInstance } from '../src/engine/wasm/instance.js';
import { loadKernelModule } from '../src/engine/wasm/loader.js';

const [dirA, dirB, ...rest] = process.argv.slice(2);
const lengths = rest.length ? rest.map(Number) : [41, 128, 512];

function setup(dir: string, nHead: number, nHeadKv: number, hd: number, positions: number): () => void {
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
  const scale = 1 / Math.sqrt(hd);
  return () => k.attention('f16', out, q, kc, vc, kv, kv, 0, positions - 1, nHead, nHeadKv, hd, hd, scale, scratch);
}

for (const [name, nHead, nHeadKv, hd] of [['llama 110M', 12, 12, 64], ['qwen2 0.5B', 14, 2, 64]] as [string, number, number, number][]) {
  for (const positions of lengths) {
    const fa = setup(dirA, nHead, nHeadKv, hd, positions);
    const fb = setup(dirB, nHead, nHeadKv, hd, positions);
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
