// Loading a model: header → architecture and hyperparameters → weights into the backend. The
// memory estimate (weights + KV cache) is available before any tensor byte is read.

import { closeSync, fstatSync, openSync } from 'node:fs';
import { GgufError, ModelError } from '../../shared/errors.js';
import type { MatBackend } from '../backend/types.js';
import { readTensorRange } from '../gguf/file.js';
import { getString } from '../gguf/keys.js';
import type { GgufHeader, GgufTensorInfo } from '../gguf/types.js';
import { archSpec } from './arch.js';
import { recurrentStateBytes } from './deltanet.js';
import type { Model } from './forward.js';
import { modelHparams, type ModelHparams } from './hparams.js';
import { kvCacheBytes } from '../backend/types.js';
import { loadWeights, weightTensors, type TensorReader } from './weights.js';

export interface MemoryEstimate {
  /** Bytes of tensor data the model reads (flat-block tensors count as stored, not as F32). */
  weights: number;
  /** Bytes of the f16 KV cache for the context size (and a hybrid model's recurrent state with its session snapshots). */
  kvCache: number;
}

/**
 * The estimate as a line in the context size: weights + fixed + perPosition · contextSize (the KV
 * cache grows by one row per position; a hybrid's recurrent state is fixed), so a list of models can
 * show it at whatever context the user chooses without re-reading headers.
 */
export interface MemoryModel {
  weights: number;
  fixed: number;
  perPosition: number;
}

export function memoryModel(h: GgufHeader, hp: ModelHparams): MemoryModel {
  const one = estimateMemory(h, hp, 1);
  const perPosition = estimateMemory(h, hp, 2).kvCache - one.kvCache;
  return { weights: one.weights, fixed: one.kvCache - perPosition, perPosition };
}

export function estimateMemory(h: GgufHeader, hp: ModelHparams, contextSize: number): MemoryEstimate {
  const weights = weightTensors(h).reduce((a, t) => a + t.bytes, 0);
  const recurrent = hp.deltaNet ? recurrentStateBytes(hp.deltaNet) * 5 : 0; // the state and up to 4 snapshots (session.ts)
  const attending = hp.deltaNet ? hp.deltaNet.recurrent.filter((r) => !r).length : hp.nLayer; // a hybrid's linear layers keep no KV
  return { weights, kvCache: kvCacheBytes(attending, contextSize, hp.nHeadKv * hp.headDimK, hp.nHeadKv * hp.headDimV) + recurrent };
}

export interface ModelFileOptions {
  onProgress?: (loadedBytes: number, totalBytes: number) => void;
  /** Called between tensors; throw to stop loading (e.g. CancelledError). */
  shouldStop?: () => void;
}

/** Architecture and hyperparameters of a header (throws ModelError for what cannot run). */
export function modelInfo(h: GgufHeader): { spec: ReturnType<typeof archSpec>; hp: ModelHparams } {
  const spec = archSpec(getString(h, 'general.architecture'));
  if (h.tensors.length === 0) {
    throw new ModelError('NO_WEIGHTS', 'this file holds no weights (a vocabulary-only GGUF): it can be inspected but not run; open the full model file');
  }
  return { spec, hp: modelHparams(h, spec) };
}

/** Read every weight of the model at `path` (whose header is `h`) into `backend`. */
export async function loadModelFile(path: string, h: GgufHeader, backend: MatBackend, opts: ModelFileOptions = {}): Promise<Model> {
  const { spec, hp } = modelInfo(h);
  const total = weightTensors(h).reduce((a, t) => a + t.bytes, 0);
  const fd = openSync(path, 'r');
  try {
    // a file cut short fails here, before any read (the pool's workers read their rows themselves)
    const size = fstatSync(fd).size;
    const cut = weightTensors(h).find((t) => h.dataOffset + t.offset + t.bytes > size);
    if (cut) throw new GgufError('GGUF_TRUNCATED', `file ended before the end of tensor "${cut.name}": it is truncated`, size);
    const read: TensorReader = (t: GgufTensorInfo, dst: Uint8Array, fromByte: number) => readTensorRange(fd, h, t, dst, fromByte);
    read.locate = (t) => ({ fd, at: h.dataOffset + t.offset });
    const w = await loadWeights(h, hp, spec, backend, read, {
      onTensor: (loaded) => opts.onProgress?.(loaded, total),
      shouldStop: opts.shouldStop,
    });
    return { hp, spec, w, backend };
  } finally {
    closeSync(fd);
  }
}
