// A quantised weight matrix as the kernels see it (the seed's pn_qweight): raw ggml blocks, row-major.

/** W: [rows, cols] stored as `rows` rows of `rowBytes` bytes of ggml blocks of `type`. */
export interface QWeight {
  /** Raw blocks, rows × rowBytes bytes. */
  data: Uint8Array;
  /** ggml type id. */
  type: number;
  /** Output dimension (GGUF dims[1]). */
  rows: number;
  /** Input dimension (GGUF dims[0]). */
  cols: number;
  /** Bytes per row: cols / blockSize × typeSize. */
  rowBytes: number;
}
