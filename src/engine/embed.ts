// Text embeddings for POST /v1/embeddings: the model's last hidden state (after the output norm,
// llama.cpp's t_embd "result_norm") at every position of the input, pooled into one vector and
// L2-normalised. Pooling is the file's own ({arch}.pooling_type, as embedding models set it: mean,
// cls = the first token, last) or mean when the file has none (decoder language models).
// The input runs through the forward pass in batches from position 0 in a cache of its own, so an
// embedding never touches a chat session's cache.

import { UsageError } from '../shared/errors.js';
import { getNumber, getString } from './gguf/keys.js';
import { createRunState, forward, MAX_BATCH } from './model/forward.js';
import { layernorm, rmsnorm } from './model/ops.js';
import type { LoadedModel } from './session.js';

export type Pooling = 'mean' | 'cls' | 'last';

/** llama.cpp enum llama_pooling_type: 1 mean, 2 cls, 3 last (0 none and 4 rank: mean here). */
export function filePooling(lm: LoadedModel): Pooling {
  const arch = getString(lm.header, 'general.architecture');
  const t = arch ? getNumber(lm.header, `${arch}.pooling_type`) : undefined;
  return t === 2 ? 'cls' : t === 3 ? 'last' : 'mean';
}

/** The embedding of `tokens` (nEmbd floats, unit length; all zeros stay zeros). */
export function embed(lm: LoadedModel, tokens: readonly number[], pooling: Pooling = filePooling(lm)): Float32Array {
  const m = lm.model;
  const hp = lm.hparams;
  const dim = hp.nEmbd;
  const n = tokens.length;
  if (n === 0) throw new UsageError('the input is empty; give at least one token');
  if (n > lm.contextSize) throw new UsageError(`the input has ${n} tokens but the context holds ${lm.contextSize}`);
  const s = createRunState(m, n);
  const w = m.w;
  const acc = new Float64Array(dim);
  const row = new Float32Array(dim);
  for (let i = 0; i < n; i += MAX_BATCH) {
    const chunk = tokens.slice(i, i + MAX_BATCH);
    forward(m, s, chunk, i);
    // s.x holds the chunk's final residual stream, [chunk, dim]: the output norm of each row
    for (let t = 0; t < chunk.length; t++) {
      const pos = i + t;
      if (pooling === 'cls' && pos !== 0) continue;
      if (pooling === 'last' && pos !== n - 1) continue;
      if (m.spec.norm === 'rms') {
        rmsnorm(row, s.x, w.outputNorm, hp.normEps, dim, t * dim, 0);
        if (w.outputNormB) for (let j = 0; j < dim; j++) row[j] += w.outputNormB[j];
      } else {
        layernorm(row, s.x, w.outputNorm, w.outputNormB, hp.normEps, dim, t * dim, 0);
      }
      for (let j = 0; j < dim; j++) acc[j] += row[j];
    }
  }
  let ss = 0;
  for (let j = 0; j < dim; j++) ss += acc[j] * acc[j];
  const scale = ss > 0 ? 1 / Math.sqrt(ss) : 0;
  const out = new Float32Array(dim);
  for (let j = 0; j < dim; j++) out[j] = acc[j] * scale;
  return out;
}
