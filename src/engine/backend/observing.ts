// A backend that shows every matrix product's input to an observer, then runs the product on the
// backend it wraps. `pantheon imatrix` sees the activations each weight multiplies this way (as
// llama-imatrix does through ggml's eval callback) without a change to the forward pass.

import type { LogitStats } from './logit-stats.js';
import type { AttentionShape, MatBackend, SplitAttention, WeightHandle, WeightSpec } from './types.js';

/** Called with x[n, spec.cols]: the n input rows that weight `spec` is about to multiply. */
export type ProductObserver = (spec: WeightSpec, x: Float32Array, n: number) => void;

export class ObservingBackend implements MatBackend {
  readonly name: string;
  readonly threads: number;

  constructor(readonly inner: MatBackend, readonly observe: ProductObserver) {
    this.name = inner.name;
    this.threads = inner.threads;
  }

  matvecAdd(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    this.observe(w.spec, x, 1);
    this.inner.matvecAdd(out, w, x);
  }

  matmulShared(outs: Float32Array[], ws: WeightHandle[], x: Float32Array, n: number, biases?: readonly (Float32Array | null)[]): void {
    for (const w of ws) this.observe(w.spec, x, n);
    this.inner.matmulShared(outs, ws, x, n, biases);
  }

  matmulGated(out: Float32Array, gate: WeightHandle, up: WeightHandle, x: Float32Array, n: number): void {
    this.observe(gate.spec, x, n);
    this.observe(up.spec, x, n);
    this.inner.matmulGated(out, gate, up, x, n);
  }

  matvecTop(out: Float32Array, w: WeightHandle, x: Float32Array, stats: LogitStats): void {
    this.observe(w.spec, x, 1);
    this.inner.matvecTop(out, w, x, stats);
  }

  splitAttention(shape: AttentionShape, positions: number): SplitAttention | null {
    return this.inner.splitAttention(shape, positions);
  }

  hold(on: boolean): void {
    this.inner.hold(on);
  }

  get kernels() {
    return this.inner.kernels;
  }

  get waitMeter() {
    return this.inner.waitMeter;
  }

  set waitMeter(m) {
    this.inner.waitMeter = m;
  }

  supports(type: number): boolean {
    return this.inner.supports(type);
  }

  addWeight(spec: WeightSpec, fill: Parameters<MatBackend['addWeight']>[1]): WeightHandle {
    return this.inner.addWeight(spec, fill);
  }

  matvec(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    this.observe(w.spec, x, 1);
    this.inner.matvec(out, w, x);
  }

  matmul(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void {
    this.observe(w.spec, x, n);
    this.inner.matmul(out, w, x, n);
  }

  getRow(out: Float32Array, w: WeightHandle, row: number): void {
    this.inner.getRow(out, w, row);
  }

  weightBytes(): number {
    return this.inner.weightBytes();
  }

  dispose(): void {
    this.inner.dispose();
  }
}
