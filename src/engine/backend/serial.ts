// What a backend without threads does for the capabilities a pool does in one round trip
// (MatBackend: matvecAdd, matmulShared, matmulGated, matvecTop, splitAttention, hold): the plain
// products, then the f32 additions and activation in TypeScript, the same arithmetic the pool's
// threads do on their rows. ScalarBackend and WasmBackend extend it; so do the tests' doubles.

import type { KernelInstance } from '../wasm/instance.js';
import type { LogitStats } from './logit-stats.js';
import type { AttentionShape, FillFn, MatBackend, SplitAttention, WaitMeter, WeightHandle, WeightSpec } from './types.js';
import { addInto } from './vec.js';

export abstract class SerialBackend implements MatBackend {
  abstract readonly name: string;
  readonly threads: number = 1;
  waitMeter: WaitMeter | null = null;
  /** Kernels of a wasm backend (set by its constructor); none here. */
  readonly kernels: KernelInstance | null = null;
  /** matvecAdd's and matmulGated's product before it is added or multiplied in, grown on demand. */
  private tmp = new Float32Array(0);

  abstract supports(type: number): boolean;
  abstract addWeight(spec: WeightSpec, fill: FillFn): WeightHandle;
  abstract matvec(out: Float32Array, w: WeightHandle, x: Float32Array): void;
  abstract matmul(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void;
  abstract getRow(out: Float32Array, w: WeightHandle, row: number): void;
  abstract weightBytes(): number;
  abstract dispose(): void;

  matvecAdd(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    const t = this.scratch(w.spec.rows);
    this.matvec(t, w, x);
    addInto(out, t, w.spec.rows);
  }

  matmulShared(outs: Float32Array[], ws: WeightHandle[], x: Float32Array, n: number, biases?: readonly (Float32Array | null)[]): void {
    for (let i = 0; i < ws.length; i++) {
      const rows = ws[i].spec.rows;
      this.product(outs[i], ws[i], x, n);
      const b = biases?.[i];
      if (b) for (let t = 0; t < n; t++) addInto(outs[i], b, rows, t * rows);
    }
  }

  matmulGated(out: Float32Array, gate: WeightHandle, up: WeightHandle, x: Float32Array, n: number): void {
    const m = n * up.spec.rows;
    const u = this.scratch(m);
    this.product(out, gate, x, n);
    this.product(u, up, x, n);
    // ops.ts gatedAct(out, out, u, silu), silu(x) = x / (1 + e^−x)
    for (let i = 0; i < m; i++) out[i] = Math.fround(out[i] / (1 + Math.exp(-out[i]))) * u[i];
  }

  matvecTop(out: Float32Array, w: WeightHandle, x: Float32Array, stats: LogitStats): void {
    this.matvec(out, w, x);
    stats.valid = false;
  }

  splitAttention(_shape: AttentionShape, _positions: number): SplitAttention | null {
    return null;
  }

  hold(_on: boolean): void {}

  /** out[n, rows] = x[n, cols] · Wᵀ: matvec for one token, matmul for a batch (the forward pass's project). */
  private product(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void {
    const { rows, cols } = w.spec;
    if (n === 1) this.matvec(out.subarray(0, rows), w, x.subarray(0, cols));
    else this.matmul(out.subarray(0, n * rows), w, x.subarray(0, n * cols), n);
  }

  private scratch(n: number): Float32Array {
    if (this.tmp.length < n) this.tmp = new Float32Array(n);
    return this.tmp.subarray(0, n);
  }
}
