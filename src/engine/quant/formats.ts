// Every block format Pantheon computes, indexed by ggml type id. A type missing here (the integer
// types) is one the engine cannot compute yet.

import { GgmlType } from '../gguf/ggml-types.js';
import { BF16_FORMAT, F16_FORMAT, F32_FORMAT } from './float.js';
import type { BlockFormat, DequantizeFn, QuantizeFn } from './format.js';
import { fr } from './half.js';
import { IQ1_M_FORMAT, IQ1_S_FORMAT } from './iq1.js';
import { IQ2_S_FORMAT, IQ2_XS_FORMAT, IQ2_XXS_FORMAT } from './iq2.js';
import { IQ3_S_FORMAT, IQ3_XXS_FORMAT } from './iq3.js';
import { IQ4_NL_FORMAT, IQ4_XS_FORMAT } from './iq4.js';
import { quantizeIq1MRow } from './iq1-quant.js';
import { quantizeIq2SRow } from './iq2-quant.js';
import { quantizeIq3SRow, quantizeIq3XxsRow } from './iq3-quant.js';
import { dequantizeQ8_1, Q4_0_FORMAT, Q4_1_FORMAT, Q5_0_FORMAT, Q5_1_FORMAT, Q8_0_FORMAT, quantizeQ8_1 } from './legacy.js';
import { MXFP4_FORMAT } from './mxfp4.js';
import { Q2_K_FORMAT } from './q2k.js';
import { Q3_K_FORMAT } from './q3k.js';
import { Q4_K_FORMAT, Q5_K_FORMAT } from './q4k5k.js';
import { Q6_K_FORMAT } from './q6k.js';
import { Q8_K_DEQUANT } from './q8k.js';
import { TQ1_0_FORMAT, TQ2_0_FORMAT } from './ternary.js';

/**
 * A format ggml has no weight dot product for (Q8_1, Q8_K are activation formats): activations stay
 * f32, and each row is dequantised and dotted in f32 (products rounded to float, summed in double).
 */
function viaF32(type: number, dequantize: DequantizeFn, quantize: QuantizeFn): BlockFormat {
  let row = new Float32Array(0);
  return {
    type, dequantize, quantize, vecDotType: GgmlType.F32,
    vecDot(n, w, wOff, a, aOff) {
      if (row.length < n) row = new Float32Array(n);
      dequantize(w, wOff, row, n);
      const x = new Float32Array(a.buffer, a.byteOffset + aOff, n);
      let sum = 0;
      for (let i = 0; i < n; i++) sum += fr(row[i] * x[i]);
      return fr(sum);
    },
  };
}

export const FORMATS: readonly (BlockFormat | undefined)[] = (() => {
  const t: (BlockFormat | undefined)[] = [];
  for (const f of [
    F32_FORMAT, F16_FORMAT, BF16_FORMAT,
    Q4_0_FORMAT, Q4_1_FORMAT, Q5_0_FORMAT, Q5_1_FORMAT, Q8_0_FORMAT,
    viaF32(GgmlType.Q8_1, dequantizeQ8_1, quantizeQ8_1),
    Q2_K_FORMAT, Q3_K_FORMAT, Q4_K_FORMAT, Q5_K_FORMAT, Q6_K_FORMAT,
    viaF32(GgmlType.Q8_K, Q8_K_DEQUANT.dequantize, Q8_K_DEQUANT.quantize),
    IQ4_NL_FORMAT, IQ4_XS_FORMAT, TQ1_0_FORMAT, TQ2_0_FORMAT, MXFP4_FORMAT,
    // IQ1_S, IQ2_XXS, IQ2_XS: ggml quantises them only with an importance matrix (imatrix-quant.ts)
    IQ1_S_FORMAT, IQ2_XXS_FORMAT, IQ2_XS_FORMAT,
    // with ggml's quantisers without an importance matrix (IQ1_M, IQ3_*: weights x²; IQ2_S: 0.25σ² + x²)
    { ...IQ1_M_FORMAT, quantize: (x: Float32Array, dst: Uint8Array, off: number, n: number) => quantizeIq1MRow(x, dst, off, n, null) },
    { ...IQ2_S_FORMAT, quantize: (x: Float32Array, dst: Uint8Array, off: number, n: number) => quantizeIq2SRow(x, dst, off, n, null) },
    { ...IQ3_XXS_FORMAT, quantize: (x: Float32Array, dst: Uint8Array, off: number, n: number) => quantizeIq3XxsRow(x, dst, off, n, null) },
    { ...IQ3_S_FORMAT, quantize: (x: Float32Array, dst: Uint8Array, off: number, n: number) => quantizeIq3SRow(x, dst, off, n, null) },
  ]) {
    t[f.type] = f;
  }
  return t;
})();
