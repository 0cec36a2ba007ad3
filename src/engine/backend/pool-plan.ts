// The pool's plans, all made before the work they place:
// - planPool: where a model's weights go, decided from its header before any tensor is read: how
//   many WebAssembly memories (shards) each thread hosts so that no memory passes wasm32's 4 GiB,
//   whether there is room for the bands (splitRows), and how much memory the whole takes, so that
//   a model the machine cannot hold fails at once with one sentence;
// - splitRows: how a weight's rows are shared among the parts (pool.ts "bands");
// - buildPlan: a round trip of products (pool.ts run) laid out once from the weights alone: each
//   part's scratch region, the job words of every thread, the views the results are read from.

import { EngineError, ModelError } from '../../shared/errors.js';
import type { SliceTop } from './logit-stats.js';
import { MAX_PAGES, MIN_PAGES, WASM_PAGE } from '../wasm/arena.js';
import { actBytes, actFns, gemmScratchBytes, takesGemm, widenBytes, type ActKind, type KernelType } from '../wasm/layout.js';
import { CTRL, JOBK } from './pool-worker.js';
import type { WeightHandle } from './types.js';
import type { Kernel, WorkerPool } from './worker-pool.js';

/** What the plan needs to know of the model (model/load.ts MemoryEstimate). */
export interface PlanInput {
  /** Bytes of weights as the file holds them. */
  weights: number;
  /** Bytes of the f16 KV cache for the context. */
  kvCache: number;
  /**
   * KV heads: the pool splits the cache among min(threads, kvHeads) threads' first memories
   * (pool-attention.ts), or keeps it whole in the calling thread's when that gives one share
   * (default: as many as threads).
   */
  kvHeads?: number;
}

export interface PoolPlan {
  threads: number;
  /** Memories per thread (PoolOptions.shards). */
  shards: number;
  /** PoolOptions.band: BAND when the bands fit in memory without more shards, else 0. */
  band: number;
  /** Bytes the largest memory reaches at most: its weights, its thread's share of the KV cache, RESERVE. */
  perMemory: number;
  /** Bytes the model takes in all: weights (with bands) and KV cache. */
  need: number;
}

/** 4 GiB: what one wasm32 memory holds. */
export const MEMORY_LIMIT = MAX_PAGES * WASM_PAGE;
/** Room left in every memory for what is not weights: scratch regions, activations, the run state. */
export const RESERVE = 512 * 2 ** 20;
/** Stored rows are a little larger than the file's (F16's bitmaps: 0.4% at 4096 columns): plan on 1% more. */
const STORED = 1.01;

/**
 * Bytes of weights the fullest part holds when `weights` are split among threads × shards parts
 * with band `band` (splitRows): an even share, plus a band where two threads meet (both halves
 * of one on a middle thread with one shard, half of one per boundary part with several).
 */
export function partWeights(weights: number, threads: number, shards: number, band: number): number {
  const w = weights * STORED, p = threads * shards;
  const bands = threads > 1 && band > 0 ? Math.min((w * band) / (threads - 1), w / p / 2) : 0;
  return w / p + (shards === 1 ? bands : bands / 2);
}

/**
 * The pool's plan for a model on `threads` threads on a machine with `total` bytes of memory; each
 * memory at most `limit` bytes (tests lower it). Throws NOT_ENOUGH_MEMORY when the weights and
 * the KV cache do not fit in `total`, or the KV cache alone leaves a memory no room.
 */
export function planPool(m: PlanInput, threads: number, total: number, limit = MEMORY_LIMIT): PoolPlan {
  const gib = (b: number) => `${(b / 2 ** 30).toFixed(1)} GiB`;
  const need0 = m.weights + m.kvCache;
  if (need0 > total) {
    throw new ModelError('NOT_ENOUGH_MEMORY', `the model needs about ${gib(need0)} (weights ${gib(m.weights)} + KV cache ${gib(m.kvCache)}) but this machine has ${gib(total)}; choose a smaller quantisation or context`);
  }
  // (and the module's static data: its first MIN_PAGES pages in every memory)
  const reserve = Math.min(RESERVE, limit / 8) + MIN_PAGES * WASM_PAGE;
  const kvParts = Math.min(threads, m.kvHeads ?? threads);
  const kvShare = m.kvCache / (kvParts >= 2 ? kvParts : 1);
  const room = limit - reserve - kvShare;
  if (room < limit / 8) {
    throw new ModelError('NOT_ENOUGH_MEMORY', `the KV cache (${gib(m.kvCache)}) leaves no room in ${threads} thread${threads > 1 ? 's' : ''}' WebAssembly memories (${gib(limit)} each); choose a smaller context or more threads`);
  }
  const shardsFor = (band: number) => {
    let s = 1;
    while (partWeights(m.weights, threads, s, band) > room) s++;
    return s;
  };
  // bands only where the memory holds them (80% of it) and they cost no extra shard
  const s0 = shardsFor(0);
  const banded = threads > 1 && m.weights * (1 + BAND) + m.kvCache <= 0.8 * total && shardsFor(BAND) === s0;
  const band = banded ? BAND : 0;
  const perMemory = partWeights(m.weights, threads, s0, band) + kvShare + reserve;
  return { threads, shards: s0, band, perMemory, need: m.weights * (1 + band) + m.kvCache };
}

// ---------------------------------------------------------------------------------------------
// Rows shared among parts

/**
 * The rows [r0, r1) of a weight held by part `part`, starting at byte `ptr` of its memory; of them
 * [k0, k1) are its own (its core), the rest lie in the bands it shares with its neighbours.
 */
export interface Slice {
  readonly part: number;
  readonly r0: number;
  readonly r1: number;
  readonly k0: number;
  readonly k1: number;
  readonly ptr: number;
}

/**
 * Rows [s, e) held by both part b and part b + 1 (b: its index in PoolWeight.bands), computed by
 * whichever gets there first, in `count` chunks of `ch` rows (a multiple of 4) claimed from both
 * ends (pool-worker.ts runJobs: BAND).
 */
export interface Band {
  readonly s: number;
  readonly e: number;
  readonly ch: number;
  readonly count: number;
  /** The same band in at most BAND_CHUNKS chunks, for matvecTop (its sampling stats are per chunk, and cost more in small ones). */
  readonly coarse: { readonly ch: number; readonly count: number };
}

export interface PoolWeight extends WeightHandle {
  readonly kt: KernelType;
  readonly rowBytes: number;
  readonly slices: readonly Slice[];
  /** Per boundary between parts b and b + 1, the rows they share (null: a fixed split there; none: everywhere). */
  readonly bands: readonly (Band | null)[] | null;
  /** The last one-token plan whose first weight this is (a forward pass repeats the same sets). */
  plan: Plan | null;
  /** As the first weight of a set with biases (matmulShared): their copies per part (biasCopies). */
  bias: BiasCopies | null;
}

/**
 * The biases of a set of weights in each part's memory: per part p, at ptrs[p], the bias values of
 * p's rows of every weight in turn (as its outputs lie), `bytes` long (0: p holds no rows).
 */
export interface BiasCopies {
  readonly arrays: readonly Float32Array[];
  readonly ptrs: readonly number[];
  readonly bytes: readonly number[];
}

/**
 * Chunks a band is cut into, at least (while it has that many blocks of 4 rows), so the thread
 * that is ahead takes it in small steps; and at most CHUNK_BYTES of weights in a chunk, so the
 * other never waits long for the last one (a big matrix's band takes more chunks).
 */
const BAND_CHUNKS = 16;
const CHUNK_BYTES = 128 * 1024;

/** Default share of every weight's rows held by two threads (PoolOptions.band). */
export const BAND = 0.125;

/**
 * How a weight of `rows` rows is shared among p parts: part i holds rows held[i] and owns core[i].
 * With band > 0, each of the p − 1 boundaries between parts b and b + 1 becomes bands[b]:
 * band × rows / (p − 1) rows around the even split (at most half a part's share), in whole blocks
 * of 4 rows (a multiple of any row group and of the kernels' row blocks), held by both and claimed
 * at run time: band × rows are held twice in all. Without bands (band 0, one part, or too few
 * rows) the even split in units of `unit` rows. rowBytes sizes the chunks. With `shards` parts per
 * thread, only the boundaries between threads (b + 1 a multiple of shards) get bands: the others
 * are fixed cuts at the even split (kept between the bands around them).
 */
export function splitRows(rows: number, unit: number, p: number, band: number, rowBytes: number, shards = 1): { held: [number, number][]; core: [number, number][]; bands: (Band | null)[] | null } {
  const units = Math.ceil(rows / unit);
  const even = (i: number) => Math.min(rows, unit * (i * Math.floor(units / p) + Math.min(i, units % p)));
  const blocks = Math.ceil(rows / 4);
  const threads = Math.ceil(p / shards);
  const bb = threads > 1 ? Math.min(Math.floor((blocks * Math.max(0, band)) / (threads - 1)), Math.floor(blocks / p / 2)) : 0; // blocks per band
  if (bb < 1) {
    const cuts = Array.from({ length: p }, (_, i): [number, number] => [even(i), even(i + 1)]);
    return { held: cuts, core: cuts, bands: null };
  }
  const bands: (Band | null)[] = [];
  for (let b = 0; b < p - 1; b++) {
    if ((b + 1) % shards !== 0) {
      bands.push(null);
      continue;
    }
    const s = 4 * (Math.round((blocks * (b + 1)) / p) - (bb >> 1));
    const e = Math.min(rows, s + 4 * bb);
    const big = 4 * Math.ceil(bb / BAND_CHUNKS);
    const ch = Math.min(big, 4 * Math.max(1, Math.floor(CHUNK_BYTES / (4 * rowBytes))));
    bands.push({ s, e, ch, count: Math.ceil((e - s) / ch), coarse: { ch: big, count: Math.ceil((e - s) / big) } });
  }
  // every boundary as rows [s, e) held by both sides (a fixed cut: s = e), in order
  const cuts: { s: number; e: number }[] = [];
  for (let b = 0; b < p - 1; b++) {
    const bd = bands[b];
    if (bd) {
      cuts.push(bd);
      continue;
    }
    const after = bands.find((bd, c) => c > b && bd !== null);
    const c = Math.min(after ? after.s : rows, Math.max(b > 0 ? cuts[b - 1].e : 0, even(b + 1)));
    cuts.push({ s: c, e: c });
  }
  const held = Array.from({ length: p }, (_, i): [number, number] => [i > 0 ? cuts[i - 1].s : 0, i < p - 1 ? cuts[i].e : rows]);
  const core = Array.from({ length: p }, (_, i): [number, number] => [i > 0 ? cuts[i - 1].e : 0, i < p - 1 ? cuts[i].s : rows]);
  return { held, core, bands };
}

// ---------------------------------------------------------------------------------------------
// A round trip's plan

/** Weight i's rows on one part in a round trip: held rows `slice`, outputs [n, lr] f32 at `out` in its memory. */
export interface PartOut {
  readonly i: number;
  readonly part: number;
  readonly slice: Slice;
  readonly lr: number;
  readonly out: number;
  readonly local: Float32Array;
}

/** A part's copy of a round trip's input, in its memory (every part but 0). */
export interface InputCopy {
  /** Where its copy of the quantised activations goes, for one token. */
  readonly xq: Uint8Array;
  /** For a batch, where its copy of x goes instead (it quantises and widens its own, in parallel). */
  readonly x: Float32Array | null;
}

/** One worker's share of a round trip. */
export interface WorkerStep {
  readonly host: number;
  readonly ctrl: Int32Array;
  /** Its parts' jobs as control-block words (CTRL.JOB per job), copied in as they are. */
  readonly words: Int32Array;
  readonly nj: number;
  readonly copies: readonly InputCopy[];
}

/** A piece of rows whose sampling stats one part wrote (matvecTop): views on them, and the row range. */
export interface StatsSlot {
  readonly top: SliceTop;
  readonly f32: Float32Array;
  readonly f64: Float64Array;
}

/**
 * A prepared round trip: everything run() derives from the weights alone (region layout, job
 * words, kernels, views), so a generated token's products allocate nothing. Built on first use;
 * the addresses assume each part's scratch region where it was (`bases`): if a region grew and
 * moved, the plan is built again.
 */
export interface Plan {
  readonly ws: readonly PoolWeight[];
  readonly n: number;
  readonly gated: boolean;
  /** Scratch bytes and base per part (0 bytes: the part takes no rows). */
  readonly bytes: readonly number[];
  readonly bases: readonly number[];
  /** This thread's region: [x f32 (when x is elsewhere)][xq per activation kind][own outputs][gemm scratch][stats]. */
  readonly x: Float32Array;
  readonly xqPtr: number;
  readonly xq: Uint8Array;
  /** Per activation kind: quantise into xqPtr + at (ab bytes per token), then widen when `widen`. */
  readonly quant: readonly { quantize: Kernel; widen: Kernel | null; at: number; ab: number }[];
  /** This thread's jobs (runJobs) from CTRL.JOBS, and the words holding weight i's output base (local, or the caller's array when direct). */
  readonly ownWords: Int32Array;
  readonly ownNj: number;
  readonly ownRefs: readonly { pos: number; i: number; local: number }[];
  /** The input copies of this thread's other parts (shards), made before its jobs run. */
  readonly ownCopies: readonly InputCopy[];
  readonly outs: readonly PartOut[];
  readonly workers: readonly WorkerStep[];
  /** The claim words of the bands this round trip uses, and their start (count << 16: all chunks free). */
  readonly resets: readonly { word: number; v: number }[];
  /** matvecTop (want > 0): per part its stats slots (core, right band chunks, left band chunks), and a selection in row order. */
  readonly want: number;
  readonly slots: readonly (readonly StatsSlot[])[];
  readonly sel: SliceTop[];
  readonly pos: Int32Array;
  /** The biases every thread adds to its rows (one token), or null. */
  readonly bias: BiasCopies | null;
  /** Per unit (plan()) and boundary, the band as this round trip chunks it (null: none). */
  readonly bands: readonly (readonly (Band | null)[])[];
}

export function buildPlan(pool: WorkerPool, ws: PoolWeight[], n: number, gated: boolean, want: number, bias: BiasCopies | null): Plan {
  if (want > 0 && (n !== 1 || gated || ws.length !== 1)) throw new Error('sampling stats are for one weight and one token');
  if (bias && (n !== 1 || gated)) throw new Error('biases are folded for one token');
  const cols = ws[0].spec.cols;
  const P = pool.parts.length;
  const sliceOf = (w: PoolWeight, p: number) => w.slices.find((s) => s.part === p);
  if (gated) {
    const [g, u] = ws;
    const same = g.slices.length === u.slices.length && g.slices.every((s, j) => {
      const t = u.slices[j];
      return s.part === t.part && s.r0 === t.r0 && s.r1 === t.r1 && s.k0 === t.k0 && s.k1 === t.k1;
    }) && JSON.stringify(g.bands) === JSON.stringify(u.bands);
    if (!same) throw new EngineError('BAD_SHAPE', `tensors "${g.spec.name}" and "${u.spec.name}" are split differently among threads`);
  }
  // the activation kinds, and where each weight's quantised x sits in the xq region
  // (for a batch on a gemm kernel, the activation's widened copy follows its quantised rows)
  const kinds: { act: ActKind; at: number; ab: number; wide: boolean }[] = [];
  const kindOf: number[] = [];
  let xqBytes = 0;
  for (let i = 0; i < ws.length; i++) {
    const { spec, kt } = ws[i];
    if (spec.cols !== cols) throw new EngineError('BAD_SHAPE', `tensors "${ws[0].spec.name}" and "${spec.name}" do not take the same input`);
    let k = kinds.findIndex((c) => c.act === kt.act);
    if (k < 0) {
      const wide = ws.some((w) => w.kt.act === kt.act && takesGemm(w.kt, n));
      k = kinds.push({ act: kt.act, at: xqBytes, ab: actBytes(kt.act, cols), wide }) - 1;
      xqBytes += n * actBytes(kt.act, cols) + (wide ? widenBytes(kt.act, n, cols) : 0);
    }
    kindOf.push(k);
  }
  const gs = ws.some((w) => takesGemm(w.kt, n)) ? gemmScratchBytes(cols) : 0;
  const outBytes = (p: number) => ws.reduce((b, w) => {
    const s = sliceOf(w, p);
    return b + (s ? n * (s.r1 - s.r0) * 4 : 0);
  }, 0);
  // the units of work (gated: gate and up together, split alike; otherwise each weight), and
  // their bands: right of part p is boundary p, left is p − 1; claim word b·MAXJOBS + unit
  const units: number[][] = gated ? [[0, 1]] : ws.map((_, i) => [i]);
  // (matvecTop: the coarse chunks, see Band)
  const bands = units.map((unit) => Array.from({ length: Math.max(0, P - 1) }, (_, b) => {
    const band = ws[unit[0]].bands?.[b];
    return band && want > 0 ? { ...band, ...band.coarse } : band ?? null;
  }));
  const bandAt = (u: number, b: number): Band | null => (b >= 0 && b < P - 1 ? bands[u][b] : null);
  // matvecTop's results per stats slot: f32 max, f64 sum at 8, i32 ids from 16 (sample_slice_top);
  // slots per part: core, its right band's chunks, its left band's chunks
  const sb = want > 0 ? 32 + Math.ceil(want / 4) * 16 : 0;
  const slotCount = (p: number) => (want > 0 && sliceOf(ws[0], p) ? 1 + (bandAt(0, p)?.count ?? 0) + (bandAt(0, p - 1)?.count ?? 0) : 0);
  const align16 = (at: number) => Math.ceil(at / 16) * 16;
  // every part's region: this thread [x f32][xq][outputs][gemm scratch][stats], a worker
  // [xq][gemm scratch][outputs][stats][x f32, for a batch]
  const xWorker = n > 1 ? n * cols * 4 + 16 : 0;
  const bytes = pool.parts.map((_, p) => (p === 0 ? n * cols * 4 + xqBytes + outBytes(0) + gs : outBytes(p) > 0 ? xqBytes + gs + outBytes(p) + xWorker : 0) + (slotCount(p) > 0 ? 16 + slotCount(p) * sb : 0));
  const bases = bytes.map((b, p) => (b > 0 ? pool.parts[p].arena.scratch(b) : 0));
  const a = pool.main.arena;
  const xqPtr = bases[0] + n * cols * 4;
  const outsAll: PartOut[] = [];
  const slots: StatsSlot[][] = [];
  const resets: { word: number; v: number }[] = [];
  for (let u = 0; u < units.length; u++) for (let b = 0; b < P - 1; b++) {
    const band = bandAt(u, b);
    if (band) resets.push({ word: b * CTRL.MAXJOBS + u, v: band.count << 16 });
  }
  // per thread, its parts' jobs in part order, the left bands (BAND from the high end) of all
  // after the rest so a thread first does the rows no other can; and its parts' input copies
  const early: number[][] = Array.from({ length: pool.threads }, (): number[] => []), late: number[][] = Array.from({ length: pool.threads }, (): number[] => []);
  const copies: InputCopy[][] = Array.from({ length: pool.threads }, (): InputCopy[] => []);
  const ownRefs: { pos: number; i: number; local: number }[] = [];
  for (let p = 0; p < P; p++) {
    slots.push([]);
    if (bytes[p] === 0) continue;
    const { arena, host, slot } = pool.parts[p];
    const off = slot * pool.fnIndex.size; // this part's kernels among its thread's (Part.slot)
    const base = bases[p];
    const xqAt = p === 0 ? xqPtr : base;
    const scratch = p === 0 ? xqPtr + xqBytes + outBytes(0) : base + xqBytes;
    let at = p === 0 ? xqPtr + xqBytes : scratch + gs;
    // weight i's outputs on this part, one after another (as its bias copy lies)
    const outAt: number[] = [];
    const lrs: number[] = [];
    ws.forEach((w, i) => {
      const s = sliceOf(w, p);
      if (!s) return;
      const lr = s.r1 - s.r0;
      outAt[i] = at;
      lrs[i] = lr;
      outsAll.push({ i, part: p, slice: s, lr, out: at, local: arena.f32(at, n * lr) });
      at += n * lr * 4;
    });
    const statsAt = align16(p === 0 ? scratch + gs : at);
    for (let k = 0; k < slotCount(p); k++) {
      const sat = statsAt + k * sb;
      slots[p].push({ top: { r0: 0, n: 0, max: 0, sum: 0, ids: new Int32Array(arena.memory.buffer, sat + 16, want) }, f32: arena.f32(sat, 1), f64: new Float64Array(arena.memory.buffer, sat, 2) });
    }
    // the job words: per unit its core (PIECE), then the right bands, then the left bands (BAND),
    // each followed by the unit's templates (part 0 comes first on its thread, with no left band:
    // its refs are positions in this thread's list)
    let words = early[host];
    const refs: { pos: number; i: number; local: number }[] = [];
    const put = (fn: number, args: number[], outRefs: [number, number][] = []) => {
      for (const [k, i] of outRefs) refs.push({ pos: CTRL.JOBS + words.length + 1 + k, i, local: outAt[i] });
      words.push(fn >= 0 ? fn + off : fn, ...args.map((v) => v | 0));
      while (words.length % CTRL.JOB !== 0) words.push(0);
    };
    const templates = (u: number, statsBase: number) => {
      const s0 = sliceOf(ws[units[u][0]], p)!;
      for (const i of units[u]) {
        const w = ws[i], s = sliceOf(w, p)!, lr = lrs[i];
        const { at: kat, ab } = kinds[kindOf[i]];
        const xq = xqAt + kat;
        let name: string, a8 = 0, a9 = 0, xin = xq;
        if (n === 1) name = w.kt.fns.matvec;
        else if (takesGemm(w.kt, n)) [name, a8, a9, xin] = [w.kt.fns.gemm, lr, scratch, xq + n * ab];
        else [name, a8, a9] = [w.kt.fns.matmul, ab, lr];
        put(pool.fnId(name) | (JOBK.PRODUCT << JOBK.MODE_SHIFT), [outAt[i], s.ptr, w.rowBytes, 0, 0, xin, cols, n, a8, a9], [[0, i]]);
      }
      if (gated) {
        const lr = s0.r1 - s0.r0;
        if (n === 1) put(pool.fnId('swiglu') | (JOBK.ROWS3 << JOBK.MODE_SHIFT), [outAt[0], outAt[0], outAt[1]], [[0, 0], [1, 0]]);
        else put(pool.fnId('swiglu') | (JOBK.TOKENS3 << JOBK.MODE_SHIFT), [outAt[0], outAt[0], outAt[1], 0, n, lr]);
      }
      if (bias) {
        const i = units[u][0];
        let off = 0;
        for (let j = 0; j < i; j++) off += lrs[j] ?? 0;
        put(pool.fnId('add_f32') | (JOBK.ROWS2 << JOBK.MODE_SHIFT), [outAt[i], bias.ptrs[p] + off * 4], [[0, i]]);
      }
      if (want > 0) put(pool.fnId('sample_slice_top') | (JOBK.STATS << JOBK.MODE_SHIFT), [statsBase, outAt[0], 0, want, sb], [[1, 0]]);
    };
    // a worker's batch: first quantise (and widen) its copy of x, kind by kind
    const xAt = align16(statsAt + slotCount(p) * sb);
    if (p > 0 && n > 1) {
      for (const k of kinds) {
        put(pool.fnId(actFns(k.act).quantizeRows), [xqAt + k.at, xAt, cols, n, k.ab]);
        if (k.wide) put(pool.fnId(actFns(k.act).widen), [xqAt + k.at + n * k.ab, xqAt + k.at, n, cols, k.ab]);
      }
    }
    const perUnit = units[0].length + (gated ? 1 : 0) + (bias ? 1 : 0) + (want > 0 ? 1 : 0);
    const rightCount = bandAt(0, p)?.count ?? 0;
    for (let u = 0; u < units.length; u++) {
      const s = sliceOf(ws[units[u][0]], p);
      if (!s || s.k1 <= s.k0) continue;
      put(JOBK.PIECE, [s.k0 - s.r0, s.k1 - s.r0, 0, 0, 0, perUnit]);
      templates(u, statsAt);
    }
    for (let u = 0; u < units.length; u++) {
      const s = sliceOf(ws[units[u][0]], p), band = bandAt(u, p);
      if (!s || !band) continue;
      put(JOBK.BAND, [p * CTRL.MAXJOBS + u, 0, band.ch, band.s - s.r0, band.e - s.r0, perUnit]);
      templates(u, statsAt + sb);
    }
    words = late[host];
    for (let u = 0; u < units.length; u++) {
      const s = sliceOf(ws[units[u][0]], p), band = bandAt(u, p - 1);
      if (!s || !band) continue;
      put(JOBK.BAND, [(p - 1) * CTRL.MAXJOBS + u, 1, band.ch, band.s - s.r0, band.e - s.r0, perUnit]);
      templates(u, statsAt + (1 + rightCount) * sb);
    }
    if (p === 0) ownRefs.push(...refs);
    else copies[host].push({ xq: arena.u8(base, xqBytes), x: n > 1 ? arena.f32(xAt, n * cols) : null });
  }
  const workers: WorkerStep[] = [];
  let ownWords = new Int32Array(0), ownNj = 0;
  for (let t = 0; t < pool.threads; t++) {
    const words = [...early[t], ...late[t]];
    const nj = words.length / CTRL.JOB;
    if (nj > pool.cap) throw new Error(`a round trip of ${nj} jobs exceeds the control block (${pool.cap})`);
    if (t === 0) {
      ownWords = new Int32Array(CTRL.JOBS + words.length);
      ownWords.set(words, CTRL.JOBS);
      ownNj = nj;
    } else if (nj > 0) {
      workers.push({ host: t, ctrl: pool.ctrlOf(t), words: Int32Array.from(words), nj, copies: copies[t] });
    }
  }
  const quant = kinds.map((k) => ({ quantize: pool.main.kernel(`quantize_${k.act}`), widen: k.wide ? pool.main.kernel(`widen_${k.act}`) : null, at: k.at, ab: k.ab }));
  // the stats pieces' rows, fixed per slot (which part's slot is read is decided per run)
  if (want > 0) {
    const w = ws[0];
    for (const s of w.slices) {
      const p = s.part, right = bandAt(0, p), left = bandAt(0, p - 1);
      const setTop = (k: number, r0: number, r1: number) => Object.assign(slots[p][k].top, { r0, n: r1 - r0 });
      setTop(0, s.k0, s.k1);
      for (let k = 0; right && k < right.count; k++) setTop(1 + k, right.s + k * right.ch, Math.min(right.e, right.s + (k + 1) * right.ch));
      for (let k = 0; left && k < left.count; k++) setTop(1 + (right?.count ?? 0) + k, left.s + k * left.ch, Math.min(left.e, left.s + (k + 1) * left.ch));
    }
  }
  const maxSel = slots.reduce((c, sl) => c + sl.length, 0);
  return { ws: ws.slice(), n, gated, bytes, bases, x: a.f32(bases[0], n * cols), xqPtr, xq: a.u8(xqPtr, xqBytes), quant, ownWords, ownNj, ownRefs, ownCopies: copies[0], outs: outsAll, workers, resets, want, slots, sel: [], pos: new Int32Array(maxSel), bias, bands };
}
