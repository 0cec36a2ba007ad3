// The quantisers' WebAssembly kernels (wasm/assembly/kscales.ts: the K-quant scale searches;
// quantize-legacy.ts, quantize-q3k.ts, quantize-iq3.ts, quantize-iq2.ts: whole Q8_0, Q4_0, Q3_K,
// IQ3_S, IQ3_XXS, IQ2_XXS, IQ2_XS and IQ2_S rows): one kernel instance per thread, made on first use, with
// scratch regions the inputs are copied into. Null where the kernel module cannot be loaded
// (no build/wasm) or PANTHEON_QUANT_WASM=0: the callers then run the TypeScript references, which
// give the same bits.

import { loadKernelModule } from '../wasm/loader.js';
import { KernelInstance } from '../wasm/instance.js';

type Fn = (...args: number[]) => number;

/** Views on the kernel's memory, and the scratch a scale search reads: x, w (f32[N]), min, L (u8[N]), aux. */
export interface QuantKernel {
  f32: Float32Array;
  u8: Uint8Array;
  i8: Int8Array;
  /** Element offsets of x, w, min into f32; byte offset of L into u8. */
  readonly x: number;
  readonly w: number;
  readonly min: number;
  readonly L: number;
  /** Byte addresses of the same, and of the searches' scratch (20·N bytes). */
  readonly addr: { x: number; w: number; min: number; L: number; aux: number };
  readonly qkx2: Fn;
  readonly qx: Fn;
  readonly q3: Fn;
  readonly qp: Fn;
  readonly rowQ8_0: Fn;
  readonly rowQ4_0: Fn;
  readonly rowQ3_K: Fn;
  readonly rowIq3S: Fn;
  readonly rowIq3Xxs: Fn;
  readonly rowIq2Xxs: Fn;
  readonly rowIq2Xs: Fn;
  readonly rowIq2S: Fn;
  readonly iq2GridQ: Fn;
  readonly inst: KernelInstance;
  /** A row's input (f32), importance (f32) and output regions: byte addresses, and the elements they hold. */
  row: { x: number; w: number; out: number; n: number };
}

/** Largest group a search gets through the kernel (larger ones, and n not a multiple of 4, use the reference). */
export const KERNEL_MAX_N = 256;

/** True when a group of n goes through the kernel (when there is one). */
export function kernelFits(n: number): boolean {
  return n <= KERNEL_MAX_N && (n & 3) === 0;
}

let kernel: QuantKernel | null | undefined;
let enabled = process.env.PANTHEON_QUANT_WASM !== '0';

/** Use the kernels (default) or the TypeScript references: for tests and benchmarks that compare them. */
export function useScaleKernel(on: boolean): void {
  enabled = on;
}

/** This thread's quantiser kernels, or null (disabled, or no kernel module here). */
export function scaleKernel(): QuantKernel | null {
  if (!enabled) return null;
  if (kernel === undefined) {
    try {
      const inst = new KernelInstance(loadKernelModule());
      const N = KERNEL_MAX_N;
      // x, w: f32[N]; min: one f32 (64 bytes kept); L: u8[N]; aux: 20·N bytes of the searches' scratch
      const base = inst.arena.alloc(8 * N + 64 + N + 20 * N);
      const buf = inst.arena.memory.buffer;
      const addr = { x: base, w: base + 4 * N, min: base + 8 * N, L: base + 8 * N + 64, aux: base + 9 * N + 64 };
      kernel = {
        f32: new Float32Array(buf), u8: new Uint8Array(buf), i8: new Int8Array(buf),
        x: addr.x >> 2, w: addr.w >> 2, min: addr.min >> 2, L: addr.L, addr,
        qkx2: inst.kernel('kscale_qkx2'), qx: inst.kernel('kscale_qx'), q3: inst.kernel('kscale_q3'), qp: inst.kernel('kscale_qp'),
        rowQ8_0: inst.kernel('quantize_row_q8_0_ref'), rowQ4_0: inst.kernel('quantize_row_q4_0_ref'), rowQ3_K: inst.kernel('quantize_row_q3_K_ref'),
        rowIq3S: inst.kernel('quantize_row_iq3_s'), rowIq3Xxs: inst.kernel('quantize_row_iq3_xxs'),
        rowIq2Xxs: inst.kernel('quantize_row_iq2_xxs'), rowIq2Xs: inst.kernel('quantize_row_iq2_xs'), rowIq2S: inst.kernel('quantize_row_iq2_s'), iq2GridQ: inst.kernel('iq2_grid_q'),
        inst, row: { x: 0, w: 0, out: 0, n: 0 },
      };
    } catch {
      kernel = null;
    }
  }
  return kernel;
}

/** `bytes` more of the kernel's memory (its row regions, tables a quantiser copies in once); renews the views, as growing the memory replaces its buffer. */
export function kernelAlloc(k: QuantKernel, bytes: number): number {
  const p = k.inst.arena.alloc(bytes);
  const buf = k.inst.arena.memory.buffer;
  if (buf.byteLength !== k.u8.length) {
    k.f32 = new Float32Array(buf);
    k.u8 = new Uint8Array(buf);
    k.i8 = new Int8Array(buf);
  }
  return p;
}

/**
 * The kernel with its row regions holding at least n elements (input and importances n f32 each,
 * output up to 2n bytes), or null.
 */
export function rowKernel(n: number): QuantKernel | null {
  const k = scaleKernel();
  if (!k || k.row.n >= n) return k;
  const cap = Math.max(n, 2 * k.row.n, 4096);
  k.row = { x: kernelAlloc(k, 4 * cap), w: kernelAlloc(k, 4 * cap), out: kernelAlloc(k, 2 * cap), n: cap };
  return k;
}

/**
 * Quantise x[0..n) with a row kernel into dst at off (n/blockElems blocks of blockBytes); false
 * when there is no kernel (or n is not whole blocks): the caller runs its reference.
 */
export function quantizeRowByKernel(
  which: 'rowQ8_0' | 'rowQ4_0' | 'rowQ3_K', x: Float32Array, dst: Uint8Array, off: number, n: number, blockBytes: number, blockElems = 32,
): boolean {
  if (n % blockElems !== 0) return false;
  const k = rowKernel(n);
  if (!k) return false;
  k.f32.set(x.length === n ? x : x.subarray(0, n), k.row.x >> 2);
  k[which](k.row.out, k.row.x, n, k.addr.aux);
  const bytes = (n / blockElems) * blockBytes;
  dst.set(k.u8.subarray(k.row.out, k.row.out + bytes), off);
  return true;
}
