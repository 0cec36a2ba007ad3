// A test double of the WebGPU backend's arithmetic: every weight dequantised to f32 once (the
// scalar reference, src/engine/quant, checked against ggml in tests/quant), x taken in f32 and
// never quantised, f64 sums. The CPU backends instead round x to the weight's ggml vec_dot type
// (Q8_0, Q8_K, F16), as llama.cpp's CPU does; the GPU kernels, like llama.cpp's Vulkan
// mul_mat_vec, do not, so on quantised files this double, not the CPU, is the GPU's reference.
import { SerialBackend } from '../../src/engine/backend/serial.js';
import type { FillFn, WeightHandle, WeightSpec } from '../../src/engine/backend/types.js';
import { rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { dequantizeRow, isSupportedType } from '../../src/engine/quant/index.js';

export class DequantisedBackend extends SerialBackend {
  readonly name = 'dequantised f32';
  /** [rows · cols] per weight, row-major. */
  private readonly ws: Float32Array[] = [];

  supports(type: number): boolean {
    return isSupportedType(type);
  }

  addWeight(spec: WeightSpec, fill: FillFn): WeightHandle {
    const rb = rowBytes(spec.type, spec.cols);
    const bytes = new Uint8Array(rb * spec.rows);
    fill(bytes, 0);
    const w = new Float32Array(spec.rows * spec.cols);
    for (let r = 0; r < spec.rows; r++) dequantizeRow(spec.type, bytes, r * rb, w.subarray(r * spec.cols), spec.cols);
    this.ws.push(w);
    return { id: this.ws.length - 1, spec };
  }

  matvec(out: Float32Array, h: WeightHandle, x: Float32Array): void {
    this.matmul(out, h, x, 1);
  }

  matmul(out: Float32Array, h: WeightHandle, x: Float32Array, n: number): void {
    const w = this.ws[h.id];
    const { rows, cols } = h.spec;
    for (let t = 0; t < n; t++) {
      for (let r = 0; r < rows; r++) {
        let s = 0;
        for (let i = 0; i < cols; i++) s += w[r * cols + i] * x[t * cols + i];
        out[t * rows + r] = s;
      }
    }
  }

  getRow(out: Float32Array, h: WeightHandle, row: number): void {
    out.set(this.ws[h.id].subarray(row * h.spec.cols, (row + 1) * h.spec.cols));
  }

  weightBytes(): number {
    return this.ws.reduce((s, w) => s + w.byteLength, 0);
  }

  dispose(): void {
    this.ws.length = 0;
  }
}
