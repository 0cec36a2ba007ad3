// The forward pass on the worker pool — matrix rows split across threads, attention and the KV
// cache split by KV head, the SwiGLU activation on each thread's rows — must give the
// single-thread WebAssembly backend's logits bit for bit: the same kernels compute the same
// numbers, only on other threads. Prompts of 70 tokens take the batched (f32) attention, single
// tokens the f16 one.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { quantizeModelFile } from '../../src/engine/quant/model.js';
import { fileTypeByName } from '../../src/engine/quant/recipe.js';
import { LoadedModel } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';

const FILES = ['stories260K.gguf', ...['llama', 'qwen2', 'qwen3', 'phi3', 'phi2', 'gemma'].map((a) => `tiny-random/tiny-${a}-s5.gguf`)];
// and tiny-qwen2-s5 quantised to Q4_0 by the project's quantiser (no shared model holds Q4_0, which
// the backends store in their own layout: rows interleaved by four in the relaxed build)
const Q4_0_MODEL = 'tiny-random/tiny-qwen2-s5.gguf';
const available = [...FILES, `${Q4_0_MODEL} as Q4_0`].filter((f) => HAVE_SHARED && existsSync(sharedModel(f.split(' ')[0])));
const tmp = mkdtempSync(join(tmpdir(), 'pantheon-pool-forward-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The model file for a FILES entry, quantising the " as Q4_0" one on first use. */
function modelPath(entry: string): string {
  if (!entry.endsWith(' as Q4_0')) return sharedModel(entry);
  const path = join(tmp, 'tiny-qwen2-s5.Q4_0.gguf');
  if (!existsSync(path)) quantizeModelFile(sharedModel(Q4_0_MODEL), path, fileTypeByName('Q4_0')!);
  return path;
}

/**
 * Logits after a 70-token prompt, then after each of 6 greedy tokens, and after a 5-token prompt in
 * a fresh state; the greedy tokens after the first three also with the sampler's stats asked for
 * (the pool then finds them on its threads: their argmax must be the greedy token; the logits
 * stay the same bits).
 */
function run(lm: LoadedModel, vocab: number): { logits: Uint32Array[]; split: number } {
  const out: Uint32Array[] = [];
  const s = createRunState(lm.model, 128);
  const prompt = Array.from({ length: 70 }, (_, i) => (i * 7919 + 13) % vocab);
  let logits = forward(lm.model, s, prompt, 0);
  for (let i = 0; i < 6; i++) {
    out.push(new Uint32Array(logits.slice().buffer));
    let id = 0;
    for (let j = 1; j < logits.length; j++) if (logits[j] > logits[id]) id = j;
    if (s.logitStats.want > 0) {
      expect(s.logitStats.valid).toBe(lm.model.backend instanceof PoolBackend && !lm.model.w.outputB); // one thread: the sampler's passes; phi2's output bias: not then
      if (s.logitStats.valid) expect(s.logitStats.ids[0]).toBe(id);
    }
    s.logitStats.want = i >= 2 ? 5 : 0;
    logits = forward(lm.model, s, [id], prompt.length + i);
  }
  out.push(new Uint32Array(logits.slice().buffer));
  const s2 = createRunState(lm.model, 64);
  out.push(new Uint32Array(forward(lm.model, s2, prompt.slice(0, 5), 0).slice().buffer));
  return { logits: out, split: s.split?.parts ?? 0 };
}

describe.skipIf(available.length === 0)('forward pass on the worker pool equals the single-thread backend', () => {
  const pools: PoolBackend[] = [];
  afterAll(() => pools.forEach((p) => p.dispose()));
  it.each(available)('%s', async (file) => {
    const one = await LoadedModel.load(modelPath(file), { contextSize: 128, backend: new WasmBackend() });
    const vocab = one.model.hp.nVocab;
    const want = run(one, vocab);
    expect(want.split).toBe(0);
    one.dispose();
    for (const threads of [2, 3]) {
      const pool = new PoolBackend({ threads });
      pools.push(pool);
      const lm = await LoadedModel.load(modelPath(file), { contextSize: 128, backend: pool });
      const got = run(lm, vocab);
      const nKv = lm.model.hp.nHeadKv;
      // attention is split whenever two threads get KV heads
      expect(got.split).toBe(nKv >= 2 ? Math.min(threads, nKv) : 0);
      for (let i = 0; i < want.logits.length; i++) expect(got.logits[i], `${file}, ${threads} threads, step ${i}`).toEqual(want.logits[i]);
    }
  });
});
