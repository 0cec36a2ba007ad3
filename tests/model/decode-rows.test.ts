// A decode batch (forwardRows: one token of each of several sequences, every weight matrix one
// matmul over the rows, each row against its own KV cache and position) must give each sequence
// the logits that its own one-token forward() gives, the path checked against llama.cpp's logits
// and greedy tokens in fidelity.test.ts. The sequences have different prompts and lengths, so the
// rows sit at different positions (past the 8-position sliding window of gemma2 and gpt-oss).

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { ScalarBackend } from '../../src/engine/backend/scalar.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import type { MatBackend } from '../../src/engine/backend/types.js';
import { createRunState, decodeRowsUnsupported, forward, forwardRows } from '../../src/engine/model/forward.js';
import { quantizeModelFile } from '../../src/engine/quant/model.js';
import { fileTypeByName } from '../../src/engine/quant/recipe.js';
import { LoadedModel } from '../../src/engine/session.js';
import { HAVE_SHARED, ROOT, sharedModel } from '../helpers.js';

const STORIES = `${ROOT}/resources/models/stories260K.gguf`;
// llama with GQA; gemma2: sliding window, attention and final soft-caps; qwen3moe: experts routed
// per row; gpt-oss: attention sinks, sliding window, biases, YaRN; llama4: NoPE layers, temperature, MoE
const TINY = ['tiny-llama-s5', 'tiny-gemma2-s1', 'tiny-qwen3moe-s1', 'tiny-gpt-oss-s1', 'tiny-llama4-s1'].map((n) => sharedModel(`tiny-random/${n}.gguf`));
// and tiny-llama-s5 quantised by the project's quantiser to Q4_0 and Q4_K_M (Q4_K, Q6_K): the
// quantised products, on the matmul kernel for 3 rows and the gemm kernel for 9 (GEMM_MIN_TOKENS)
const QUANT = ['Q4_0', 'Q4_K_M'].map((t) => `tiny-llama-s5 as ${t}`);
const FILES = [STORIES, ...TINY, ...(HAVE_SHARED ? QUANT : [])].filter((f) => f.includes(' as ') || existsSync(f));
const tmp = mkdtempSync(join(tmpdir(), 'pantheon-decode-rows-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The file for a FILES entry, quantising the " as TYPE" ones on first use. */
function modelPath(entry: string): string {
  const [name, type] = entry.split(' as ');
  if (!type) return entry;
  const path = join(tmp, `${name}.${type}.gguf`);
  if (!existsSync(path)) quantizeModelFile(sharedModel(`tiny-random/${name}.gguf`), path, fileTypeByName(type)!);
  return path;
}
const BACKENDS: [string, () => MatBackend][] = [
  ['wasm', () => new WasmBackend()],
  ['pool (2 threads, split attention)', () => new PoolBackend({ threads: 2 })],
  ['scalar', () => new ScalarBackend()],
];
const CTX = 64;

const loaded: LoadedModel[] = [];
afterAll(() => loaded.forEach((m) => m.dispose()));

function argmax(x: Float32Array): number {
  let id = 0;
  for (let j = 1; j < x.length; j++) if (x[j] > x[id]) id = j;
  return id;
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

describe.each(BACKENDS)('forwardRows on the %s backend equals one forward() per sequence', (_, backend) => {
  it.each(FILES.map((f) => [f.split('/').pop()!, f]))('%s', async (_name, file) => {
    const lm = await LoadedModel.load(modelPath(file), { contextSize: CTX, backend: backend() });
    loaded.push(lm);
    const m = lm.model;
    const V = lm.hparams.nVocab;
    let worst = 0;
    // three sequences (prompts of 3, 11 and 6 tokens), then nine (quantised models: the gemm kernels)
    for (const lengths of file.includes(' as ') ? [[3, 11, 6], [3, 11, 6, 2, 9, 4, 7, 5, 1]] : [[3, 11, 6]]) {
      const prompts = lengths.map((len, k) => Array.from({ length: len }, (_, i) => (i * 7919 + 13 + k * 101) % V));
      const batched = prompts.map(() => createRunState(m, CTX));
      const alone = prompts.map(() => createRunState(m, CTX));
      const next = prompts.map((p, k) => {
        forward(m, batched[k], p, 0);
        return argmax(forward(m, alone[k], p, 0));
      });
      const b = createRunState(m, CTX, prompts.length, m.backend.kernels, true);
      const pos = prompts.map((p) => p.length);
      for (let step = 0; step < 6; step++) {
        forwardRows(m, b, batched, next, pos);
        for (let k = 0; k < prompts.length; k++) {
          const want = forward(m, alone[k], [next[k]], pos[k]);
          const d = maxAbsDiff(batched[k].logits, want);
          worst = Math.max(worst, d);
          // matmul rows are the matvec's sums (measured: the same bits on all three backends); allow a reordered sum's rounding
          expect(d, `sequence ${k} step ${step}`).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.max(...want.map(Math.abs))));
          expect(argmax(batched[k].logits)).toBe(argmax(want));
          next[k] = argmax(want);
          pos[k]++;
        }
      }
    }
    console.log(`${file.split('/').pop()} on ${m.backend.name}: max |batched − alone| ${worst.toExponential(1)}`);
  });
});

describe('forwardRows refuses what it cannot run', () => {
  it('a hybrid with recurrent state, and mismatched rows', async () => {
    const file = sharedModel('tiny-random/tiny-qwen35-s1.gguf');
    if (!HAVE_SHARED || !existsSync(file)) return;
    const lm = await LoadedModel.load(file, { contextSize: CTX, backend: 'wasm' });
    loaded.push(lm);
    expect(decodeRowsUnsupported(lm.model)).toMatch(/recurrent state/);
    const b = createRunState(lm.model, CTX, 2, lm.model.backend.kernels, true);
    const s = [createRunState(lm.model, CTX), createRunState(lm.model, CTX)];
    expect(() => forwardRows(lm.model, b, s, [1, 2], [0, 0])).toThrow(/recurrent state/);
    const st = await LoadedModel.load(STORIES, { contextSize: CTX, backend: 'wasm' });
    loaded.push(st);
    const sb = createRunState(st.model, CTX, 2, st.model.backend.kernels, true);
    const ss = [createRunState(st.model, CTX), createRunState(st.model, CTX)];
    expect(() => forwardRows(st.model, sb, ss, [1, 2, 3], [0, 0, 0])).toThrow(/one state and position per token/);
    expect(() => forwardRows(st.model, sb, ss, [1, 2], [0, CTX])).toThrow(/does not fit/);
  });
});
