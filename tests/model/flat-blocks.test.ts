// tinyllamas-stories-260k-q8_0.gguf is stories260K quantised to Q8_0 by an old converter that wrote
// ffn_down (rows of 172, not whole 32-element blocks) as one flat array of blocks. llama.cpp refuses
// the file; Pantheon dequantises that tensor flat to F32 at load. The truth here is the F32 file of
// the same model.

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { DEFAULT_SAMPLING } from '../../src/engine/sample/index.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { logSoftmax } from './golden.js';

const Q8 = sharedModel('tinyllamas-stories-260k-q8_0.gguf');
const F32 = sharedModel('stories260K.gguf');
const PROMPT = [1, 403, 407, 261, 378]; // "Once upon a time" with BOS (llama.cpp's tokens)

async function greedy(lm: LoadedModel, n: number): Promise<number[]> {
  const out: number[] = [];
  for await (const ev of new Session(lm).generate(PROMPT, { ...DEFAULT_SAMPLING, temperature: 0, maxTokens: n }, undefined, { stopAtEog: false })) {
    if (ev.kind === 'token') out.push(ev.id);
  }
  return out;
}

describe.skipIf(!HAVE_SHARED || !existsSync(Q8) || !existsSync(F32))('flat-block Q8_0 tensors', () => {
  it('loads ffn_down as F32 within Q8_0 rounding of the F32 model, and generates the same story', async () => {
    const q8 = await LoadedModel.load(Q8, { contextSize: 256, backend: 'scalar' });
    const f32 = await LoadedModel.load(F32, { contextSize: 256, backend: 'scalar' });
    try {
      expect(q8.header.tensors.find((t) => t.name === 'blk.0.ffn_down.weight')?.flatBlocks).toBe(true);
      for (let l = 0; l < q8.hparams.nLayer; l++) {
        const a = q8.model.w.layers[l].wDown!;
        const b = f32.model.w.layers[l].wDown!;
        expect(a.spec).toMatchObject({ type: 0, rows: 64, cols: 172 });
        // The same element order as the F32 tensor: each value within half a Q8_0 step of its block
        // (step = absmax / 127, ggml-quants.c quantize_row_q8_0_ref), plus the f16 rounding of the scale.
        const ra = new Float32Array(172);
        const rb = new Float32Array(172);
        const all: number[] = [];
        const got: number[] = [];
        for (let r = 0; r < 64; r++) {
          q8.model.backend.getRow(ra, a, r);
          f32.model.backend.getRow(rb, b, r);
          all.push(...rb);
          got.push(...ra);
        }
        for (let blk = 0; blk < all.length / 32; blk++) {
          const xs = all.slice(blk * 32, blk * 32 + 32);
          const step = Math.max(...xs.map(Math.abs)) / 127;
          for (let i = 0; i < 32; i++) expect(Math.abs(got[blk * 32 + i] - xs[i])).toBeLessThanOrEqual(step * 0.5 + step * 128 * 2 ** -11 + 1e-9);
        }
      }
      const lq = logSoftmax(forward(q8.model, createRunState(q8.model, 256), PROMPT, 0));
      const lf = logSoftmax(forward(f32.model, createRunState(f32.model, 256), PROMPT, 0));
      let d = 0;
      for (let i = 0; i < lq.length; i++) if (lf[i] > -10) d = Math.max(d, Math.abs(lq[i] - lf[i]));
      expect(d).toBeLessThan(0.25); // Q8_0 weights and Q8_0 activations on a 260K-parameter model
      expect(await greedy(q8, 64)).toEqual(await greedy(f32, 64));
    } finally {
      q8.dispose();
      f32.dispose();
    }
  });
});
