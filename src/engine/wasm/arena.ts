// One WebAssembly memory and the bump allocator that places weights in it. Memories are shared
// (SharedArrayBuffer-backed) so the thread that loads weights and the worker that computes on them
// can both see the same bytes. wasm32 addresses 4 GiB per memory; the worker pool gives every
// thread its own memory so that limit applies per share of the model, not to the whole model.

import { EngineError } from '../../shared/errors.js';

export const WASM_PAGE = 65536;
/** 4 GiB: the wasm32 limit, and the maximum the kernel module declares. */
export const MAX_PAGES = 65536;
/** Pages the kernel module declares at least (scripts/build-wasm.mjs --initialMemory): its static data. */
export const MIN_PAGES = 4;

/** A new shared memory of `bytes` (rounded up to pages, at least MIN_PAGES), growable to 4 GiB. */
export function newSharedMemory(bytes: number): WebAssembly.Memory {
  return new WebAssembly.Memory({ initial: Math.max(MIN_PAGES, Math.ceil(bytes / WASM_PAGE)), maximum: MAX_PAGES, shared: true });
}

export class Arena {
  /** First free byte. */
  private top: number;
  private scratchPtr = 0;
  private scratchSize = 0;
  private buf: ArrayBufferLike;
  /** Bytes this memory may reach: the wasm32 limit, or less where a test wants shards of a small model (PoolOptions.memoryBytes). */
  limit = MAX_PAGES * WASM_PAGE;

  /** `base`: first byte the allocator may hand out (the module's heap_base). */
  constructor(readonly memory: WebAssembly.Memory, base: number) {
    this.top = align(base, 64);
    this.buf = memory.buffer;
  }

  /** Regions given back by free(), for alloc() to reuse. */
  private readonly freed: { ptr: number; bytes: number }[] = [];

  /** Give back a region from alloc() (nothing may use it afterwards). */
  free(ptr: number, bytes: number): void {
    if (bytes > 0) this.freed.push({ ptr, bytes });
  }

  /** Bytes handed out so far (including the module's static data below base). */
  get used(): number {
    return this.top;
  }

  /**
   * `bytes` bytes aligned to `alignTo`, growing the memory as needed. Weights are never freed;
   * per-conversation buffers (activations, KV cache) are handed back with free() and reused.
   */
  alloc(bytes: number, alignTo = 64): number {
    for (let i = 0; i < this.freed.length; i++) {
      // first fit among freed regions; what is left over stays free
      const f = this.freed[i];
      const p = align(f.ptr, alignTo);
      if (p + bytes > f.ptr + f.bytes) continue;
      this.freed.splice(i, 1);
      if (p > f.ptr) this.freed.push({ ptr: f.ptr, bytes: p - f.ptr });
      if (p + bytes < f.ptr + f.bytes) this.freed.push({ ptr: p + bytes, bytes: f.ptr + f.bytes - p - bytes });
      return p;
    }
    const ptr = align(this.top, alignTo);
    const end = ptr + bytes;
    if (end > this.limit) {
      throw new EngineError('WASM_OOM', `a WebAssembly memory cannot hold ${fmt(end)} (wasm32 stops at ${fmt(this.limit)}); use the worker pool with more memories per thread (PoolOptions.shards) or a smaller model`);
    }
    const have = this.memory.buffer.byteLength;
    if (end > have) {
      // Grow by at least 1/8 of what we hold so many small weights do not grow page by page.
      const want = Math.max(end, Math.min(this.limit, have + (have >> 3)));
      try {
        this.memory.grow(Math.ceil((want - have) / WASM_PAGE));
      } catch {
        throw new EngineError('WASM_OOM', `could not grow WebAssembly memory to ${fmt(want)}; the machine is out of memory for this model`);
      }
    }
    this.top = end;
    return ptr;
  }

  /**
   * A scratch region of at least `bytes` for activations and outputs. It is reused between calls
   * and replaced (never freed: the allocator only bumps) when a bigger one is needed, doubling so
   * the waste stays below the largest scratch size.
   */
  scratch(bytes: number): number {
    if (bytes > this.scratchSize) {
      this.scratchSize = Math.max(bytes, this.scratchSize * 2, 64 * 1024);
      this.scratchPtr = this.alloc(this.scratchSize);
    }
    return this.scratchPtr;
  }

  private buffer(): ArrayBufferLike {
    // A grown shared memory hands out a new, longer SharedArrayBuffer.
    if (this.buf.byteLength !== this.memory.buffer.byteLength) this.buf = this.memory.buffer;
    return this.buf;
  }

  u8(ptr: number, length: number): Uint8Array {
    return new Uint8Array(this.buffer(), ptr, length);
  }

  f32(ptr: number, length: number): Float32Array {
    return new Float32Array(this.buffer(), ptr, length);
  }
}

function align(n: number, a: number): number {
  return Math.ceil(n / a) * a;
}

function fmt(bytes: number): string {
  return bytes < 2 ** 30 ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : `${(bytes / 2 ** 30).toFixed(2)} GiB`;
}
