// The WebAssembly SIMD backend on one thread: one kernel instance, one memory, weights placed by a
// bump allocator. Per matvec: x is copied in, quantised once to the weight type's vec_dot_type,
// then every row is one SIMD block dot (src/engine/wasm/assembly).

import { EngineError, ModelError } from '../../shared/errors.js';
import { ggmlTypeName, rowBytes } from '../gguf/ggml-types.js';
import { KernelInstance } from '../wasm/instance.js';
import { actBytes, gemmScratchBytes, kernelType, rowLayout, storedRowBytes, takesGemm, widenBytes, type KernelType } from '../wasm/layout.js';
import { loadKernelModule, type LoadOptions } from '../wasm/loader.js';
import { SerialBackend } from './serial.js';
import type { FillFn, WeightHandle, WeightSpec } from './types.js';

export type WasmBackendOptions = LoadOptions;

interface WasmWeight extends WeightHandle {
  readonly kt: KernelType;
  /** Byte address of row 0. */
  readonly ptr: number;
  readonly rowBytes: number;
}

/** The kernel entry for a spec, or a ModelError naming the tensor. */
export function kernelFor(spec: WeightSpec): KernelType {
  const kt = kernelType(spec.type);
  if (!kt) {
    throw new ModelError('UNSUPPORTED_TYPE', `tensor "${spec.name}" is ${ggmlTypeName(spec.type)}, which the WebAssembly kernels cannot compute; use the scalar backend or a file quantised to a supported type`);
  }
  return kt;
}

/** Throws when x or out is too short for the weight. */
export function checkShapes(spec: WeightSpec, out: Float32Array, x: Float32Array, n: number): void {
  if (x.length < spec.cols * n || out.length < spec.rows * n) {
    throw new EngineError('BAD_SHAPE', `tensor "${spec.name}" is [${spec.cols}, ${spec.rows}]: need x of ${spec.cols * n} and out of ${spec.rows * n} floats, got ${x.length} and ${out.length}`);
  }
}

export class WasmBackend extends SerialBackend {
  readonly name: string;
  override readonly kernels: KernelInstance;
  private readonly k: KernelInstance;
  private bytes = 0;
  private nextId = 0;

  constructor(opts: WasmBackendOptions = {}) {
    super();
    this.k = new KernelInstance(loadKernelModule(opts));
    this.kernels = this.k;
    this.name = `wasm-${this.k.simd}`;
  }

  supports(type: number): boolean {
    return kernelType(type) !== undefined;
  }

  addWeight(spec: WeightSpec, fill: FillFn): WeightHandle {
    const kt = kernelFor(spec);
    const fileRb = rowBytes(spec.type, spec.cols);
    const rb = storedRowBytes(spec.type, spec.cols);
    const size = rb * spec.rows;
    const lay = rowLayout(spec.type, spec.cols); // F16, Q4_0, Q4_K, Q6_K: ggml's rows filled, then laid out
    const slack = lay ? lay.slack : 0;
    const p = this.k.arena.alloc(size + slack);
    fill(this.k.arena.u8(p + slack, fileRb * spec.rows), 0);
    if (lay) {
      const temp = lay.temp > 0 ? this.k.arena.alloc(lay.temp) : 0;
      this.k.call(lay.fn, ...lay.args(p, p + slack, spec.rows, temp));
      this.k.arena.free(temp, lay.temp);
    }
    this.bytes += size;
    const h: WasmWeight = { id: this.nextId++, spec, kt, ptr: p + rb - fileRb, rowBytes: rb };
    return h;
  }

  matvec(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    this.matmul(out, w, x, 1);
  }

  matmul(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void {
    const { spec, kt, ptr, rowBytes: rb } = w as WasmWeight;
    checkShapes(spec, out, x, n);
    const { rows, cols } = spec;
    const a = this.k.arena;
    const ab = actBytes(kt.act, cols);
    const gemm = takesGemm(kt, n);
    const wb = gemm ? widenBytes(kt.act, n, cols) + gemmScratchBytes(cols) : 0;
    const xPtr = a.scratch(n * (cols * 4 + ab + rows * 4) + wb);
    const xqPtr = xPtr + n * cols * 4;
    const outPtr = xqPtr + n * ab;
    const xwPtr = outPtr + n * rows * 4;
    a.f32(xPtr, n * cols).set(x.subarray(0, n * cols));
    for (let t = 0; t < n; t++) this.k.quantize(kt.act, xqPtr + t * ab, xPtr + t * cols * 4, cols);
    if (n === 1) {
      this.k.matvec(kt, outPtr, ptr, rb, 0, rows, xqPtr, cols);
    } else if (gemm) {
      this.k.widen(kt.act, xwPtr, xqPtr, n, cols, ab);
      this.k.gemm(kt, outPtr, ptr, rb, 0, rows, xwPtr, cols, n, rows, xwPtr + widenBytes(kt.act, n, cols));
    } else {
      this.k.matmul(kt, outPtr, ptr, rb, 0, rows, xqPtr, cols, n, ab, rows);
    }
    out.set(a.f32(outPtr, n * rows));
  }

  getRow(out: Float32Array, w: WeightHandle, row: number): void {
    const { spec, kt, ptr, rowBytes: rb } = w as WasmWeight;
    if (!(row >= 0 && row < spec.rows)) throw new EngineError('BAD_SHAPE', `row ${row} is outside tensor "${spec.name}" (${spec.rows} rows)`);
    const o = this.k.arena.scratch(spec.cols * 4);
    this.k.dequantRow(kt, o, ptr, rb, spec.rows, row, spec.cols);
    out.set(this.k.arena.f32(o, spec.cols));
  }

  weightBytes(): number {
    return this.bytes;
  }

  dispose(): void {
    this.bytes = 0;
  }
}
