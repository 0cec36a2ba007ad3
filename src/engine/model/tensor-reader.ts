// How the loader hands a tensor's bytes to a backend: a reader of byte ranges from the file, and
// for each weight a fill (backend/types.ts FillFn) that also says where its bytes lie in the file,
// so the pool's threads can read their own rows themselves.

import type { FileRange, FillFn } from '../backend/types.js';
import type { GgufTensorInfo } from '../gguf/types.js';

/**
 * Reads a tensor's bytes from the file: bytes [fromByte, fromByte + dst.length) into dst; `locate`,
 * when set, says where a tensor's bytes are in the open file (FillFn.file).
 */
export type TensorReader = ((t: GgufTensorInfo, dst: Uint8Array, fromByte: number) => void) & { locate?: (t: GgufTensorInfo) => FileRange };

/** The fill of a weight whose bytes start at byte `from` of tensor t (with their place in the file when the reader knows it). */
export function tensorFill(read: TensorReader, t: GgufTensorInfo, from = 0): FillFn {
  const fill: FillFn = (dst, at) => read(t, dst, from + at);
  const f = read.locate?.(t);
  if (f) fill.file = { fd: f.fd, at: f.at + from };
  return fill;
}
