// f32 vector steps that the backends share with the forward pass (model/ops.ts re-exports them).

/** out[i] += v[i] (bias add, residual). */
export function addInto(out: Float32Array, v: Float32Array, n: number, outOff = 0, vOff = 0): void {
  for (let i = 0; i < n; i++) out[outOff + i] += v[vOff + i];
}
