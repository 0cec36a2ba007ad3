// Loading ggml's reference tensors from ../shared/fixtures/quant-reference.gguf: `source` (f32,
// 8×512), and for each type `q.<type>` (ggml_quantize_chunk's bytes) and `deq.<type>` (ggml's
// to_float of those bytes). Made by llama.cpp's ggml, so they are an independent truth.
import { join } from 'node:path';
import { readGgufHeaderSync, readTensorBytes } from '../../src/engine/gguf/file.js';
import { ggmlTypeByName } from '../../src/engine/gguf/ggml-types.js';
import type { GgufHeader } from '../../src/engine/gguf/types.js';
import { FIXTURES } from '../helpers.js';

export const QUANT_REFERENCE = join(FIXTURES, 'quant-reference.gguf');
/** The same source in all 24 types ggml quantises on CPU, i-quants included (made with an importance matrix). */
export const QUANT_REFERENCE_IQ = join(FIXTURES, 'quant-reference-iq.gguf');
export const ROWS = 8;
export const COLS = 512;

const headers = new Map<string, GgufHeader>();

export function fixtureHeader(file = QUANT_REFERENCE): GgufHeader {
  let h = headers.get(file);
  if (!h) headers.set(file, (h = readGgufHeaderSync(file)));
  return h;
}

export function fixtureBytes(name: string, file = QUANT_REFERENCE): Uint8Array {
  return readTensorBytes(file, fixtureHeader(file), name);
}

export function fixtureF32(name: string, file = QUANT_REFERENCE): Float32Array {
  const b = fixtureBytes(name, file);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
}

/** The types the fixture holds, as [name as in the tensor names, ggml type id]. */
export function fixtureTypes(file = QUANT_REFERENCE): [string, number][] {
  return fixtureHeader(file).tensors
    .filter((t) => t.name.startsWith('q.'))
    .map((t) => [t.name.slice(2), ggmlTypeByName(t.name.slice(2))!]);
}
