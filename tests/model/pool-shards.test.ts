// A model larger than its threads' WebAssembly memories loads when each thread hosts several
// (pool.ts: shards). Here the memories are made small (PoolOptions.memoryBytes, as if wasm32
// stopped at a few MiB) so that a small real model needs several per thread, as an 8B model needs
// on two threads at 4 GiB: with one memory per thread it does not load, with the planned shards
// its logits are the single-thread backend's bit for bit. And a model the machine cannot hold
// fails from its header alone, at once, with one sentence.

import { closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync, writeSync, ftruncateSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { partWeights, planPool } from '../../src/engine/backend/pool-plan.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { readGgufHeader } from '../../src/engine/gguf/file.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { ggufHeaderFor } from '../../src/engine/gguf/stream-writer.js';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { LoadedModel } from '../../src/engine/session.js';
import { ModelError } from '../../src/shared/errors.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';

const GiB = 2 ** 30, MiB = 2 ** 20;
const tmp = mkdtempSync(join(tmpdir(), 'pantheon-pool-shards-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Logits (as bits) after a 40-token prompt, then after each of 5 greedy tokens. */
function run(lm: LoadedModel): Uint32Array[] {
  const vocab = lm.model.hp.nVocab;
  const s = createRunState(lm.model, 64);
  const prompt = Array.from({ length: 40 }, (_, i) => (i * 7919 + 13) % vocab);
  const out: Uint32Array[] = [];
  let logits = forward(lm.model, s, prompt, 0);
  for (let i = 0; i < 5; i++) {
    out.push(new Uint32Array(logits.slice().buffer));
    let id = 0;
    for (let j = 1; j < logits.length; j++) if (logits[j] > logits[id]) id = j;
    s.logitStats.want = i >= 2 ? 5 : 0; // the pool's sampling stats too (matvecTop across shards)
    logits = forward(lm.model, s, [id], prompt.length + i);
  }
  out.push(new Uint32Array(logits.slice().buffer));
  return out;
}

// [file, bytes a memory may reach]: about a third of the weights, so one memory per thread is too small on 1 and 2 threads
const MODELS: [string, number][] = [
  ['tiny-random/tiny-llama-s5.gguf', 4 * MiB],
  // (biases added on each part's rows; its 64-column F16 rows are stored 12.5% larger with their
  // bitmaps, which the plan's 1% does not see, so its memories get the room that makes up)
  ['tiny-random/tiny-qwen2-s5.gguf', 5 * MiB],
];
const available = MODELS.filter(([f]) => HAVE_SHARED && existsSync(sharedModel(f)));

describe.skipIf(available.length === 0)('a model spread over several memories per thread', () => {
  it.each(available)('%s: as the single-thread backend, bit for bit', async (file, memoryBytes) => {
    const path = sharedModel(file);
    const one = await LoadedModel.load(path, { contextSize: 64, backend: new WasmBackend() });
    const want = run(one);
    one.dispose();
    for (const threads of [1, 2]) {
      // planned as the session plans it, with memories of memoryBytes
      const plan = planPool(one.memory, threads, totalmem(), memoryBytes);
      expect(plan.shards, `${threads} threads`).toBeGreaterThan(1);
      // one memory per thread cannot hold its share
      const small = new PoolBackend({ threads, memoryBytes });
      await expect(LoadedModel.load(path, { contextSize: 64, backend: small })).rejects.toThrow(/WebAssembly memory cannot hold/);
      const pool = new PoolBackend({ threads, memoryBytes, shards: plan.shards, band: plan.band });
      const lm = await LoadedModel.load(path, { contextSize: 64, backend: pool });
      const got = run(lm);
      for (let i = 0; i < want.length; i++) expect(got[i], `${file}, ${threads} threads × ${plan.shards} shards, step ${i}`).toEqual(want[i]);
      lm.dispose();
    }
  });
});

describe('the pool plan', () => {
  it('shards each thread so that no memory passes 4 GiB, bands only where they cost no shard', () => {
    // 15 GiB of F16 (the 8B shape) on 2 threads: 4 memories per thread (15·1.01/4 = 3.8 GiB each is over 3.5 − the cache)
    const f16 = planPool({ weights: 15 * GiB, kvCache: 0.5 * GiB }, 2, 24 * GiB);
    expect(f16.shards).toBe(3);
    expect(f16.perMemory).toBeLessThanOrEqual(4 * GiB);
    expect(f16.band).toBe(0.125);
    // 4.6 GiB (8B Q4_K_M) on one thread: two memories
    expect(planPool({ weights: 4.6 * GiB, kvCache: 0.5 * GiB }, 1, 24 * GiB)).toMatchObject({ shards: 2, band: 0 });
    // a small model: one memory per thread, as before
    expect(planPool({ weights: 0.5 * GiB, kvCache: 0.1 * GiB }, 2, 24 * GiB)).toMatchObject({ shards: 1, band: 0.125 });
    expect(partWeights(8 * GiB, 2, 1, 0)).toBeCloseTo(4 * 1.01 * GiB, -3);
    // one KV head: the cache stays whole in the calling thread's memory, leaving it less room
    expect(planPool({ weights: 4.5 * GiB, kvCache: 2 * GiB }, 2, 24 * GiB).shards).toBe(1);
    expect(planPool({ weights: 4.5 * GiB, kvCache: 2 * GiB, kvHeads: 1 }, 2, 24 * GiB).shards).toBe(2);
  });

  it('refuses what the machine cannot hold, naming what it needs and what there is', () => {
    expect(() => planPool({ weights: 30 * GiB, kvCache: 2 * GiB }, 4, 24 * GiB)).toThrow('the model needs about 32.0 GiB (weights 30.0 GiB + KV cache 2.0 GiB) but this machine has 24.0 GiB; choose a smaller quantisation or context');
    expect(() => planPool({ weights: 1 * GiB, kvCache: 8 * GiB }, 2, 24 * GiB)).toThrow(/KV cache \(8\.0 GiB\) leaves no room/);
  });

  it('a model file larger than this machine fails from its header in under a second', async () => {
    // a llama header (stories260K's keys) whose one matrix claims more than the machine has; the
    // file is sparse: the bytes are never written, and must never be read
    const src = await readGgufHeader(sharedModel('stories260K.gguf')).catch(() => null);
    if (!src) return;
    const rows = Math.ceil((totalmem() + 8 * GiB) / (4096 * 2));
    const tensors = [{ name: 'token_embd.weight', dims: [4096, rows], type: GgmlType.F16 }];
    const header = ggufHeaderFor([...src.metadata.values()], tensors);
    const path = join(tmp, 'huge.gguf');
    const fd = openSync(path, 'w');
    writeSync(fd, header);
    ftruncateSync(fd, header.length + 4096 * 2 * rows);
    closeSync(fd);
    expect(statSync(path).size).toBeGreaterThan(totalmem());
    const t0 = performance.now();
    const err = await LoadedModel.load(path, { threads: 2 }).catch((e: unknown) => e);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).code).toBe('NOT_ENOUGH_MEMORY');
    expect((err as ModelError).message).toMatch(/^the model needs about [\d.]+ GiB \(weights [\d.]+ GiB \+ KV cache [\d.]+ GiB\) but this machine has [\d.]+ GiB; choose a smaller quantisation or context$/);
  });
});
