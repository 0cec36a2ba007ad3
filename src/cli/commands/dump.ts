// `pantheon dump FILE TENSOR [--f32 OUT] [--head N]`: dequantise one tensor. With --f32 it is written
// as raw little-endian float32 in stored order (dims[0] fastest), ready for numpy.fromfile; without,
// the command prints the tensor's statistics and first values. Works chunk by chunk, so a tensor
// larger than memory can still be dumped.

import { closeSync, openSync, writeSync } from 'node:fs';
import { GgufError, ModelError, UsageError } from '../../shared/errors.js';
import { readGgufHeader, readTensorRange } from '../../engine/gguf/file.js';
import { ggmlTypeInfo, ggmlTypeName } from '../../engine/gguf/ggml-types.js';
import type { GgufHeader, GgufTensorInfo } from '../../engine/gguf/types.js';
import { dequantizeRow } from '../../engine/quant/index.js';
import { optNumber, optString, parseArgs } from '../args.js';
import type { Command } from '../command.js';
import { formatBytes } from '../format.js';

/** Elements per chunk (a multiple of every block size: 32 and 256). */
const CHUNK = 1 << 20;

/** Dequantise `t` from the open file `fd` in chunks, handing each chunk of floats to `sink` in order. */
export function dequantizeTensorChunks(fd: number, h: GgufHeader, t: GgufTensorInfo, sink: (values: Float32Array) => void): void {
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
    sink(out.subarray(0, n));
  }
}

function findTensor(h: GgufHeader, name: string): GgufTensorInfo {
  const t = h.tensors.find((x) => x.name === name);
  if (!t) throw new GgufError('GGUF_BAD_TENSOR', `no tensor named "${name}"; list them with "pantheon tensors FILE"`);
  return t;
}

export const dumpCommand: Command = {
  name: 'dump',
  usage: 'dump FILE TENSOR [--f32 OUT] [--head N]',
  summary: 'dequantise one tensor: write it as raw little-endian float32 (--f32 OUT), or print its statistics and first values',
  async run(argv, io) {
    const args = parseArgs(argv, ['f32', 'head'], []);
    if (args.positionals.length !== 2) throw new UsageError('dump takes FILE and TENSOR');
    const [file, name] = args.positionals;
    const outPath = optString(args, 'f32');
    const head = optNumber(args, 'head', 8, { int: true, min: 0 });
    const h = await readGgufHeader(file);
    const t = findTensor(h, name);
    const shape = `${ggmlTypeName(t.type)} [${t.dims.join(', ')}]`;
    const fd = openSync(file, 'r');
    try {
      if (outPath !== undefined) {
        let out: number;
        try {
          out = openSync(outPath, 'w');
        } catch (err) {
          throw new UsageError(`cannot write ${outPath} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
        }
        try {
          dequantizeTensorChunks(fd, h, t, (v) => {
            const b = new Uint8Array(v.buffer, v.byteOffset, v.byteLength); // little-endian hosts only (x86, ARM)
            for (let w = 0; w < b.length;) w += writeSync(out, b, w);
          });
        } finally {
          closeSync(out);
        }
        io.out(`${name}: ${shape}, ${t.elements} floats (${formatBytes(t.elements * 4)}) written to ${outPath}`);
        return 0;
      }
      let min = Infinity;
      let max = -Infinity;
      let sum = 0;
      let sumSq = 0;
      let nonFinite = 0;
      const first: number[] = [];
      dequantizeTensorChunks(fd, h, t, (v) => {
        for (let i = 0; i < v.length; i++) {
          const x = v[i];
          if (first.length < head) first.push(x);
          if (!Number.isFinite(x)) { nonFinite++; continue; }
          if (x < min) min = x;
          if (x > max) max = x;
          sum += x;
          sumSq += x * x;
        }
      });
      const n = t.elements - nonFinite;
      io.out(`${name}: ${shape}, ${t.elements} elements`);
      if (n > 0) io.out(`  min ${min}  max ${max}  mean ${sum / n}  rms ${Math.sqrt(sumSq / n)}`);
      if (nonFinite) io.out(`  ${nonFinite} elements are NaN or infinite`);
      if (first.length) io.out(`  first ${first.length}: ${first.join(', ')}`);
      return 0;
    } finally {
      closeSync(fd);
    }
  },
};
