// The engine thread's handle on the GPU: a worker thread that owns the WebGPU device (worker.ts),
// driven synchronously. call() posts a list of commands and blocks on the control block until the
// worker has run them all, so the forward pass stays synchronous, as on the CPU backends.
//
// Acquisition (acquireGpu): a real GPU through Dawn's default backend (Vulkan, Metal, D3D12) first;
// then, when allowed, Mesa's llvmpipe through Dawn's OpenGL ES backend (EGL_PLATFORM=surfaceless),
// which is how CI tests every kernel without a GPU. Each must pass a feature test (a compute shader
// whose results are checked). null when no adapter can be had.

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { EngineError } from '../../../shared/errors.js';
import { GPU_CTRL, GPU_CTRL_BYTES, GPU_WORKER_SOURCE } from './worker.js';

/** Whether the software adapter (llvmpipe) may be used: never, after no GPU was found, or only it. */
export type GpuFallback = 'never' | 'allow' | 'only';

export interface GpuLimits {
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
  maxComputeWorkgroupsPerDimension: number;
  minUniformBufferOffsetAlignment: number;
  minStorageBufferOffsetAlignment: number;
  maxStorageBuffersPerShaderStage: number;
}

export interface GpuInfo {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** True for the OpenGL ES fallback (llvmpipe: the CPU). */
  software: boolean;
  features: string[];
  limits: GpuLimits;
}

/** A short name for the adapter: "llvmpipe", or the GPU's name. */
export function adapterName(i: GpuInfo): string {
  const all = `${i.device} ${i.description}`;
  if (/llvmpipe/i.test(all)) return 'llvmpipe';
  return i.description || i.device || [i.vendor, i.architecture].filter(Boolean).join(' ') || 'GPU';
}

// GPUBufferUsage bits (WebGPU spec), so that this thread needs no WebGPU globals
export const USAGE = { MAP_READ: 1, COPY_SRC: 4, COPY_DST: 8, UNIFORM: 64, STORAGE: 128 } as const;

export type GpuCommand =
  | { op: 'io'; sab: SharedArrayBuffer }
  | { op: 'init'; fallback: GpuFallback }
  | { op: 'buffer'; id: number; size: number; usage: number }
  | { op: 'free'; id: number }
  | { op: 'write'; id: number; offset: number; from: number; len: number }
  | { op: 'pipeline'; id: number; code: string }
  | { op: 'run'; passes: GpuPass[]; reads: GpuRead[]; programs?: number[]; wait?: boolean }
  | { op: 'program'; id: number; passes: GpuPass[] }
  | { op: 'forget'; id: number }
  | { op: 'gc' }
  | { op: 'probe'; groups: number[][]; reserve: number[]; limit: number }
  | { op: 'lose' }
  | { op: 'dispose' };

export interface GpuPass {
  pipe: number;
  /** [buffer id, byte offset, byte size] per binding, in binding order. */
  binds: [number, number, number][];
  wg: [number, number, number];
}

export interface GpuRead {
  id: number;
  offset: number;
  len: number;
  /** Byte offset in the io area. */
  to: number;
}

const WAIT_MS = 120_000;

export class GpuDevice {
  /** The adapter (set by open). */
  info!: GpuInfo;
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly ctrl: Int32Array;
  private seq = 0;
  private ioBuf: SharedArrayBuffer;
  private nextId = 1;
  private dead = false;

  private constructor(worker: Worker, port: MessagePort, ctrl: Int32Array, io: SharedArrayBuffer) {
    this.worker = worker;
    this.port = port;
    this.ctrl = ctrl;
    this.ioBuf = io;
  }

  /** Start the GPU thread and acquire an adapter; null when none can be had. */
  static open(fallback: GpuFallback = 'allow'): GpuDevice | null {
    let webgpuUrl: string;
    try {
      webgpuUrl = pathToFileURL(createRequire(import.meta.url).resolve('webgpu')).href;
    } catch {
      return null; // the package (dawn.node) is not installed here
    }
    if (fallback !== 'never' && !process.env.EGL_PLATFORM) process.env.EGL_PLATFORM = 'surfaceless';
    const ctrlBuf = new SharedArrayBuffer(GPU_CTRL_BYTES);
    const ctrl = new Int32Array(ctrlBuf);
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(GPU_WORKER_SOURCE, { eval: true, workerData: { ctrl: ctrlBuf, webgpuUrl, port: port2 }, transferList: [port2] });
    worker.unref();
    port1.unref();
    const io = new SharedArrayBuffer(1 << 16);
    const d = new GpuDevice(worker, port1, ctrl, io);
    let info: GpuInfo | null = null;
    try {
      d.call([{ op: 'io', sab: io }, { op: 'init', fallback }]);
      const len = new Int32Array(io, io.byteLength - 4, 1)[0];
      info = JSON.parse(new TextDecoder().decode(new Uint8Array(io, 0, len).slice())) as GpuInfo | null;
    } catch {
      info = null;
    }
    if (!info) {
      void worker.terminate();
      return null;
    }
    d.info = info;
    return d;
  }

  /** A fresh id for a buffer or pipeline. */
  id(): number {
    return this.nextId++;
  }

  /** The shared data area, at least `bytes` long (a larger one replaces it at the next call). */
  io(bytes: number): Uint8Array {
    if (this.ioBuf.byteLength < bytes + 4) {
      let size = this.ioBuf.byteLength;
      while (size < bytes + 4) size *= 2;
      this.ioBuf = new SharedArrayBuffer(size);
      this.call([{ op: 'io', sab: this.ioBuf }]);
    }
    return new Uint8Array(this.ioBuf);
  }

  /** Run the commands on the GPU thread and wait until they are done (throws the worker's error). */
  call(cmds: GpuCommand[]): void {
    if (this.dead) throw new EngineError('GPU_LOST', Atomics.load(this.ctrl, GPU_CTRL.LOST) === 1 ? `${this.text()}; reload the model to continue on the CPU` : 'the GPU backend has been disposed');
    const want = ++this.seq;
    this.port.postMessage(cmds);
    const c = this.ctrl;
    Atomics.store(c, GPU_CTRL.REQ, want);
    Atomics.notify(c, GPU_CTRL.REQ);
    const t0 = Date.now();
    while (Atomics.load(c, GPU_CTRL.DONE) !== want) {
      if (Atomics.load(c, GPU_CTRL.LOST) === 1) break;
      Atomics.wait(c, GPU_CTRL.DONE, want - 1, 1000);
      if (Date.now() - t0 > WAIT_MS) throw new EngineError('GPU_TIMEOUT', `the GPU did not answer within ${WAIT_MS / 1000} s`);
    }
    if (Atomics.load(c, GPU_CTRL.LOST) === 1) {
      this.dead = true;
      throw new EngineError('GPU_LOST', `${this.text()}; reload the model to continue on the CPU`);
    }
    if (c[GPU_CTRL.ERR] === 1) throw new EngineError('GPU_ERROR', `WebGPU: ${this.text()}`);
  }

  private text(): string {
    const n = this.ctrl[GPU_CTRL.MSGLEN];
    return new TextDecoder().decode(new Uint8Array(this.ctrl.buffer, GPU_CTRL.MSG * 4, n).slice());
  }

  dispose(): void {
    if (this.dead) return;
    try {
      this.call([{ op: 'dispose' }]);
    } catch {
      // the device is gone either way
    }
    this.dead = true;
    this.port.close();
    void this.worker.terminate();
  }
}
