// Which WebAssembly kernels serve which ggml type, and how big their quantised activations are.
// The activation layouts are the ones written by assembly/activation.ts (described in
// assembly/common.ts); ggml's vec_dot_type per weight type is from ggml-cpu.c type_traits_cpu.

import { GgmlType, rowBytes } from '../gguf/ggml-types.js';

/** The activation formats the kernels read. */
export type ActKind = 'f32' | 'q8_0' | 'q8_1' | 'q8_K';

/** The module's exports for one weight type, named once here (tests/wasm/export-names.test.ts checks them). */
export interface KernelFns<S extends string = string> {
  readonly matvec: `matvec_${S}`;
  readonly matmul: `matmul_${S}`;
  /** Only where KernelType.gemm. */
  readonly gemm: `gemm_${S}`;
  readonly dequant: `dequant_${S}`;
  /** Only where the stored layout is not ggml's (storedRowBytes, rowLayout). */
  readonly dequantRow: `dequant_row_${S}`;
}

/** The module's exports for one activation format. */
export interface ActFns<A extends ActKind = ActKind> {
  readonly quantize: `quantize_${A}`;
  readonly quantizeRows: `quantize_rows_${A}`;
  /** Only for the formats gemm kernels read (q8_0, q8_K). */
  readonly widen: `widen_${A}`;
}

const fnsOf = <A extends ActKind>(a: A): ActFns<A> => ({ quantize: `quantize_${a}`, quantizeRows: `quantize_rows_${a}`, widen: `widen_${a}` });
const ACT_FNS: { readonly [A in ActKind]: ActFns<A> } = { f32: fnsOf('f32'), q8_0: fnsOf('q8_0'), q8_1: fnsOf('q8_1'), q8_K: fnsOf('q8_K') };

export function actFns<A extends ActKind>(act: A): ActFns<A> {
  return ACT_FNS[act];
}

export interface KernelType {
  /** ggml type id of the weights. */
  readonly type: number;
  /** Export suffix of its kernels (the names are in `fns`). */
  readonly suffix: string;
  /** The activation format (ggml's vec_dot_type); its quantiser is quantize_<act>. */
  readonly act: ActKind;
  /** True when batches take gemm_<suffix> on widened activations (assembly/gemm.ts). */
  readonly gemm: boolean;
  readonly fns: KernelFns;
}

/** Weight types with a gemm_* prompt kernel. */
const GEMM_SUFFIXES = new Set(['q8_0', 'q4_0', 'q5_0', 'q4_1', 'q5_1', 'q4_K', 'q5_K', 'q6_K']);

/**
 * Batches of at least this many tokens take the gemm kernels; smaller ones (a decode batch of a few
 * sequences, a short prompt) the matmul kernel, whose fixed cost (no widened copy of x) is lower
 * there. The same bits either way (docs/performance.md, "Decode batches").
 */
export const GEMM_MIN_TOKENS = 8;

/** Whether a batch of n tokens on kt takes its gemm kernel. */
export function takesGemm(kt: KernelType, n: number): boolean {
  return kt.gemm && n >= GEMM_MIN_TOKENS;
}

function k(type: number, suffix: string, act: ActKind): KernelType {
  const fns: KernelFns = { matvec: `matvec_${suffix}`, matmul: `matmul_${suffix}`, gemm: `gemm_${suffix}`, dequant: `dequant_${suffix}`, dequantRow: `dequant_row_${suffix}` };
  return { type, suffix, act, gemm: GEMM_SUFFIXES.has(suffix), fns };
}

/** Every weight type with a WebAssembly kernel, by ggml id. */
export const KERNEL_TYPES: ReadonlyMap<number, KernelType> = new Map(
  [
    k(GgmlType.F32, 'f32', 'f32'),
    k(GgmlType.F16, 'f16', 'f32'), // x unrounded, unlike ggml's generic path (see quant/float.ts)
    k(GgmlType.BF16, 'bf16', 'f32'),
    k(GgmlType.Q4_0, 'q4_0', 'q8_0'),
    k(GgmlType.Q4_1, 'q4_1', 'q8_1'),
    k(GgmlType.Q5_0, 'q5_0', 'q8_0'),
    k(GgmlType.Q5_1, 'q5_1', 'q8_1'),
    k(GgmlType.Q8_0, 'q8_0', 'q8_0'),
    k(GgmlType.Q2_K, 'q2_K', 'q8_K'),
    k(GgmlType.Q3_K, 'q3_K', 'q8_K'),
    k(GgmlType.Q4_K, 'q4_K', 'q8_K'),
    k(GgmlType.Q5_K, 'q5_K', 'q8_K'),
    k(GgmlType.Q6_K, 'q6_K', 'q8_K'),
    k(GgmlType.IQ4_NL, 'iq4_nl', 'q8_0'),
    k(GgmlType.IQ4_XS, 'iq4_xs', 'q8_K'),
    k(GgmlType.TQ1_0, 'tq1_0', 'q8_K'),
    k(GgmlType.TQ2_0, 'tq2_0', 'q8_K'),
    k(GgmlType.MXFP4, 'mxfp4', 'q8_0'),
    // the i-quants (assembly/iquants.ts), last so that the test seeds of the types above stay as they were
    k(GgmlType.IQ1_S, 'iq1_s', 'q8_K'),
    k(GgmlType.IQ1_M, 'iq1_m', 'q8_K'),
    k(GgmlType.IQ2_XXS, 'iq2_xxs', 'q8_K'),
    k(GgmlType.IQ2_XS, 'iq2_xs', 'q8_K'),
    k(GgmlType.IQ2_S, 'iq2_s', 'q8_K'),
    k(GgmlType.IQ3_XXS, 'iq3_xxs', 'q8_K'),
    k(GgmlType.IQ3_S, 'iq3_s', 'q8_K'),
  ].map((t) => [t.type, t]),
);

/** The kernel entry for a ggml type, or undefined when there is none. */
export function kernelType(type: number): KernelType | undefined {
  return KERNEL_TYPES.get(type);
}

/**
 * Bytes per row as the WebAssembly backends store a weight: ggml's row, except F16, whose rows are
 * each preceded by a bitmap of their groups of 16 halves holding a half with |h| ≥ 64 or Inf/NaN,
 * 16 B per 128 groups (assembly/float.ts f16_row_bytes). fill() writes ggml's rows contiguously at
 * p; then layout_f16(p, rows, cols) spreads them to this stride, writes the bitmaps and re-encodes
 * each half (h·2^10 below 64: no subnormal halves), in place, and the kernels take
 * p + storedRowBytes − rowBytes (row 0's halves) as the weight's address. A row's halves alone
 * decode back to its weights (dequant_row_f16), so getRow may copy just those.
 */
export function storedRowBytes(type: number, cols: number): number {
  const rb = rowBytes(type, cols);
  return type === GgmlType.F16 ? rb + Math.ceil(Math.floor(cols / 16) / 128) * 16 : rb;
}

/**
 * The load-time pass that turns ggml's rows into the backends' stored layout, for the types whose
 * layout is not ggml's (assembly/layout.ts, q4k-group.ts, float.ts): fill() writes ggml's rows
 * `slack` bytes after the weight's address base, then fn(...args(base, base + slack, rows, temp))
 * runs on the thread that owns the memory, for those rows; temp: `temp` bytes of that memory the
 * backend lends for the call (0 when temp is 0) and takes back after it.
 *   F16:  layout_f16(base, rows, cols) spreads the rows in place to storedRowBytes, writes each
 *         row's bitmap and re-encodes its halves (slack 0).
 *   Q4_0: layout_q4_0(base, filled, rows, cols) moves them forward into groups of four rows (the
 *         relaxed build); slack, four rows, is left unused at the end.
 *   Q4_K: layout_q4_K(base, filled, temp, rows, cols) interleaves each group of four rows in
 *         place, through temp (four rows; the relaxed build), with no slack, so no weight keeps
 *         four unused rows (4·rowBytes per weight and thread add up where rows are few).
 *   Q6_K: layout_q6_K(base, filled, rows, cols), as Q4_0 (slack four rows; assembly/q6k-group.ts).
 */
export interface RowLayout {
  readonly fn: string;
  readonly slack: number;
  readonly temp: number;
  args(base: number, filled: number, rows: number, temp: number): number[];
}

export function rowLayout(type: number, cols: number): RowLayout | null {
  if (type === GgmlType.F16) return { fn: 'layout_f16', slack: 0, temp: 0, args: (base, _filled, rows) => [base, rows, cols] };
  if (type === GgmlType.Q4_0) return { fn: 'layout_q4_0', slack: 4 * rowBytes(type, cols), temp: 0, args: (base, filled, rows) => [base, filled, rows, cols] };
  if (type === GgmlType.Q4_K) return { fn: 'layout_q4_K', slack: 0, temp: 4 * rowBytes(type, cols), args: (base, filled, rows, temp) => [base, filled, temp, rows, cols] };
  if (type === GgmlType.Q6_K) return { fn: 'layout_q6_K', slack: 4 * rowBytes(type, cols), temp: 0, args: (base, filled, rows) => [base, filled, rows, cols] };
  return null;
}

/**
 * Rows that a weight's stored layout keeps together (rowLayout): a slice of the rows for one thread
 * starts at a multiple of it, and a row is read back (dequant_row_*) with its whole group.
 */
export function rowGroup(type: number): number {
  return type === GgmlType.Q4_0 || type === GgmlType.Q4_K || type === GgmlType.Q6_K ? 4 : 1;
}

/**
 * Bytes of one quantised activation of `cols` elements (assembly/activation.ts act_bytes):
 *   q8_0/q8_1: cols i8 + per 32: f32 d + 4-byte aux;  q8_K: cols i8 + per 256: f32 d + per 16: i16 bsum;
 *   f32: cols f32. Rounded up to 16 so consecutive activations stay v128-aligned.
 */
export function actBytes(act: ActKind, cols: number): number {
  let n: number;
  if (act === 'q8_0' || act === 'q8_1') n = cols + (cols / 32) * 8;
  else if (act === 'q8_K') n = cols + (cols / 256) * 4 + (cols / 16) * 2;
  else n = cols * 4;
  return Math.ceil(n / 16) * 16;
}

/**
 * Bytes of the widened copy of n quantised activations (assembly/gemm.ts widen_bytes): per group
 * of four tokens, 288 B per 32 columns (q8_0, q8_1) or 2448 B per 256 columns (q8_K).
 */
export function widenBytes(act: ActKind, n: number, cols: number): number {
  const groups = Math.ceil(n / 4);
  if (act === 'q8_0' || act === 'q8_1') return groups * (cols / 32) * 288;
  if (act === 'q8_K') return groups * (cols / 256) * 2448;
  return 0;
}

/** Bytes of scratch a gemm kernel needs for rows of `cols` (assembly/gemm.ts gemm_scratch_bytes: GEMM_ROWS = 4 prepared rows, 80 B per 32 columns). */
export function gemmScratchBytes(cols: number): number {
  return 4 * Math.floor(cols / 32) * 80;
}
