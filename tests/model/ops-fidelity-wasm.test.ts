// The forward pass with its WebAssembly ops (attention, KV store) on every golden model: the matrix
// products come from the reference-machine double (as in fidelity.test.ts), so only the ops differ
// from the fidelity run, and the greedy tokens must still be llama.cpp's.

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRunState, forward, MAX_BATCH } from '../../src/engine/model/forward.js';
import { LoadedModel } from '../../src/engine/session.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { logSoftmax, maxAbsDiff, readGolden, readLogprobs } from './golden.js';
import { ReferenceCpuBackend } from './reference-backend.js';

const MODELS: [name: string, file: string][] = [
  ['stories260K', 'stories260K.gguf'],
  ['llama-2-tiny-random', 'llama-2-tiny-random.gguf'],
  ...['llama', 'qwen2', 'qwen3', 'phi3', 'phi2', 'gemma'].map((a): [string, string] => [`tiny-${a}-s5`, `tiny-random/tiny-${a}-s5.gguf`]),
];
const available = MODELS.filter(([name, file]) => HAVE_SHARED && existsSync(sharedModel(file)) && readGolden(name) !== null);

function argmax(x: Float32Array): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
  return best;
}

describe.skipIf(available.length === 0)('forward pass with WebAssembly attention: llama.cpp greedy tokens', () => {
  const kernels = new KernelInstance(loadKernelModule({ simd: 'simd' }));
  it.each(available)('%s', async (name, file) => {
    const g = readGolden(name)!;
    const lm = await LoadedModel.load(sharedModel(file), { contextSize: 512, backend: new ReferenceCpuBackend() });
    try {
      for (const c of g.cases) {
        const s = createRunState(lm.model, 512, MAX_BATCH, kernels);
        expect(s.wasm).not.toBeNull();
        let logits = forward(lm.model, s, c.promptTokens, 0);
        expect(maxAbsDiff(logSoftmax(logits), readLogprobs(c.firstLogprobs))).toBeLessThan(1e-3);
        const out: number[] = [];
        for (let i = 0; i < c.n; i++) {
          const id = argmax(logits);
          out.push(id);
          if (i + 1 < c.n) logits = forward(lm.model, s, [id], c.promptTokens.length + i);
        }
        expect(out).toEqual(c.tokens);
      }
    } finally {
      lm.dispose();
    }
  });
});
