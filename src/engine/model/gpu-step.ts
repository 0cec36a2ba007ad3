// The whole token on the GPU: embedding → per layer (RMSNorm → q, k, v → q/k norm → RoPE → KV
// cache store → attention → wo + residual → RMSNorm → gate, up → SwiGLU → down + residual) →
// final norm → logits, every dispatch of a token in one command buffer, one submit, and only the
// logits read back. The KV cache lives in GPU buffers as f16 (two halves per u32 word, no
// shader-f16 needed), the values of the CPU's f16 cache. The dense llama family only (llama,
// mistral, qwen2, qwen3, smollm3-style): gpuStepWhyNot says why another model keeps the
// per-matvec path (backend/webgpu/backend.ts), where norms, RoPE and attention run on the CPU.
// (Here in model/, as it reads the model's weights; its kernels are backend/webgpu/ops-wgsl.ts.)
//
// The passes are recorded once (the worker keeps them with their bind groups: 'program'); per
// token the CPU writes the step block (token, position, RoPE's cos/sin from model/ops.ts ropeCache,
// so the angles are the CPU's to the bit) and replays them. A prompt runs token by token, its
// submits in one round trip, the logits read after the last.

import { EngineError } from '../../shared/errors.js';
import { OffloadBackend } from '../backend/offload.js';
import type { WeightHandle } from '../backend/types.js';
import { WebGpuBackend } from '../backend/webgpu/backend.js';
import { USAGE, type GpuCommand, type GpuDevice, type GpuPass } from '../backend/webgpu/device.js';
import { matvecShader } from '../backend/webgpu/kernels.js';
import { addShader, attentionShader, embedShader, kvStoreShader, OP_PARAMS_BYTES, ropeShader, rmsnormShader, stepBytes, swigluShader } from '../backend/webgpu/ops-wgsl.js';
import type { Model } from './forward.js';

/** A whole-token pass on a device (forward.ts runs it in place of its own when a RunState has one). */
export interface TokenStep {
  /** Run `tokens` at positions pos, pos + 1, … (their keys and values into the device's cache); the last one's logits into `logits`. */
  run(tokens: readonly number[], pos: number, logits: Float32Array): void;
  dispose(): void;
}

/**
 * The WebGPU backend under m's products and its handle of each of m's weights (null: the weight is
 * on the CPU): the backend itself, or an offload router's GPU side when every block and the output
 * are there (its token embedding stays on the CPU: the step then writes each token's row).
 */
interface GpuSideOf {
  be: WebGpuBackend;
  handle(w: WeightHandle): WeightHandle | null;
}
function gpuSideOf(m: Model): GpuSideOf | null {
  const b = m.backend;
  if (b instanceof WebGpuBackend) return { be: b, handle: (w) => w };
  if (b instanceof OffloadBackend && b.gpu instanceof WebGpuBackend && b.allOnGpu) return { be: b.gpu, handle: (w) => b.gpuHandle(w) };
  return null;
}

/** Why the whole token of `m` cannot run on the GPU at this context size, or null when it can. */
export function gpuStepWhyNot(m: Model, contextSize: number): string | null {
  const { hp, spec, w } = m;
  const side = gpuSideOf(m);
  if (!side) return m.backend instanceof OffloadBackend ? 'some layers run on the CPU' : 'the backend is not WebGPU';
  const backend = side.be;
  if (spec.norm !== 'rms' || spec.ffn !== 'swiglu' || spec.fusedGateUp || spec.parallel || spec.scaleQ || spec.qkNorm === 'full' || !spec.preNorms || spec.postNorms) {
    return `${hp.arch}'s layer layout is not the llama family's`;
  }
  if (spec.moe || spec.deltaNet || spec.llama4Attention || spec.sinks || hp.moe || hp.deltaNet || hp.layerAttn) return `${hp.arch}'s experts or attention variant`;
  if (hp.embedScale > 0 || hp.residualScale > 0 || hp.logitScale > 0 || hp.attnSoftcap > 0 || hp.finalSoftcap > 0 || hp.attnTempScale > 0) return `${hp.arch}'s scales or soft-caps`;
  if (hp.layerRope.includes('swa')) return 'a second RoPE for sliding-window layers';
  if (hp.nHead % hp.nHeadKv !== 0 || hp.nRot % 2 !== 0 || hp.nRot > hp.headDimK) return 'its head layout';
  if (w.outputNormB || w.outputB || w.layers.some((l) => l.wqkv || l.attnNormB || l.ffnNormB || !l.attnNorm || !l.ffnNorm)) return 'its fused or biased norms';
  // (the token embedding may stay on the CPU: its row is written each token)
  const mats: WeightHandle[] = [w.output];
  for (const l of w.layers) mats.push(l.wq!, l.wk!, l.wv!, l.wo, l.wGate!, l.wUp!, l.wDown!);
  const cpu = mats.find((x) => !x || !gpuWeightOf(side, x));
  if (cpu !== undefined) return `tensor "${cpu?.spec.name ?? '?'}" has no WGSL kernel`;
  const lim = backend.device.info.limits;
  const bind = Math.min(lim.maxStorageBufferBindingSize, lim.maxBufferSize);
  const kvBytes = contextSize * hp.nHeadKv * Math.max(hp.headDimK, hp.headDimV) * (kvHalves(hp.nHeadKv * hp.headDimK, hp.nHeadKv * hp.headDimV) ? 2 : 4);
  if (kvBytes > bind) return `a layer's KV cache (${(kvBytes / 2 ** 20).toFixed(0)} MiB) exceeds one GPU storage binding`;
  return null;
}

/** A weight's GPU buffers, or null where it is on the CPU. */
function gpuWeightOf(side: GpuSideOf, x: WeightHandle) {
  const h = side.handle(x);
  return h ? side.be.gpuWeight(h) : null;
}

/** Mark the backend for the whole token on the GPU when `m` qualifies (PANTHEON_GPU_STEP=0: never). */
export function offerGpuStep(m: Model, contextSize: number): void {
  const side = gpuSideOf(m);
  if (side) side.be.wholeToken = process.env.PANTHEON_GPU_STEP !== '0' && gpuStepWhyNot(m, contextSize) === null;
}

/** Whether sessions of `m` run the whole token on the GPU (offerGpuStep said so). */
export function gpuStepOn(m: Model): boolean {
  return gpuSideOf(m)?.be.wholeToken ?? false;
}

const pad4 = (n: number) => (n + 3) & ~3;
/** Whether the cache can hold halves in pairs (two per u32 word: each row an even count). */
const kvHalves = (kvDimK: number, kvDimV: number) => kvDimK % 2 === 0 && kvDimV % 2 === 0;
const f32bits = (x: number) => new Uint32Array(new Float32Array([x]).buffer)[0];

/** A binding: one of the step's buffers (id), a weight buffer ([id, bytes]), this pass's uniform block ('P'), or the step block ('S'). */
type Bind = number | [number, number] | 'P' | 'S';

export interface GpuStepOptions {
  /**
   * The KV cache: 'f16' (default where rows are even): halves, two per u32 word, the CPU's f16
   * values in half the memory of 'f32'; 'f32' with each value rounded to f16 (the same values);
   * 'f32-exact' unrounded.
   */
  kv?: 'f16' | 'f32' | 'f32-exact';
}

export class GpuStep implements TokenStep {
  /** Dispatches per token (the layers' and the head's), and what the calls so far submitted. */
  readonly dispatches: number;
  /** How the KV cache is held (GpuStepOptions.kv). */
  readonly kv: 'f16' | 'f32' | 'f32-exact';
  calls = 0;
  submits = 0;
  private readonly dev: GpuDevice;
  private readonly sizes = new Map<number, number>();
  private readonly pipes = new Map<string, number>();
  private readonly stepBuf: number;
  private readonly stepBytes: number;
  private readonly logitsBuf: number;
  private readonly layersProg: number;
  private readonly headProg: number;
  private readonly ropeTmp: Float32Array;
  private readonly nVocab: number;
  /** The residual stream's buffer and, when token_embd is on the CPU, how its rows are read (else null). */
  private readonly xBuf: number;
  private readonly cpuRow: ((out: Float32Array, token: number) => void) | null;
  private readonly dim: number;
  private disposed = false;

  /**
   * The step's buffers, pipelines and recorded passes for `m` (gpuStepWhyNot(m) must be null),
   * with a KV cache of contextSize positions; `rope(out, p)` writes RoPE's cos/sin at position p.
   */
  constructor(m: Model, contextSize: number, private readonly rope: (out: Float32Array, p: number) => void, opts: GpuStepOptions = {}) {
    const side = gpuSideOf(m);
    if (!side) throw new EngineError('GPU_STEP', 'the whole-token GPU step needs every layer on the GPU');
    const be = side.be;
    this.dev = be.device;
    const { hp, w } = m;
    const { nEmbd: dim, nHead, nHeadKv, headDimK: hdK, headDimV: hdV, nRot, nVocab, normEps: eps } = hp;
    const qDim = nHead * hdK, kvDimK = nHeadKv * hdK, kvDimV = nHeadKv * hdV, oDim = nHead * hdV;
    const lim = this.dev.info.limits;
    const uAlign = Math.max(OP_PARAMS_BYTES, lim.minUniformBufferOffsetAlignment);
    const maxWg = lim.maxComputeWorkgroupsPerDimension;
    this.nVocab = nVocab;
    this.ropeTmp = new Float32Array(nRot);
    this.stepBytes = stepBytes(nRot);
    const cmds: GpuCommand[] = [];

    const buffer = (bytes: number, usage = USAGE.STORAGE | USAGE.COPY_DST | USAGE.COPY_SRC) => {
      const id = this.dev.id();
      const size = Math.max(16, pad4(bytes));
      cmds.push({ op: 'buffer', id, size, usage });
      this.sizes.set(id, size);
      return id;
    };
    // the small vectors (norm weights, biases), uploaded once
    const vectors = new Map<Float32Array, number>();
    const vec = (v: Float32Array) => {
      let id = vectors.get(v);
      if (id === undefined) {
        vectors.set(v, (id = buffer(v.length * 4)));
        this.flush(cmds);
        new Float32Array(this.dev.io(v.length * 4).buffer, 0, v.length).set(v);
        this.dev.call([{ op: 'write', id, offset: 0, from: 0, len: pad4(v.length * 4) }]);
      }
      return id;
    };
    const pipe = (code: string) => {
      let id = this.pipes.get(code);
      if (id === undefined) {
        this.pipes.set(code, (id = this.dev.id()));
        cmds.push({ op: 'pipeline', id, code });
      }
      return id;
    };

    let ffMax = 0;
    for (const l of w.layers) ffMax = Math.max(ffMax, l.wUp!.spec.rows);
    const x = buffer(dim * 4), xb = buffer(dim * 4), xb2 = buffer(dim * 4);
    this.xBuf = x;
    this.dim = dim;
    const q = buffer(qDim * 4), k = buffer(kvDimK * 4), v = buffer(kvDimV * 4), att = buffer(oDim * 4);
    const hb = buffer(ffMax * 4), hb2 = buffer(ffMax * 4);
    this.logitsBuf = buffer(nVocab * 4);
    this.stepBuf = buffer(this.stepBytes, USAGE.UNIFORM | USAGE.COPY_DST);
    const packed = (opts.kv ?? 'f16') === 'f16' && kvHalves(kvDimK, kvDimV);
    const kvBytes = packed ? 2 : 4;
    this.kv = packed ? 'f16' : opts.kv === 'f32-exact' ? 'f32-exact' : 'f32';
    const kc: number[] = [], vc: number[] = [];
    for (let l = 0; l < hp.nLayer; l++) {
      kc.push(buffer(contextSize * kvDimK * kvBytes));
      vc.push(buffer(contextSize * kvDimV * kvBytes));
    }

    // passes, each with its 8-word uniform block (one slot of `params` per pass, in uBuf)
    const uBuf = this.dev.id();
    const params: number[][] = [];
    const slot = (list: GpuPass[], code: string, binds: Bind[], wg: [number, number, number], P: number[]) => {
      const at = params.length * uAlign;
      params.push(P);
      list.push({
        pipe: pipe(code),
        binds: binds.map((b): [number, number, number] => {
          if (b === 'P') return [uBuf, at, OP_PARAMS_BYTES];
          if (b === 'S') return [this.stepBuf, 0, this.stepBytes];
          return typeof b === 'number' ? [b, 0, this.sizes.get(b)!] : [b[0], 0, b[1]];
        }),
        wg,
      });
    };
    const groups = (n: number) => Math.ceil(n / 64);
    const body: GpuPass[] = [];
    const head: GpuPass[] = [];
    /** y (+)= W · x over W's buffers, one dispatch each. */
    const product = (list: GpuPass[], wt: WeightHandle, xIn: number, y: number, add: boolean) => {
      const g = gpuWeightOf(side, wt)!;
      const { rows, cols } = wt.spec;
      for (const c of g.chunks) {
        const nwx = Math.min(c.rows, maxWg);
        slot(list, matvecShader(g.fmt, add), [[c.buf, pad4(c.rows * g.rowBytes)], xIn, y, 'P'], [nwx, Math.ceil(c.rows / nwx), 1], [c.rows, cols / g.fmt.unit, g.rowBytes, cols, rows, c.row0, nwx, 0]);
      }
    };
    const addInto = (list: GpuPass[], y: number, b: number, n: number) => slot(list, addShader(), [y, b, 'P'], [groups(n), 1, 1], [n]);
    const biasFor = (list: GpuPass[], y: number, b: Float32Array | null, n: number) => {
      if (b) addInto(list, y, vec(b), n);
    };
    const norm = (list: GpuPass[], from: number, wv: Float32Array, to: number) => slot(list, rmsnormShader(false), [from, vec(wv), to, 'P'], [1, 1, 1], [dim, f32bits(eps)]);
    /** x += W · input (+ bias): added by the product itself without a bias, else through xb2 as the CPU does. */
    const residual = (wt: WeightHandle, input: number, bias: Float32Array | null) => {
      if (!bias) return product(body, wt, input, x, true);
      product(body, wt, input, xb2, false);
      biasFor(body, xb2, bias, dim);
      addInto(body, x, xb2, dim);
    };

    // embedding: the token's row of token_embd (one dispatch per buffer of the matrix), or written
    // into x before the passes where token_embd is on the CPU (GPU offload keeps it there)
    const emb = gpuWeightOf(side, w.tokEmbd);
    this.cpuRow = emb ? null : (out, token) => m.backend.getRow(out, w.tokEmbd, token);
    if (emb) for (const c of emb.chunks) slot(body, embedShader(emb.fmt, nRot), [[c.buf, pad4(c.rows * emb.rowBytes)], x, 'P', 'S'], [groups(dim / emb.fmt.unit), 1, 1], [dim / emb.fmt.unit, emb.rowBytes, c.row0, c.rows]);
    for (let l = 0; l < hp.nLayer; l++) {
      const L = w.layers[l];
      norm(body, x, L.attnNorm!, xb);
      product(body, L.wq!, xb, q, false);
      biasFor(body, q, L.bq, qDim);
      product(body, L.wk!, xb, k, false);
      biasFor(body, k, L.bk, kvDimK);
      product(body, L.wv!, xb, v, false);
      biasFor(body, v, L.bv, kvDimV);
      // q/k norm per head (qwen3), then RoPE (none on NoPE layers)
      if (L.qNorm) slot(body, rmsnormShader(true), [q, vec(L.qNorm), 'P'], [nHead, 1, 1], [hdK, f32bits(eps)]);
      if (L.kNorm) slot(body, rmsnormShader(true), [k, vec(L.kNorm), 'P'], [nHeadKv, 1, 1], [hdK, f32bits(eps)]);
      if (hp.layerRope[l] !== 'none') {
        slot(body, ropeShader(m.spec.rope, nRot), [q, 'P', 'S'], [groups((nHead * nRot) / 2), 1, 1], [nHead, hdK, nRot / 2]);
        slot(body, ropeShader(m.spec.rope, nRot), [k, 'P', 'S'], [groups((nHeadKv * nRot) / 2), 1, 1], [nHeadKv, hdK, nRot / 2]);
      }
      slot(body, kvStoreShader(nRot, packed), [k, v, kc[l], vc[l], 'P', 'S'], [groups(Math.max(kvDimK, kvDimV)), 1, 1], [kvDimK, kvDimV, this.kv === 'f32-exact' ? 0 : 1]);
      slot(body, attentionShader(hdK, hdV, nRot, packed), [q, kc[l], vc[l], att, 'P', 'S'], [nHead, 1, 1], [nHead / nHeadKv, hp.layerWindow[l], f32bits(hp.kqScale), kvDimK, kvDimV]);
      residual(L.wo, att, L.bo);
      norm(body, x, L.ffnNorm!, xb);
      const nFf = L.wUp!.spec.rows;
      product(body, L.wGate!, xb, hb, false);
      biasFor(body, hb, L.bGate, nFf);
      product(body, L.wUp!, xb, hb2, false);
      biasFor(body, hb2, L.bUp, nFf);
      slot(body, swigluShader(), [hb, hb2, 'P'], [groups(nFf), 1, 1], [nFf]);
      residual(L.wDown!, hb, L.bDown);
    }
    // final norm and logits
    norm(head, x, w.outputNorm, xb);
    product(head, w.output, xb, this.logitsBuf, false);
    this.dispatches = body.length + head.length;

    cmds.push({ op: 'buffer', id: uBuf, size: params.length * uAlign, usage: USAGE.UNIFORM | USAGE.COPY_DST });
    this.sizes.set(uBuf, params.length * uAlign);
    const u32 = new Uint32Array(this.dev.io(params.length * uAlign).buffer, 0, (params.length * uAlign) / 4);
    u32.fill(0);
    params.forEach((P, i) => u32.set(P, (i * uAlign) / 4));
    cmds.push({ op: 'write', id: uBuf, offset: 0, from: 0, len: params.length * uAlign });
    this.layersProg = this.dev.id();
    this.headProg = this.dev.id();
    cmds.push({ op: 'program', id: this.layersProg, passes: body }, { op: 'program', id: this.headProg, passes: head });
    this.flush(cmds);
  }

  private flush(cmds: GpuCommand[]): void {
    if (cmds.length === 0) return;
    this.dev.call(cmds.splice(0));
  }

  run(tokens: readonly number[], pos: number, logits: Float32Array): void {
    if (this.disposed) throw new EngineError('GPU_LOST', 'the GPU step has been disposed');
    const n = tokens.length;
    const sb = this.stepBytes;
    // io: the step blocks, the logits, then (token_embd on the CPU) the tokens' embedding rows
    const rowsAt = n * sb + this.nVocab * 4, rowBytes = this.dim * 4;
    const io = this.dev.io(rowsAt + (this.cpuRow ? n * rowBytes : 0));
    const u32 = new Uint32Array(io.buffer, 0, (n * sb) / 4);
    const f32 = new Float32Array(io.buffer, 0, (n * sb) / 4);
    const cmds: GpuCommand[] = [];
    for (let t = 0; t < n; t++) {
      const o = (t * sb) / 4;
      u32[o] = tokens[t];
      u32[o + 1] = pos + t;
      this.rope(this.ropeTmp, pos + t);
      f32.set(this.ropeTmp, o + 4);
      const last = t === n - 1;
      cmds.push({ op: 'write', id: this.stepBuf, offset: 0, from: t * sb, len: sb });
      if (this.cpuRow) {
        const at = rowsAt + t * rowBytes;
        this.cpuRow(new Float32Array(io.buffer, at, this.dim), tokens[t]);
        cmds.push({ op: 'write', id: this.xBuf, offset: 0, from: at, len: rowBytes });
      }
      cmds.push({
        op: 'run',
        passes: [],
        programs: last ? [this.layersProg, this.headProg] : [this.layersProg],
        reads: last ? [{ id: this.logitsBuf, offset: 0, len: this.nVocab * 4, to: n * sb }] : [],
        wait: false,
      });
    }
    this.dev.call(cmds);
    this.calls++;
    this.submits += n;
    logits.set(new Float32Array(io.buffer, n * sb, this.nVocab));
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    try {
      this.dev.call([{ op: 'forget', id: this.layersProg }, { op: 'forget', id: this.headProg }, ...[...this.sizes.keys()].map((id): GpuCommand => ({ op: 'free', id }))]);
    } catch {
      // the device is gone (lost or disposed): so are the buffers
    }
  }
}
