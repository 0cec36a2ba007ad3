// The whole-vocabulary passes (passes.ts) on the WebAssembly SIMD kernels (wasm/assembly/sample.ts).
// The working logits and ids live in a small kernel instance of their own (not the model's memory):
// each token copies its logits in (600 KB at a 152k vocabulary, one memcpy), the kernels scrub,
// reduce and select there, and the sampler reads the results through views on that memory.

import { KernelInstance } from '../wasm/instance.js';
import { loadKernelModule } from '../wasm/loader.js';
import { expSumAndTop, expSumBelowMax, FUSED_TOP_MAX } from './expsum.js';
import type { VocabPasses } from './passes.js';

export class WasmPasses implements VocabPasses {
  work: Float32Array = new Float32Array(0);
  ids: Int32Array = new Int32Array(0);
  private workPtr = 0; // byte addresses of work and ids in k's memory
  private idsPtr = 0;

  constructor(private readonly k: KernelInstance) {}

  private ensure(n: number): void {
    if (this.work.length >= n) return;
    const a = this.k.arena;
    a.free(this.workPtr, this.work.length * 4);
    a.free(this.idsPtr, this.ids.length * 4);
    this.workPtr = a.alloc(n * 4);
    this.idsPtr = a.alloc(n * 4);
    this.work = a.f32(this.workPtr, n);
    this.ids = new Int32Array(a.memory.buffer, this.idsPtr, n);
  }

  load(logits: Float32Array): number {
    this.ensure(logits.length);
    this.work.set(logits);
    return this.k.scrubMax(this.workPtr, logits.length);
  }

  max(n: number): number {
    return this.k.scrubMax(this.workPtr, n);
  }

  // A max of +inf (an infinite logit) makes every sum NaN: the TypeScript passes say how exactly.
  expSum(n: number, max: number): number {
    if (max === Infinity) return expSumBelowMax(this.work, n, max);
    return this.k.expSumTop(this.idsPtr, this.workPtr, n, max, 0);
  }

  expSumAndTop(n: number, max: number, k: number): number {
    k = Math.min(k, FUSED_TOP_MAX);
    if (max === Infinity) return expSumAndTop(this.ids, this.work, n, max, k);
    return this.k.expSumTop(this.idsPtr, this.workPtr, n, max, k);
  }

  selectTopK(n: number, k: number): number {
    return this.k.selectTop(this.idsPtr, this.workPtr, n, k);
  }
}

let shared: WasmPasses | null | undefined;

/**
 * One WasmPasses for the process (samplers run one at a time on the JS thread and keep nothing in
 * it between calls), or undefined when the kernels cannot be loaded (not built, no wasm SIMD).
 */
export function sharedWasmPasses(): WasmPasses | undefined {
  if (shared === undefined) {
    try {
      shared = new WasmPasses(new KernelInstance(loadKernelModule()));
    } catch {
      shared = null;
    }
  }
  return shared ?? undefined;
}
