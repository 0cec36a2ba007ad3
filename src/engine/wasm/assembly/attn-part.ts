// One thread's share of a layer's attention, for the worker pool (backend/split-attention.ts): the
// thread holds the KV cache of a range of KV heads and the query heads that read them, stores the
// batch's new keys and values there, then attends. Heads are independent, so every output equals
// the whole-model kernels' (attention.ts) bit for bit. Arguments come as a block of i32 words in
// memory (more than a pool job's 12 arguments):
//   0 mode      0: attn_f16 per query position; 1: attn_f32_batch over the batch
//   1 out       [n, nHead·hdV] f32
//   2 q         [n, nHead·hdK] f32 (rotated)
//   3 k         [n, nHeadKv·hdK] f32 new keys (rotated)
//   4 v         [n, nHeadKv·hdV] f32 new values
//   5 kc        this layer's key cache [positions, nHeadKv·hdK] f16
//   6 vc        this layer's value cache [positions, nHeadKv·hdV] f16
//   7 pos       position of the batch's first token
//   8 n         tokens in the batch
//   9 window    sliding window (0: none)
//  10 nHead     query heads of this share
//  11 nHeadKv   KV heads of this share
//  12 hdK, 13 hdV   head sizes
//  14 scale     f32 bits
//  15 scratch   attn_scratch_bytes(nHead, nHeadKv, hdK, hdV, positions) bytes
//  16 flag      this layer's i32 "the cache has held an infinity or NaN half", sticky, set here from
//               kv_store's report; while 0, attn_f16 skips scanning the rows (0 address: always scan)
//  17 sinks     [nHead] f32 attention sinks of this share's query heads (gpt-oss), 0: none

import { attn_f16, attn_f32_batch, kv_store } from './attention';

export function attn_part(p: usize): void {
  const mode = load<i32>(p), out = <usize>load<u32>(p, 4), q = <usize>load<u32>(p, 8);
  const k = <usize>load<u32>(p, 12), v = <usize>load<u32>(p, 16);
  const kc = <usize>load<u32>(p, 20), vc = <usize>load<u32>(p, 24);
  const pos = load<i32>(p, 28), n = load<i32>(p, 32), window = load<i32>(p, 36);
  const nHead = load<i32>(p, 40), nHeadKv = load<i32>(p, 44), hdK = load<i32>(p, 48), hdV = load<i32>(p, 52);
  const scale = load<f32>(p, 56), scratch = <usize>load<u32>(p, 60);
  const flag = <usize>load<u32>(p, 64), sinks = <usize>load<u32>(p, 68);
  const dK = nHeadKv * hdK, dV = nHeadKv * hdV;
  let bad = 0;
  for (let t = 0; t < n; t++) {
    bad |= kv_store(kc + (<usize>((pos + t) * dK) << 1), k + (<usize>(t * dK) << 2), dK);
    bad |= kv_store(vc + (<usize>((pos + t) * dV) << 1), v + (<usize>(t * dV) << 2), dV);
  }
  let finite = 0;
  if (flag != 0) {
    if (bad != 0) store<i32>(flag, 1);
    finite = load<i32>(flag) == 0 ? 1 : 0;
  }
  if (mode == 1) {
    attn_f32_batch(out, q, kc, vc, dK, dV, pos, n, window, nHead, nHeadKv, hdK, hdV, scale, scratch, sinks);
    return;
  }
  for (let t = 0; t < n; t++) {
    const at = pos + t;
    const from = window > 0 ? max(0, at - window + 1) : 0;
    attn_f16(out + (<usize>(t * nHead * hdV) << 2), q + (<usize>(t * nHead * hdK) << 2), kc, vc, dK, dV, from, at, nHead, nHeadKv, hdK, hdV, scale, scratch, finite, sinks);
  }
}
