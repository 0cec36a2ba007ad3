// GGUF value types and the parsed header. Numbers are ggml's (gguf.h `enum gguf_type`).

export const enum GgufType {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
}

export const GGUF_TYPE_NAMES = [
  'UINT8', 'INT8', 'UINT16', 'INT16', 'UINT32', 'INT32', 'FLOAT32', 'BOOL',
  'STRING', 'ARRAY', 'UINT64', 'INT64', 'FLOAT64',
] as const;

/** Fixed byte size of each scalar type; 0 for STRING and ARRAY (variable). */
export const GGUF_TYPE_SIZE = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8] as const;

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_DEFAULT_ALIGNMENT = 32; // ggml.h GGUF_DEFAULT_ALIGNMENT
export const GGML_MAX_DIMS = 4; // ggml.h GGML_MAX_DIMS

/**
 * A metadata value. u64/i64 are `number` when safe (|v| <= 2^53-1) and `bigint` otherwise.
 * Arrays keep their element type so a writer can round-trip them exactly.
 */
export type GgufScalar = number | bigint | boolean | string;
export interface GgufArray {
  readonly itemType: GgufType;
  /**
   * The elements. Big string arrays (vocabularies, merges) are decoded on first access, so a
   * header parses without building hundreds of thousands of strings nobody asked for.
   */
  readonly items: GgufValue[];
  /** Element count without decoding (set by the parser; absent on hand-made arrays). */
  readonly length?: number;
  /** The first `n` elements without decoding the rest (set by the parser). */
  head?(n: number): GgufValue[];
  /** Element `i` without decoding the rest (set by the parser). */
  at?(i: number): GgufValue | undefined;
  /**
   * Big numeric and bool arrays as the parser stores them (bools as 0/1 bytes, u64/i64 as bigint
   * arrays); `items` holds the same values as plain numbers, booleans (and bigints past 2^53).
   */
  readonly typed?: Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | Float64Array | BigUint64Array | BigInt64Array;
}

export function arrayLength(a: GgufArray): number {
  return a.length ?? a.items.length;
}

export function arrayAt(a: GgufArray, i: number): GgufValue | undefined {
  return a.at ? a.at(i) : a.items[i];
}

export function arrayHead(a: GgufArray, n: number): GgufValue[] {
  return a.head ? a.head(n) : a.items.slice(0, n);
}
export type GgufValue = GgufScalar | GgufArray;

export interface GgufKv {
  readonly key: string;
  readonly type: GgufType;
  readonly value: GgufValue;
}

export interface GgufTensorInfo {
  readonly name: string;
  /** As stored: dims[0] is the innermost (columns), dims[n-1] the outermost (rows). */
  readonly dims: readonly number[];
  /** ggml type id. */
  readonly type: number;
  /** Offset of the tensor's bytes relative to the start of the data section. */
  readonly offset: number;
  /** Byte size of the tensor's data. */
  readonly bytes: number;
  /** Number of elements (product of dims). */
  readonly elements: number;
  /**
   * True when dims[0] is not a multiple of the type's block size but the element count is: the
   * tensor was quantised as one flat array (old converters did this). ggml refuses such files.
   */
  readonly flatBlocks: boolean;
}

export interface GgufHeader {
  readonly version: 2 | 3;
  readonly metadata: ReadonlyMap<string, GgufKv>;
  readonly tensors: readonly GgufTensorInfo[];
  /** general.alignment or 32. */
  readonly alignment: number;
  /** Absolute file offset of the tensor data section. */
  readonly dataOffset: number;
  /** Size of the file in bytes. */
  readonly fileSize: number;
  /** Bytes taken by the header (magic to the end of the tensor infos). */
  readonly headerBytes: number;
  /** Readable notes about things that parse but are unusual (one line each). */
  readonly warnings: readonly string[];
}

export function isGgufArray(v: GgufValue | undefined): v is GgufArray {
  return typeof v === 'object' && v !== null && 'items' in v;
}
