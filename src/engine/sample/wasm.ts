// The whole-vocabulary passes (passes.ts) on the WebAssembly SIMD kernels (wasm/assembly/sample.ts).
// The working logits and ids live in a small kernel instance of their own (not the model's memory):
// each token copies its logits in (600 KB at a 152k vocabulary, one memcpy), the kernels scrub,
// reduce and select there, and the sampler reads the results through views on that memory.

import { KernelInstance } from '../wasm/instance.js';
import { loadKernelModule } from '../wasm/loader.js';
import { expSumAndTop, expSumBelowMax, FUSED_TOP_MAX } from './expsum.js';
import { NUCLEUS_BINS, nucleusMass, nucleusSplit } from './nucleus.js';
import type { VocabPasses } from './passes.js';

export class WasmPasses implements VocabPasses {
  work: Float32Array = new Float32Array(0);
  ids: Int32Array = new Int32Array(0);
  scratch: Int32Array = new Int32Array(0);
  // Byte addresses in k's memory: work, ids, scratch (n each); the bins' masses and one i32 count.
  private workPtr = 0;
  private idsPtr = 0;
  private scratchPtr = 0;
  private readonly massPtr: number;
  private readonly countPtr: number;

  constructor(private readonly k: KernelInstance) {
    this.massPtr = k.arena.alloc(NUCLEUS_BINS * 8);
    this.countPtr = k.arena.alloc(4);
  }

  private ensure(n: number): void {
    if (this.work.length >= n) return;
    const a = this.k.arena;
    for (const p of [this.workPtr, this.idsPtr, this.scratchPtr]) a.free(p, this.work.length * 4);
    this.workPtr = a.alloc(n * 4);
    this.idsPtr = a.alloc(n * 4);
    this.scratchPtr = a.alloc(n * 4);
    this.work = a.f32(this.workPtr, n);
    this.ids = new Int32Array(a.memory.buffer, this.idsPtr, n);
    this.scratch = new Int32Array(a.memory.buffer, this.scratchPtr, n);
  }

  load(logits: Float32Array): number {
    this.ensure(logits.length);
    this.work.set(logits);
    return this.k.scrubMax(this.workPtr, logits.length);
  }

  prepare(n: number): void {
    this.ensure(n);
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

  nucleusMass(mass: Float64Array, n: number, max: number): number {
    if (max === Infinity) return nucleusMass(mass, this.work, n, max);
    const total = this.k.nucleusMass(this.massPtr, this.workPtr, n, max);
    mass.set(new Float64Array(this.k.arena.memory.buffer, this.massPtr, NUCLEUS_BINS));
    return total;
  }

  nucleusSplit(n: number, max: number, boundary: number): { size: number; inBoundary: number } {
    if (max === Infinity) return nucleusSplit(this.ids, this.scratch, this.work, n, max, boundary);
    const size = this.k.nucleusSplit(this.idsPtr, this.scratchPtr, this.countPtr, this.workPtr, n, max, boundary);
    return { size, inBoundary: new Int32Array(this.k.arena.memory.buffer, this.countPtr, 1)[0] };
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
