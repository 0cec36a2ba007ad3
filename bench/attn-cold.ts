// A/B of a generated token's attention (attn_f16) between two kernel builds, on one thread, with the
// caches as a model leaves them: before each layer's call a 64 MiB read (the weights streaming
// through) evicts the KV cache from L1/L2, as the layer's products do. 12 layers of H heads over P
// cached positions; the builds alternate token by token; medians of µs per token (attention only).
//   node bin/run-ts.mjs bench/attn-cold.ts DIR_A DIR_B [--positions=P --heads=H --kvheads=G --hd=D --tokens=N --layers=L]
import { newSharedMemory } from '../src/engine/wasm/arena.js';
import { KernelInstance } from '../src/engine/wasm/instance.js';
import { loadKernelModule } from '../src/engine/wasm/loader.js';

const args = process.argv.slice(2);
const opt = (k: string, d: number) => Number(args.find((a) => a.startsWith(`--${k}=`))?.split('=')[1] ?? d);
const [dirA, dirB] = args.filter((a) => !a.startsWith('--'));
const P = opt('positions', 165), H = opt('heads', 12), G = opt('kvheads', H), D = opt('hd', 64), N = opt('tokens', 40), L = opt('layers', 12);
const EVICT = 64 * 2 ** 20;

function setup(dir: string) {
  const kvBytes = P * G * D * 2;
  const k = new KernelInstance(loadKernelModule({ dir }), newSharedMemory(EVICT + L * 2 * kvBytes + 2 ** 22));
  const a = k.arena;
  const evict = a.alloc(EVICT);
  a.u8(evict, EVICT).fill(1);
  const layers = Array.from({ length: L }, (_, l) => {
    const kc = a.alloc(kvBytes), vc = a.alloc(kvBytes);
    // halves of small random values (sign, exponent 10-14, any mantissa)
    const h = (i: number) => ((Math.imul(i + l * 7919, 2654435761) >>> 16) & 0x83ff) | (((i * 13 + l) % 5) + 10) << 10;
    const ku = new Uint16Array(a.memory.buffer, kc, kvBytes / 2), vu = new Uint16Array(a.memory.buffer, vc, kvBytes / 2);
    for (let i = 0; i < ku.length; i++) { ku[i] = h(i); vu[i] = h(i + 1); }
    return { kc, vc };
  });
  const q = a.alloc(H * D * 4), out = a.alloc(H * D * 4);
  a.f32(q, H * D).set(new Float32Array(H * D).map((_, i) => Math.sin(i) * 0.5));
  const scratch = a.alloc(k.call('attn_scratch_bytes', H, G, D, D, P) + 64);
  const attn = k.kernel('attn_f16'), sum = k.kernel('mem_sum');
  return (): number => {
    let t = 0;
    for (const { kc, vc } of layers) {
      sum(evict, EVICT);
      const t0 = performance.now();
      attn(out, q, kc, vc, G * D, G * D, 0, P - 1, H, G, D, D, 0.125, scratch, 1);
      t += performance.now() - t0;
    }
    return t;
  };
}
const A = setup(dirA), B = setup(dirB);
for (let i = 0; i < 3; i++) { A(); B(); }
const ta: number[] = [], tb: number[] = [];
for (let i = 0; i < N; i++) {
  if (i % 2) { ta.push(A()); tb.push(B()); } else { tb.push(B()); ta.push(A()); }
}
const med = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1] * 1000;
console.log(`attn_f16, ${L} layers × ${H} heads (${G} KV) × ${P} positions, caches evicted before each layer: A ${med(ta).toFixed(0)} µs, B ${med(tb).toFixed(0)} µs per token; B/A speed ${(med(ta) / med(tb)).toFixed(3)}`);
