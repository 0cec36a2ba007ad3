// One layer's f16 KV cache and query for attn_f16 benchmarks (bench/attn-f16-ab.ts, attn-f16-calls.ts):
// fixed smooth data, kernels from the build in `dir`; setup() returns one attention call and a reader of its first output.
// finite: tell attn_f16 the rows are finite (as the model's callers do when kv_store reported none), skipping its scan.
import { KernelInstance } from '../src/engine/wasm/instance.js';
import { loadKernelModule } from '../src/engine/wasm/loader.js';

export function setup(dir: string, nHead: number, nHeadKv: number, hd: number, positions: number, finite = false): { call: () => void; first: () => number } {
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
  return {
    call: () => k.attention('f16', { out, q, kc, vc, strideK: kv, strideV: kv, nHead, nHeadKv, hdK: hd, hdV: hd, scale, scratch, finite }, 0, positions - 1),
    first: () => a.f32(out, 1)[0], // out[0]
  };
}
