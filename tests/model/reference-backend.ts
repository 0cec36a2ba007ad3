// A test double of llama.cpp's CPU matrix multiply on the machine that recorded the golden files
// (tests/golden/llama.cpp, bench/README.md: an AVX-512/AMX Xeon, node-llama-cpp 3.21.1).
//
// ggml multiplies an F16 weight in one of two ways there, and they round differently:
//  - the generic path (ggml-cpu.c ggml_compute_forward_mul_mat) first converts the activation to
//    the weight's vec_dot_type, F16 for F16 (type_traits_cpu[GGML_TYPE_F16].vec_dot_type), so x is
//    rounded to f16 before the dot product (for batches ≥ 2 llamafile_sgemm may run instead, but
//    on x86 only as F16×F16, on the rounded x: llamafile/sgemm.cpp).
//  - on a CPU with AMX, weights that the AMX extra buffer accepts (ggml-cpu/amx/amx.cpp
//    supports_op: F16 with ne[0] % 16 == 0 and an output dimension % 32 == 0) are multiplied by
//    tinygemm_kernel_avx (amx/mmq.cpp) with the activation in f32, unrounded. A tied output is a
//    duplicate of token_embd in the output layer's buffer (TENSOR_DUPLICATED), so it qualifies too.
// This double does the same: weights dequantised to f32 once, the activation rounded to f16 only
// where the generic path would run. Without AMX (`{ amx: false }`, for goldens recorded on a CPU
// without it, Golden.recordedOn) that is every F16 weight. Experts (tensor names *_exps, sliced by
// model/moe.ts) go through ggml's mul_mat_id, which AMX does not take: always rounded. It supports F32 and F16 weights (all the golden models).
// Pantheon's own backends never round x (src/engine/quant/float.ts), so they differ from this
// where AMX does not take the weight: in the golden models, output.weight with 50257 rows (qwen2,
// qwen3, phi2), gemma's attn_k/attn_v (16 rows) and every matrix of llama-2-tiny-random (8 columns).
// Quantised weights (gpt-oss's MXFP4 experts) go through the scalar reference (src/engine/quant:
// activation to Q8_0, ggml's generic block dot), where ggml's AVX2 kernel sums the same exact
// block integers in another float order.

import { SerialBackend } from '../../src/engine/backend/serial.js';
import type { FillFn, WeightHandle, WeightSpec } from '../../src/engine/backend/types.js';
import { rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { roundF16 } from '../../src/engine/quant/half.js';
import { dequantizeRow, isSupportedType, matvec as quantMatvec, type QWeight } from '../../src/engine/quant/index.js';

interface RefWeight extends WeightHandle {
  f: Float32Array; // [rows, cols]
  roundX: boolean;
  /** A quantised weight as the file holds it (multiplied by the scalar reference), else null. */
  q: QWeight | null;
}

export function amxTakes(spec: WeightSpec): boolean {
  return spec.cols % 16 === 0 && spec.rows % 32 === 0;
}

export class ReferenceCpuBackend extends SerialBackend {
  readonly name = 'reference-cpu (test)';
  private next = 0;
  private bytes = 0;
  private xr = new Float32Array(0);
  private readonly amx: boolean;

  constructor(opts: { amx?: boolean } = {}) {
    super();
    this.amx = opts.amx ?? true;
  }

  supports(type: number): boolean {
    return type === 0 || type === 1 || isSupportedType(type);
  }

  addWeight(spec: WeightSpec, fill: FillFn): WeightHandle {
    if (!this.supports(spec.type)) throw new Error(`test backend: ${spec.name} has type ${spec.type}`);
    const rb = rowBytes(spec.type, spec.cols);
    const raw = new Uint8Array(rb * spec.rows);
    fill(raw, 0);
    const f = new Float32Array(spec.rows * spec.cols);
    for (let r = 0; r < spec.rows; r++) dequantizeRow(spec.type, raw, r * rb, f.subarray(r * spec.cols, (r + 1) * spec.cols), spec.cols);
    this.bytes += f.byteLength;
    if (spec.type !== 0 && spec.type !== 1) {
      const q: RefWeight = { id: this.next++, spec, f, roundX: false, q: { data: raw, type: spec.type, rows: spec.rows, cols: spec.cols, rowBytes: rb } };
      return q;
    }
    const h: RefWeight = { id: this.next++, spec, f, roundX: spec.type === 1 && (!this.amx || spec.name.includes('_exps') || !amxTakes(spec)), q: null };
    return h;
  }

  matvec(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    const { f, roundX, spec, q } = w as RefWeight;
    if (q) {
      quantMatvec(out, q, x);
      return;
    }
    const n = spec.cols;
    if (this.xr.length < n) this.xr = new Float32Array(n);
    const xr = this.xr;
    for (let i = 0; i < n; i++) xr[i] = roundX ? roundF16(x[i]) : x[i];
    for (let r = 0; r < spec.rows; r++) {
      let s = 0;
      const o = r * n;
      for (let i = 0; i < n; i++) s += f[o + i] * xr[i];
      out[r] = s;
    }
  }

  matmul(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void {
    const { rows, cols } = w.spec;
    for (let t = 0; t < n; t++) this.matvec(out.subarray(t * rows, (t + 1) * rows), w, x.subarray(t * cols, (t + 1) * cols));
  }

  getRow(out: Float32Array, w: WeightHandle, row: number): void {
    const { f, spec } = w as RefWeight;
    out.set(f.subarray(row * spec.cols, (row + 1) * spec.cols));
  }

  weightBytes(): number {
    return this.bytes;
  }

  dispose(): void {
    this.bytes = 0;
  }
}
