// The WebGPU backend: each weight matrix lives in GPU buffers in its GGUF block format (no
// dequantised copy), computed by the WGSL kernel of its format (kernels.ts); a tensor of a type
// without a WGSL kernel stays on a CPU backend (WebAssembly, else scalar), and the name says so.
// A tensor larger than one storage binding (maxStorageBufferBindingSize) is split by rows into
// several buffers, one dispatch each. Per product: x is written to the GPU, one command buffer runs
// the dispatches (a prompt batch: one per buffer with the tokens along z), y is read back.

import { EngineError, ModelError } from '../../../shared/errors.js';
import { ggmlTypeInfo, ggmlTypeName, rowBytes } from '../../gguf/ggml-types.js';
import type { KernelInstance } from '../../wasm/instance.js';
import { ScalarBackend } from '../scalar.js';
import type { FillFn, MatBackend, WeightHandle, WeightSpec } from '../types.js';
import { WasmBackend } from '../wasm.js';
import { SerialBackend } from '../serial.js';
import { adapterName, GpuDevice, USAGE, type GpuCommand, type GpuFallback, type GpuPass, type GpuRead } from './device.js';
import { dequantShader, gpuFormat, matvecShader, PARAMS_BYTES, WG, type GpuFormat } from './kernels.js';

/** Rows [row0, row0 + rows) of a tensor, in GPU buffer `buf`. */
export interface Chunk {
  buf: number;
  row0: number;
  rows: number;
}

interface GpuWeight extends WeightHandle {
  readonly fmt: GpuFormat | null;
  readonly chunks: Chunk[];
  readonly rowBytes: number;
  /** The CPU backend's handle when fmt is null. */
  readonly cpu: WeightHandle | null;
}

interface Pipes {
  mv: number;
  deq: number;
}

export interface WebGpuOptions {
  /** Use llvmpipe (the CPU through OpenGL ES) never, when no GPU is found (default), or only. */
  fallback?: GpuFallback;
  /** Test hook: split tensors above this many bytes (default: the device's binding limit). */
  maxChunkBytes?: number;
  /** Test hook: probe() acts as if the GPU held this many bytes (default: what it holds). */
  memoryBytes?: number;
}

const UPLOAD_BYTES = 1 << 23;

const pad4 = (n: number) => (n + 3) & ~3;

export class WebGpuBackend extends SerialBackend {
  readonly adapter: string;
  /** The CPU backend's WebAssembly kernels: the forward pass runs norms, RoPE and attention there. */
  override readonly kernels: KernelInstance | null;
  private readonly dev: GpuDevice;
  private readonly pipes = new Map<number, Pipes>();
  private cpuBackend: MatBackend | null = null;
  private readonly cpuTypes = new Set<number>();
  private bytes = 0;
  private nextId = 0;
  /** Largest buffer a weight is split into (the storage binding limit, or maxChunkBytes). */
  readonly chunkBytes: number;
  private readonly memoryBytes: number;
  private readonly uAlign: number;
  private readonly sAlign: number;
  private readonly maxWg: number;
  private readonly bindMax: number;
  private xBuf = { id: 0, size: 0 };
  private yBuf = { id: 0, size: 0 };
  private uBuf = { id: 0, size: 0 };
  /** matmulGated's up product. */
  private gated = new Float32Array(0);

  private constructor(dev: GpuDevice, opts: WebGpuOptions) {
    super();
    this.dev = dev;
    this.adapter = adapterName(dev.info);
    const l = dev.info.limits;
    this.bindMax = Math.min(l.maxStorageBufferBindingSize, l.maxBufferSize);
    this.chunkBytes = Math.min(opts.maxChunkBytes ?? Infinity, this.bindMax);
    this.memoryBytes = opts.memoryBytes ?? 0;
    this.uAlign = Math.max(PARAMS_BYTES, l.minUniformBufferOffsetAlignment);
    this.sAlign = Math.max(16, l.minStorageBufferOffsetAlignment);
    this.maxWg = l.maxComputeWorkgroupsPerDimension;
    this.kernels = this.cpu().kernels;
  }

  /** A backend on the best adapter here, or null when none can be had. */
  static create(opts: WebGpuOptions = {}): WebGpuBackend | null {
    const dev = GpuDevice.open(opts.fallback ?? 'allow');
    return dev ? new WebGpuBackend(dev, opts) : null;
  }

  /**
   * Set at load when the whole token runs on the GPU (model/gpu-step.ts offerGpuStep: the model's
   * architecture and every weight have WGSL kernels); the name then says so.
   */
  wholeToken = false;

  get name(): string {
    const base = `webgpu (${this.adapter})${this.wholeToken ? ', whole token on GPU' : ''}`;
    if (this.cpuTypes.size === 0) return base;
    return `${base} + ${this.cpu().name} for ${[...this.cpuTypes].map(ggmlTypeName).join(', ')}`;
  }

  /** True when the adapter is the software fallback (llvmpipe). */
  get software(): boolean {
    return this.dev.info.software;
  }

  /** The CPU backend's WebAssembly kernels (the forward pass runs attention and norms there). */
  cpuKernels(): KernelInstance | null {
    return this.cpu().kernels;
  }

  private cpu(): MatBackend {
    if (!this.cpuBackend) {
      try {
        this.cpuBackend = new WasmBackend();
      } catch {
        this.cpuBackend = new ScalarBackend();
      }
    }
    return this.cpuBackend;
  }

  /** The device, for the whole-token step (model/gpu-step.ts) to record its passes on. */
  get device(): GpuDevice {
    return this.dev;
  }

  /** A weight's GPU buffers and format, or null when it runs on the CPU backend. */
  gpuWeight(w: WeightHandle): { fmt: GpuFormat; chunks: readonly Chunk[]; rowBytes: number } | null {
    const g = w as GpuWeight;
    return g.fmt ? { fmt: g.fmt, chunks: g.chunks, rowBytes: g.rowBytes } : null;
  }

  supports(type: number): boolean {
    return gpuFormat(type) !== undefined || this.cpu().supports(type);
  }

  /** True when this type runs on the GPU (else on the CPU backend). */
  onGpu(type: number): boolean {
    return gpuFormat(type) !== undefined;
  }

  private pipesFor(f: GpuFormat): Pipes {
    let p = this.pipes.get(f.type);
    if (!p) {
      p = { mv: this.dev.id(), deq: this.dev.id() };
      this.dev.call([
        { op: 'pipeline', id: p.mv, code: matvecShader(f) },
        { op: 'pipeline', id: p.deq, code: dequantShader(f) },
      ]);
      this.pipes.set(f.type, p);
    }
    return p;
  }

  addWeight(spec: WeightSpec, fill: FillFn): WeightHandle {
    const fmt = gpuFormat(spec.type);
    const info = ggmlTypeInfo(spec.type);
    if (!fmt || !info) {
      if (!this.cpu().supports(spec.type)) {
        throw new ModelError('UNSUPPORTED_TYPE', `tensor "${spec.name}" is ${ggmlTypeName(spec.type)}, which Pantheon cannot compute yet; use a file quantised to a supported type`);
      }
      const cpu = this.cpu().addWeight(spec, fill);
      this.cpuTypes.add(spec.type);
      const h: GpuWeight = { id: this.nextId++, spec, fmt: null, chunks: [], rowBytes: 0, cpu };
      return h;
    }
    if (spec.cols % info.blockSize !== 0) throw new ModelError('BAD_TENSOR', `tensor "${spec.name}" has ${spec.cols} columns, not a whole number of ${ggmlTypeName(spec.type)} blocks`);
    this.pipesFor(fmt);
    const rb = rowBytes(spec.type, spec.cols);
    const rowsPer = Math.max(1, Math.floor(this.chunkBytes / rb));
    if (rb > this.bindMax) throw new ModelError('GPU_TOO_SMALL', `tensor "${spec.name}" has rows of ${rb} bytes, more than one GPU storage binding holds`);
    const chunks: Chunk[] = [];
    for (let row0 = 0; row0 < spec.rows; row0 += rowsPer) {
      const rows = Math.min(rowsPer, spec.rows - row0);
      const size = pad4(rows * rb);
      const buf = this.dev.id();
      this.dev.call([{ op: 'buffer', id: buf, size, usage: USAGE.STORAGE | USAGE.COPY_DST }]);
      for (let at = 0; at < rows * rb; at += UPLOAD_BYTES) {
        const len = Math.min(UPLOAD_BYTES, rows * rb - at);
        const io = this.dev.io(pad4(len));
        fill(io.subarray(0, len), row0 * rb + at);
        this.dev.call([{ op: 'write', id: buf, offset: at, from: 0, len: pad4(len) }]);
      }
      chunks.push({ buf, row0, rows });
      this.bytes += size;
    }
    const h: GpuWeight = { id: this.nextId++, spec, fmt, chunks, rowBytes: rb, cpu: null };
    return h;
  }

  private alignS(bytes: number): number {
    return Math.ceil(bytes / this.sAlign) * this.sAlign;
  }

  /** Make a working buffer at least `bytes` long. */
  private ensure(b: { id: number; size: number }, bytes: number, usage: number, cmds: GpuCommand[]): void {
    if (b.size >= bytes) return;
    if (b.id) cmds.push({ op: 'free', id: b.id });
    b.id = this.dev.id();
    b.size = Math.max(pad4(bytes), 2 * b.size);
    cmds.push({ op: 'buffer', id: b.id, size: b.size, usage });
  }

  /**
   * outs[i][t · rows_i + r] = W_i[r] · x[t · cols + r] for t < n, the GPU weights in one command
   * buffer (all share x), the CPU ones on the CPU.
   */
  private products(outs: Float32Array[], ws: GpuWeight[], x: Float32Array, n: number): void {
    const cols = ws[0].spec.cols;
    const gpu: number[] = [];
    for (let i = 0; i < ws.length; i++) {
      const w = ws[i];
      if (x.length < w.spec.cols * n || outs[i].length < w.spec.rows * n || w.spec.cols !== cols) {
        throw new EngineError('BAD_SHAPE', `tensor "${w.spec.name}" is [${w.spec.cols}, ${w.spec.rows}]: need x of ${w.spec.cols * n} and out of ${w.spec.rows * n} floats, got ${x.length} and ${outs[i].length}`);
      }
      if (w.cpu) this.cpu().matmul(outs[i], w.cpu, x, n);
      else gpu.push(i);
    }
    if (gpu.length === 0) return;
    // tokens per submission, so that x and y each fit one storage binding
    let yRows = 0;
    for (const i of gpu) yRows += ws[i].spec.rows + this.sAlign / 4; // (each output's start aligned)
    const per = Math.max(1, Math.min(n, this.maxWg, Math.floor(this.bindMax / (4 * Math.max(cols, yRows)))));
    for (let t0 = 0; t0 < n; t0 += per) {
      const m = Math.min(per, n - t0);
      this.run(outs, ws, gpu, x, t0, m, cols);
    }
  }

  private run(outs: Float32Array[], ws: GpuWeight[], gpu: number[], x: Float32Array, t0: number, m: number, cols: number): void {
    const cmds: GpuCommand[] = [];
    let nPass = 0;
    for (const i of gpu) nPass += ws[i].chunks.length;
    const xBytes = m * cols * 4;
    const uBytes = nPass * this.uAlign;
    let yBytes = 0;
    for (const i of gpu) yBytes += this.alignS(m * ws[i].spec.rows * 4);
    this.ensure(this.xBuf, xBytes, USAGE.STORAGE | USAGE.COPY_DST, cmds);
    this.ensure(this.uBuf, uBytes, USAGE.UNIFORM | USAGE.COPY_DST, cmds);
    this.ensure(this.yBuf, yBytes, USAGE.STORAGE | USAGE.COPY_SRC, cmds);
    const io = this.dev.io(xBytes + uBytes + yBytes);
    new Float32Array(io.buffer, 0, m * cols).set(x.subarray(t0 * cols, (t0 + m) * cols));
    const u32 = new Uint32Array(io.buffer, xBytes, uBytes / 4);
    const passes: GpuPass[] = [];
    const reads: GpuRead[] = [];
    let yOff = 0;
    let k = 0;
    for (const i of gpu) {
      const w = ws[i];
      const f = w.fmt!;
      const pipe = this.pipes.get(f.type)!.mv;
      for (const c of w.chunks) {
        const nwx = Math.min(c.rows, this.maxWg);
        const o = (k * this.uAlign) / 4;
        u32.set([c.rows, w.spec.cols / f.unit, w.rowBytes, cols, w.spec.rows, c.row0, nwx, 0], o);
        passes.push({
          pipe,
          binds: [[c.buf, 0, pad4(c.rows * w.rowBytes)], [this.xBuf.id, 0, xBytes], [this.yBuf.id, yOff, m * w.spec.rows * 4], [this.uBuf.id, k * this.uAlign, PARAMS_BYTES]],
          wg: [nwx, Math.ceil(c.rows / nwx), m],
        });
        k++;
      }
      reads.push({ id: this.yBuf.id, offset: yOff, len: m * w.spec.rows * 4, to: xBytes + uBytes + yOff });
      yOff += this.alignS(m * w.spec.rows * 4);
    }
    cmds.push({ op: 'write', id: this.xBuf.id, offset: 0, from: 0, len: xBytes });
    cmds.push({ op: 'write', id: this.uBuf.id, offset: 0, from: xBytes, len: uBytes });
    cmds.push({ op: 'run', passes, reads });
    this.dev.call(cmds);
    yOff = 0;
    for (const i of gpu) {
      const rows = ws[i].spec.rows;
      outs[i].set(new Float32Array(io.buffer, xBytes + uBytes + yOff, m * rows), t0 * rows);
      yOff += this.alignS(m * rows * 4);
    }
  }

  matvec(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    this.products([out], [w as GpuWeight], x, 1);
  }

  matmul(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void {
    this.products([out], [w as GpuWeight], x, n);
  }

  /** gate and up in one command buffer, then ops.ts gatedAct's silu(gate) ⊙ up (SerialBackend's arithmetic). */
  override matmulGated(out: Float32Array, gate: WeightHandle, up: WeightHandle, x: Float32Array, n: number): void {
    const m = n * up.spec.rows;
    if (this.gated.length < m) this.gated = new Float32Array(m);
    const u = this.gated.subarray(0, m);
    this.products([out, u], [gate as GpuWeight, up as GpuWeight], x, n);
    for (let i = 0; i < m; i++) out[i] = Math.fround(out[i] / (1 + Math.exp(-out[i]))) * u[i];
  }

  override matmulShared(outs: Float32Array[], ws: WeightHandle[], x: Float32Array, n: number, biases?: readonly (Float32Array | null)[]): void {
    this.products(outs, ws as GpuWeight[], x, n);
    if (!biases) return;
    for (let i = 0; i < ws.length; i++) {
      const b = biases[i];
      if (!b) continue;
      const rows = ws[i].spec.rows;
      const o = outs[i];
      for (let t = 0; t < n; t++) for (let r = 0; r < rows; r++) o[t * rows + r] += b[r];
    }
  }

  getRow(out: Float32Array, w: WeightHandle, row: number): void {
    const g = w as GpuWeight;
    if (g.cpu) return this.cpu().getRow(out, g.cpu, row);
    const { spec, fmt } = g;
    if (!(row >= 0 && row < spec.rows)) throw new EngineError('BAD_SHAPE', `row ${row} is outside tensor "${spec.name}" (${spec.rows} rows)`);
    const c = g.chunks.find((ch) => row < ch.row0 + ch.rows)!;
    const cmds: GpuCommand[] = [];
    const yBytes = spec.cols * 4;
    this.ensure(this.uBuf, this.uAlign, USAGE.UNIFORM | USAGE.COPY_DST, cmds);
    this.ensure(this.yBuf, yBytes, USAGE.STORAGE | USAGE.COPY_SRC, cmds);
    const io = this.dev.io(PARAMS_BYTES + yBytes);
    const units = spec.cols / fmt!.unit;
    new Uint32Array(io.buffer, 0, 8).set([row - c.row0, units, g.rowBytes, 0, 0, 0, 0, 0]);
    cmds.push({ op: 'write', id: this.uBuf.id, offset: 0, from: 0, len: PARAMS_BYTES });
    cmds.push({
      op: 'run',
      passes: [{ pipe: this.pipes.get(fmt!.type)!.deq, binds: [[c.buf, 0, pad4(c.rows * g.rowBytes)], [this.yBuf.id, 0, yBytes], [this.uBuf.id, 0, PARAMS_BYTES]], wg: [Math.ceil(units / WG), 1, 1] }],
      reads: [{ id: this.yBuf.id, offset: 0, len: yBytes, to: PARAMS_BYTES }],
    });
    this.dev.call(cmds);
    out.set(new Float32Array(io.buffer, PARAMS_BYTES, spec.cols));
  }

  /**
   * How many of these groups of buffer sizes, taken in order, the GPU can allocate after `reserve`
   * bytes (WebGPU has no free-memory query: each buffer is made inside
   * pushErrorScope('out-of-memory') and all are freed again; worker.ts probe).
   */
  probe(groups: number[][], reserve: number): number {
    const r: number[] = [];
    for (let left = reserve; left > 0; left -= this.chunkBytes) r.push(pad4(Math.min(left, this.chunkBytes)));
    this.dev.call([{ op: 'probe', groups, reserve: r, limit: this.memoryBytes }]);
    return new Int32Array(this.dev.io(4).buffer, 0, 1)[0];
  }

  /** Test hook: the next product finds the device lost (EngineError GPU_LOST), as a real loss would. */
  simulateLoss(): void {
    this.dev.call([{ op: 'lose' }]);
  }

  /** Test hook: a full garbage collection on the GPU thread. */
  collectGarbage(): void {
    this.dev.call([{ op: 'gc' }]);
  }

  weightBytes(): number {
    return this.bytes + (this.cpuBackend?.weightBytes() ?? 0);
  }

  dispose(): void {
    this.dev.dispose();
    this.cpuBackend?.dispose();
    this.bytes = 0;
  }
}
