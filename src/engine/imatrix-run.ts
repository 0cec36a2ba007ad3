// Computing an importance matrix over a text, as llama.cpp's llama-imatrix does
// (tools/imatrix/imatrix.cpp compute_imatrix, collect_imatrix): the text is tokenized once (BOS
// as the vocabulary adds it), cut into chunks of `ctx` tokens, and each chunk is run from position
// 0 with its first token replaced by BOS (when the vocabulary adds one). Every product of a "blk.*"
// weight over a batch of at least 16 tokens adds each input column's squares (every expert
// product of a MoE layer counts, as MUL_MAT_ID does there). output.weight is left out, as
// llama-imatrix does without --process-output.

import { ModelError } from '../shared/errors.js';
import { ObservingBackend } from './backend/observing.js';
import { PoolBackend } from './backend/pool.js';
import { ScalarBackend } from './backend/scalar.js';
import type { MatBackend, WeightSpec } from './backend/types.js';
import { WasmBackend } from './backend/wasm.js';
import { createRunState, forward } from './model/forward.js';
import { accumulate, emptyImatrix, MIN_BATCH_TOKENS, type Imatrix } from './quant/imatrix.js';
import { LoadedModel } from './session.js';

export interface ImatrixOptions {
  /** Tokens per chunk (llama-imatrix -c, default 512). */
  ctx?: number;
  /** At most this many chunks (default: as many as the text holds). */
  chunks?: number;
  /** Computing threads (default 1). */
  threads?: number;
  /** The backend to run on (tests pass the scalar reference); default: the pool or WebAssembly. */
  backend?: MatBackend;
  /** Recorded as imatrix.datasets (llama-imatrix records the text file's path). */
  dataset?: string;
  onChunk?: (done: number, total: number) => void;
}

/** llama-imatrix's default context (-c 512). */
export const IMATRIX_DEFAULT_CTX = 512;

function defaultBackend(threads: number): MatBackend {
  try {
    return threads > 1 ? new PoolBackend({ threads }) : new WasmBackend();
  } catch {
    return new ScalarBackend();
  }
}

/** The importance matrix of the model at `modelPath` over `text`. */
export async function computeImatrix(modelPath: string, text: string, opts: ImatrixOptions = {}): Promise<Imatrix> {
  const ctx = opts.ctx ?? IMATRIX_DEFAULT_CTX;
  const im = emptyImatrix(ctx, opts.dataset !== undefined ? [opts.dataset] : []);
  let header: LoadedModel['header'] | null = null;
  const experts = new Map<string, number>();
  const observe = (spec: WeightSpec, x: Float32Array, n: number) => {
    const hash = spec.name.indexOf('#');
    const name = hash < 0 ? spec.name : spec.name.slice(0, hash);
    if (!name.startsWith('blk.')) return;
    if (hash < 0) {
      if (n >= MIN_BATCH_TOKENS) accumulate(im, name, x, n, spec.cols);
      return;
    }
    let nMat = experts.get(name);
    if (nMat === undefined) {
      nMat = header?.tensors.find((t) => t.name === name)?.dims[2] ?? 1;
      experts.set(name, nMat);
    }
    accumulate(im, name, x, n, spec.cols, Number(spec.name.slice(hash + 1)), nMat);
  };
  const threads = opts.threads ?? 1;
  const backend = new ObservingBackend(opts.backend ?? defaultBackend(threads), observe);
  const model = await LoadedModel.load(modelPath, { contextSize: ctx, threads, backend });
  try {
    header = model.header;
    const tok = model.tokenizer;
    const tokens = tok.encode(text, { addSpecial: true, parseSpecial: false });
    if (tokens.length < 2 * ctx) {
      throw new ModelError('TEXT_TOO_SHORT', `the text is ${tokens.length} tokens; an importance matrix over chunks of ${ctx} needs at least ${2 * ctx} (give a longer text or a smaller --ctx)`);
    }
    const total = Math.min(opts.chunks ?? Infinity, Math.floor(tokens.length / ctx));
    const m = model.model;
    let s = createRunState(m, ctx);
    for (let c = 0; c < total; c++) {
      const chunk = tokens.slice(c * ctx, (c + 1) * ctx);
      if (tok.addBos && tok.bos !== null) chunk[0] = tok.bos;
      if (c > 0 && s.recurrent) s = createRunState(m, ctx); // a fresh recurrent state per chunk, as llama_memory_clear
      forward(m, s, chunk, 0);
      im.chunkCount = c + 1;
      opts.onChunk?.(c + 1, total);
    }
    return im;
  } finally {
    model.dispose();
  }
}
