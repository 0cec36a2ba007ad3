// Attention on the worker pool: the KV heads are split across the pool's threads and each thread
// keeps the f16 KV cache of its heads in its own memory, so a generated token's attention runs on
// every core instead of only the calling thread. Per layer the calling thread copies each share's
// query heads and new key/value rows into that thread's memory, starts the workers (one job each,
// assembly/attn-part.ts: store into the cache, then attend), computes its own share, waits and
// gathers the outputs. Heads are independent, so the numbers are those of the single-thread
// attention bit for bit.

import { EngineError } from '../../shared/errors.js';
import { kvCacheBytes } from '../model/kv-cache.js';
import type { PoolBackend } from './pool.js';
import type { AttentionShape, SplitAttention } from './types.js';

/** Words of the attn_part argument block (assembly/attn-part.ts). */
const PARAM_WORDS = 16;

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
  /** Base of its cache: layer l's keys at cache + l·layerBytes, values after the keys. */
  cache: number;
  layerBytes: number;
  scratchBytes: number;
}

/** A split attention for the pool, or null when fewer than two threads would get KV heads. */
export function createPoolAttention(pool: PoolBackend, shape: AttentionShape, positions: number): SplitAttention | null {
  const { nLayer, nHead, nHeadKv, headDimK: hdK, headDimV: hdV } = shape;
  const parts = Math.min(pool.partCount, nHeadKv);
  if (parts < 2 || nHead % nHeadKv !== 0 || hdK % 4 !== 0 || hdV % 4 !== 0) return null;
  const group = nHead / nHeadKv;
  const k = pool.kernels;
  const shares: Share[] = [];
  for (let p = 0; p < parts; p++) {
    const kv0 = p * Math.floor(nHeadKv / parts) + Math.min(p, nHeadKv % parts);
    const nKv = Math.floor(nHeadKv / parts) + (p < nHeadKv % parts ? 1 : 0);
    const layerBytes = kvCacheBytes(1, positions, nKv * hdK, nKv * hdV);
    const cache = pool.arenaOf(p).alloc(nLayer * layerBytes);
    shares.push({ part: p, kv0, nKv, cache, layerBytes, scratchBytes: k.attnScratchBytes(nKv * group, nKv, hdK, hdV, positions) });
  }
  let disposed = false;
  const qDim = nHead * hdK, oDim = nHead * hdV, kDim = nHeadKv * hdK, vDim = nHeadKv * hdV;

  return {
    parts,
    cacheBytes: kvCacheBytes(nLayer, positions, kDim, vDim),
    run(l, out, q, kNew, vNew, pos, n, mode, window, scale) {
      if (disposed) throw new EngineError('POOL_DISPOSED', 'the attention cache was released; start a new conversation');
      if (pos < 0 || pos + n > positions) throw new RangeError(`positions ${pos}..${pos + n - 1} do not fit a cache of ${positions}`);
      const at: number[] = [];
      // workers first (they start at once), the calling thread's share (part 0) last
      for (let i = shares.length - 1; i >= 0; i--) {
        const s = shares[i];
        const a = pool.arenaOf(s.part);
        const h0 = s.kv0 * group, nh = s.nKv * group;
        const lq = nh * hdK, lo = nh * hdV, lk = s.nKv * hdK, lv = s.nKv * hdV;
        // [params][q n·lq][k n·lk][v n·lv][out n·lo][scratch]
        const bytes = PARAM_WORDS * 4 + n * (lq + lk + lv + lo) * 4 + s.scratchBytes;
        const base = a.scratch(bytes);
        const qp = base + PARAM_WORDS * 4, kp = qp + n * lq * 4, vp = kp + n * lk * 4, op = vp + n * lv * 4, sp = op + n * lo * 4;
        const qv = a.f32(qp, n * lq), kv = a.f32(kp, n * lk), vv = a.f32(vp, n * lv);
        for (let t = 0; t < n; t++) {
          qv.set(q.subarray(t * qDim + h0 * hdK, t * qDim + h0 * hdK + lq), t * lq);
          kv.set(kNew.subarray(t * kDim + s.kv0 * hdK, t * kDim + s.kv0 * hdK + lk), t * lk);
          vv.set(vNew.subarray(t * vDim + s.kv0 * hdV, t * vDim + s.kv0 * hdV + lv), t * lv);
        }
        const kc = s.cache + l * s.layerBytes;
        const vc = kc + positions * lk * 2;
        const w = new Int32Array(a.memory.buffer, base, PARAM_WORDS);
        w.set([mode === 'f16' ? 0 : 1, op, qp, kp, vp, kc, vc, pos, n, window, nh, s.nKv, hdK, hdV, f32Bits(scale), sp]);
        at[i] = op;
        if (s.part === 0) k.attnPart(base);
        else pool.startJob(s.part, 'attn_part', [base]);
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
      for (const s of shares) pool.arenaOf(s.part).free(s.cache, nLayer * s.layerBytes);
    },
  };
}
