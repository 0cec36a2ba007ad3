// One instantiated kernel module on its own memory: typed calls into the exports. Pure glue: every
// kernel is `(out, inputs…, sizes)` on byte addresses in this instance's memory.

import { Arena, newSharedMemory } from './arena.js';
import { actFns, type ActKind, type KernelType } from './layout.js';
import type { KernelModule, SimdLevel } from './loader.js';

type Fn = (...args: number[]) => number;

/** One attention call's arguments (KernelInstance.attention, attentionBatchF32): byte addresses and sizes. */
export interface AttnCall {
  /** out[nHead, hdV] per query position (f32). */
  out: number;
  /** q[nHead, hdK] per query position (f32). */
  q: number;
  /** The layer's f16 key and value cache rows. */
  kc: number;
  vc: number;
  /** Halves per position of the key and value rows. */
  strideK: number;
  strideV: number;
  nHead: number;
  nHeadKv: number;
  hdK: number;
  hdV: number;
  scale: number;
  /** attnScratchBytes(…) bytes. */
  scratch: number;
  /** Byte address of [nHead] f32 attention sinks (gpt-oss); 0 or absent for none. */
  sinks?: number;
  /** The caller guarantees no cache row holds an infinity or NaN half (kvStore reported none), so 'f16' skips its scan. */
  finite?: boolean;
}

/** Names of the module's exported functions, in a fixed order (workers call them by index). */
export function exportedFunctions(module: WebAssembly.Module): string[] {
  return WebAssembly.Module.exports(module).filter((e) => e.kind === 'function').map((e) => e.name);
}

export class KernelInstance {
  readonly arena: Arena;
  readonly simd: SimdLevel;
  private readonly fns: Record<string, Fn>;

  constructor(km: KernelModule, memory: WebAssembly.Memory = newSharedMemory(0)) {
    const inst = new WebAssembly.Instance(km.module, { env: { memory } });
    this.fns = inst.exports as unknown as Record<string, Fn>;
    this.arena = new Arena(memory, this.fns.heap_base());
    this.simd = km.simd;
  }

  /** The module's first free byte (the same for every instance of one module). */
  get heapBase(): number {
    return this.fns.heap_base();
  }

  /** xq ← x quantised to `act` (x: cols f32 at byte x). */
  quantize(act: ActKind, xq: number, x: number, cols: number): void {
    this.fns[actFns(act).quantize](xq, x, cols);
  }

  /** out[r] = W[r,:]·xq for r in [r0, r1); W's rows start at w, rowBytes apart. */
  matvec(kt: KernelType, out: number, w: number, rowBytes: number, r0: number, r1: number, xq: number, cols: number): void {
    this.fns[kt.fns.matvec](out, w, rowBytes, r0, r1, xq, cols);
  }

  /** out[t·outStride + r] = W[r,:]·xq_t for t < n, xq_t at xq + t·xqStride. */
  matmul(kt: KernelType, out: number, w: number, rowBytes: number, r0: number, r1: number, xq: number, cols: number, n: number, xqStride: number, outStride: number): void {
    this.fns[kt.fns.matmul](out, w, rowBytes, r0, r1, xq, cols, n, xqStride, outStride);
  }

  /** xw ← the widened copy of n quantised activations (act q8_0 or q8_K) for the gemm kernels. */
  widen(act: ActKind, xw: number, xq: number, n: number, cols: number, xqStride: number): void {
    this.fns[actFns(act).widen](xw, xq, n, cols, xqStride);
  }

  /**
   * out[t·outStride + r] = W[r,:]·x_t for r in [r0, r1), t < n, from widened activations xw (kt.gemm);
   * scratch: gemmScratchBytes(cols) bytes the kernel may overwrite.
   */
  gemm(kt: KernelType, out: number, w: number, rowBytes: number, r0: number, r1: number, xw: number, cols: number, n: number, outStride: number, scratch: number): void {
    this.fns[kt.fns.gemm](out, w, rowBytes, r0, r1, xw, cols, n, outStride, scratch);
  }

  /** out[cols] ← one row of W at byte w, dequantised. */
  dequant(kt: KernelType, out: number, w: number, cols: number): void {
    this.fns[kt.fns.dequant](out, w, cols);
  }

  /**
   * out[cols] ← row `row` of the rows × cols weight at w as the backends store it (rowLayout):
   * dequant_row_<suffix> where the layout is not ggml's, else dequant of the row at w + row·rowBytes.
   */
  dequantRow(kt: KernelType, out: number, w: number, rowBytes: number, rows: number, row: number, cols: number): void {
    const f = this.fns[kt.fns.dequantRow];
    if (f) f(out, w, rowBytes, rows, row, cols);
    else this.dequant(kt, out, w + row * rowBytes, cols);
  }

  /** Bytes of scratch attention() needs for these head counts and up to `positions` cached positions. */
  attnScratchBytes(nHead: number, nHeadKv: number, hdK: number, hdV: number, positions: number): number {
    return this.fns.attn_scratch_bytes(nHead, nHeadKv, hdK, hdV, positions);
  }

  /**
   * out[nHead, hdV] = softmax(q·Kᵀ·scale)·V over cache positions [from, to] (assembly/attention.ts),
   * the arguments in a (AttnCall).
   */
  attention(mode: 'f16' | 'f32', a: AttnCall, from: number, to: number): void {
    if (mode === 'f16') this.fns.attn_f16(a.out, a.q, a.kc, a.vc, a.strideK, a.strideV, from, to, a.nHead, a.nHeadKv, a.hdK, a.hdV, a.scale, a.scratch, a.finite ? 1 : 0, a.sinks ?? 0);
    else this.fns.attn_f32(a.out, a.q, a.kc, a.vc, a.strideK, a.strideV, from, to, a.nHead, a.nHeadKv, a.hdK, a.hdV, a.scale, a.scratch, a.sinks ?? 0);
  }

  /**
   * attention('f32') of the n query positions pos..pos+n−1 of a prompt batch at once (a.q, a.out: n
   * rows of nHead·hdK / nHead·hdV floats), each over [max(0, pos + i − window + 1) if window > 0
   * else 0, pos + i]; the same numbers as n calls of attention('f32'), with the cache rows widened
   * once per 8 queries.
   */
  attentionBatchF32(a: AttnCall, pos: number, n: number, window: number): void {
    this.fns.attn_f32_batch(a.out, a.q, a.kc, a.vc, a.strideK, a.strideV, pos, n, window, a.nHead, a.nHeadKv, a.hdK, a.hdV, a.scale, a.scratch, a.sinks ?? 0);
  }

  /** One thread's share of a layer's attention; its arguments are i32 words at `params` (assembly/attn-part.ts). */
  attnPart(params: number): void {
    this.fns.attn_part(params);
  }

  /** One value head of the gated delta rule, state m [S, S] in place (assembly/deltanet.ts; model/deltanet.ts deltaRuleHead's bits). */
  deltaRuleHead(m: number, k: number, q: number, v: number, out: number, S: number, decay: number, beta: number, scale: number): void {
    this.fns.delta_rule_head(m, k, q, v, out, S, decay, beta, scale);
  }

  /** out[i] = silu(gate[i]) · up[i] for i < n (f32 arrays at byte addresses; assembly/ffn.ts). */
  swiglu(out: number, gate: number, up: number, n: number): void {
    this.fns.swiglu(out, gate, up, n);
  }

  /** dst[n] f16 bits ← src[n] f32 (one position's keys or values into the cache); true when a stored half is an infinity or NaN. */
  kvStore(dst: number, src: number, n: number): boolean {
    return this.fns.kv_store(dst, src, n) !== 0;
  }

  /** out[n] = rmsnorm(x) · w (w = 0: none), f32 arrays at byte addresses (assembly/norm.ts, ops.ts rmsnorm's bits). */
  rmsnorm(out: number, x: number, w: number, eps: number, n: number): void {
    this.fns.rms_norm(out, x, w, eps, n);
  }

  /** Rotate nHeads heads of hd floats at x in place by the cos/sin cache at `cache` (ops.ts rope's bits). */
  ropeHeads(x: number, nHeads: number, hd: number, cache: number, nRot: number, neox: boolean): void {
    this.fns.rope_heads(x, nHeads, hd, cache, nRot, neox ? 1 : 0);
  }

  /** out[i] += v[i] for i < n (f32 arrays at byte addresses). */
  addInto(out: number, v: number, n: number): void {
    this.fns.add_f32(out, v, n);
  }

  /** The export `name` itself, for callers that call it per token without a name lookup (the pool's plans). */
  kernel(name: string): (...args: number[]) => number {
    const f = this.fns[name];
    if (typeof f !== 'function') throw new Error(`the kernel module has no export "${name}"`);
    return f;
  }

  /** x[n] f32 in place: NaN → −inf; returns the largest value (assembly/sample.ts). */
  scrubMax(x: number, n: number): number {
    return this.fns.sample_scrub_max(x, n);
  }

  /**
   * Σ exp(x[i] − top) over i < n (top: the finite max of x, no NaN), and the indices of the k
   * largest into out[0..k) (i32), largest first, lower index first on ties.
   */
  expSumTop(out: number, x: number, n: number, top: number, k: number): number {
    return this.fns.sample_expsum_top(out, x, n, top, k);
  }

  /** The indices of the k largest of x[n] (no NaN) into out[0..k), as expSumTop's; returns k clamped to n. */
  selectTop(out: number, x: number, n: number, k: number): number {
    return this.fns.sample_select_top(out, x, n, k);
  }

  /** mass[NUCLEUS_BINS] f64 ← top-p's bin masses of x[n] below top, as sample/nucleus.ts nucleusMass, bit for bit; returns the total. */
  nucleusMass(mass: number, x: number, n: number, top: number): number {
    return this.fns.sample_nucleus_mass(mass, x, n, top);
  }

  /** nucleusSplit: indices in bins before `boundary` into out, in it into scratch (that count: i32 at `count`); returns the first count. */
  nucleusSplit(out: number, scratch: number, count: number, x: number, n: number, top: number, boundary: number): number {
    return this.fns.sample_nucleus_split(out, scratch, count, x, n, top, boundary);
  }

  /** A raw export by name: benchmarks (mem_sum, mem_copy) and load-time layouts (layout_f16). */
  call(name: string, ...args: number[]): number {
    return this.fns[name](...args);
  }
}
