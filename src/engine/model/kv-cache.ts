// The KV cache: keys and values of every position seen so far, per layer, stored as f16 like
// llama.cpp's default cache (llama-context.cpp: type_k = type_v = GGML_TYPE_F16). Storing the same
// rounded values is what keeps Pantheon's attention on llama.cpp's numbers.

import type { KernelInstance } from '../wasm/instance.js';
import { f32ToF16Bits } from '../quant/half.js';

export interface KvCache {
  /** Positions the cache holds (the context size). */
  readonly size: number;
  /** Values per position per layer: nHeadKv × headDimK. */
  readonly kvDimK: number;
  /** nHeadKv × headDimV. */
  readonly kvDimV: number;
  /** (nLayer) × [size, kvDimK] as f16 bits. */
  readonly k: Uint16Array[];
  /** (nLayer) × [size, kvDimV] as f16 bits. */
  readonly v: Uint16Array[];
  /**
   * [nLayer] 1 once the layer has stored an infinity or NaN half (sticky: still right after positions
   * are rewound or overwritten); while 0, the wasm attention skips scanning the rows for them.
   */
  readonly nonFinite: Uint8Array;
}

/**
 * `alloc` gives the per-layer arrays (default: plain; forward.ts places them in kernel memory).
 * `attends`: which layers attend (a hybrid's linear-attention layers keep no keys and values: their
 * arrays are empty); default all.
 */
export function createKvCache(nLayer: number, size: number, kvDimK: number, kvDimV: number, alloc: (n: number) => Uint16Array = (n) => new Uint16Array(n), attends?: readonly boolean[]): KvCache {
  const k: Uint16Array[] = [];
  const v: Uint16Array[] = [];
  for (let l = 0; l < nLayer; l++) {
    const n = attends && !attends[l] ? 0 : size;
    k.push(alloc(n * kvDimK));
    v.push(alloc(n * kvDimV));
  }
  return { size, kvDimK, kvDimV, k, v, nonFinite: new Uint8Array(nLayer) };
}

/** Store one position's key and value (f32, rounded to f16) for one layer (and its nonFinite flag). */
export function kvStore(c: KvCache, layer: number, pos: number, k: Float32Array, kOff: number, v: Float32Array, vOff: number): void {
  const kc = c.k[layer];
  const vc = c.v[layer];
  const kb = pos * c.kvDimK;
  const vb = pos * c.kvDimV;
  let bad = 0;
  for (let i = 0; i < c.kvDimK; i++) bad |= isInfNaNHalf((kc[kb + i] = f32ToF16Bits(k[kOff + i])));
  for (let i = 0; i < c.kvDimV; i++) bad |= isInfNaNHalf((vc[vb + i] = f32ToF16Bits(v[vOff + i])));
  if (bad) c.nonFinite[layer] = 1;
}

/**
 * kvStore with the WebAssembly kernels: one position's keys and values, f32 at byte addresses kp and
 * vp of k's memory, into cache rows that live there (and the layer's nonFinite flag, from kv_store).
 */
export function kvStoreKernels(c: KvCache, k: KernelInstance, layer: number, pos: number, kp: number, vp: number): void {
  const kBad = k.kvStore(c.k[layer].byteOffset + pos * c.kvDimK * 2, kp, c.kvDimK);
  const vBad = k.kvStore(c.v[layer].byteOffset + pos * c.kvDimV * 2, vp, c.kvDimV);
  if (kBad || vBad) c.nonFinite[layer] = 1;
}

/** 1 when half bits h are an infinity or NaN (exponent 31). */
function isInfNaNHalf(h: number): number {
  return (h & 0x7c00) === 0x7c00 ? 1 : 0;
}
