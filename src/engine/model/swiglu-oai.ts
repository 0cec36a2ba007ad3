// gpt-oss's expert activation, ggml_swiglu_oai (ggml-cpu ops.cpp ggml_compute_forward_swiglu_oai_f32)
// with build_moe_ffn's constants (LLM_FFN_SWIGLU_OAI_MOE: alpha 1.702, limit 7):
//   x = min(gate, limit), y = clamp(up, −limit, limit), out = x / (1 + e^(−alpha·x)) · (y + 1)
// every step an f32 operation as ggml's (expf: fround(Math.exp)).

const ALPHA = Math.fround(1.702);
const LIMIT = 7;

/** out[outOff + i] = swiglu_oai(gate[gateOff + i], up[upOff + i]) for i < n (out may be gate or up). */
export function swigluOai(out: Float32Array, gate: Float32Array, up: Float32Array, n: number, outOff = 0, gateOff = 0, upOff = 0): void {
  const f = Math.fround;
  for (let i = 0; i < n; i++) {
    const x = Math.min(gate[gateOff + i], LIMIT);
    const u = up[upOff + i];
    const y = u < -LIMIT ? -LIMIT : u > LIMIT ? LIMIT : u;
    const glu = f(x / f(1 + f(Math.exp(f(ALPHA * -x)))));
    out[outOff + i] = f(glu * f(y + 1));
  }
}
