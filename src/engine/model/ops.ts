// The small kernels of the forward pass, as pure functions: output first, sizes last (llama2.c
// run.c style). Each follows ggml-cpu's arithmetic where that changes the numbers (sums of squares
// in double, scale factors in float), so Pantheon's activations track llama.cpp's closely.

import { F16, f32ToF16Bits } from '../quant/half.js';

// ----------------------------------------------------------------------------------------------
// Normalisation

/**
 * RMSNorm: out = x / sqrt(mean(x²) + eps) · w. ggml-cpu ops.cpp ggml_compute_forward_rms_norm_f32:
 * the sum of squares in double, mean and scale in float. `w` may be absent (a bare rms_norm).
 */
export function rmsnorm(out: Float32Array, x: Float32Array, w: Float32Array | null, eps: number, n: number, xOff = 0, outOff = 0): void {
  let ss = 0;
  for (let i = 0; i < n; i++) {
    const v = Math.fround(x[xOff + i] * x[xOff + i]);
    ss += v;
  }
  const mean = Math.fround(ss / n);
  const scale = Math.fround(1 / Math.fround(Math.sqrt(Math.fround(mean + eps))));
  if (w) for (let i = 0; i < n; i++) out[outOff + i] = Math.fround(x[xOff + i] * scale) * w[i];
  else for (let i = 0; i < n; i++) out[outOff + i] = x[xOff + i] * scale;
}

/**
 * LayerNorm: out = (x - mean) / sqrt(var + eps) · w + b. ggml-cpu ops.cpp
 * ggml_compute_forward_norm_f32 (mean and variance summed in double), then build_norm's mul and add.
 */
export function layernorm(out: Float32Array, x: Float32Array, w: Float32Array | null, b: Float32Array | null, eps: number, n: number, xOff = 0, outOff = 0): void {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += x[xOff + i];
  const mean = Math.fround(sum / n);
  let v = 0;
  for (let i = 0; i < n; i++) {
    const d = Math.fround(x[xOff + i] - mean);
    out[outOff + i] = d;
    v += Math.fround(d * d);
  }
  const variance = Math.fround(v / n);
  const scale = Math.fround(1 / Math.fround(Math.sqrt(Math.fround(variance + eps))));
  for (let i = 0; i < n; i++) {
    let y = Math.fround(out[outOff + i] * scale);
    if (w) y = Math.fround(y * w[i]);
    if (b) y = y + b[i];
    out[outOff + i] = y;
  }
}

// ----------------------------------------------------------------------------------------------
// Rotary position embedding

export type RopeMode = 'norm' | 'neox';

/**
 * YaRN and magnitude terms of ggml's rope (ggml-cpu ops.cpp rope_yarn): `extFactor` mixes the
 * extrapolated angle back in over the dims between corrLow and corrHigh, `attnFactor` multiplies
 * cos and sin. extFactor 0 and attnFactor 1 give plain (linearly scaled) RoPE.
 */
export interface RopeYarn {
  extFactor: number;
  attnFactor: number;
  /** ggml_rope_yarn_corr_dims: the ramp runs from pair corrLow (all extrapolation) to corrHigh (all interpolation). */
  corrLow: number;
  corrHigh: number;
}

export const ROPE_PLAIN: RopeYarn = { extFactor: 0, attnFactor: 1, corrLow: 0, corrHigh: 0 };

/**
 * The dim where a frequency turns `nRotations` times over `nCtxOrig` positions, and the ramp ends
 * from it (ggml.c ggml_rope_yarn_corr_dim/_dims, float arithmetic): floor for betaFast, ceil for
 * betaSlow, clamped to [0, nDims - 1].
 */
export function ropeYarnCorrDims(nDims: number, nCtxOrig: number, base: number, betaFast: number, betaSlow: number): [number, number] {
  const f = Math.fround;
  const corrDim = (nRotations: number) =>
    f(f(nDims * f(Math.log(f(nCtxOrig / f(f(nRotations * 2) * f(Math.PI)))))) / f(2 * f(Math.log(base))));
  return [Math.max(0, Math.floor(corrDim(betaFast))), Math.min(nDims - 1, Math.ceil(corrDim(betaSlow)))];
}

/**
 * cos/sin of each rotated pair at position `pos`, written from cache[off]: cache[off+2i] = cos θᵢ · m,
 * cache[off+2i+1] = sin θᵢ · m for i < nRot/2. θᵢ = freqScale · pos · base^(-2i/nRot) / ff[i], computed as ggml-cpu ops.cpp
 * ggml_rope_cache_init does (the angle multiplied step by step by powf(base, -2/nRot) in float).
 * With YaRN (y.extFactor ≠ 0) θᵢ mixes the interpolated angle with the unscaled one by a ramp over
 * the pair index, and m = attnFactor · (1 + 0.1·ln(1/freqScale)); otherwise m = attnFactor.
 */
export function ropeCache(cache: Float32Array, pos: number, nRot: number, base: number, freqScale: number, freqFactors: Float32Array | null, y: RopeYarn = ROPE_PLAIN, off = 0): void {
  const f = Math.fround;
  const thetaScale = f(Math.pow(base, f(-2 / nRot)));
  let mscale = y.attnFactor;
  if (y.extFactor !== 0) mscale = f(mscale * f(1 + f(f(0.1) * f(Math.log(f(1 / freqScale))))));
  const span = Math.max(f(0.001), f(y.corrHigh - y.corrLow));
  let theta = f(pos);
  for (let i0 = 0; i0 < nRot; i0 += 2) {
    const ff = freqFactors ? freqFactors[i0 / 2] : 1;
    const extrap = f(theta / ff);
    let t = f(freqScale * extrap);
    if (y.extFactor !== 0) {
      // rope_yarn_ramp: 1 below corrLow, 0 above corrHigh
      const r = f(f(i0 / 2 - y.corrLow) / span);
      const mix = f(f(1 - Math.min(1, Math.max(0, r))) * y.extFactor);
      t = f(f(t * f(1 - mix)) + f(extrap * mix));
    }
    cache[off + i0] = f(Math.cos(t)) * mscale; // cosf(θ)·mscale, rounded to float by the store
    cache[off + i0 + 1] = f(Math.sin(t)) * mscale;
    theta = f(theta * thetaScale);
  }
}

/**
 * Rotate one head of `hd` values at x[off..] in place with a cache from ropeCache. 'norm' rotates
 * neighbouring pairs (x[2i], x[2i+1]) (llama); 'neox' rotates (x[i], x[i + nRot/2]) (qwen, phi,
 * gemma). Values past nRot are left as they are (partial rotary, phi2). ggml-cpu ops.cpp rotate_pairs.
 */
export function rope(x: Float32Array, off: number, cache: Float32Array, nRot: number, mode: RopeMode): void {
  const half = nRot / 2;
  for (let i0 = 0; i0 < nRot; i0 += 2) {
    const c = cache[i0];
    const s = cache[i0 + 1];
    const a = mode === 'norm' ? off + i0 : off + i0 / 2;
    const b = mode === 'norm' ? a + 1 : a + half;
    const x0 = x[a];
    const x1 = x[b];
    x[a] = Math.fround(x0 * c) - Math.fround(x1 * s);
    x[b] = Math.fround(x0 * s) + Math.fround(x1 * c);
  }
}

// ----------------------------------------------------------------------------------------------
// Activations

/** SiLU x·σ(x) (ggml-cpu vec.h ggml_silu_f32). */
export function silu(x: number): number {
  return x / (1 + Math.exp(-x));
}

const GELU_COEF_A = 0.044715; // ggml-cpu vec.h
const SQRT_2_OVER_PI = 0.7978845608028654;

/** GELU, tanh approximation (ggml-cpu vec.h ggml_gelu_f32). */
export function geluTanh(x: number): number {
  return 0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * x * (1 + GELU_COEF_A * x * x)));
}

/**
 * GELU as ggml-cpu computes it for f32 (vec.h GGML_GELU_FP16 is defined): 0 below -10, x above 10,
 * otherwise the tanh approximation looked up at x rounded to f16, and the result rounded to f16.
 */
export function gelu(x: number): number {
  if (x <= -10) return 0;
  if (x >= 10) return x;
  return F16[f32ToF16Bits(geluTanh(F16[f32ToF16Bits(x)]))];
}

/** out[i] = act(gate[i]) · up[i] for i < n (ggml swiglu/geglu with the gate as the first input). */
export function gatedAct(out: Float32Array, gate: Float32Array, up: Float32Array, act: (x: number) => number, n: number, gateOff = 0, upOff = 0, outOff = 0): void {
  for (let i = 0; i < n; i++) out[outOff + i] = Math.fround(act(gate[gateOff + i])) * up[upOff + i];
}

// ----------------------------------------------------------------------------------------------
// Vectors

/** out[i] += v[i] (bias add, residual): in backend/vec.ts, which the backends share. */
export { addInto } from '../backend/vec.js';

/** x[i] *= s. */
export function scaleInto(x: Float32Array, s: number, n: number, off = 0): void {
  for (let i = 0; i < n; i++) x[off + i] *= s;
}
