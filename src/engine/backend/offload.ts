// GPU offload: a MatBackend over two, the WebGPU backend and the CPU pool, that sends each weight
// to one of them by the block it belongs to (offload-plan.ts: blocks [0, N) on the GPU, the rest,
// the token embedding, and every type without a WGSL kernel on the CPU; the output matrix with the
// last block). A product runs where its weight lives; q/k/v or gate/up split across the two run
// on each and meet here. Everything that is not a product (attention and its KV cache, norms,
// RoPE, the threads' hold, the activations' memory) is the CPU backend's.

import { ModelError } from '../../shared/errors.js';
import type { KernelInstance } from '../wasm/instance.js';
import type { LogitStats } from './logit-stats.js';
import { outputOnGpu, type OffloadSplit } from './offload-plan.js';
import type { AttentionShape, FillFn, MatBackend, SplitAttention, WaitMeter, WeightHandle, WeightSpec } from './types.js';
import { ggmlTypeName } from '../gguf/ggml-types.js';

/** What the router needs of the GPU side (WebGpuBackend; tests give it a CPU backend in disguise). */
export interface GpuSide extends MatBackend {
  /** The adapter's short name ("llvmpipe", the GPU's). */
  readonly adapter: string;
  /** True when this type runs on the GPU (has a WGSL kernel). */
  onGpu(type: number): boolean;
  /** True when sessions run the whole token on it (model/gpu-step.ts, every block there). */
  readonly wholeToken?: boolean;
}

interface Routed extends WeightHandle {
  /** Its products run on the GPU. */
  readonly gpu: boolean;
  /** The handle on that backend. */
  readonly inner: WeightHandle;
  /** token_embd tied to an output on the GPU: its CPU copy, which the embedding rows come from. */
  readonly rows: WeightHandle | null;
}

/** Which side a weight named `name` goes to: 'both' for a tied token_embd whose output is on the GPU. */
export function placeOf(name: string, split: OffloadSplit): 'gpu' | 'cpu' | 'both' {
  const m = /^blk\.(\d+)\./.exec(name);
  if (m) return Number(m[1]) < split.gpuLayers ? 'gpu' : 'cpu';
  if (name === 'output.weight') return outputOnGpu(split) ? 'gpu' : 'cpu';
  if (name === 'token_embd.weight') return split.tied && outputOnGpu(split) ? 'both' : 'cpu';
  return 'cpu';
}

export class OffloadBackend implements MatBackend {
  private nextId = 0;
  /** Types of GPU blocks that stayed on the CPU (no WGSL kernel), for the name. */
  private readonly cpuTypes = new Set<number>();
  /** matmulGated's up product when gate and up live apart. */
  private up = new Float32Array(0);

  constructor(readonly gpu: GpuSide, readonly cpu: MatBackend, readonly split: OffloadSplit) {}

  /**
   * e.g. "webgpu (llvmpipe) 12/32 layers + wasm-relaxed-pool" (`pantheon run --json` "backend"), or
   * "webgpu (llvmpipe) 32/32 layers, whole token on GPU".
   */
  get name(): string {
    if (this.gpu.wholeToken) return `webgpu (${this.gpu.adapter}) ${this.split.gpuLayers}/${this.split.nLayer} layers, whole token on GPU`;
    const also = this.cpuTypes.size ? ` (also for ${[...this.cpuTypes].map(ggmlTypeName).join(', ')})` : '';
    return `webgpu (${this.gpu.adapter}) ${this.split.gpuLayers}/${this.split.nLayer} layers + ${this.cpu.name}${also}`;
  }

  /** True when every block and the output run on the GPU. */
  get allOnGpu(): boolean {
    return outputOnGpu(this.split) && this.cpuTypes.size === 0;
  }

  get threads(): number {
    return this.cpu.threads;
  }

  get kernels(): KernelInstance | null {
    return this.cpu.kernels;
  }

  get waitMeter(): WaitMeter | null {
    return this.cpu.waitMeter;
  }

  set waitMeter(m: WaitMeter | null) {
    this.cpu.waitMeter = m;
  }

  supports(type: number): boolean {
    return this.cpu.supports(type) || this.gpu.supports(type);
  }

  addWeight(spec: WeightSpec, fill: FillFn): WeightHandle {
    const place = placeOf(spec.name, this.split);
    const gpuHere = place !== 'cpu' && this.gpu.onGpu(spec.type);
    if (place !== 'cpu' && !gpuHere) this.cpuTypes.add(spec.type);
    let inner: WeightHandle;
    try {
      inner = gpuHere ? this.gpu.addWeight(spec, fill) : this.cpu.addWeight(spec, fill);
    } catch (err) {
      // (auto's probe left room; a number given, or memory taken since, may not)
      if (gpuHere && /memory/i.test((err as Error).message)) throw new ModelError('GPU_OUT_OF_MEMORY', `the GPU ran out of memory for tensor "${spec.name}" (${(err as Error).message}); give fewer GPU layers (--gpu-layers, or GPU layers under Settings → Engine)`);
      throw err;
    }
    const rows = gpuHere && place === 'both' ? this.cpu.addWeight(spec, fill) : null;
    const h: Routed = { id: this.nextId++, spec, gpu: gpuHere, inner, rows };
    return h;
  }

  /**
   * The GPU side's handle of a weight whose products run there, else null (for code that drives
   * the GPU backend itself, as a whole-token step would when allOnGpu).
   */
  gpuHandle(w: WeightHandle): WeightHandle | null {
    const r = w as Routed;
    return r.gpu ? r.inner : null;
  }

  private side(w: WeightHandle): MatBackend {
    return (w as Routed).gpu ? this.gpu : this.cpu;
  }

  matvec(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    this.side(w).matvec(out, (w as Routed).inner, x);
  }

  matvecAdd(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    this.side(w).matvecAdd(out, (w as Routed).inner, x);
  }

  matmul(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void {
    this.side(w).matmul(out, (w as Routed).inner, x, n);
  }

  /** Each side's weights in one call to it (a set on one side is that side's call, unchanged). */
  matmulShared(outs: Float32Array[], ws: WeightHandle[], x: Float32Array, n: number, biases?: readonly (Float32Array | null)[]): void {
    const rs = ws as Routed[];
    for (const gpu of [true, false]) {
      const at = rs.flatMap((r, i) => (r.gpu === gpu ? [i] : []));
      if (at.length === 0) continue;
      const be = gpu ? this.gpu : this.cpu;
      if (at.length === ws.length) return be.matmulShared(outs, rs.map((r) => r.inner), x, n, biases);
      be.matmulShared(at.map((i) => outs[i]), at.map((i) => rs[i].inner), x, n, biases && at.map((i) => biases[i] ?? null));
    }
  }

  /** gate and up on one side: its call; apart: each product on its side, then silu(gate) ⊙ up here (SerialBackend's arithmetic). */
  matmulGated(out: Float32Array, gate: WeightHandle, up: WeightHandle, x: Float32Array, n: number): void {
    const g = gate as Routed, u = up as Routed;
    if (g.gpu === u.gpu) return this.side(g).matmulGated(out, g.inner, u.inner, x, n);
    const m = n * up.spec.rows;
    if (this.up.length < m) this.up = new Float32Array(m);
    const t = this.up.subarray(0, m);
    this.side(g).matmul(out, g.inner, x, n);
    this.side(u).matmul(t, u.inner, x, n);
    // ops.ts gatedAct(out, out, up, silu), silu(x) = x / (1 + e^−x)
    for (let i = 0; i < m; i++) out[i] = Math.fround(out[i] / (1 + Math.exp(-out[i]))) * t[i];
  }

  matvecTop(out: Float32Array, w: WeightHandle, x: Float32Array, stats: LogitStats): void {
    this.side(w).matvecTop(out, (w as Routed).inner, x, stats);
  }

  splitAttention(shape: AttentionShape, positions: number): SplitAttention | null {
    return this.cpu.splitAttention(shape, positions);
  }

  hold(on: boolean): void {
    this.cpu.hold(on);
  }

  /** Embedding rows from the CPU's copy when there is one (token_embd stays on the CPU). */
  getRow(out: Float32Array, w: WeightHandle, row: number): void {
    const r = w as Routed;
    if (r.rows) this.cpu.getRow(out, r.rows, row);
    else this.side(r).getRow(out, r.inner, row);
  }

  weightBytes(): number {
    return this.gpu.weightBytes() + this.cpu.weightBytes();
  }

  /** Bytes of weights on the GPU. */
  gpuBytes(): number {
    return this.gpu.weightBytes();
  }

  dispose(): void {
    try {
      this.gpu.dispose();
    } finally {
      this.cpu.dispose();
    }
  }
}
