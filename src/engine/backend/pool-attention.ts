// Attention on the worker pool: the KV heads are split across the pool's threads and each thread
// keeps the f16 KV cache of its heads in its own memory, so a generated token's attention runs on
// every core instead of only the calling thread. Per layer the calling thread copies each share's
// query heads and new key/value rows into that thread's memory, starts the workers (one job each,
// assembly/attn-part.ts: store into the cache, then attend), computes its own share, waits and
// gathers the outputs. Heads are independent, so the numbers are those of the single-thread
// attention bit for bit.

import { EngineError } from '../../shared/errors.js';
import { kvCacheBytes } from './types.js';
import type { WorkerPool } from './worker-pool.js';
import type { AttentionShape, SplitAttention } from './types.js';

/** Words of the attn_part argument block (assembly/attn-part.ts: 18, padded to 16 bytes). */
const PARAM_WORDS = 20;

const F32 = new Float32Array(1);
const I32 = new Int32Array(F32.buffer);
/** The bits of x rounded to f32, as an i32 (the argument block's scale word). */
function f32Bits(x: number): number {
  F32[0] = x;
  return I32[0];
}

/** One thread's share: KV heads [kv0, kv0 + nKv) and query heads [kv0·group, (kv0 + nKv)·group). */
interface Share {
  part: number;
  kv0: number;
  nKv: number;
  /** Base of its cache: layer l's keys at cache + slot[l]·layerBytes, values after the keys; then the flags. */
  cache: number;
  layerBytes: number;
  /** [attending layers] i32 in its memory: 1 once the layer's cache held an infinity or NaN half (attn_part sets it; sticky). */
  flags: number;
  scratchBytes: number;
  /** Its one-token region, kept between tokens (null until the first token, or when its scratch moved). */
  one: OneToken | null;
}

/**
 * A share's buffers for one token, so a generated token's attention allocates nothing: its region
 * [params][q][k][v][out][scratch] in its thread's memory, as addresses and views, and views on the
 * caller's q, k, v and out at this share's heads (`from`: the arrays they were made on).
 */
interface OneToken {
  base: number;
  words: Int32Array;
  qp: number;
  kp: number;
  vp: number;
  op: number;
  zp: number;
  sp: number;
  dst: Float32Array[]; // q, k, v in its memory
  local: Float32Array; // out in its memory
  sinks: Float32Array; // its heads' attention sinks in its memory
  from: Float32Array[]; // q, k, v, out of the caller
  src: Float32Array[]; //  their share
}

/** Bytes of a share's attention sinks [nh] f32 in its region, kept 16-aligned. */
function sinkBytes(nh: number): number {
  return Math.ceil(nh / 4) * 16;
}

/** Bytes of a share's region for n tokens: [params][q n·lq][k n·lk][v n·lv][out n·lo][sinks][scratch]. */
function regionBytes(s: Share, group: number, hdK: number, hdV: number, n: number): number {
  const nh = s.nKv * group;
  return PARAM_WORDS * 4 + n * (nh * hdK + s.nKv * hdK + s.nKv * hdV + nh * hdV) * 4 + sinkBytes(nh) + s.scratchBytes;
}

/** A split attention for the pool, or null when fewer than two threads would get KV heads. */
export function createPoolAttention(pool: WorkerPool, shape: AttentionShape, positions: number): SplitAttention | null {
  const { nLayer, nHead, nHeadKv, headDimK: hdK, headDimV: hdV } = shape;
  // layer l's slot in the cache (only the layers that attend have one)
  const slot: number[] = [];
  let nSlots = 0;
  for (let l = 0; l < nLayer; l++) slot.push(shape.attends && !shape.attends[l] ? -1 : nSlots++);
  const parts = Math.min(pool.threads, nHeadKv);
  if (parts < 2 || nHead % nHeadKv !== 0 || hdK % 4 !== 0 || hdV % 4 !== 0) return null;
  const group = nHead / nHeadKv;
  const k = pool.main;
  const shares: Share[] = [];
  for (let p = 0; p < parts; p++) {
    const kv0 = p * Math.floor(nHeadKv / parts) + Math.min(p, nHeadKv % parts);
    const nKv = Math.floor(nHeadKv / parts) + (p < nHeadKv % parts ? 1 : 0);
    const layerBytes = kvCacheBytes(1, positions, nKv * hdK, nKv * hdV);
    const a = pool.arenaOf(p);
    const cache = a.alloc(nSlots * (layerBytes + 4)); // the flags after the layers (layerBytes: a multiple of 8)
    const flags = cache + nSlots * layerBytes;
    new Int32Array(a.memory.buffer, flags, nSlots).fill(0); // a new cache starts clean
    shares.push({ part: p, kv0, nKv, cache, layerBytes, flags, scratchBytes: k.attnScratchBytes(nKv * group, nKv, hdK, hdV, positions), one: null });
  }
  let disposed = false;
  const qDim = nHead * hdK, oDim = nHead * hdV, kDim = nHeadKv * hdK, vDim = nHeadKv * hdV;
  const attnPart = pool.fnId('attn_part');

  /** The share's one-token region, (re)made when its scratch moved or the caller's arrays changed. */
  function oneToken(s: Share, q: Float32Array, kNew: Float32Array, vNew: Float32Array, out: Float32Array): OneToken {
    const a = pool.arenaOf(s.part);
    const base = a.scratch(regionBytes(s, group, hdK, hdV, 1));
    let o = s.one;
    if (!o || o.base !== base) {
      const nh = s.nKv * group;
      const qp = base + PARAM_WORDS * 4, kp = qp + nh * hdK * 4, vp = kp + s.nKv * hdK * 4, op = vp + s.nKv * hdV * 4, zp = op + nh * hdV * 4, sp = zp + sinkBytes(nh);
      o = { base, words: new Int32Array(a.memory.buffer, base, PARAM_WORDS), qp, kp, vp, op, zp, sp, dst: [a.f32(qp, nh * hdK), a.f32(kp, s.nKv * hdK), a.f32(vp, s.nKv * hdV)], local: a.f32(op, nh * hdV), sinks: a.f32(zp, nh), from: [], src: [] };
      s.one = o;
    }
    if (o.from[0] !== q || o.from[1] !== kNew || o.from[2] !== vNew || o.from[3] !== out) {
      const h0 = s.kv0 * group, nh = s.nKv * group;
      o.from = [q, kNew, vNew, out];
      o.src = [q.subarray(h0 * hdK, (h0 + nh) * hdK), kNew.subarray(s.kv0 * hdK, (s.kv0 + s.nKv) * hdK), vNew.subarray(s.kv0 * hdV, (s.kv0 + s.nKv) * hdV), out.subarray(h0 * hdV, (h0 + nh) * hdV)];
    }
    return o;
  }

  /** Write the attn_part argument block (assembly/attn-part.ts) at w. */
  function params(w: Int32Array, s: Share, l: number, mode: number, op: number, qp: number, kp: number, vp: number, pos: number, n: number, window: number, scale: number, sp: number, zp: number): void {
    if (slot[l] < 0) throw new RangeError(`layer ${l} does not attend: it has no KV cache`);
    const kc = s.cache + slot[l] * s.layerBytes;
    w[0] = mode;
    w[1] = op;
    w[2] = qp;
    w[3] = kp;
    w[4] = vp;
    w[5] = kc;
    w[6] = kc + positions * s.nKv * hdK * 2;
    w[7] = pos;
    w[8] = n;
    w[9] = window;
    w[10] = s.nKv * group;
    w[11] = s.nKv;
    w[12] = hdK;
    w[13] = hdV;
    w[14] = f32Bits(scale);
    w[15] = sp;
    w[16] = s.flags + slot[l] * 4;
    w[17] = zp;
  }

  /** The share's heads' sinks into its memory at `into` (when there are sinks): its address for params, else 0. */
  function putSinks(s: Share, into: Float32Array, sinks: Float32Array | null): number {
    if (!sinks) return 0;
    into.set(sinks.subarray(s.kv0 * group, (s.kv0 + s.nKv) * group));
    return into.byteOffset;
  }

  /** One token: the caller's share attends in place on q, k, v and out when they live in its memory. */
  function runOne(l: number, out: Float32Array, q: Float32Array, kNew: Float32Array, vNew: Float32Array, pos: number, window: number, scale: number, sinks: Float32Array | null): void {
    // workers first (they start at once), the calling thread's share (part 0, heads from 0) last
    for (let i = shares.length - 1; i >= 0; i--) {
      const s = shares[i];
      const o = oneToken(s, q, kNew, vNew, out);
      const zp = putSinks(s, o.sinks, sinks);
      if (s.part === 0 && pool.inKernelMemory(q) && pool.inKernelMemory(kNew) && pool.inKernelMemory(vNew) && pool.inKernelMemory(out)) {
        params(o.words, s, l, 0, out.byteOffset, q.byteOffset, kNew.byteOffset, vNew.byteOffset, pos, 1, window, scale, o.sp, zp);
        k.attnPart(o.base); // nothing to gather
        continue;
      }
      for (let j = 0; j < 3; j++) o.dst[j].set(o.src[j]);
      params(o.words, s, l, 0, o.op, o.qp, o.kp, o.vp, pos, 1, window, scale, o.sp, zp);
      if (s.part === 0) {
        k.attnPart(o.base);
        o.src[3].set(o.local);
      } else {
        pool.startJob(s.part, attnPart, o.base);
      }
    }
    pool.waitAll();
    for (const s of shares) if (s.part !== 0) s.one!.src[3].set(s.one!.local);
  }

  return {
    parts,
    cacheBytes: kvCacheBytes(nSlots, positions, kDim, vDim),
    run(l, out, q, kNew, vNew, pos, n, mode, window, scale, sinks = null) {
      if (disposed) throw new EngineError('POOL_DISPOSED', 'the attention cache was released; start a new conversation');
      if (pos < 0 || pos + n > positions) throw new RangeError(`positions ${pos}..${pos + n - 1} do not fit a cache of ${positions}`);
      if (n === 1 && mode === 'f16') return runOne(l, out, q, kNew, vNew, pos, window, scale, sinks);
      const at: number[] = [];
      // workers first (they start at once), the calling thread's share (part 0) last
      for (let i = shares.length - 1; i >= 0; i--) {
        const s = shares[i];
        const a = pool.arenaOf(s.part);
        const h0 = s.kv0 * group, nh = s.nKv * group;
        const lq = nh * hdK, lo = nh * hdV, lk = s.nKv * hdK, lv = s.nKv * hdV;
        const base = a.scratch(regionBytes(s, group, hdK, hdV, n));
        const qp = base + PARAM_WORDS * 4, kp = qp + n * lq * 4, vp = kp + n * lk * 4, op = vp + n * lv * 4, zp = op + n * lo * 4, sp = zp + sinkBytes(nh);
        const qv = a.f32(qp, n * lq), kv = a.f32(kp, n * lk), vv = a.f32(vp, n * lv);
        for (let t = 0; t < n; t++) {
          qv.set(q.subarray(t * qDim + h0 * hdK, t * qDim + h0 * hdK + lq), t * lq);
          kv.set(kNew.subarray(t * kDim + s.kv0 * hdK, t * kDim + s.kv0 * hdK + lk), t * lk);
          vv.set(vNew.subarray(t * vDim + s.kv0 * hdV, t * vDim + s.kv0 * hdV + lv), t * lv);
        }
        params(new Int32Array(a.memory.buffer, base, PARAM_WORDS), s, l, mode === 'f16' ? 0 : 1, op, qp, kp, vp, pos, n, window, scale, sp, putSinks(s, a.f32(zp, nh), sinks));
        at[i] = op;
        if (s.part === 0) k.attnPart(base);
        else pool.startJob(s.part, attnPart, base);
      }
      pool.waitAll();
      for (let i = 0; i < shares.length; i++) {
        const s = shares[i];
        const nh = s.nKv * group, lo = nh * hdV;
        const local = pool.arenaOf(s.part).f32(at[i], n * lo);
        for (let t = 0; t < n; t++) out.set(local.subarray(t * lo, (t + 1) * lo), t * oDim + s.kv0 * group * hdV);
      }
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const s of shares) pool.arenaOf(s.part).free(s.cache, nSlots * (s.layerBytes + 4));
    },
  };
}
