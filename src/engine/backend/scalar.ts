// The scalar reference backend: weights in ordinary Uint8Arrays, kernels from quant/ in TypeScript.

import { ModelError } from '../../shared/errors.js';
import { ggmlTypeInfo, rowBytes } from '../gguf/ggml-types.js';
import { dequantizeRow, isSupportedType, matmul, matvec, type QWeight } from '../quant/index.js';
import { SerialBackend } from './serial.js';
import type { FillFn, WeightHandle, WeightSpec } from './types.js';

interface ScalarWeight extends WeightHandle {
  q: QWeight;
}

export class ScalarBackend extends SerialBackend {
  readonly name = 'scalar';
  private bytes = 0;
  private nextId = 0;

  supports(type: number): boolean {
    return isSupportedType(type);
  }

  addWeight(spec: WeightSpec, fill: FillFn): WeightHandle {
    if (!this.supports(spec.type)) {
      throw new ModelError('UNSUPPORTED_TYPE', `tensor "${spec.name}" is ${ggmlTypeInfo(spec.type)?.name ?? spec.type}, which Pantheon cannot compute yet; use a file quantised to a supported type`);
    }
    const rb = rowBytes(spec.type, spec.cols);
    const data = new Uint8Array(rb * spec.rows);
    fill(data, 0);
    this.bytes += data.length;
    const h: ScalarWeight = { id: this.nextId++, spec, q: { data, type: spec.type, rows: spec.rows, cols: spec.cols, rowBytes: rb } };
    return h;
  }

  matvec(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    matvec(out, (w as ScalarWeight).q, x);
  }

  matmul(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void {
    matmul(out, (w as ScalarWeight).q, x, n);
  }

  getRow(out: Float32Array, w: WeightHandle, row: number): void {
    const q = (w as ScalarWeight).q;
    dequantizeRow(q.type, q.data, row * q.rowBytes, out, q.cols);
  }

  weightBytes(): number {
    return this.bytes;
  }

  dispose(): void {
    this.bytes = 0;
  }
}
