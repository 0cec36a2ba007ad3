// Writing a GGUF v3 file: metadata, tensor infos, aligned tensor data. Used to make test fixtures
// and by `pantheon quantize`.

import { ggmlTypeInfo } from './ggml-types.js';
import { GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GgufType, isGgufArray, type GgufValue } from './types.js';

export interface WriterKv {
  key: string;
  type: GgufType;
  value: GgufValue;
}

export interface WriterTensor {
  name: string;
  /** As stored: innermost first. */
  dims: number[];
  type: number;
  data: Uint8Array;
}

const enc = new TextEncoder();

class Sink {
  buf = new Uint8Array(1 << 16);
  len = 0;
  private grow(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  private dv(n: number): DataView {
    this.grow(n);
    const v = new DataView(this.buf.buffer, this.len, n);
    this.len += n;
    return v;
  }
  u8(v: number): void { this.dv(1).setUint8(0, v); }
  i8(v: number): void { this.dv(1).setInt8(0, v); }
  u16(v: number): void { this.dv(2).setUint16(0, v, true); }
  i16(v: number): void { this.dv(2).setInt16(0, v, true); }
  u32(v: number): void { this.dv(4).setUint32(0, v, true); }
  i32(v: number): void { this.dv(4).setInt32(0, v, true); }
  f32(v: number): void { this.dv(4).setFloat32(0, v, true); }
  f64(v: number): void { this.dv(8).setFloat64(0, v, true); }
  u64(v: number | bigint): void { this.dv(8).setBigUint64(0, BigInt(v), true); }
  i64(v: number | bigint): void { this.dv(8).setBigInt64(0, BigInt(v), true); }
  bytes(b: Uint8Array): void { this.grow(b.length); this.buf.set(b, this.len); this.len += b.length; }
  str(s: string): void { const b = enc.encode(s); this.u64(b.length); this.bytes(b); }
  pad(alignment: number): void { const n = (alignment - (this.len % alignment)) % alignment; this.grow(n); this.buf.fill(0, this.len, this.len + n); this.len += n; }
}

function writeValue(s: Sink, type: GgufType, v: GgufValue): void {
  switch (type) {
    case GgufType.UINT8: return s.u8(v as number);
    case GgufType.INT8: return s.i8(v as number);
    case GgufType.UINT16: return s.u16(v as number);
    case GgufType.INT16: return s.i16(v as number);
    case GgufType.UINT32: return s.u32(v as number);
    case GgufType.INT32: return s.i32(v as number);
    case GgufType.FLOAT32: return s.f32(v as number);
    case GgufType.BOOL: return s.u8(v ? 1 : 0);
    case GgufType.STRING: return s.str(v as string);
    case GgufType.UINT64: return s.u64(v as number | bigint);
    case GgufType.INT64: return s.i64(v as number | bigint);
    case GgufType.FLOAT64: return s.f64(v as number);
    case GgufType.ARRAY: {
      if (!isGgufArray(v)) throw new TypeError('ARRAY value must be { itemType, items }');
      s.u32(v.itemType);
      s.u64(v.items.length);
      for (const item of v.items) writeValue(s, v.itemType, item);
      return;
    }
    default:
      throw new TypeError(`unknown GGUF value type ${type as number}`);
  }
}

/** Serialise a complete GGUF v3 file. Tensor data is laid out in order, each aligned. */
export function writeGguf(kvs: WriterKv[], tensors: WriterTensor[]): Uint8Array {
  const alignKv = kvs.find((k) => k.key === 'general.alignment');
  const alignment = alignKv ? Number(alignKv.value) : GGUF_DEFAULT_ALIGNMENT;
  const s = new Sink();
  s.u32(GGUF_MAGIC);
  s.u32(3);
  s.u64(tensors.length);
  s.u64(kvs.length);
  for (const kv of kvs) {
    s.str(kv.key);
    s.u32(kv.type);
    writeValue(s, kv.type, kv.value);
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const t of tensors) {
    const info = ggmlTypeInfo(t.type);
    if (!info || info.removed) throw new TypeError(`tensor ${t.name}: unknown ggml type ${t.type}`);
    const elements = t.dims.reduce((a, b) => a * b, 1);
    const expect = (elements / info.blockSize) * info.typeSize;
    if (t.data.length !== expect) throw new TypeError(`tensor ${t.name}: ${t.data.length} bytes given, ${info.name} ${t.dims.join('x')} needs ${expect}`);
    s.str(t.name);
    s.u32(t.dims.length);
    for (const d of t.dims) s.u64(d);
    s.u32(t.type);
    s.u64(offset);
    offsets.push(offset);
    offset += Math.ceil(t.data.length / alignment) * alignment;
  }
  if (tensors.length > 0) {
    s.pad(alignment);
    for (const t of tensors) {
      s.bytes(t.data);
      s.pad(alignment);
    }
  }
  return s.buf.slice(0, s.len);
}

/** Shorthand constructors for writer metadata. */
export const kv = {
  u8: (key: string, value: number): WriterKv => ({ key, type: GgufType.UINT8, value }),
  u32: (key: string, value: number): WriterKv => ({ key, type: GgufType.UINT32, value }),
  i32: (key: string, value: number): WriterKv => ({ key, type: GgufType.INT32, value }),
  f32: (key: string, value: number): WriterKv => ({ key, type: GgufType.FLOAT32, value }),
  u64: (key: string, value: number | bigint): WriterKv => ({ key, type: GgufType.UINT64, value }),
  bool: (key: string, value: boolean): WriterKv => ({ key, type: GgufType.BOOL, value }),
  str: (key: string, value: string): WriterKv => ({ key, type: GgufType.STRING, value }),
  arr: (key: string, itemType: GgufType, items: GgufValue[]): WriterKv => ({ key, type: GgufType.ARRAY, value: { itemType, items } }),
};
