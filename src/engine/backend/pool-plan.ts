// Where a model's weights go, decided from its header before any tensor is read: how many
// WebAssembly memories (shards) each thread of the pool hosts so that no memory passes wasm32's
// 4 GiB, whether there is room for the pool's bands (pool.ts splitRows), and how much memory the
// whole takes, so that a model the machine cannot hold fails at once with one sentence.

import { ModelError } from '../../shared/errors.js';
import { MAX_PAGES, WASM_PAGE } from '../wasm/arena.js';
import { BAND } from './pool.js';

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
  const reserve = Math.min(RESERVE, limit / 8);
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
