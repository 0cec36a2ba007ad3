// The ggml tensor types, with ggml's exact numbers (ggml.h `enum ggml_type`) and block geometry
// (ggml.c `type_traits`: blck_size, type_size). Ids that ggml removed stay listed so a file that
// uses one gets a message naming it instead of "unknown type".

export const enum GgmlType {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
  IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
}

export interface GgmlTypeInfo {
  readonly id: number;
  readonly name: string;
  /** Elements per block (1 for plain element types). */
  readonly blockSize: number;
  /** Bytes per block. 0 for removed ids. */
  readonly typeSize: number;
  /** True for ids ggml no longer defines (4, 5, 31-33, 36-38). */
  readonly removed: boolean;
}

function t(id: number, name: string, blockSize: number, typeSize: number, removed = false): GgmlTypeInfo {
  return { id, name, blockSize, typeSize, removed };
}

/** Every ggml type id 0-39, indexed by id. */
export const GGML_TYPES: readonly GgmlTypeInfo[] = [
  t(0, 'F32', 1, 4),
  t(1, 'F16', 1, 2),
  t(2, 'Q4_0', 32, 18), // f16 d, 16 B nibbles
  t(3, 'Q4_1', 32, 20), // f16 d, f16 m, 16 B nibbles
  t(4, 'Q4_2', 0, 0, true),
  t(5, 'Q4_3', 0, 0, true),
  t(6, 'Q5_0', 32, 22), // f16 d, 4 B high bits, 16 B nibbles
  t(7, 'Q5_1', 32, 24), // f16 d, f16 m, 4 B high bits, 16 B nibbles
  t(8, 'Q8_0', 32, 34), // f16 d, 32 i8
  t(9, 'Q8_1', 32, 36), // f16 d, f16 s, 32 i8
  t(10, 'Q2_K', 256, 84),
  t(11, 'Q3_K', 256, 110),
  t(12, 'Q4_K', 256, 144),
  t(13, 'Q5_K', 256, 176),
  t(14, 'Q6_K', 256, 210),
  t(15, 'Q8_K', 256, 292), // f32 d, 256 i8, 16 i16 bsums
  t(16, 'IQ2_XXS', 256, 66),
  t(17, 'IQ2_XS', 256, 74),
  t(18, 'IQ3_XXS', 256, 98),
  t(19, 'IQ1_S', 256, 50),
  t(20, 'IQ4_NL', 32, 18),
  t(21, 'IQ3_S', 256, 110),
  t(22, 'IQ2_S', 256, 82),
  t(23, 'IQ4_XS', 256, 136),
  t(24, 'I8', 1, 1),
  t(25, 'I16', 1, 2),
  t(26, 'I32', 1, 4),
  t(27, 'I64', 1, 8),
  t(28, 'F64', 1, 8),
  t(29, 'IQ1_M', 256, 56),
  t(30, 'BF16', 1, 2),
  t(31, 'Q4_0_4_4', 0, 0, true),
  t(32, 'Q4_0_4_8', 0, 0, true),
  t(33, 'Q4_0_8_8', 0, 0, true),
  t(34, 'TQ1_0', 256, 54),
  t(35, 'TQ2_0', 256, 66),
  t(36, 'IQ4_NL_4_4', 0, 0, true),
  t(37, 'IQ4_NL_4_8', 0, 0, true),
  t(38, 'IQ4_NL_8_8', 0, 0, true),
  t(39, 'MXFP4', 32, 17), // e8m0 scale, 16 B fp4 nibbles
];

/** The type's info, or undefined for an id outside 0-39. */
export function ggmlTypeInfo(id: number): GgmlTypeInfo | undefined {
  return Number.isInteger(id) && id >= 0 && id < GGML_TYPES.length ? GGML_TYPES[id] : undefined;
}

/** ggml's name for a type id ("Q4_K"), or "type N" for an unknown id. */
export function ggmlTypeName(id: number): string {
  return ggmlTypeInfo(id)?.name ?? `type ${id}`;
}

/** The id for a ggml type name (case-insensitive), or undefined. */
export function ggmlTypeByName(name: string): number | undefined {
  const upper = name.toUpperCase();
  const info = GGML_TYPES.find((x) => !x.removed && x.name === upper);
  return info?.id;
}

/** Bytes taken by one row of `cols` elements (cols must be a multiple of the block size). */
export function rowBytes(type: number, cols: number): number {
  const info = GGML_TYPES[type];
  return (cols / info.blockSize) * info.typeSize;
}
