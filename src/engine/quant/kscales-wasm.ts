// The scale searches of kscales.ts run by the WebAssembly kernel (wasm/assembly/kscales.ts): one
// kernel instance per thread, made on first use, with a scratch region the group's values are
// copied into. Null where the kernel module cannot be loaded (no build/wasm): the callers then run
// the TypeScript reference, which gives the same bits.

import { loadKernelModule } from '../wasm/loader.js';
import { KernelInstance } from '../wasm/instance.js';

type Fn = (...args: number[]) => number;

/** The kernel's scale searches on a scratch region: x, w (f32[N]), min, L (u8[N]), aux (their scratch). */
export interface ScaleKernel {
  readonly f32: Float32Array;
  readonly u8: Uint8Array;
  readonly i8: Int8Array;
  /** Element offsets into f32 / byte offsets into u8 of each part, and their byte addresses. */
  readonly x: number;
  readonly w: number;
  readonly min: number;
  readonly L: number;
  readonly addr: { x: number; w: number; min: number; L: number; aux: number };
  readonly qkx2: Fn;
  readonly qx: Fn;
  readonly q3: Fn;
  readonly qp: Fn;
}

/** Largest group a search gets through the kernel (larger ones, and n not a multiple of 4, use the reference). */
export const KERNEL_MAX_N = 256;

/** True when a group of n goes through the kernel (when there is one). */
export function kernelFits(n: number): boolean {
  return n <= KERNEL_MAX_N && (n & 3) === 0;
}

let kernel: ScaleKernel | null | undefined;
let enabled = process.env.PANTHEON_QUANT_WASM !== '0';

/** Use the kernel (default) or the TypeScript reference: for tests and benchmarks that compare them. */
export function useScaleKernel(on: boolean): void {
  enabled = on;
}

/** This thread's scale kernel, or null (disabled, or no kernel module here). */
export function scaleKernel(): ScaleKernel | null {
  if (!enabled) return null;
  if (kernel === undefined) {
    try {
      const inst = new KernelInstance(loadKernelModule());
      const N = KERNEL_MAX_N;
      // x, w: f32[N]; min: one f32 (64 bytes kept); L: u8[N]; aux: 20·N bytes of the kernels' scratch
      const base = inst.arena.alloc(8 * N + 64 + N + 20 * N);
      const buf = inst.arena.memory.buffer;
      const addr = { x: base, w: base + 4 * N, min: base + 8 * N, L: base + 8 * N + 64, aux: base + 9 * N + 64 };
      kernel = {
        f32: new Float32Array(buf), u8: new Uint8Array(buf), i8: new Int8Array(buf),
        x: addr.x >> 2, w: addr.w >> 2, min: addr.min >> 2, L: addr.L, addr,
        qkx2: inst.kernel('kscale_qkx2'), qx: inst.kernel('kscale_qx'), q3: inst.kernel('kscale_q3'), qp: inst.kernel('kscale_qp'),
      };
    } catch {
      kernel = null;
    }
  }
  return kernel;
}
