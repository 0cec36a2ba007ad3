// The forward pass's KV flags (kv-cache.ts nonFinite): a layer whose keys overflow f16 (the last
// layer's attention norm's weights scaled up, so the stored halves are infinities) gets its flag set through the wasm
// kv store, the other layers keep theirs clear, and the logits of generated tokens equal those of a
// run that scans every layer's rows (all flags set beforehand, as before the flags existed).

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRunState, forward, MAX_BATCH } from '../../src/engine/model/forward.js';
import { LoadedModel } from '../../src/engine/session.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { ReferenceCpuBackend } from './reference-backend.js';

const FILE = 'stories260K.gguf';

describe.skipIf(!HAVE_SHARED || !existsSync(sharedModel(FILE)))('KV cache flags in the forward pass', () => {
  const kernels = new KernelInstance(loadKernelModule({ simd: 'simd' }));

  it('an overflowing layer sets its flag only, and generation equals the always-scanning run bit for bit', async () => {
    const lm = await LoadedModel.load(sharedModel(FILE), { contextSize: 64, backend: new ReferenceCpuBackend() });
    try {
      const m = lm.model;
      const nLayer = m.hp.nLayer;
      expect(nLayer).toBeGreaterThan(1);
      const run = (scanAll: boolean) => {
        const s = createRunState(m, 64, MAX_BATCH, kernels);
        expect(s.wasm).not.toBeNull();
        if (scanAll) s.cache.nonFinite.fill(1);
        const logits: number[][] = [];
        let l = forward(m, s, [1, 400, 30, 99], 0);
        for (let i = 0; i < 6; i++) {
          logits.push([...l]);
          l = forward(m, s, [1 + ((i * 37) % 200)], 4 + i);
        }
        return { logits, flags: [...s.cache.nonFinite] };
      };
      const clean = run(false);
      expect(clean.flags).toEqual(new Array(nLayer).fill(0));
      // the last layer's keys (and values) overflow: its attention norm's weights × 1e6 (an earlier
      // layer would carry infinities into the layers after it)
      const last = nLayer - 1;
      const w = m.w.layers[last].attnNorm!;
      const saved = w.slice();
      for (let i = 0; i < w.length; i++) w[i] *= 1e6;
      const fast = run(false);
      const scanned = run(true);
      w.set(saved);
      expect(fast.flags).toEqual(Array.from({ length: nLayer }, (_, l) => (l === last ? 1 : 0)));
      expect(fast.logits).toEqual(scanned.logits);
      expect(fast.logits).not.toEqual(clean.logits);
    } finally {
      lm.dispose();
    }
  });
});
