// Dequantise every tensor of a GGUF file to F32 with Pantheon's dequantisers (bit-exact against
// ggml's, tests/quant), keeping all metadata; general.file_type becomes 0 (LLAMA_FTYPE_ALL_F32).
//
//   node bin/run-ts.mjs bench/dequantize-gguf.ts in.gguf out.gguf
//
// The result is an independent truth for a quantised file's weights: an engine running it does
// float32 matmuls (llama.cpp's CPU F32 matmul keeps the activation in F32 too), so no kernel for
// the quantised types and no activation quantisation is involved. tests/model/quantized.test.ts
// compares Pantheon's run of a quantised tiny256 variant with llama.cpp's run of its F32 twin.

import { closeSync, openSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readGgufHeaderSync, readTensorBytesSync } from '../src/engine/gguf/file.js';
import { GgmlType } from '../src/engine/gguf/ggml-types.js';
import { GgufType } from '../src/engine/gguf/types.js';
import { writeGguf, type WriterKv, type WriterTensor } from '../src/engine/gguf/writer.js';
import { dequantizeTensor } from '../src/engine/quant/index.js';

/** Write `dst`: the tensors of `src` as F32, same names, shapes, order and metadata. */
export function dequantizeGgufFile(src: string, dst: string): void {
  const h = readGgufHeaderSync(src);
  const kvs: WriterKv[] = [...h.metadata.values()].map((e) =>
    e.key === 'general.file_type' ? { key: e.key, type: GgufType.UINT32, value: 0 } : { key: e.key, type: e.type, value: e.value });
  const fd = openSync(src, 'r');
  const tensors: WriterTensor[] = [];
  try {
    for (const t of h.tensors) {
      const values = dequantizeTensor(t, readTensorBytesSync(fd, h, t));
      tensors.push({ name: t.name, dims: [...t.dims], type: GgmlType.F32, data: new Uint8Array(values.buffer) });
    }
  } finally {
    closeSync(fd);
  }
  writeFileSync(dst, writeGguf(kvs, tensors));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [src, dst] = process.argv.slice(2);
  if (!src || !dst) throw new Error('usage: bench/dequantize-gguf.ts in.gguf out.gguf');
  dequantizeGgufFile(resolve(src), resolve(dst));
  console.log(dst);
}
