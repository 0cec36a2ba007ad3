// The compute backend the model's forward pass runs on. The forward pass is synchronous and sees
// weights only through handles, so the same model code runs on the scalar TypeScript reference,
// on WebAssembly SIMD in one thread, or on a worker pool where each worker holds its rows of every
// matrix in its own WebAssembly memory (no single 4 GiB wasm32 limit).

import type { KernelInstance } from '../wasm/instance.js';
import type { LogitStats } from './logit-stats.js';

export interface WeightSpec {
  /** Tensor name, for error messages. */
  name: string;
  /** ggml type id. */
  type: number;
  /** Output dimension (GGUF dims[1]). */
  rows: number;
  /** Input dimension (GGUF dims[0]). */
  cols: number;
}

/** Where a tensor's bytes lie in an open file: byte b of the tensor is at position at + b of fd. */
export interface FileRange {
  fd: number;
  at: number;
}

/**
 * Copies bytes [fromByte, fromByte + dst.length) of the tensor's row-major data into dst. The
 * backend calls it with views on its own (kernel) memory, so tensor bytes go from the file straight
 * to where the kernels read them. `file`, when set, says where those bytes are in the model file,
 * so a backend with threads may have each thread read its own rows (PoolBackend.addWeight).
 */
export type FillFn = ((dst: Uint8Array, fromByte: number) => void) & { file?: FileRange };

export interface WeightHandle {
  readonly id: number;
  readonly spec: WeightSpec;
}

/** Takes the milliseconds the calling thread waited for its workers (Profile). */
export interface WaitMeter {
  addWait(ms: number): void;
}

export interface MatBackend {
  readonly name: string;
  readonly threads: number;
  /** True when matvec on this ggml type is implemented. */
  supports(type: number): boolean;
  /** Load a weight matrix; throws ModelError naming the tensor for an unsupported type. */
  addWeight(spec: WeightSpec, fill: FillFn): WeightHandle;
  /** out[rows] = W · x[cols]. */
  matvec(out: Float32Array, w: WeightHandle, x: Float32Array): void;
  /** out[rows] += W · x[cols] (a projection added into the residual stream, f32 additions). */
  matvecAdd(out: Float32Array, w: WeightHandle, x: Float32Array): void;
  /** out[n, rows] = x[n, cols] · Wᵀ, for prompt batches. */
  matmul(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void;
  /**
   * outs[i] = x · W_iᵀ (+ biases[i] on every token's row) for weights that take the same input
   * (q/k/v, gate/up), as matmul does each and then the f32 additions; a backend with threads
   * does them in one round trip, each thread adding the biases to its own rows.
   */
  matmulShared(outs: Float32Array[], ws: WeightHandle[], x: Float32Array, n: number, biases?: readonly (Float32Array | null)[]): void;
  /**
   * out[n, rows] = silu(x · W_gateᵀ) ⊙ (x · W_upᵀ) (the SwiGLU FFN's first half, ops.ts gatedAct's
   * arithmetic); a backend with threads applies the activation on each thread's rows.
   */
  matmulGated(out: Float32Array, gate: WeightHandle, up: WeightHandle, x: Float32Array, n: number): void;
  /**
   * Attention whose KV cache is split across the backend's threads by KV head, each thread
   * attending with its heads; null when the backend has no threads or the shape gives fewer than
   * two shares.
   */
  splitAttention(shape: AttentionShape, positions: number): SplitAttention | null;
  /**
   * out[rows] = W · x[cols] (a logits row), and on every thread, while its rows are in cache, what
   * sampling needs of them (assembly/sample.ts sample_slice_top): NaN → −inf in out, the max, the
   * softmax normaliser and the stats.want largest, merged into stats (logit-stats.ts); a backend
   * without threads computes out alone and leaves stats.valid false (the sampler's own passes).
   */
  matvecTop(out: Float32Array, w: WeightHandle, x: Float32Array, stats: LogitStats): void;
  /** A forward pass begins (true) or ends (false): a pool keeps its threads awake between; others do nothing. */
  hold(on: boolean): void;
  /**
   * Where a backend with threads reports how long the calling thread waited for the others after
   * its own share of a product (`pantheon run --profile`); null reports nothing.
   */
  waitMeter: WaitMeter | null;
  /** Dequantise one row of W into out[cols] (embedding lookup). */
  getRow(out: Float32Array, w: WeightHandle, row: number): void;
  /** Bytes of weight memory held. */
  weightBytes(): number;
  dispose(): void;
  /**
   * The calling thread's WebAssembly kernels, when the backend has them (WasmBackend, PoolBackend),
   * else null: the forward pass then keeps its activations and KV cache in their memory and runs
   * its norms, RoPE, cache stores and attention there (model/run-ops.ts).
   */
  readonly kernels: KernelInstance | null;
}

export interface AttentionShape {
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  headDimK: number;
  headDimV: number;
  /** [nLayer] which layers attend (a hybrid's linear-attention layers hold no cache); default all. */
  attends?: readonly boolean[];
}

/** Bytes an f16 KV cache of these dimensions takes (model/kv-cache.ts, a split one: SplitAttention). */
export function kvCacheBytes(nLayer: number, size: number, kvDimK: number, kvDimV: number): number {
  return nLayer * size * (kvDimK + kvDimV) * 2;
}

/** A model's attention and f16 KV cache for `positions` positions, split across threads by KV head. */
export interface SplitAttention {
  /** Threads sharing the heads. */
  readonly parts: number;
  /** Bytes of KV cache held (all threads). */
  readonly cacheBytes: number;
  /**
   * Store k[n, nHeadKv·hdK] and v[n, nHeadKv·hdV] (rotated, f32) at positions pos… of layer l's
   * cache (as f16), then out[n, nHead·hdV] = attention of q[n, nHead·hdK] over the cache: 'f16'
   * one query position at a time over [max(0, p − window + 1) or 0, p], 'f32' the whole batch at
   * once (attention.ts's two modes). sinks [nHead]: attention sinks (gpt-oss), or none.
   */
  run(l: number, out: Float32Array, q: Float32Array, k: Float32Array, v: Float32Array, pos: number, n: number, mode: 'f16' | 'f32', window: number, scale: number, sinks?: Float32Array | null): void;
  /** Give the cache memory back. */
  dispose(): void;
}
