// A backend that shows every matrix product's input to an observer, then runs the product on the
// backend it wraps. `pantheon imatrix` sees the activations each weight multiplies this way (as
// llama-imatrix does through ggml's eval callback) without a change to the forward pass.

import type { LogitStats, MatBackend, WeightHandle, WeightSpec } from './types.js';

/** Called with x[n, spec.cols]: the n input rows that weight `spec` is about to multiply. */
export type ProductObserver = (spec: WeightSpec, x: Float32Array, n: number) => void;

export class ObservingBackend implements MatBackend {
  readonly name: string;
  readonly threads: number;
  matvecAdd?: MatBackend['matvecAdd'];
  matmulShared?: MatBackend['matmulShared'];
  matmulGated?: MatBackend['matmulGated'];
  matvecTop?: MatBackend['matvecTop'];
  splitAttention?: MatBackend['splitAttention'];
  hold?: MatBackend['hold'];

  constructor(readonly inner: MatBackend, readonly observe: ProductObserver) {
    this.name = inner.name;
    this.threads = inner.threads;
    // Only the optional products the inner backend has, so the forward pass takes the same paths.
    if (inner.matvecAdd) {
      this.matvecAdd = (out, w, x) => {
        observe(w.spec, x, 1);
        inner.matvecAdd!(out, w, x);
      };
    }
    if (inner.matmulShared) {
      this.matmulShared = (outs, ws, x, n, biases) => {
        for (const w of ws) observe(w.spec, x, n);
        inner.matmulShared!(outs, ws, x, n, biases);
      };
    }
    if (inner.matmulGated) {
      this.matmulGated = (out, gate, up, x, n) => {
        observe(gate.spec, x, n);
        observe(up.spec, x, n);
        inner.matmulGated!(out, gate, up, x, n);
      };
    }
    if (inner.matvecTop) {
      this.matvecTop = (out: Float32Array, w: WeightHandle, x: Float32Array, stats: LogitStats) => {
        observe(w.spec, x, 1);
        inner.matvecTop!(out, w, x, stats);
      };
    }
    if (inner.splitAttention) this.splitAttention = (shape, positions) => inner.splitAttention!(shape, positions);
    if (inner.hold) this.hold = (on) => inner.hold!(on);
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
