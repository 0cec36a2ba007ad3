// WGSL kernels: one family per GGUF block format, reading the weights in their file layout from a
// storage buffer of u32 words (bytes unpacked in the shader; f16 through unpack2x16float, so no
// shader-f16 is needed). Every format is described the same way, in units of 16 weights (one
// element for the float types) that share one scale pair:
//   weight = s.x · qv(l) + s.y, with s = scale(block byte, unit j) and qv the unit's l-th quant,
// so a dot product over a unit is s.x · Σ qv·x + s.y · Σ x. The formulas follow ggml's
// dequantize_row_* (ggml-quants.c), as src/engine/quant does on the CPU.

import { GgmlType } from '../../gguf/ggml-types.js';

export interface GpuFormat {
  type: number;
  /** Weights per unit (16, or 1 for the float types). */
  unit: number;
  /** WGSL: const BB (block bytes), const SUBS (units per block), fn scale, fn qv. */
  wgsl: string;
}

const KV = 'var<private> KV: array<f32, 16> = array<f32, 16>(-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0, 1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);';

// bb: the block's byte offset in the buffer; j: the unit in the block; l: the weight in the unit
const FORMATS: Record<number, Omit<GpuFormat, 'type'>> = {
  [GgmlType.F32]: {
    unit: 1,
    wgsl: `const BB = 4u; const SUBS = 1u;
fn scale(bb: u32, j: u32) -> vec2f { return vec2f(1.0, 0.0); }
fn qv(bb: u32, j: u32, l: u32) -> f32 { return bitcast<f32>(w[bb >> 2u]); }`,
  },
  [GgmlType.F16]: {
    unit: 1,
    wgsl: `const BB = 2u; const SUBS = 1u;
fn scale(bb: u32, j: u32) -> vec2f { return vec2f(1.0, 0.0); }
fn qv(bb: u32, j: u32, l: u32) -> f32 { return f16(bb); }`,
  },
  [GgmlType.BF16]: {
    unit: 1,
    wgsl: `const BB = 2u; const SUBS = 1u;
fn scale(bb: u32, j: u32) -> vec2f { return vec2f(1.0, 0.0); }
fn qv(bb: u32, j: u32, l: u32) -> f32 { return bitcast<f32>(h16(bb) << 16u); }`,
  },
  // block_q8_0: f16 d, i8 qs[32]
  [GgmlType.Q8_0]: {
    unit: 16,
    wgsl: `const BB = 34u; const SUBS = 2u;
fn scale(bb: u32, j: u32) -> vec2f { return vec2f(f16(bb), 0.0); }
fn qv(bb: u32, j: u32, l: u32) -> f32 { return f32(s8(bb + 2u + 16u * j + l)); }`,
  },
  // block_q4_0: f16 d, u8 qs[16]: weight l of the block is the low nibble of qs[l], l + 16 the high one
  [GgmlType.Q4_0]: {
    unit: 16,
    wgsl: `const BB = 18u; const SUBS = 2u;
fn scale(bb: u32, j: u32) -> vec2f { return vec2f(f16(bb), 0.0); }
fn qv(bb: u32, j: u32, l: u32) -> f32 { return f32(i32((b8(bb + 2u + l) >> (4u * j)) & 15u) - 8); }`,
  },
  // block_q4_1: f16 d, f16 m, u8 qs[16]
  [GgmlType.Q4_1]: {
    unit: 16,
    wgsl: `const BB = 20u; const SUBS = 2u;
fn scale(bb: u32, j: u32) -> vec2f { return vec2f(f16(bb), f16(bb + 2u)); }
fn qv(bb: u32, j: u32, l: u32) -> f32 { return f32((b8(bb + 4u + l) >> (4u * j)) & 15u); }`,
  },
  // block_q5_0: f16 d, u32 qh, u8 qs[16]: the fifth bit of weight i is bit i of qh
  [GgmlType.Q5_0]: {
    unit: 16,
    wgsl: `const BB = 22u; const SUBS = 2u;
fn scale(bb: u32, j: u32) -> vec2f { return vec2f(f16(bb), 0.0); }
fn qv(bb: u32, j: u32, l: u32) -> f32 {
  let lo = (b8(bb + 6u + l) >> (4u * j)) & 15u;
  let hi = (u32at(bb + 2u) >> (l + 16u * j)) & 1u;
  return f32(i32(lo | (hi << 4u)) - 16);
}`,
  },
  // block_q5_1: f16 d, f16 m, u32 qh, u8 qs[16]
  [GgmlType.Q5_1]: {
    unit: 16,
    wgsl: `const BB = 24u; const SUBS = 2u;
fn scale(bb: u32, j: u32) -> vec2f { return vec2f(f16(bb), f16(bb + 2u)); }
fn qv(bb: u32, j: u32, l: u32) -> f32 {
  let lo = (b8(bb + 8u + l) >> (4u * j)) & 15u;
  let hi = (u32at(bb + 4u) >> (l + 16u * j)) & 1u;
  return f32(lo | (hi << 4u));
}`,
  },
  // block_iq4_nl: f16 d, u8 qs[16], nibbles index kvalues_iq4nl
  [GgmlType.IQ4_NL]: {
    unit: 16,
    wgsl: `const BB = 18u; const SUBS = 2u;
${KV}
fn scale(bb: u32, j: u32) -> vec2f { return vec2f(f16(bb), 0.0); }
fn qv(bb: u32, j: u32, l: u32) -> f32 { return KV[(b8(bb + 2u + l) >> (4u * j)) & 15u]; }`,
  },
  // block_q2_K: u8 scales[16] (low nibble scale, high nibble min), u8 qs[64], f16 d, f16 dmin.
  // Weight 128h + 32s + l (l < 32) is bits 2s..2s+1 of qs[32h + l]; unit j uses scales[j].
  [GgmlType.Q2_K]: {
    unit: 16,
    wgsl: `const BB = 84u; const SUBS = 16u;
fn scale(bb: u32, j: u32) -> vec2f {
  let sc = b8(bb + j);
  return vec2f(f16(bb + 80u) * f32(sc & 15u), -f16(bb + 82u) * f32(sc >> 4u));
}
fn qv(bb: u32, j: u32, l: u32) -> f32 {
  let l32 = 16u * (j & 1u) + l;
  return f32((b8(bb + 16u + 32u * (j >> 3u) + l32) >> (2u * ((j & 7u) >> 1u))) & 3u);
}`,
  },
  // block_q3_K: u8 hmask[32], u8 qs[64], u8 scales[12] (16 six-bit scales), f16 d.
  // Weight 128h + 32s + l: bits 2s.. of qs[32h + l], minus 4 unless bit 4h + s of hmask[l] is set.
  [GgmlType.Q3_K]: {
    unit: 16,
    wgsl: `const BB = 110u; const SUBS = 16u;
fn scale(bb: u32, j: u32) -> vec2f {
  let g = j >> 2u;
  let b = j & 3u;
  let lo = b8(bb + 96u + b + 4u * (g & 1u));
  let nib = select(lo & 15u, lo >> 4u, g >= 2u);
  let hi = (b8(bb + 104u + b) >> (2u * g)) & 3u;
  return vec2f(f16(bb + 108u) * f32(i32(nib | (hi << 4u)) - 32), 0.0);
}
fn qv(bb: u32, j: u32, l: u32) -> f32 {
  let h = j >> 3u;
  let s = (j & 7u) >> 1u;
  let l32 = 16u * (j & 1u) + l;
  let q = (b8(bb + 32u + 32u * h + l32) >> (2u * s)) & 3u;
  let m = (b8(bb + l32) >> (4u * h + s)) & 1u;
  return f32(i32(q) - select(4, 0, m == 1u));
}`,
  },
  // block_q4_K: f16 d, f16 dmin, u8 scales[12] (8 six-bit scale/min pairs), u8 qs[128].
  // Weights 64p + l (l < 32) are low nibbles of qs[32p + l], 64p + 32 + l the high ones.
  [GgmlType.Q4_K]: {
    unit: 16,
    wgsl: `const BB = 144u; const SUBS = 16u;
fn scale(bb: u32, j: u32) -> vec2f { return kscale(bb, j >> 1u); }
fn qv(bb: u32, j: u32, l: u32) -> f32 {
  let s = j >> 1u;
  return f32((b8(bb + 16u + 32u * (s >> 1u) + 16u * (j & 1u) + l) >> (4u * (s & 1u))) & 15u);
}`,
  },
  // block_q5_K: f16 d, f16 dmin, u8 scales[12], u8 qh[32], u8 qs[128]: the fifth bit of weight
  // 32s + l is bit s of qh[l]
  [GgmlType.Q5_K]: {
    unit: 16,
    wgsl: `const BB = 176u; const SUBS = 16u;
fn scale(bb: u32, j: u32) -> vec2f { return kscale(bb, j >> 1u); }
fn qv(bb: u32, j: u32, l: u32) -> f32 {
  let s = j >> 1u;
  let l32 = 16u * (j & 1u) + l;
  let lo = (b8(bb + 48u + 32u * (s >> 1u) + l32) >> (4u * (s & 1u))) & 15u;
  return f32(lo | (((b8(bb + 16u + l32) >> s) & 1u) << 4u));
}`,
  },
  // block_q6_K: u8 ql[128], u8 qh[64], i8 scales[16], f16 d. Weight 128h + 32k + l (l < 32):
  // nibble k/2 of ql[64h + 32(k&1) + l], high bits 2k.. of qh[32h + l], minus 32; unit j: scales[j]
  [GgmlType.Q6_K]: {
    unit: 16,
    wgsl: `const BB = 210u; const SUBS = 16u;
fn scale(bb: u32, j: u32) -> vec2f { return vec2f(f16(bb + 208u) * f32(s8(bb + 192u + j)), 0.0); }
fn qv(bb: u32, j: u32, l: u32) -> f32 {
  let h = j >> 3u;
  let k = (j & 7u) >> 1u;
  let l32 = 16u * (j & 1u) + l;
  let lo = (b8(bb + 64u * h + 32u * (k & 1u) + l32) >> (4u * (k >> 1u))) & 15u;
  let hi = (b8(bb + 128u + 32u * h + l32) >> (2u * k)) & 3u;
  return f32(i32(lo | (hi << 4u)) - 32);
}`,
  },
  // block_iq4_xs: f16 d, u16 scales_h, u8 scales_l[4], u8 qs[128]; 8 groups of 32 with six-bit scales
  [GgmlType.IQ4_XS]: {
    unit: 16,
    wgsl: `const BB = 136u; const SUBS = 16u;
${KV}
fn scale(bb: u32, j: u32) -> vec2f {
  let ib = j >> 1u;
  let ls = ((b8(bb + 4u + (ib >> 1u)) >> (4u * (ib & 1u))) & 15u) | (((h16(bb + 2u) >> (2u * ib)) & 3u) << 4u);
  return vec2f(f16(bb) * f32(i32(ls) - 32), 0.0);
}
fn qv(bb: u32, j: u32, l: u32) -> f32 { return KV[(b8(bb + 8u + 16u * (j >> 1u) + l) >> (4u * (j & 1u))) & 15u]; }`,
  },
};

/** The WGSL format for a ggml type, or undefined (that tensor stays on the CPU). */
export function gpuFormat(type: number): GpuFormat | undefined {
  const f = FORMATS[type];
  return f ? { type, ...f } : undefined;
}

export function gpuTypes(): number[] {
  return Object.keys(FORMATS).map(Number);
}

// Byte access on the weights' u32 words (little-endian, as the file), and Q4_K/Q5_K's six-bit
// scale/min pairs (ggml get_scale_min_k4).
export const ACCESS = `
fn b8(o: u32) -> u32 { return (w[o >> 2u] >> ((o & 3u) * 8u)) & 0xffu; }
fn h16(o: u32) -> u32 { return (w[o >> 2u] >> ((o & 2u) * 8u)) & 0xffffu; }
fn f16(o: u32) -> f32 { return unpack2x16float(h16(o)).x; }
fn s8(o: u32) -> i32 { return bitcast<i32>(b8(o) << 24u) >> 24u; }
fn u32at(o: u32) -> u32 { return b8(o) | (b8(o + 1u) << 8u) | (b8(o + 2u) << 16u) | (b8(o + 3u) << 24u); }
fn kscale(bb: u32, s: u32) -> vec2f {
  let q = bb + 4u;
  var sc: u32;
  var m: u32;
  if (s < 4u) {
    sc = b8(q + s) & 63u;
    m = b8(q + s + 4u) & 63u;
  } else {
    sc = (b8(q + s + 4u) & 15u) | ((b8(q + s - 4u) >> 6u) << 4u);
    m = (b8(q + s + 4u) >> 4u) | ((b8(q + s) >> 6u) << 4u);
  }
  return vec2f(f16(bb) * f32(sc), -f16(bb + 2u) * f32(m));
}
`;

/** Uniform block of both kernels (8 u32, PARAMS_BYTES). */
const PARAMS = `struct P {
  rows: u32,     // rows in this weight buffer (dequant: the row to read)
  units: u32,    // units per row
  rowBytes: u32,
  xStride: u32,  // floats between tokens in x
  yStride: u32,  // floats between tokens in y
  yOff: u32,     // where this buffer's row 0 goes in y
  nwx: u32,      // workgroups along x (rows = x + y · nwx)
  pad: u32,
}`;
export const PARAMS_BYTES = 32;
export const WG = 64;

/**
 * y[t · yStride + yOff + r] = Σ_c W[r, c] · x[t · xStride + c] for the rows r of one weight buffer
 * and the tokens t = workgroup z: one workgroup of 64 threads per row, each taking every 64th unit.
 * `add`: y += the product instead (the residual stream, model/gpu-step.ts).
 */
export function matvecShader(f: GpuFormat, add = false): string {
  return `${PARAMS}
@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> p: P;
var<workgroup> part: array<f32, ${WG}>;
${ACCESS}
const UNIT = ${f.unit}u;
${f.wgsl}
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let r = wid.x + wid.y * p.nwx;
  if (r >= p.rows) { return; }
  let rb = r * p.rowBytes;
  let xt = wid.z * p.xStride;
  var acc = 0.0;
  for (var u = li; u < p.units; u += ${WG}u) {
    let bb = rb + (u / SUBS) * BB;
    let j = u % SUBS;
    let s = scale(bb, j);
    let x0 = xt + u * UNIT;
    var dq = 0.0;
    var sx = 0.0;
    for (var l = 0u; l < UNIT; l++) {
      let xv = x[x0 + l];
      dq += qv(bb, j, l) * xv;
      sx += xv;
    }
    acc += s.x * dq + s.y * sx;
  }
  part[li] = acc;
  workgroupBarrier();
  for (var k = ${WG / 2}u; k > 0u; k >>= 1u) {
    if (li < k) { part[li] += part[li + k]; }
    workgroupBarrier();
  }
  if (li == 0u) {
    let o = wid.z * p.yStride + p.yOff + r;
    y[o] = ${add ? 'y[o] + ' : ''}part[0];
  }
}
`;
}

/** y[c] = W[p.rows, c]: one row dequantised (embedding lookup), one thread per unit. */
export function dequantShader(f: GpuFormat): string {
  return `${PARAMS}
@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
${ACCESS}
const UNIT = ${f.unit}u;
${f.wgsl}
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) g: vec3u) {
  let u = g.x;
  if (u >= p.units) { return; }
  let bb = p.rows * p.rowBytes + (u / SUBS) * BB;
  let j = u % SUBS;
  let s = scale(bb, j);
  for (var l = 0u; l < UNIT; l++) { y[u * UNIT + l] = s.x * qv(bb, j, l) + s.y; }
}
`;
}
