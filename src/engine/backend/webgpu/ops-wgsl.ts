// WGSL kernels of the whole-token step (model/gpu-step.ts): the forward pass's small ops, each the
// GPU twin of a TypeScript reference (model/ops.ts, kv-cache.ts, attention.ts; tests/webgpu/ops.test.ts
// holds them side by side). The matrix products are kernels.ts's per-format matvec.
//
// Every kernel runs 64 threads per workgroup and reads an 8-word uniform block P (OP_PARAMS_BYTES);
// the kernels that depend on the token read the step block (STEP: the token, its position and the
// cos/sin of RoPE at that position, written by the CPU before each submit). At most 4 storage
// bindings per kernel (WebGPU's compatibility-mode default).

import { ACCESS, type GpuFormat } from './kernels.js';

/** Bytes of each kernel's uniform block P (8 words). */
export const OP_PARAMS_BYTES = 32;

/** Bytes of the step block for nRot rotated dims: 4 words, then cos/sin pairs as vec4s. */
export function stepBytes(nRot: number): number {
  return 16 + 16 * Math.max(1, Math.ceil(nRot / 4));
}

/** The step block: token id, position, then ropeCache's [cos θ₀, sin θ₀, cos θ₁, …] at that position. */
function stepStruct(nRot: number): string {
  return `struct Step { token: u32, pos: u32, pad0: u32, pad1: u32, rope: array<vec4f, ${Math.max(1, Math.ceil(nRot / 4))}> }
fn ropeAt(i: u32) -> f32 { return st.rope[i >> 2u][i & 3u]; }`;
}

const P8 = (fields: string) => {
  const names = fields.split(',').map((f) => f.trim()).filter(Boolean);
  const pads = Array.from({ length: 8 - names.length }, (_, i) => `q${i}: u32`);
  return `struct P { ${[...names, ...pads].join(', ')} }`;
};

// ----------------------------------------------------------------------------------------------
// RMSNorm

/**
 * out[r·n + i] = x[r·n + i] / sqrt(mean_r(x²) + eps) · w[i] for the rows r = workgroup x (ops.ts
 * rmsnorm; the sum of squares here in f32 over 64 partial sums, not in double). `inPlace`: x is
 * also out (q/k norm, one norm per head).
 */
export function rmsnormShader(inPlace: boolean): string {
  const io = inPlace
    ? `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<uniform> p: P;`
    : `@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: P;`;
  return `${P8('n: u32, eps: f32')}
${io}
var<workgroup> part: array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let b = wid.x * p.n;
  var ss = 0.0;
  for (var i = li; i < p.n; i += 64u) { let v = x[b + i]; ss += v * v; }
  part[li] = ss;
  workgroupBarrier();
  for (var k = 32u; k > 0u; k >>= 1u) {
    if (li < k) { part[li] += part[li + k]; }
    workgroupBarrier();
  }
  let scale = 1.0 / sqrt(part[0] / f32(p.n) + p.eps);
  for (var i = li; i < p.n; i += 64u) { ${inPlace ? 'x' : 'out'}[b + i] = (x[b + i] * scale) * w[i]; }
}
`;
}

// ----------------------------------------------------------------------------------------------
// RoPE

/**
 * Rotate nHeads heads of hd values in x in place by the step's cos/sin (ops.ts rope): 'norm' pairs
 * (2i, 2i + 1), 'neox' pairs (i, i + nRot/2); values past nRot stay. One thread per pair.
 */
export function ropeShader(mode: 'norm' | 'neox', nRot: number): string {
  const ab = mode === 'norm' ? 'let a = h * p.hd + 2u * i;\n  let b = a + 1u;' : 'let a = h * p.hd + i;\n  let b = a + p.half;';
  return `${P8('nHeads: u32, hd: u32, half: u32')}
${stepStruct(nRot)}
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> p: P;
@group(0) @binding(2) var<uniform> st: Step;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let h = g.x / p.half;
  let i = g.x % p.half;
  if (h >= p.nHeads) { return; }
  ${ab}
  let c = ropeAt(2u * i);
  let s = ropeAt(2u * i + 1u);
  let x0 = x[a];
  let x1 = x[b];
  x[a] = x0 * c - x1 * s;
  x[b] = x0 * s + x1 * c;
}
`;
}

// ----------------------------------------------------------------------------------------------
// KV cache store

/**
 * Row `pos` of one layer's cache ← this token's k and v (kv-cache.ts kvStore). `packed`: the cache
 * is f16, two halves per u32 word (pack2x16float, core WGSL: no shader-f16 needed), each value
 * rounded to the nearest f16 first (ties to even, as f32ToF16Bits), so the words hold the CPU's
 * f16 bits (an infinity excepted: pack2x16float's result is undefined there); kvDimK and kvDimV
 * even. Else the cache is f32, and with p.round = 1 each value is that same nearest f16.
 */
export function kvStoreShader(nRot: number, packed = false): string {
  const cache = packed ? 'u32' : 'f32';
  const body = packed
    ? `  if (2u * i < p.kvDimK) { kc[st.pos * (p.kvDimK / 2u) + i] = pack2x16float(vec2f(r16(k[2u * i]), r16(k[2u * i + 1u]))); }
  if (2u * i < p.kvDimV) { vc[st.pos * (p.kvDimV / 2u) + i] = pack2x16float(vec2f(r16(v[2u * i]), r16(v[2u * i + 1u]))); }`
    : `  if (i < p.kvDimK) { kc[st.pos * p.kvDimK + i] = keep(k[i]); }
  if (i < p.kvDimV) { vc[st.pos * p.kvDimV + i] = keep(v[i]); }`;
  return `${P8('kvDimK: u32, kvDimV: u32, round: u32')}
${stepStruct(nRot)}
@group(0) @binding(0) var<storage, read> k: array<f32>;
@group(0) @binding(1) var<storage, read> v: array<f32>;
@group(0) @binding(2) var<storage, read_write> kc: array<${cache}>;
@group(0) @binding(3) var<storage, read_write> vc: array<${cache}>;
@group(0) @binding(4) var<uniform> p: P;
@group(0) @binding(5) var<uniform> st: Step;
// nearest f16 value, ties to even: 13 mantissa bits dropped; below 2^-14 a multiple of 2^-24
// (round() is ties-to-even too); from 65520 on, infinity
fn r16(v: f32) -> f32 {
  let a = abs(v);
  let b = bitcast<u32>(v);
  if (a >= 65520.0) { return bitcast<f32>((b & 0x80000000u) | 0x7f800000u); }
  if (a < 6.103515625e-05) { return round(v * 16777216.0) / 16777216.0; }
  return bitcast<f32>((b + 0xfffu + ((b >> 13u) & 1u)) & 0xffffe000u);
}
fn keep(v: f32) -> f32 { if (p.round == 1u) { return r16(v); } return v; }
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x;
${body}
}
`;
}

// ----------------------------------------------------------------------------------------------
// Attention

/**
 * out[h·hdV …] = softmax(q_h · K[from..pos]ᵀ · scale) · V[from..pos] for query head h = workgroup
 * x over KV head h / group (GQA), from = pos − window + 1 (window 0: from 0), causal by the step's
 * position. In f32 throughout: the positions in tiles of 64 (a thread per position for the
 * score), an online softmax across tiles (attention.ts's 'f32' mode sums in one pass instead).
 */
export function attentionShader(hdK: number, hdV: number, nRot: number, packed = false): string {
  const vpt = Math.max(1, Math.ceil(hdV / 64));
  // the cache's element i: an f32, or half i & 1 of word i / 2 (kvStoreShader's packed f16)
  const at = packed
    ? `fn kAt(i: u32) -> f32 { return unpack2x16float(kc[i >> 1u])[i & 1u]; }
fn vAt(i: u32) -> f32 { return unpack2x16float(vc[i >> 1u])[i & 1u]; }`
    : `fn kAt(i: u32) -> f32 { return kc[i]; }
fn vAt(i: u32) -> f32 { return vc[i]; }`;
  return `${P8('group: u32, window: u32, scale: f32, kvDimK: u32, kvDimV: u32')}
${stepStruct(nRot)}
const HDK = ${hdK}u;
const HDV = ${hdV}u;
const VPT = ${vpt}u;
@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> kc: array<${packed ? 'u32' : 'f32'}>;
@group(0) @binding(2) var<storage, read> vc: array<${packed ? 'u32' : 'f32'}>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: P;
@group(0) @binding(5) var<uniform> st: Step;
${at}
var<workgroup> qs: array<f32, HDK>;
var<workgroup> sc: array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let h = wid.x;
  let kb = (h / p.group) * HDK;
  let vb = (h / p.group) * HDV;
  for (var i = li; i < HDK; i += 64u) { qs[i] = q[h * HDK + i]; }
  workgroupBarrier();
  let hi = st.pos;
  var lo = 0u;
  if (p.window > 0u && hi + 1u > p.window) { lo = hi + 1u - p.window; }
  var m = -3.4e38; // the running maximum ("minus infinity" before the first tile)
  var sum = 0.0;
  var acc: array<f32, VPT>;
  for (var t0 = lo; t0 <= hi; t0 += 64u) {
    let n = min(64u, hi + 1u - t0);
    var s = 0.0;
    if (li < n) {
      let kr = (t0 + li) * p.kvDimK + kb;
      var d = 0.0;
      for (var i = 0u; i < HDK; i++) { d += qs[i] * kAt(kr + i); }
      s = d * p.scale;
      sc[li] = s;
    }
    workgroupBarrier();
    var mx = m;
    for (var j = 0u; j < n; j++) { mx = max(mx, sc[j]); }
    workgroupBarrier();
    if (li < n) { sc[li] = exp(s - mx); }
    workgroupBarrier();
    let alpha = exp(m - mx);
    var ts = 0.0;
    for (var j = 0u; j < n; j++) { ts += sc[j]; }
    sum = sum * alpha + ts;
    for (var c = 0u; c < VPT; c++) {
      let i = li + 64u * c;
      if (i < HDV) {
        var a = acc[c] * alpha;
        for (var j = 0u; j < n; j++) { a += sc[j] * vAt((t0 + j) * p.kvDimV + vb + i); }
        acc[c] = a;
      }
    }
    m = mx;
    workgroupBarrier();
  }
  let inv = 1.0 / sum;
  for (var c = 0u; c < VPT; c++) {
    let i = li + 64u * c;
    if (i < HDV) { out[h * HDV + i] = acc[c] * inv; }
  }
}
`;
}

// ----------------------------------------------------------------------------------------------
// Elementwise

/** g[i] = silu(g[i]) · u[i] for i < n, in place on the gate (ops.ts gatedAct with silu). */
export function swigluShader(): string {
  return `${P8('n: u32')}
@group(0) @binding(0) var<storage, read_write> g: array<f32>;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x;
  if (i >= p.n) { return; }
  let x = g[i];
  g[i] = (x / (1.0 + exp(-x))) * u[i];
}
`;
}

/** y[i] += b[i] for i < n (a bias, or the residual; ops.ts addInto). */
export function addShader(): string {
  return `${P8('n: u32')}
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x;
  if (i >= p.n) { return; }
  y[i] = y[i] + b[i];
}
`;
}

// ----------------------------------------------------------------------------------------------
// Embedding

/**
 * y = row `st.token` of the embedding matrix, dequantised as kernels.ts dequantShader does (the
 * same arithmetic as the backend's getRow), when the token is among this buffer's rows
 * [row0, row0 + rows) (a matrix split over several buffers: one dispatch each). One thread per unit.
 */
export function embedShader(f: GpuFormat, nRot: number): string {
  return `${P8('units: u32, rowBytes: u32, row0: u32, rows: u32')}
${stepStruct(nRot)}
@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@group(0) @binding(3) var<uniform> st: Step;
${ACCESS}
const UNIT = ${f.unit}u;
${f.wgsl}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let u = g.x;
  let t = st.token;
  if (u >= p.units || t < p.row0 || t >= p.row0 + p.rows) { return; }
  let bb = (t - p.row0) * p.rowBytes + (u / SUBS) * BB;
  let j = u % SUBS;
  let s = scale(bb, j);
  for (var l = 0u; l < UNIT; l++) { y[u * UNIT + l] = s.x * qv(bb, j, l) + s.y; }
}
`;
}
