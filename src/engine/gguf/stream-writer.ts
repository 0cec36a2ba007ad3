// Writing a GGUF v3 file tensor by tensor, without holding all tensor data in memory: the header is
// laid out from the tensors' sizes first, then each tensor's bytes are produced, written and
// dropped. Used by `pantheon quantize`, where the output can be gigabytes.

import { closeSync, openSync, writeSync } from 'node:fs';
import { ggmlTypeInfo } from './ggml-types.js';
import { GGUF_DEFAULT_ALIGNMENT } from './types.js';
import { writeGguf, type WriterKv } from './writer.js';

export interface StreamTensor {
  name: string;
  /** As stored: innermost first. */
  dims: number[];
  type: number;
}

/** Bytes a tensor of this type and shape takes (whole blocks of dims[0]·… elements). */
export function tensorBytes(t: StreamTensor): number {
  const info = ggmlTypeInfo(t.type);
  if (!info || info.removed) throw new TypeError(`tensor ${t.name}: unknown ggml type ${t.type}`);
  const elements = t.dims.reduce((a, b) => a * b, 1);
  if (elements % info.blockSize !== 0) throw new TypeError(`tensor ${t.name}: ${elements} elements is not a whole number of ${info.name} blocks`);
  return (elements / info.blockSize) * info.typeSize;
}

const enc = new TextEncoder();

/**
 * The header (magic … tensor infos, padded to the alignment) for these tensors, laid out in order
 * with each tensor's data aligned. The metadata part comes from writeGguf with no tensors.
 */
export function ggufHeaderFor(kvs: WriterKv[], tensors: StreamTensor[]): Uint8Array {
  const alignKv = kvs.find((k) => k.key === 'general.alignment');
  const alignment = alignKv ? Number(alignKv.value) : GGUF_DEFAULT_ALIGNMENT;
  const meta = writeGguf(kvs, []); // magic, version 3, n_tensors = 0, n_kv, kvs
  const parts: Uint8Array[] = [meta];
  let size = meta.length;
  let offset = 0;
  for (const t of tensors) {
    const name = enc.encode(t.name);
    const b = new Uint8Array(8 + name.length + 4 + 8 * t.dims.length + 4 + 8);
    const dv = new DataView(b.buffer);
    let p = 0;
    dv.setBigUint64(p, BigInt(name.length), true); p += 8;
    b.set(name, p); p += name.length;
    dv.setUint32(p, t.dims.length, true); p += 4;
    for (const d of t.dims) { dv.setBigUint64(p, BigInt(d), true); p += 8; }
    dv.setUint32(p, t.type, true); p += 4;
    dv.setBigUint64(p, BigInt(offset), true);
    parts.push(b);
    size += b.length;
    offset += Math.ceil(tensorBytes(t) / alignment) * alignment;
  }
  const padded = tensors.length ? Math.ceil(size / alignment) * alignment : size;
  const out = new Uint8Array(padded);
  let at = 0;
  for (const part of parts) { out.set(part, at); at += part.length; }
  new DataView(out.buffer).setBigUint64(8, BigInt(tensors.length), true); // n_tensors
  return out;
}

/**
 * Write a GGUF v3 file at `path`. `produce(i)` returns tensor i's bytes (exactly tensorBytes of
 * it); it is called once per tensor, in order, and the bytes are not kept.
 */
export function writeGgufToFile(path: string, kvs: WriterKv[], tensors: StreamTensor[], produce: (index: number) => Uint8Array): void {
  const alignKv = kvs.find((k) => k.key === 'general.alignment');
  const alignment = alignKv ? Number(alignKv.value) : GGUF_DEFAULT_ALIGNMENT;
  const header = ggufHeaderFor(kvs, tensors);
  const fd = openSync(path, 'w');
  try {
    const put = (b: Uint8Array) => {
      for (let w = 0; w < b.length;) w += writeSync(fd, b, w, b.length - w);
    };
    put(header);
    const zeros = new Uint8Array(alignment);
    tensors.forEach((t, i) => {
      const data = produce(i);
      const expect = tensorBytes(t);
      if (data.length !== expect) throw new TypeError(`tensor ${t.name}: ${data.length} bytes produced, ${expect} expected`);
      put(data);
      const pad = (alignment - (data.length % alignment)) % alignment;
      if (pad) put(zeros.subarray(0, pad));
    });
  } finally {
    closeSync(fd);
  }
}
