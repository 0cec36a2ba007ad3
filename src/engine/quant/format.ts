// The shape every block format module fills in. Kernels are pure functions over raw bytes:
// output first where there is one, sizes last, offsets in bytes.

/** Dequantise `n` elements (a whole number of blocks) starting at byte `off` of `src` into dst[0..n). */
export type DequantizeFn = (src: Uint8Array, off: number, dst: Float32Array, n: number) => void;

/** Quantise x[0..n) (a whole number of blocks) into blocks written at byte `off` of `dst`. */
export type QuantizeFn = (x: Float32Array, dst: Uint8Array, off: number, n: number) => void;

/**
 * Dot product of `n` weights (blocks at byte `wOff` of `w`) with `n` activations already quantised
 * to the format's vecDotType (blocks at byte `aOff` of `a`). ggml-cpu quants.c ggml_vec_dot_*_generic.
 */
export type VecDotFn = (n: number, w: Uint8Array, wOff: number, a: Uint8Array, aOff: number) => number;

export interface BlockFormat {
  /** ggml type id. */
  readonly type: number;
  readonly dequantize: DequantizeFn;
  /** ggml's reference quantiser (what ggml_quantize_chunk does without an importance matrix). */
  readonly quantize?: QuantizeFn;
  /** The type activations are quantised to before the dot (ggml-cpu.c type_traits_cpu vec_dot_type). */
  readonly vecDotType: number;
  readonly vecDot: VecDotFn;
}
