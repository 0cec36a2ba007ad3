// Gated DeltaNet: the linear-attention layers of Qwen3.5 / 3.6 (llama.cpp src/models/qwen35.cpp
// build_layer_attn_linear, delta-net-base.cpp; ggml-cpu ops.cpp ssm_conv, l2_norm, gated_delta_net).
// Per token: x·W_qkv goes through a short causal convolution over the last dConv inputs of each
// channel and SiLU, and splits into q, k (nKHead heads) and v (nVHead heads) of dState values; q and
// k are L2-normalised. Each value head h (reading key head h mod nKHead) keeps a state S [dK, dV]:
//   S ← S·exp(g),  S ← S + k·(β·(v − Sᵀk))ᵀ,  o = Sᵀq / √dV
// with β = σ(x·W_β) and g = softplus(x·W_α + dt)·a (a = −exp(A_log), as the file stores it). Then
// o ← RMSNorm(o)·w_norm·SiLU(x·W_z) per head, and ssm_out (the layer's wo) projects it back.
// The convolution's last inputs and S are the layer's recurrent state: it cannot be truncated like
// a KV cache, so the session keeps snapshots of it (session.ts).

import { ModelError } from '../../shared/errors.js';
import type { MatBackend, WeightHandle } from '../backend/types.js';
import { getNumber } from '../gguf/keys.js';
import type { GgufHeader } from '../gguf/types.js';
import type { KernelInstance } from '../wasm/instance.js';
import type { ModelHparams } from './hparams.js';
import { rmsnorm, ropeCache, type RopeYarn } from './ops.js';

// ----------------------------------------------------------------------------------------------
// Structs

/** The {arch}.ssm.* keys and the layer pattern (llama_model_qwen35::load_arch_hparams). */
export interface DeltaNetHparams {
  /** ssm.conv_kernel: inputs the convolution sees per channel. */
  dConv: number;
  /** ssm.state_size: values per key head and per value head (llama.cpp asserts they are equal). */
  dState: number;
  /** ssm.group_count: key heads. */
  nKHead: number;
  /** ssm.time_step_rank: value heads (a multiple of nKHead). */
  nVHead: number;
  /** [nLayer] true for a linear-attention layer (attention.recurrent_layers, else every layer but each full_attention_interval-th). */
  recurrent: boolean[];
  /** M-RoPE sections (rope.dimension_sections), or null; see imropeTextPairs. */
  ropeSections: number[] | null;
}

/** One linear-attention layer's weights. Shapes [rows, cols]; keyDim = nKHead·dState, valueDim = nVHead·dState, convDim = 2·keyDim + valueDim. */
export interface DeltaNetWeights {
  wqkv: WeightHandle; //    [convDim, nEmbd] attn_qkv: q, k, v before the convolution
  wz: WeightHandle; //      [valueDim, nEmbd] attn_gate: the output gate z
  wBeta: WeightHandle; //   [nVHead, nEmbd] ssm_beta
  wAlpha: WeightHandle; //  [nVHead, nEmbd] ssm_alpha
  conv: Float32Array; //    [convDim, dConv] ssm_conv1d, oldest input first
  dt: Float32Array; //      [nVHead] ssm_dt.bias
  a: Float32Array; //       [nVHead] ssm_a (−exp(A_log))
  norm: Float32Array; //    [dState] ssm_norm
}

/** A copy of every linear-attention layer's state at a position (the state before token `pos`). */
export interface RecurrentSnapshot {
  pos: number;
  conv: (Float32Array | null)[]; // as RecurrentState.conv
  ssm: (Float32Array | null)[]; //  as RecurrentState.ssm
}

/** The recurrent state of the linear-attention layers and their scratch for a batch of up to maxBatch tokens. */
export interface RecurrentState {
  /** Tokens taken in (the next forward must start here, or at 0, which clears the state). */
  pos: number;
  /** (nLayer) [convDim, dConv − 1] each channel's last inputs, oldest first; null for attention layers. */
  conv: (Float32Array | null)[];
  /** (nLayer) [nVHead, dV, dK]: ssm[l][(h·dV + j)·dK + i] = S_h[i][j] (ggml's transposed layout); null for attention layers. */
  ssm: (Float32Array | null)[];
  /** Record the state before the token at this position into `snapshot` as a batch passes it; −1 for none. */
  snapshotAt: number;
  snapshot: RecurrentSnapshot | null;
  qkv: Float32Array; //     [maxBatch, convDim] projections, then their convolution (in place)
  z: Float32Array; //       [maxBatch, valueDim]
  beta: Float32Array; //    [maxBatch, nVHead]
  alpha: Float32Array; //   [maxBatch, nVHead]
  out: Float32Array; //     [maxBatch, valueDim] gated, normed output (ssm_out's input)
  window: Float32Array; //  [dConv] one channel's inputs under the kernel
  /** Gated attention (qwen35's full-attention layers): [maxBatch, 2·qDim] the q projection, [q; gate] per head. */
  qGate: Float32Array;
  gate: Float32Array; //    [maxBatch, qDim]
  /** Pairs of the rotated dims that M-RoPE turns by position 0 for text (imropeTextPairs), with cos/sin at 0. */
  ropeZero: { pairs: number[]; cos: number; sin: number } | null;
  /** Set when ssm, qkv and out live in these kernels' memory: the delta rule runs there (assembly/deltanet.ts). */
  kernels: KernelInstance | null;
}

// ----------------------------------------------------------------------------------------------
// Hyperparameters and weights

function ssmKey(h: GgufHeader, key: string): number {
  const v = getNumber(h, key);
  if (v === undefined || !Number.isInteger(v) || v <= 0 || v > 1 << 20) throw new ModelError('MISSING_KEY', `metadata key "${key}" is missing or not a usable size; a gated linear-attention model needs it`);
  return v;
}

/** The linear-attention hyperparameters of a qwen35-family file (keys {arch}.ssm.*, defaults as llama.cpp). */
export function deltaNetHparams(h: GgufHeader, arch: string, nLayer: number): DeltaNetHparams {
  const k = (key: string) => `${arch}.${key}`;
  const dConv = ssmKey(h, k('ssm.conv_kernel'));
  const dState = ssmKey(h, k('ssm.state_size'));
  const nKHead = ssmKey(h, k('ssm.group_count'));
  const nVHead = ssmKey(h, k('ssm.time_step_rank'));
  const dInner = ssmKey(h, k('ssm.inner_size'));
  // head_v_dim is d_inner / n_v_heads in the graph and d_state in the tensor shapes; ggml's op needs S_k = S_v
  if (dInner !== nVHead * dState) throw new ModelError('BAD_KEY', `${k('ssm.inner_size')} = ${dInner} is not ${k('ssm.time_step_rank')} × ${k('ssm.state_size')} (${nVHead} × ${dState})`);
  if (nVHead % nKHead !== 0) throw new ModelError('BAD_KEY', `${nVHead} value heads (${k('ssm.time_step_rank')}) cannot share ${nKHead} key heads (${k('ssm.group_count')})`);
  if (dConv < 2) throw new ModelError('BAD_KEY', `${k('ssm.conv_kernel')} = ${dConv}: the convolution needs at least 2 taps`);
  // the multi-token-prediction blocks after the trunk (nextn_predict_layers) are not run
  const nRun = nLayer - mtpLayers(h, arch, nLayer);
  const marked = recurrentLayers(h, k('attention.recurrent_layers'), nLayer);
  let recurrent: boolean[];
  if (marked) {
    recurrent = marked;
  } else {
    const interval = getNumber(h, k('full_attention_interval')) ?? 4;
    if (!Number.isInteger(interval) || interval <= 0) throw new ModelError('BAD_KEY', `${k('full_attention_interval')} = ${interval} is not a layer count`);
    recurrent = Array.from({ length: nLayer }, (_, i) => i < nRun && (i + 1) % interval !== 0);
  }
  const sections = perLayerSections(h, k('rope.dimension_sections'));
  return { dConv, dState, nKHead, nVHead, recurrent, ropeSections: sections };
}

/**
 * {arch}.nextn_predict_layers: the multi-token-prediction blocks at the end of block_count (Qwen3.5
 * converters write one). llama.cpp's main pass runs only the n_layer() = block_count − these
 * layers (llama_hparams::n_layer); Pantheon runs the same and leaves the MTP blocks unread.
 */
export function mtpLayers(h: GgufHeader, arch: string, nLayer: number): number {
  const key = `${arch}.nextn_predict_layers`;
  const n = getNumber(h, key) ?? 0;
  if (!Number.isInteger(n) || n < 0 || n >= nLayer) throw new ModelError('BAD_KEY', `metadata key "${key}" = ${n} leaves no layer of ${nLayer} to run`);
  return n;
}

/** attention.recurrent_layers: one bool (or number) per layer, or null when absent. */
function recurrentLayers(h: GgufHeader, key: string, nLayer: number): boolean[] | null {
  const v = h.metadata.get(key)?.value;
  if (v === undefined) return null;
  const items = typeof v === 'object' && v !== null && 'items' in v ? (v.items as unknown[]) : new Array<unknown>(nLayer).fill(v);
  if (items.length !== nLayer) throw new ModelError('BAD_KEY', `metadata key "${key}" has ${items.length} values, expected one per layer (${nLayer})`);
  return items.map((x, i) => {
    if (typeof x === 'boolean') return x;
    if (typeof x === 'number' || typeof x === 'bigint') return Number(x) !== 0;
    throw new ModelError('BAD_KEY', `metadata key "${key}"[${i}] is not a bool`);
  });
}

/** rope.dimension_sections: up to 4 numbers (llama.cpp get_key_or_arr with 4, padded with 0), or null. */
function perLayerSections(h: GgufHeader, key: string): number[] | null {
  const v = h.metadata.get(key)?.value;
  if (v === undefined) return null;
  const items = typeof v === 'object' && v !== null && 'items' in v ? (v.items as unknown[]) : [v];
  if (items.length > 4) throw new ModelError('BAD_KEY', `metadata key "${key}" has ${items.length} values, at most 4`);
  const out = [0, 0, 0, 0];
  items.forEach((x, i) => {
    const n = typeof x === 'bigint' ? Number(x) : x;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new ModelError('BAD_KEY', `metadata key "${key}"[${i}] is not a section size`);
    out[i] = n;
  });
  return out;
}

/**
 * The rotated pairs that ggml's interleaved M-RoPE (ggml_mrope_cache_init, is_imrope) turns by the
 * fourth position component, which llama.cpp sets to 0 for text tokens (llm_graph_input_pos); the
 * other three equal the token's position, so every other pair turns as plain NEOX RoPE does.
 */
export function imropeTextPairs(sections: number[] | null, nRot: number): number[] {
  if (!sections) return [];
  const [s0, s1, s2] = sections;
  const sectDims = sections[0] + sections[1] + sections[2] + sections[3];
  if (sectDims === 0) return [];
  const out: number[] = [];
  for (let i = 0; i < nRot / 2; i++) {
    const sector = i % sectDims;
    const thw = (sector % 3 === 1 && sector < 3 * s1) || (sector % 3 === 2 && sector < 3 * s2) || (sector % 3 === 0 && sector < 3 * s0);
    if (!thw) out.push(i);
  }
  return out;
}

/** How weights.ts loads a matrix into the backend and a small tensor (of the given GGUF dims) as float32. */
export interface TensorLoaders {
  matrix(name: string, rows: number, cols: number): Promise<WeightHandle>;
  vector(name: string, dims: number[]): Promise<Float32Array>;
}

/** Layer `l`'s linear-attention tensors (llama-arch.cpp names: attn_qkv, attn_gate, ssm_*). */
export async function loadDeltaNet(l: number, dn: DeltaNetHparams, nEmbd: number, ld: TensorLoaders): Promise<DeltaNetWeights> {
  const p = `blk.${l}.`;
  const { dConv, dState, nKHead, nVHead } = dn;
  const keyDim = nKHead * dState;
  const valueDim = nVHead * dState;
  const convDim = 2 * keyDim + valueDim;
  return {
    wqkv: await ld.matrix(`${p}attn_qkv.weight`, convDim, nEmbd),
    wz: await ld.matrix(`${p}attn_gate.weight`, valueDim, nEmbd),
    wBeta: await ld.matrix(`${p}ssm_beta.weight`, nVHead, nEmbd),
    wAlpha: await ld.matrix(`${p}ssm_alpha.weight`, nVHead, nEmbd),
    conv: await ld.vector(`${p}ssm_conv1d.weight`, [dConv, convDim]),
    dt: await ld.vector(`${p}ssm_dt.bias`, [nVHead]),
    a: await ld.vector(`${p}ssm_a`, [nVHead]),
    norm: await ld.vector(`${p}ssm_norm.weight`, [dState]),
  };
}

// ----------------------------------------------------------------------------------------------
// State

/** Bytes of the recurrent state of all linear-attention layers (f32, as llama.cpp's recurrent memory). */
export function recurrentStateBytes(dn: DeltaNetHparams): number {
  const convDim = (2 * dn.nKHead + dn.nVHead) * dn.dState;
  const perLayer = convDim * (dn.dConv - 1) + dn.nVHead * dn.dState * dn.dState;
  return dn.recurrent.filter(Boolean).length * perLayer * 4;
}

/**
 * A cleared state and scratch for batches of up to maxBatch tokens (and the gated attention layers'
 * q and gate); `f32` allocates the arrays the kernels read (forward.ts: views on kernel memory).
 */
export function createRecurrentState(hp: ModelHparams, maxBatch: number, yarn: RopeYarn, f32: (n: number) => Float32Array = (n) => new Float32Array(n)): RecurrentState {
  const dn = hp.deltaNet!;
  const { dConv, dState, nKHead, nVHead } = dn;
  const { nRot } = hp;
  const qDim = hp.nHead * hp.headDimK;
  const ropeAt0 = new Float32Array(nRot);
  ropeCache(ropeAt0, 0, nRot, hp.rope.freqBase, hp.rope.freqScale, null, yarn);
  const valueDim = nVHead * dState;
  const convDim = 2 * nKHead * dState + valueDim;
  const pairs = imropeTextPairs(dn.ropeSections, nRot);
  return {
    pos: 0,
    conv: dn.recurrent.map((r) => (r ? new Float32Array(convDim * (dConv - 1)) : null)),
    ssm: dn.recurrent.map((r) => (r ? f32(nVHead * dState * dState) : null)),
    snapshotAt: -1,
    snapshot: null,
    qkv: f32(maxBatch * convDim),
    z: new Float32Array(maxBatch * valueDim),
    beta: new Float32Array(maxBatch * nVHead),
    alpha: new Float32Array(maxBatch * nVHead),
    out: f32(maxBatch * valueDim),
    window: new Float32Array(dConv),
    qGate: new Float32Array(maxBatch * 2 * qDim),
    gate: new Float32Array(maxBatch * qDim),
    ropeZero: pairs.length ? { pairs, cos: ropeAt0[0], sin: ropeAt0[1] } : null,
    kernels: null,
  };
}

/**
 * A batch of n tokens at positions pos… is about to run: the state must be where the last batch
 * left it (or pos 0, which clears it). The state cannot go back; the session restores a snapshot.
 */
export function recurrentBegin(r: RecurrentState, pos: number, n: number): void {
  if (pos === 0) {
    for (const c of r.conv) c?.fill(0);
    for (const s of r.ssm) s?.fill(0);
  } else if (pos !== r.pos) {
    throw new RangeError(`the recurrent state holds ${r.pos} positions; a batch at position ${pos} cannot run without restoring a snapshot`);
  }
  r.pos = pos + n;
  if (r.snapshotAt >= pos && r.snapshotAt < pos + n) {
    r.snapshot = { pos: r.snapshotAt, conv: r.conv.map((c) => (c ? new Float32Array(c.length) : null)), ssm: r.ssm.map((s) => (s ? new Float32Array(s.length) : null)) };
  }
}

/** Put the state back to a snapshot (the next batch then starts at snap.pos). */
export function recurrentRestore(r: RecurrentState, snap: RecurrentSnapshot): void {
  snap.conv.forEach((c, l) => c && r.conv[l]!.set(c));
  snap.ssm.forEach((s, l) => s && r.ssm[l]!.set(s));
  r.pos = snap.pos;
}

/** cos/sin of the pairs M-RoPE turns by position 0 (imropeTextPairs), over a batch's rope cache [n, nRot]. */
export function imropeText(r: RecurrentState, rope: Float32Array, n: number, nRot: number): void {
  const z = r.ropeZero;
  if (!z) return;
  for (let t = 0; t < n; t++) {
    for (const i of z.pairs) {
      rope[t * nRot + 2 * i] = z.cos;
      rope[t * nRot + 2 * i + 1] = z.sin;
    }
  }
}

// ----------------------------------------------------------------------------------------------
// Gated attention (the full-attention layers): q and its gate come interleaved per head

/** s.q[n, qDim] = the q halves of r.qGate[n, 2·qDim] ([q_h; gate_h] per head h), r.gate the gate halves. */
export function splitQGate(r: RecurrentState, q: Float32Array, n: number, nHead: number, hd: number): void {
  for (let t = 0; t < n; t++) {
    for (let h = 0; h < nHead; h++) {
      const src = (t * nHead + h) * 2 * hd;
      const dst = (t * nHead + h) * hd;
      q.set(r.qGate.subarray(src, src + hd), dst);
      r.gate.set(r.qGate.subarray(src + hd, src + 2 * hd), dst);
    }
  }
}

/** att[i] *= σ(gate[i]) for i < n·qDim (ggml_sigmoid, ggml_mul). */
export function applyQGate(r: RecurrentState, att: Float32Array, count: number): void {
  const f = Math.fround;
  for (let i = 0; i < count; i++) att[i] = f(att[i] * f(1 / f(1 + f(Math.exp(-r.gate[i])))));
}

// ----------------------------------------------------------------------------------------------
// The layer

/**
 * The delta rule on one value head, in two passes over its state m [S, S] at mOff (row j = S_h[:, j]):
 * per row, decay and the dot with k, then the update and the dot with q (each element's operations
 * as ggml's four loops over the whole state). k, q, v: offsets of the head's vectors in x; writes
 * out[o + j] = (S_hᵀ q)[j] · scale. Each dot is summed in double (exact products) in four lanes
 * (i mod 4), (l0 + l1) + (l2 + l3), then rounded: the arithmetic of the wasm kernel
 * (assembly/deltanet.ts delta_rule_head), within an ulp of ggml's f32 sums.
 */
export function deltaRuleHead(m: Float32Array, mOff: number, x: Float32Array, k: number, q: number, v: number, out: Float32Array, o: number, S: number, decay: number, beta: number, scale: number): void {
  const f = Math.fround;
  for (let j = 0, row = mOff; j < S; j++, row += S) {
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    let i = 0;
    for (; i + 4 <= S; i += 4) {
      const e0 = (m[row + i] = f(m[row + i] * decay)), e1 = (m[row + i + 1] = f(m[row + i + 1] * decay));
      const e2 = (m[row + i + 2] = f(m[row + i + 2] * decay)), e3 = (m[row + i + 3] = f(m[row + i + 3] * decay));
      a0 += e0 * x[k + i];
      a1 += e1 * x[k + i + 1];
      a2 += e2 * x[k + i + 2];
      a3 += e3 * x[k + i + 3];
    }
    for (; i < S; i++) {
      const e = (m[row + i] = f(m[row + i] * decay));
      const p = e * x[k + i];
      if ((i & 3) === 0) a0 += p;
      else if ((i & 3) === 1) a1 += p;
      else if ((i & 3) === 2) a2 += p;
      else a3 += p;
    }
    const d = f(f(x[v + j] - f((a0 + a1) + (a2 + a3))) * beta);
    a0 = a1 = a2 = a3 = 0;
    for (i = 0; i + 4 <= S; i += 4) {
      const e0 = (m[row + i] = f(m[row + i] + f(x[k + i] * d))), e1 = (m[row + i + 1] = f(m[row + i + 1] + f(x[k + i + 1] * d)));
      const e2 = (m[row + i + 2] = f(m[row + i + 2] + f(x[k + i + 2] * d))), e3 = (m[row + i + 3] = f(m[row + i + 3] + f(x[k + i + 3] * d)));
      a0 += e0 * x[q + i];
      a1 += e1 * x[q + i + 1];
      a2 += e2 * x[q + i + 2];
      a3 += e3 * x[q + i + 3];
    }
    for (; i < S; i++) {
      const e = (m[row + i] = f(m[row + i] + f(x[k + i] * d)));
      const p = e * x[q + i];
      if ((i & 3) === 0) a0 += p;
      else if ((i & 3) === 1) a1 += p;
      else if ((i & 3) === 2) a2 += p;
      else a3 += p;
    }
    out[o + j] = f(f((a0 + a1) + (a2 + a3)) * scale);
  }
}

/**
 * Linear attention of layer l for the n tokens whose normed inputs are xb[n, nEmbd], after the
 * tokens before them (r's state): writes r.out[n, valueDim] (ssm_out's input) and advances the state.
 */
export function deltaNet(be: MatBackend, r: RecurrentState, dn: DeltaNetHparams, W: DeltaNetWeights, l: number, xb: Float32Array, n: number, pos: number, eps: number): void {
  const f = Math.fround;
  const { dConv, dState: S, nKHead, nVHead } = dn;
  const keyDim = nKHead * S;
  const valueDim = nVHead * S;
  const convDim = 2 * keyDim + valueDim;
  const K1 = dConv - 1;
  const conv = r.conv[l]!;
  const ssm = r.ssm[l]!;

  // projections (one call each for the batch)
  be.matmulShared([r.qkv, r.z, r.beta, r.alpha], [W.wqkv, W.wz, W.wBeta, W.wAlpha], xb, n);

  const scale = f(1 / f(Math.sqrt(S)));
  const win = r.window;
  const { qkv, out } = r;
  const K = S % 4 === 0 ? r.kernels : null; // the kernel takes heads in steps of four
  const snap = r.snapshot && r.snapshot.pos >= pos && r.snapshot.pos < pos + n ? r.snapshot : null;
  for (let t = 0; t < n; t++) {
    if (snap && snap.pos === pos + t) {
      snap.conv[l]!.set(conv);
      snap.ssm[l]!.set(ssm);
    }
    const x = t * convDim;
    // short causal convolution (ggml_ssm_conv: f32 sum over the window, oldest first), then SiLU;
    // the channel's window slides by one input
    for (let c = 0; c < convDim; c++) {
      const st = c * K1;
      for (let i = 0; i < K1; i++) win[i] = conv[st + i];
      win[K1] = r.qkv[x + c];
      let sum = 0;
      for (let i = 0; i < dConv; i++) sum = f(sum + f(win[i] * W.conv[c * dConv + i]));
      for (let i = 0; i < K1; i++) conv[st + i] = win[i + 1];
      r.qkv[x + c] = f(sum / f(1 + f(Math.exp(-sum))));
    }
    // L2 norm of each q and k head (ggml_l2_norm: squares summed in double, 1/max(√sum, eps) in float)
    for (let h = 0; h < 2 * nKHead; h++) {
      const o = x + h * S;
      let ss = 0;
      for (let i = 0; i < S; i++) ss += f(r.qkv[o + i] * r.qkv[o + i]);
      const inv = f(1 / Math.max(f(Math.sqrt(f(ss))), f(eps)));
      for (let i = 0; i < S; i++) r.qkv[o + i] = f(r.qkv[o + i] * inv);
    }
    // the gated delta rule per value head (ggml-cpu gated_delta_net, K = 1)
    for (let h = 0; h < nVHead; h++) {
      const hk = h % nKHead; // Qwen3.5 pairs value head h with key head h mod nKHead
      const q = x + hk * S;
      const k = x + keyDim + hk * S;
      const v = x + 2 * keyDim + h * S;
      const beta = f(1 / f(1 + f(Math.exp(-r.beta[t * nVHead + h]))));
      const a = f(r.alpha[t * nVHead + h] + W.dt[h]);
      const softplus = a > 20 ? a : f(Math.log(f(1 + f(Math.exp(a)))));
      const decay = f(Math.exp(f(softplus * W.a[h])));
      const o = t * valueDim + h * S;
      if (K) K.deltaRuleHead(ssm.byteOffset + h * S * S * 4, qkv.byteOffset + k * 4, qkv.byteOffset + q * 4, qkv.byteOffset + v * 4, out.byteOffset + o * 4, S, decay, beta, scale);
      else deltaRuleHead(ssm, h * S * S, qkv, k, q, v, out, o, S, decay, beta, scale);
      // RMSNorm of the head with ssm_norm, times SiLU(z)
      rmsnorm(r.out, r.out, W.norm, eps, S, o, o);
      for (let j = 0; j < S; j++) {
        const zj = r.z[t * valueDim + h * S + j];
        r.out[o + j] = f(r.out[o + j] * f(zj / f(1 + f(Math.exp(-zj)))));
      }
    }
  }
}
