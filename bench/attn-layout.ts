// Does the KV cache's layout matter to a generated token's attention once the caches outgrow L2?
// One thread's share of the 110M shape (6 KV heads of 64, 12 layers, POS positions), f16 cache as
// the pool keeps it (position-major: [pos][head][dim]) against head-major ([head][pos][dim], one
// attn_f16 call per head, rows of a head contiguous). Both give the same numbers (heads are
// independent; checked). Best of several passes over all layers, alternating; CPU-bound, 1 thread.
//   node bin/run-ts.mjs bench/attn-layout.ts [positions] [heads] [layers]
import { KernelInstance } from '../src/engine/wasm/instance.js';
import { loadKernelModule } from '../src/engine/wasm/loader.js';

const positions = Number(process.argv[2] ?? 200), nKv = Number(process.argv[3] ?? 6), nLayer = Number(process.argv[4] ?? 12), hd = 64;
const k = new KernelInstance(loadKernelModule({}));
const a = k.arena;
const kv = nKv * hd, n = positions * kv;
const src = a.alloc(n * 4);
const layers = Array.from({ length: nLayer }, (_, l) => {
  const pk = a.alloc(n * 2), pv = a.alloc(n * 2), hk = a.alloc(n * 2), hv = a.alloc(n * 2);
  for (const [dst, f] of [[pk, 0.731], [pv, 0.377]] as const) {
    a.f32(src, n).set(new Float32Array(n).map((_, i) => Math.sin(i * f + l) * 1.7));
    k.kvStore(dst, src, n);
  }
  // head-major copies of the same halves
  const p16 = (p: number) => new Uint16Array(a.memory.buffer, p, n);
  for (const [from, to] of [[pk, hk], [pv, hv]] as const) {
    const s = p16(from), d = p16(to);
    for (let t = 0; t < positions; t++) for (let g = 0; g < nKv; g++) for (let i = 0; i < hd; i++) d[(g * positions + t) * hd + i] = s[t * kv + g * hd + i];
  }
  return { pk, pv, hk, hv };
});
const q = a.alloc(kv * 4);
a.f32(q, kv).set(new Float32Array(kv).map((_, i) => Math.sin(i * 1.3) * 2));
const outP = a.alloc(kv * 4), outH = a.alloc(kv * 4);
const scratch = a.alloc(k.attnScratchBytes(nKv, nKv, hd, hd, positions));
const scale = 1 / Math.sqrt(hd);
const pass = {
  position: () => { for (const L of layers) k.attention('f16', { out: outP, q, kc: L.pk, vc: L.pv, strideK: kv, strideV: kv, nHead: nKv, nHeadKv: nKv, hdK: hd, hdV: hd, scale, scratch, finite: true }, 0, positions - 1); },
  head: () => {
    for (const L of layers) for (let g = 0; g < nKv; g++) {
      const off = g * positions * hd * 2;
      k.attention('f16', { out: outH + g * hd * 4, q: q + g * hd * 4, kc: L.hk + off, vc: L.hv + off, strideK: hd, strideV: hd, nHead: 1, nHeadKv: 1, hdK: hd, hdV: hd, scale, scratch, finite: true }, 0, positions - 1);
    }
  },
};
pass.position();
pass.head();
const same = a.f32(outP, kv).every((v, i) => Object.is(v, a.f32(outH, kv)[i]));
const best = { position: Infinity, head: Infinity };
for (let r = 0; r < 30; r++) {
  for (const name of ['position', 'head'] as const) {
    const t0 = performance.now();
    for (let i = 0; i < 5; i++) pass[name]();
    best[name] = Math.min(best[name], (performance.now() - t0) / 5);
  }
}
const per = (ms: number) => ((ms * 1e6) / (nLayer * nKv * positions)).toFixed(1);
console.log(`${positions} positions, ${nKv} heads, ${nLayer} layers (cache ${((nLayer * n * 4) / 2 ** 20).toFixed(1)} MiB): same numbers ${same}`);
console.log(`position-major ${best.position.toFixed(3)} ms (${per(best.position)} ns per head·position), head-major ${best.head.toFixed(3)} ms (${per(best.head)} ns)`);
