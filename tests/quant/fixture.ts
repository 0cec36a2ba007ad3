// Loading ggml's reference tensors from ../shared/fixtures/quant-reference.gguf: `source` (f32,
// 8×512), and for each type `q.<type>` (ggml_quantize_chunk's bytes) and `deq.<type>` (ggml's
// to_float of those bytes). Made by llama.cpp's ggml, so they are an independent truth.
import { join } from 'node:path';
import { readGgufHeaderSync, readTensorBytes } from '../../src/engine/gguf/file.js';
import { ggmlTypeByName } from '../../src/engine/gguf/ggml-types.js';
import type { GgufHeader } from '../../src/engine/gguf/types.js';
import { FIXTURES } from '../helpers.js';

export const QUANT_REFERENCE = join(FIXTURES, 'quant-reference.gguf');
export const ROWS = 8;
export const COLS = 512;

let header: GgufHeader | undefined;

export function fixtureHeader(): GgufHeader {
  return (header ??= readGgufHeaderSync(QUANT_REFERENCE));
}

export function fixtureBytes(name: string): Uint8Array {
  return readTensorBytes(QUANT_REFERENCE, fixtureHeader(), name);
}

export function fixtureF32(name: string): Float32Array {
  const b = fixtureBytes(name);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
}

/** The types the fixture holds, as [name as in the tensor names, ggml type id]. */
export function fixtureTypes(): [string, number][] {
  return fixtureHeader().tensors
    .filter((t) => t.name.startsWith('q.'))
    .map((t) => [t.name.slice(2), ggmlTypeByName(t.name.slice(2))!]);
}
