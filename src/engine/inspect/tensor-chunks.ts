// Reading one tensor of an open GGUF file as dequantised floats, a chunk at a time, so a tensor
// larger than memory can still be read (dump, stats, diff).

import { GgufError, ModelError } from '../../shared/errors.js';
import { readTensorRange } from '../gguf/file.js';
import { ggmlTypeInfo, ggmlTypeName } from '../gguf/ggml-types.js';
import type { GgufHeader, GgufTensorInfo } from '../gguf/types.js';
import { dequantizeRow } from '../quant/index.js';

/** Elements per chunk (a multiple of every block size: 32 and 256). */
export const CHUNK = 1 << 20;

/** One step of reading a tensor: its floats and the stored bytes they came from (whole blocks). */
export interface TensorChunk {
  values: Float32Array;
  raw: Uint8Array;
}

/**
 * Dequantised chunks of `t` in stored order (dims[0] fastest), with their stored bytes. The arrays
 * are reused by the next step: copy them to keep them.
 */
export function* tensorChunksRaw(fd: number, h: GgufHeader, t: GgufTensorInfo): Generator<TensorChunk> {
  const info = ggmlTypeInfo(t.type);
  if (!info || info.removed || info.blockSize === 0) throw new ModelError('UNSUPPORTED_TYPE', `tensor "${t.name}" has type ${ggmlTypeName(t.type)}, which cannot be dequantised`);
  const perChunk = CHUNK - (CHUNK % info.blockSize);
  const bytes = new Uint8Array((perChunk / info.blockSize) * info.typeSize);
  const out = new Float32Array(perChunk);
  for (let done = 0; done < t.elements; done += perChunk) {
    const n = Math.min(perChunk, t.elements - done);
    const nBytes = Math.ceil(n / info.blockSize) * info.typeSize;
    readTensorRange(fd, h, t, bytes.subarray(0, nBytes), (done / info.blockSize) * info.typeSize);
    try {
      dequantizeRow(t.type, bytes, 0, out, n);
    } catch (err) {
      if (err instanceof ModelError) throw new ModelError(err.code, `tensor "${t.name}": ${err.message}`);
      throw err;
    }
    yield { values: out.subarray(0, n), raw: bytes.subarray(0, nBytes) };
  }
}

/** The dequantised chunks of `t` alone (see tensorChunksRaw). */
export function* tensorChunks(fd: number, h: GgufHeader, t: GgufTensorInfo): Generator<Float32Array> {
  for (const c of tensorChunksRaw(fd, h, t)) yield c.values;
}

/** Dequantise `t` from the open file `fd` in chunks, handing each chunk of floats to `sink` in order. */
export function dequantizeTensorChunks(fd: number, h: GgufHeader, t: GgufTensorInfo, sink: (values: Float32Array) => void): void {
  for (const v of tensorChunks(fd, h, t)) sink(v);
}

/** The tensor named `name`, or an error that says how to list them. */
export function findTensor(h: GgufHeader, name: string): GgufTensorInfo {
  const t = h.tensors.find((x) => x.name === name);
  if (!t) throw new GgufError('GGUF_BAD_TENSOR', `no tensor named "${name}"; list them with "pantheon tensors FILE"`);
  return t;
}
