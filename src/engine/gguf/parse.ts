// A pure GGUF header parser over bytes already in memory. It never trusts the file: every count,
// length and offset is checked against the bytes that remain before anything is allocated.
//
// The parser works on a prefix of the file. When the prefix ends before the header does and the
// file is longer, it throws NeedMoreBytes so the caller can read a larger prefix and parse again
// (see file.ts); when the prefix is the whole file, that is a truncated file (GgufError).

import { GgufError } from '../../shared/errors.js';
import { ggmlTypeInfo } from './ggml-types.js';
import {
  GGML_MAX_DIMS, GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GGUF_TYPE_NAMES, GGUF_TYPE_SIZE, GgufType,
  type GgufArray, type GgufHeader, type GgufKv, type GgufTensorInfo, type GgufValue,
} from './types.js';

/** Thrown when the bytes given end inside the header but the file goes on. */
export class NeedMoreBytes extends Error {
  constructor(readonly atLeast: number) {
    super(`need at least ${atLeast} bytes`);
  }
}

const MAX_ARRAY_DEPTH = 8;
const MAX_KEY_BYTES = 65536;

// Limits by what a real model needs, so a hostile header cannot take the app's memory or time
// (a 96 MB header of nested arrays took 24 s and +610 MB before these). The largest real headers
// (262k-token vocabularies with scores, types and merges) are 10-20 MB; no real array is longer
// than about a million items (merges); real files nest no arrays at all.
/** Header bytes (magic to the end of the tensor infos). */
export const MAX_HEADER_BYTES = 64 * 1024 * 1024;
/** Items of one metadata array. */
export const MAX_ARRAY_ITEMS = 1 << 22;
/** Arrays inside arrays, in the whole header (each costs an object). */
export const MAX_NESTED_ARRAYS = 65536;

const MIB = 1024 * 1024;
function headerTooLarge(at: number): GgufError {
  return new GgufError('GGUF_TOO_LARGE', `the header is larger than ${MAX_HEADER_BYTES / MIB} MiB, the most Pantheon reads (real models need under 20 MiB): the file is corrupt or not a model`, at);
}
const utf8 = new TextDecoder('utf-8', { fatal: false });

class Cursor {
  pos = 0;
  readonly view: DataView;
  constructor(readonly bytes: Uint8Array, readonly fileSize: number) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  /** Bytes left in the whole file after pos. */
  fileLeft(): number {
    return this.fileSize - this.pos;
  }
  /** Arrays nested in arrays so far (MAX_NESTED_ARRAYS). */
  nested = 0;
  need(n: number, what: string): void {
    if (this.pos + n <= this.bytes.length) return;
    if (this.pos + n > MAX_HEADER_BYTES) throw headerTooLarge(this.pos);
    if (this.pos + n > this.fileSize) {
      throw new GgufError('GGUF_TRUNCATED', `file ends inside ${what}: it is truncated; download or convert it again`, this.pos);
    }
    throw new NeedMoreBytes(this.pos + n);
  }
  u8(what: string): number { this.need(1, what); return this.bytes[this.pos++]; }
  i8(what: string): number { this.need(1, what); return this.view.getInt8(this.pos++); }
  u16(what: string): number { this.need(2, what); const v = this.view.getUint16(this.pos, true); this.pos += 2; return v; }
  i16(what: string): number { this.need(2, what); const v = this.view.getInt16(this.pos, true); this.pos += 2; return v; }
  u32(what: string): number { this.need(4, what); const v = this.view.getUint32(this.pos, true); this.pos += 4; return v; }
  i32(what: string): number { this.need(4, what); const v = this.view.getInt32(this.pos, true); this.pos += 4; return v; }
  f32(what: string): number { this.need(4, what); const v = this.view.getFloat32(this.pos, true); this.pos += 4; return v; }
  f64(what: string): number { this.need(8, what); const v = this.view.getFloat64(this.pos, true); this.pos += 8; return v; }
  u64(what: string): bigint { this.need(8, what); const v = this.view.getBigUint64(this.pos, true); this.pos += 8; return v; }
  i64(what: string): bigint { this.need(8, what); const v = this.view.getBigInt64(this.pos, true); this.pos += 8; return v; }

  /** A u64 count or length that must fit in what is left of the file, `unit` bytes per item. */
  count(what: string, unit: number): number {
    const at = this.pos;
    this.need(8, what);
    const lo = this.view.getUint32(at, true);
    const hi = this.view.getUint32(at + 4, true);
    this.pos += 8;
    const max = Math.floor(this.fileLeft() / Math.max(unit, 1));
    // hi * 2^32 + lo; exact as a double up to 2^53, and anything larger fails the check anyway.
    const v = hi * 4294967296 + lo;
    if (hi >= 0x200000 || v > max) {
      const exact = (BigInt(hi) << 32n) | BigInt(lo);
      throw new GgufError('GGUF_TOO_LARGE', `${what} is ${exact}, more than the rest of the file can hold: the file is truncated or corrupt; download or convert it again`, at);
    }
    return v;
  }
  string(what: string): string {
    const n = this.count(`length of ${what}`, 1);
    this.need(n, what);
    const s = decodeUtf8(this.bytes, this.pos, n);
    this.pos += n;
    return s;
  }
}

/**
 * UTF-8 bytes to a string. Short ASCII strings (most vocab entries) are built directly, which is
 * several times faster than a TextDecoder call per string; anything else goes to TextDecoder.
 */
function decodeUtf8(b: Uint8Array, at: number, n: number): string {
  if (n > 48) return utf8.decode(b.subarray(at, at + n));
  // Short strings (nearly every vocab entry): decode 1-3 byte sequences by hand; anything else
  // (4-byte sequences, invalid bytes) goes to TextDecoder, which replaces invalid bytes as usual.
  let s = '';
  const end = at + n;
  let i = at;
  while (i < end) {
    const x = b[i];
    if (x < 0x80) {
      s += String.fromCharCode(x);
      i++;
    } else if (x >= 0xc2 && x < 0xe0 && i + 1 < end && (b[i + 1] & 0xc0) === 0x80) {
      s += String.fromCharCode(((x & 0x1f) << 6) | (b[i + 1] & 0x3f));
      i += 2;
    } else if (x >= 0xe0 && x < 0xf0 && i + 2 < end && (b[i + 1] & 0xc0) === 0x80 && (b[i + 2] & 0xc0) === 0x80) {
      const c = ((x & 0x0f) << 12) | ((b[i + 1] & 0x3f) << 6) | (b[i + 2] & 0x3f);
      if (c < 0x800 || (c >= 0xd800 && c < 0xe000)) return utf8.decode(b.subarray(at, end));
      s += String.fromCharCode(c);
      i += 3;
    } else {
      return utf8.decode(b.subarray(at, end));
    }
  }
  return s;
}

const LAZY_STRINGS = 256;

/**
 * A big string array: the parser checks every length and records where each string starts; the
 * strings are built on first access to `items` (or `head`).
 */
function lazyStrings(c: Cursor, n: number, what: string): GgufArray {
  const starts = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) {
    const len = c.count(`length of ${what}`, 1);
    c.need(len, what);
    starts[i] = c.pos;
    c.pos += len;
  }
  starts[n] = c.pos;
  const bytes = c.bytes;
  // Each string ends 8 bytes (the next length) before the next one starts.
  const end = (i: number) => (i + 1 < n ? starts[i + 1] - 8 : starts[n]);
  let cache: string[] | undefined;
  const decode = (count: number): string[] => {
    const out: string[] = new Array(count);
    for (let i = 0; i < count; i++) out[i] = decodeUtf8(bytes, starts[i], end(i) - starts[i]);
    return out;
  };
  return {
    itemType: GgufType.STRING,
    length: n,
    get items(): string[] {
      return (cache ??= decode(n));
    },
    head(k: number): string[] {
      return cache ? cache.slice(0, k) : decode(Math.min(k, n));
    },
    at(i: number): string | undefined {
      if (!(i >= 0 && i < n)) return undefined;
      return cache ? cache[i] : decodeUtf8(bytes, starts[i], end(i) - starts[i]);
    },
  };
}

type TypedItems = Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | Float64Array | BigUint64Array | BigInt64Array;

const TYPED: Partial<Record<number, new (b: ArrayBuffer) => TypedItems>> = {
  [GgufType.UINT8]: Uint8Array, [GgufType.INT8]: Int8Array, [GgufType.UINT16]: Uint16Array, [GgufType.INT16]: Int16Array,
  [GgufType.UINT32]: Uint32Array, [GgufType.INT32]: Int32Array, [GgufType.FLOAT32]: Float32Array, [GgufType.FLOAT64]: Float64Array,
  [GgufType.UINT64]: BigUint64Array, [GgufType.INT64]: BigInt64Array, [GgufType.BOOL]: Uint8Array,
};
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LAZY_NUMBERS = 256;

/**
 * A big numeric (or bool) array kept as a typed array: one copy of the file's bytes, 1-8 bytes an
 * item instead of a JS value each; `items` (plain JS values, as small arrays have) is built on
 * first access. Bools are checked to be 0 or 1 here.
 */
function typedNumbers(c: Cursor, type: number, n: number, what: string): GgufArray {
  const size = GGUF_TYPE_SIZE[type];
  c.need(n * size, what);
  const at = c.pos;
  const buf = c.bytes.slice(at, at + n * size).buffer;
  c.pos += n * size;
  const typed = new TYPED[type]!(buf);
  const value = (i: number): GgufValue => {
    const v = typed[i];
    return typeof v === 'bigint' ? safeInt(v) : type === GgufType.BOOL ? v === 1 : v;
  };
  if (type === GgufType.BOOL) {
    const bad = (typed as Uint8Array).findIndex((b) => b > 1);
    if (bad >= 0) throw new GgufError('GGUF_BAD_VALUE', `${what} is a bool with value ${typed[bad]}: the file is corrupt`, at + bad);
  }
  let cache: GgufValue[] | undefined;
  const decode = (count: number): GgufValue[] => {
    const out: GgufValue[] = new Array(count);
    for (let i = 0; i < count; i++) out[i] = value(i);
    return out;
  };
  return {
    itemType: type,
    length: n,
    typed,
    get items(): GgufValue[] {
      return (cache ??= decode(n));
    },
    head: (k: number) => (cache ? cache.slice(0, k) : decode(Math.min(k, n))),
    at: (i: number) => (i >= 0 && i < n ? value(i) : undefined),
  };
}

/** Read `n` fixed-size numeric items in one checked pass (no per-item type switch). */
function readNumbers(c: Cursor, type: number, n: number, what: string): GgufValue[] {
  const size = GGUF_TYPE_SIZE[type];
  c.need(n * size, what);
  const v = c.view;
  let p = c.pos;
  const out: GgufValue[] = new Array(n);
  switch (type) {
    case GgufType.UINT8: for (let i = 0; i < n; i++) out[i] = v.getUint8(p++); break;
    case GgufType.INT8: for (let i = 0; i < n; i++) out[i] = v.getInt8(p++); break;
    case GgufType.UINT16: for (let i = 0; i < n; i++, p += 2) out[i] = v.getUint16(p, true); break;
    case GgufType.INT16: for (let i = 0; i < n; i++, p += 2) out[i] = v.getInt16(p, true); break;
    case GgufType.UINT32: for (let i = 0; i < n; i++, p += 4) out[i] = v.getUint32(p, true); break;
    case GgufType.INT32: for (let i = 0; i < n; i++, p += 4) out[i] = v.getInt32(p, true); break;
    case GgufType.FLOAT32: for (let i = 0; i < n; i++, p += 4) out[i] = v.getFloat32(p, true); break;
    case GgufType.FLOAT64: for (let i = 0; i < n; i++, p += 8) out[i] = v.getFloat64(p, true); break;
    case GgufType.UINT64: for (let i = 0; i < n; i++, p += 8) out[i] = safeInt(v.getBigUint64(p, true)); break;
    case GgufType.INT64: for (let i = 0; i < n; i++, p += 8) out[i] = safeInt(v.getBigInt64(p, true)); break;
    default: return [];
  }
  c.pos = p;
  return out;
}

function safeInt(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/** Smallest number of bytes one value of this type can take (for array count checks). */
function minSize(type: number): number {
  if (type === GgufType.STRING) return 8;
  if (type === GgufType.ARRAY) return 12;
  return GGUF_TYPE_SIZE[type];
}

function checkType(c: Cursor, type: number, at: number, what: string): void {
  if (!(type >= 0 && type < GGUF_TYPE_NAMES.length)) {
    throw new GgufError('GGUF_BAD_VALUE', `${what} has unknown value type ${type}: the file is corrupt or from a newer format`, at);
  }
}

function readValue(c: Cursor, type: number, what: string, depth: number): GgufValue {
  switch (type) {
    case GgufType.UINT8: return c.u8(what);
    case GgufType.INT8: return c.i8(what);
    case GgufType.UINT16: return c.u16(what);
    case GgufType.INT16: return c.i16(what);
    case GgufType.UINT32: return c.u32(what);
    case GgufType.INT32: return c.i32(what);
    case GgufType.FLOAT32: return c.f32(what);
    case GgufType.BOOL: {
      const at = c.pos;
      const b = c.u8(what);
      if (b > 1) throw new GgufError('GGUF_BAD_VALUE', `${what} is a bool with value ${b}: the file is corrupt`, at);
      return b === 1;
    }
    case GgufType.STRING: return c.string(what);
    case GgufType.UINT64: return safeInt(c.u64(what));
    case GgufType.INT64: return safeInt(c.i64(what));
    case GgufType.FLOAT64: return c.f64(what);
    case GgufType.ARRAY: {
      if (depth >= MAX_ARRAY_DEPTH) {
        throw new GgufError('GGUF_BAD_VALUE', `${what} nests arrays more than ${MAX_ARRAY_DEPTH} deep: the file is corrupt`, c.pos);
      }
      const at = c.pos;
      const itemType = c.u32(`element type of ${what}`);
      checkType(c, itemType, at, what);
      const n = c.count(`element count of ${what}`, minSize(itemType));
      if (n > MAX_ARRAY_ITEMS) {
        throw new GgufError('GGUF_TOO_LARGE', `${what} has ${n} items, more than the ${MAX_ARRAY_ITEMS} Pantheon reads (real models need about a million at most): the file is corrupt or not a model`, at);
      }
      let items: GgufValue[];
      if (itemType === GgufType.STRING) {
        if (n >= LAZY_STRINGS) return lazyStrings(c, n, what);
        items = new Array(n);
        for (let i = 0; i < n; i++) items[i] = c.string(what);
      } else if (n >= LAZY_NUMBERS && LITTLE_ENDIAN && itemType !== GgufType.ARRAY) {
        return typedNumbers(c, itemType, n, what);
      } else if (itemType === GgufType.ARRAY || itemType === GgufType.BOOL) {
        if (itemType === GgufType.ARRAY && (c.nested += n) > MAX_NESTED_ARRAYS) {
          throw new GgufError('GGUF_TOO_LARGE', `${what} brings the arrays nested in arrays to more than ${MAX_NESTED_ARRAYS}; real models nest none: the file is corrupt or not a model`, at);
        }
        items = new Array(n);
        for (let i = 0; i < n; i++) items[i] = readValue(c, itemType, what, depth + 1);
      } else {
        items = readNumbers(c, itemType, n, what);
      }
      return { itemType, items } satisfies GgufArray;
    }
    default:
      throw new GgufError('GGUF_BAD_VALUE', `${what} has unknown value type ${type}`, c.pos);
  }
}

/**
 * Parse a GGUF header from `bytes`, a prefix of a file of `fileSize` bytes.
 * @throws GgufError for a bad file, NeedMoreBytes when the prefix is too short.
 */
export function parseGgufHeader(bytes: Uint8Array, fileSize: number = bytes.length): GgufHeader {
  const c = new Cursor(bytes, fileSize);
  if (fileSize < 4) throw new GgufError('GGUF_TRUNCATED', `file is ${fileSize} bytes long, too short to be a GGUF model`, 0);
  const magic = c.u32('magic');
  if (magic !== GGUF_MAGIC) {
    const b = bytes.subarray(0, 4);
    const text = Array.from(b, (x) => (x >= 32 && x < 127 ? String.fromCharCode(x) : '.')).join('');
    const hint = text === 'ggjt' || text === 'tjgg' || text === 'lmgg' || text === 'ggml' || text === 'ggmf'
      ? 'it is an old GGML file; convert it to GGUF with a current llama.cpp'
      : 'it is not a GGUF model';
    throw new GgufError('GGUF_BAD_MAGIC', `starts with "${text}" instead of "GGUF": ${hint}`, 0);
  }
  const versionAt = c.pos;
  const version = c.u32('version');
  if (version === 1) {
    throw new GgufError('GGUF_VERSION', 'GGUF version 1 is no longer supported; re-convert the model with a current llama.cpp (convert_hf_to_gguf.py)', versionAt);
  }
  if (version !== 2 && version !== 3) {
    const swapped = ((version & 0xff) << 24 | (version & 0xff00) << 8 | (version >>> 8) & 0xff00 | version >>> 24) >>> 0;
    if (swapped === 2 || swapped === 3) {
      throw new GgufError('GGUF_BIG_ENDIAN', 'this is a big-endian GGUF file; Pantheon reads little-endian files only: use the little-endian build of the model', versionAt);
    }
    throw new GgufError('GGUF_VERSION', `GGUF version ${version} is not supported (Pantheon reads versions 2 and 3)`, versionAt);
  }
  // Smallest tensor info: name length (8) + n_dims (4) + one dim (8) + type (4) + offset (8).
  const tensorCount = c.count('tensor count', 32);
  // Smallest key/value: key length (8) + value type (4) + one byte of value.
  const kvCount = c.count('metadata count', 13);

  const metadata = new Map<string, GgufKv>();
  for (let i = 0; i < kvCount; i++) {
    const keyAt = c.pos;
    const key = c.string(`metadata key #${i}`);
    if (key.length > MAX_KEY_BYTES) throw new GgufError('GGUF_BAD_VALUE', `metadata key #${i} is ${key.length} bytes long: the file is corrupt`, keyAt);
    if (metadata.has(key)) throw new GgufError('GGUF_DUPLICATE', `metadata key "${key}" appears twice: the file is corrupt`, keyAt);
    const typeAt = c.pos;
    const type = c.u32(`type of "${key}"`);
    checkType(c, type, typeAt, `metadata "${key}"`);
    const value = readValue(c, type, `metadata "${key}"`, 0);
    metadata.set(key, { key, type, value });
  }

  let alignment = GGUF_DEFAULT_ALIGNMENT;
  const alignKv = metadata.get('general.alignment');
  if (alignKv) {
    const a = alignKv.value;
    if (typeof a !== 'number' || !Number.isInteger(a) || a <= 0 || (a & (a - 1)) !== 0) {
      throw new GgufError('GGUF_BAD_VALUE', `general.alignment is ${String(a)}; it must be a non-zero power of two`);
    }
    alignment = a;
  }

  const warnings: string[] = [];
  const names = new Set<string>();
  const raw: { name: string; dims: number[]; type: number; offset: bigint; at: number }[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const at = c.pos;
    const name = c.string(`name of tensor #${i}`);
    if (names.has(name)) throw new GgufError('GGUF_DUPLICATE', `tensor "${name}" appears twice: the file is corrupt`, at);
    names.add(name);
    const nDimsAt = c.pos;
    const nDims = c.u32(`dimension count of tensor "${name}"`);
    if (nDims < 1 || nDims > GGML_MAX_DIMS) {
      throw new GgufError('GGUF_BAD_TENSOR', `tensor "${name}" has ${nDims} dimensions; ggml allows 1 to ${GGML_MAX_DIMS}`, nDimsAt);
    }
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) {
      const dimAt = c.pos;
      const v = c.u64(`dimension ${d} of tensor "${name}"`);
      if (v > BigInt(Number.MAX_SAFE_INTEGER)) {
        throw new GgufError('GGUF_BAD_TENSOR', `tensor "${name}" has dimension ${d} = ${v}, far larger than any file: the file is corrupt`, dimAt);
      }
      dims.push(Number(v));
    }
    const typeAt = c.pos;
    const type = c.u32(`type of tensor "${name}"`);
    const info = ggmlTypeInfo(type);
    if (!info) throw new GgufError('GGUF_BAD_TENSOR', `tensor "${name}" has unknown ggml type ${type}: the file is corrupt or needs a newer Pantheon`, typeAt);
    if (info.removed) throw new GgufError('GGUF_BAD_TENSOR', `tensor "${name}" uses ${info.name} (type ${type}), a format ggml has removed; re-quantise the model with a current llama.cpp`, typeAt);
    const offset = c.u64(`offset of tensor "${name}"`);
    raw.push({ name, dims, type, offset, at });
  }
  const headerBytes = c.pos;
  if (headerBytes > MAX_HEADER_BYTES) throw headerTooLarge(0);
  let dataOffset = headerBytes;
  if (tensorCount > 0) dataOffset = Math.ceil(headerBytes / alignment) * alignment;
  // A vocab-only file (no tensors) may end right after the metadata, without padding.
  if (tensorCount > 0 && dataOffset > fileSize) {
    throw new GgufError('GGUF_TRUNCATED', 'file ends before its tensor data starts: it is truncated; download it again', fileSize);
  }
  const dataSize = Math.max(0, fileSize - dataOffset);

  const tensors: GgufTensorInfo[] = [];
  for (const r of raw) {
    const info = ggmlTypeInfo(r.type)!;
    let elements = 1;
    for (const d of r.dims) {
      elements *= d;
      if (elements > Number.MAX_SAFE_INTEGER) throw new GgufError('GGUF_BAD_TENSOR', `tensor "${r.name}" has more elements than any file can hold: the file is corrupt`, r.at);
    }
    let flatBlocks = false;
    if (r.dims[0] % info.blockSize !== 0) {
      if (elements % info.blockSize !== 0) {
        throw new GgufError('GGUF_BAD_TENSOR', `tensor "${r.name}" has rows of ${r.dims[0]} elements, not a multiple of the ${info.blockSize}-element ${info.name} block: the file is corrupt`, r.at);
      }
      flatBlocks = true;
      warnings.push(`tensor "${r.name}" (${info.name}) has rows of ${r.dims[0]} elements, not a multiple of the ${info.blockSize}-element block; it was quantised as one flat array, which llama.cpp refuses`);
    }
    const bytes = (elements / info.blockSize) * info.typeSize;
    if (r.offset % BigInt(alignment) !== 0n) {
      throw new GgufError('GGUF_BAD_TENSOR', `tensor "${r.name}" starts at data offset ${r.offset}, not a multiple of the alignment ${alignment}: the file is corrupt`, r.at);
    }
    if (r.offset + BigInt(bytes) > BigInt(dataSize)) {
      throw new GgufError('GGUF_TRUNCATED', `tensor "${r.name}" needs bytes ${r.offset}..${r.offset + BigInt(bytes)} of the data section, but it has only ${dataSize}: the file is truncated; download it again`, r.at);
    }
    tensors.push({ name: r.name, dims: r.dims, type: r.type, offset: Number(r.offset), bytes, elements, flatBlocks });
  }
  const byOffset = [...tensors].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < byOffset.length; i++) {
    const prev = byOffset[i - 1];
    const cur = byOffset[i];
    if (cur.offset < prev.offset + prev.bytes) {
      throw new GgufError('GGUF_BAD_TENSOR', `tensors "${prev.name}" and "${cur.name}" overlap in the data section: the file is corrupt`);
    }
  }
  return { version: version as 2 | 3, metadata, tensors, alignment, dataOffset, fileSize, headerBytes, warnings };
}
