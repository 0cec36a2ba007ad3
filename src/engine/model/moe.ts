// Mixture-of-experts FFN, one implementation for every MoE architecture (llama.cpp
// llama-graph.cpp llm_graph_context::build_moe_ffn, in its order of operations):
//
//   logits = router · x (+ router bias)                    ffn_gate_inp [nExpert, nEmbd]
//   probs  = softmax(logits) | sigmoid(logits) | logits    MoeArch.gating
//   ids    = the k largest of probs (of logits: selectLogits, llama4), largest first
//   w      = probs[ids]; softmaxTopK: softmax(w); normW: w / max(Σw, 2^-14); × expert_weights_scale
//   per chosen expert e (slot j):
//     xe   = x, or x · w[j] (weightBeforeFfn, llama4)
//     h    = act(gate_e · xe (+ b), up_e · xe (+ b))        ffn_gate_exps / ffn_up_exps [nFfExp, nEmbd] each
//     o_j  = down_e · h (+ b), × w[j] unless weightBeforeFfn   ffn_down_exps [nEmbd, nFfExp] each
//   out    = o_0 + o_1 + … (in slot order), + shared expert (× sigmoid(shexp gate · x): 'gated')
//   x     += out (the residual)
//
// API, for the forward pass and for other MoE architectures:
//   - ArchSpec.moe (arch.ts MoeArch) says how an architecture routes: the gating function, whether
//     the weights are normalised, the shared expert's kind, weight-before-FFN, interleaved layers,
//     and an optional activation (MoeActivation; SwiGLU when absent, which a backend may fuse
//     through matmulGated).
//   - moeHparams(h, spec, …) reads the {arch}.expert_* keys with llama.cpp's defaults;
//     ModelHparams.moe holds the result (per-layer arrays for expert_used_count and the width).
//   - loadMoeLayer(ctx, l) loads a layer's router, its experts (each expert's slice of a 3-D
//     ffn_*_exps tensor as its own 2-D WeightHandle, so every backend runs them unchanged and only
//     the chosen experts' rows are read per token), optional per-expert biases
//     (ffn_*_exps.bias, [nFfExp or nEmbd, nExpert]) and the shared expert.
//   - moeFfn(m, s, L, n) runs the layer's FFN on s.xb[n, nEmbd] and adds it into s.x. A prompt
//     batch is grouped by expert: each chosen expert runs one matmul over the rows routed to it.

import { ModelError } from '../../shared/errors.js';
import type { MatBackend, WeightHandle } from '../backend/types.js';
import { getNumber, getValue } from '../gguf/keys.js';
import { GgmlType, ggmlTypeInfo, ggmlTypeName, rowBytes } from '../gguf/ggml-types.js';
import { isGgufArray, type GgufHeader, type GgufTensorInfo } from '../gguf/types.js';
import type { ArchSpec, MoeActivation, MoeGating } from './arch.js';
import type { Model, RunState } from './forward.js';
import { bf16ToF32, f32ToBf16, roundF16 } from '../quant/half.js';
import { dequantizeRow } from '../quant/index.js';
import { gatedAct, silu } from './ops.js';
import { tensorFill } from './tensor-reader.js';

// ----------------------------------------------------------------------------------------------
// Structs

/** The mixture-of-experts hyperparameters ({arch}.expert_* keys), with llama.cpp's defaults. */
export interface MoeHparams {
  /** {arch}.expert_count. */
  nExpert: number;
  /** Experts chosen per token, per layer ({arch}.expert_used_count, one value or one per layer); 0 on a dense layer. */
  nUsed: number[];
  /** Experts' FFN width per layer; 0 on a dense layer. */
  nFfExp: number[];
  /** Shared expert's FFN width (0: none). */
  nFfShexp: number;
  /** Which layers have experts (all, or every interleave_moe_layer_step-th). */
  isMoe: boolean[];
  gating: MoeGating;
  normW: boolean;
  /** Multiplies the chosen weights when neither 0 nor 1 (hparams.expert_weights_scale; none of the architectures here reads the key, so 0). */
  wScale: number;
  weightBeforeFfn: boolean;
  /** Choose the top k by the raw logits rather than the gated probabilities (llama4). */
  selectLogits: boolean;
  /** The experts' activation; null: SwiGLU. */
  act: MoeActivation | null;
}

/** A dense SwiGLU FFN beside the experts (ffn_{gate,up,down}_shexp). */
export interface SharedExpert {
  gate: WeightHandle; //            [nFfShexp, nEmbd]
  up: WeightHandle; //              [nFfShexp, nEmbd]
  down: WeightHandle; //            [nEmbd, nFfShexp]
  /** ffn_gate_inp_shexp [1, nEmbd]: the output is scaled by sigmoid(gateInp · x) (qwen2moe); null: added as it is. */
  gateInp: WeightHandle | null;
}

/** One layer's experts. Each expert's matrices are their own handles, sliced from the 3-D tensors. */
export interface MoeLayer {
  nExpert: number;
  nUsed: number;
  nFf: number; //                   expert FFN width
  router: WeightHandle; //          [nExpert, nEmbd] ffn_gate_inp
  routerB: Float32Array | null; //  [nExpert]
  gate: WeightHandle[]; //          (nExpert) × [nFf, nEmbd] ffn_gate_exps
  up: WeightHandle[]; //            (nExpert) × [nFf, nEmbd] ffn_up_exps
  down: WeightHandle[]; //          (nExpert) × [nEmbd, nFf] ffn_down_exps
  gateB: Float32Array | null; //    [nExpert, nFf]
  upB: Float32Array | null; //      [nExpert, nFf]
  downB: Float32Array | null; //    [nExpert, nEmbd]
  shared: SharedExpert | null;
}

// ----------------------------------------------------------------------------------------------
// Hyperparameters

/** A key of one value or one per layer (llama_model_loader::get_key_or_arr), or undefined. */
function keyOrArr(h: GgufHeader, key: string, nLayer: number): number[] | undefined {
  const v = getValue(h, key);
  if (v === undefined) return undefined;
  if (!isGgufArray(v)) {
    const n = getNumber(h, key);
    if (n === undefined) throw new ModelError('BAD_KEY', `metadata key "${key}" is not a number`);
    return new Array<number>(nLayer).fill(n);
  }
  if (v.items.length !== nLayer) throw new ModelError('BAD_KEY', `metadata key "${key}" has ${v.items.length} values, expected one per layer (${nLayer})`);
  return v.items.map((x, i) => {
    const n = typeof x === 'bigint' ? Number(x) : x;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new ModelError('BAD_KEY', `metadata key "${key}"[${i}] is not a count`);
    return n;
  });
}

/**
 * The MoE hyperparameters of a file whose architecture has experts (spec.moe), else null.
 * llama-model.cpp load_hparams reads expert_count and expert_used_count for every architecture
 * (default 0); the width and interleave keys are read by each src/models/<arch>.cpp.
 */
export function moeHparams(h: GgufHeader, spec: ArchSpec, arch: string, nLayer: number, nFfLayer: number[]): MoeHparams | null {
  const a = spec.moe;
  if (!a) return null;
  const k = (key: string) => `${arch}.${key}`;
  const nExpert = getNumber(h, k('expert_count')) ?? 0;
  if (!Number.isInteger(nExpert) || nExpert <= 0 || nExpert > 512) throw new ModelError('BAD_KEY', `${k('expert_count')} = ${nExpert}: a ${arch} model needs experts (llama.cpp allows 1 to 512)`);
  const used = keyOrArr(h, k('expert_used_count'), nLayer) ?? new Array<number>(nLayer).fill(0);
  let isMoe = new Array<boolean>(nLayer).fill(true);
  if (a.interleaved) {
    const step = getNumber(h, k('interleave_moe_layer_step'));
    if (step === undefined) throw new ModelError('MISSING_KEY', `metadata key "${k('interleave_moe_layer_step')}" is missing; a ${arch} model needs it`);
    isMoe = isMoe.map((_, l) => step > 0 && (l + 1) % step === 0);
  }
  const expKey = a.ffExp === 'ff' ? undefined : keyOrArr(h, k('expert_feed_forward_length'), nLayer);
  if (a.ffExp === 'expRequired' && !expKey) throw new ModelError('MISSING_KEY', `metadata key "${k('expert_feed_forward_length')}" is missing; a ${arch} model needs it`);
  const nUsed: number[] = [];
  const nFfExp: number[] = [];
  for (let l = 0; l < nLayer; l++) {
    if (!isMoe[l]) {
      nUsed.push(0);
      nFfExp.push(0);
      continue;
    }
    const u = used[l];
    if (!Number.isInteger(u) || u <= 0 || u > nExpert) throw new ModelError('BAD_KEY', `${k('expert_used_count')} = ${u} at layer ${l}: it must be from 1 to expert_count (${nExpert})`);
    nUsed.push(u);
    // qwen2moe / qwen3moe: n_ff_exp ? n_ff_exp : n_ff / n_expert_used (n_ff of layer 0, integer division)
    const f = a.ffExp === 'ff' ? nFfLayer[l] : expKey?.[l] || Math.floor(nFfLayer[0] / u);
    if (!Number.isInteger(f) || f <= 0) throw new ModelError('MISSING_KEY', `the experts' FFN width of layer ${l} is unknown: set ${k('expert_feed_forward_length')}`);
    nFfExp.push(f);
  }
  let nFfShexp = 0;
  if (a.shared === 'gated') nFfShexp = getNumber(h, k('expert_shared_feed_forward_length')) || nFfLayer[0];
  if (a.shared === 'plain') nFfShexp = nFfExp.find((f) => f > 0) ?? 0;
  return {
    nExpert, nUsed, nFfExp, nFfShexp, isMoe, gating: a.gating, normW: a.normW, wScale: 0,
    weightBeforeFfn: a.weightBeforeFfn, selectLogits: a.selectLogits ?? false, act: a.act ?? null,
  };
}

// ----------------------------------------------------------------------------------------------
// Loading

/** What loadMoeLayer needs of weights.ts's loader (its closures over the tensor table). */
export interface MoeLoadContext {
  nEmbd: number;
  moe: MoeHparams;
  backend: MatBackend;
  find(name: string, required: boolean): GgufTensorInfo | null;
  checkShape(t: GgufTensorInfo, want: number[]): void;
  /** Bytes [fromByte, fromByte + dst.length) of a tensor into dst. */
  read(t: GgufTensorInfo, dst: Uint8Array, fromByte: number): void;
  /** After a tensor: progress and cancellation. */
  done(t: GgufTensorInfo): Promise<void>;
  matrix(name: string, rows: number, cols: number, required?: boolean): Promise<WeightHandle | null>;
  vector(name: string, n: number, required?: boolean): Promise<Float32Array | null>;
}

/**
 * A 3-D expert tensor, GGUF dims [cols, rows, nExpert], as nExpert handles of [rows, cols]: each
 * filled from its own expert's bytes (rows · rowBytes from e · that), so the backend lays them
 * out as any matrix and a token reads only the experts it chose.
 */
async function experts(c: MoeLoadContext, name: string, rows: number, cols: number, nExpert: number): Promise<WeightHandle[]> {
  const t = c.find(name, true)!;
  c.checkShape(t, [cols, rows, nExpert]);
  const info = ggmlTypeInfo(t.type);
  if (t.flatBlocks || !info || cols % info.blockSize !== 0) {
    throw new ModelError('BAD_TENSOR_SHAPE', `tensor "${name}" has rows of ${cols} values, not whole ${ggmlTypeName(t.type)} blocks`);
  }
  const bytes = rowBytes(t.type, cols) * rows;
  const out: WeightHandle[] = [];
  for (let e = 0; e < nExpert; e++) {
    out.push(c.backend.addWeight({ name: `${name}#${e}`, type: t.type, rows, cols }, tensorFill(c.read, t, e * bytes)));
  }
  await c.done(t);
  return out;
}

/** Layer l's experts, by llama.cpp's names (llama-arch.cpp): ffn_gate_inp, ffn_{gate,up,down}_exps, *_shexp. */
export async function loadMoeLayer(c: MoeLoadContext, l: number): Promise<MoeLayer> {
  const p = `blk.${l}.`;
  const { nExpert, nFfExp, nFfShexp } = c.moe;
  const nFf = nFfExp[l];
  const D = c.nEmbd;
  let shared: SharedExpert | null = null;
  if (nFfShexp > 0) {
    let gateInp: WeightHandle | null = null;
    const gi = c.find(`${p}ffn_gate_inp_shexp.weight`, false);
    if (gi) {
      // [nEmbd] in the file: a matrix of one row (llama.cpp multiplies it as one)
      c.checkShape(gi, [D]);
      gateInp = c.backend.addWeight({ name: gi.name, type: gi.type, rows: 1, cols: D }, (dst, from) => c.read(gi, dst, from));
      await c.done(gi);
    }
    shared = {
      gate: (await c.matrix(`${p}ffn_gate_shexp.weight`, nFfShexp, D))!,
      up: (await c.matrix(`${p}ffn_up_shexp.weight`, nFfShexp, D))!,
      down: (await c.matrix(`${p}ffn_down_shexp.weight`, D, nFfShexp))!,
      gateInp,
    };
  }
  return {
    nExpert,
    nUsed: c.moe.nUsed[l],
    nFf,
    router: (await c.matrix(`${p}ffn_gate_inp.weight`, nExpert, D))!,
    routerB: await c.vector(`${p}ffn_gate_inp.bias`, nExpert, false),
    gate: await experts(c, `${p}ffn_gate_exps.weight`, nFf, D, nExpert),
    up: await experts(c, `${p}ffn_up_exps.weight`, nFf, D, nExpert),
    down: await experts(c, `${p}ffn_down_exps.weight`, D, nFf, nExpert),
    gateB: await expertBias(c, `${p}ffn_gate_exps.bias`, nFf, nExpert),
    upB: await expertBias(c, `${p}ffn_up_exps.bias`, nFf, nExpert),
    downB: await expertBias(c, `${p}ffn_down_exps.bias`, D, nExpert),
    shared,
  };
}

/** Per-expert biases [n, nExpert] in the file (ggml_add_id), as [nExpert, n]; null when absent. */
async function expertBias(c: MoeLoadContext, name: string, n: number, nExpert: number): Promise<Float32Array | null> {
  const t = c.find(name, false);
  if (!t) return null;
  c.checkShape(t, [n, nExpert]);
  // read whole (c.vector checks a 1-D shape; the tensor is 2-D)
  const raw = new Uint8Array(t.bytes);
  c.read(t, raw, 0);
  const out = new Float32Array(n * nExpert);
  dequantizeRow(t.type, raw, 0, out, n * nExpert);
  await c.done(t);
  return out;
}

// ----------------------------------------------------------------------------------------------
// Routing

/**
 * ggml_soft_max over x[off..off+n) into out: exp(x − max) in float, summed in double, scaled by
 * the float 1/sum (ggml-cpu ops.cpp ggml_compute_forward_soft_max_f32).
 */
function softmax(out: Float32Array, x: Float32Array, n: number, off: number, outOff: number): void {
  const f = Math.fround;
  let max = -Infinity;
  for (let i = 0; i < n; i++) max = Math.max(max, x[off + i]);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const v = f(Math.exp(f(x[off + i] - max)));
    out[outOff + i] = v;
    sum += v;
  }
  const inv = f(1 / sum);
  for (let i = 0; i < n; i++) out[outOff + i] *= inv;
}

/**
 * Token t's routing: ids[t·k..] = the k chosen experts, largest first (ggml_argsort_top_k;
 * ties to the lower index), wts[t·k..] = their weights, from logits[t·nExpert..].
 */
export function route(mo: MoeHparams, L: MoeLayer, logits: Float32Array, probs: Float32Array, t: number, ids: Int32Array, wts: Float32Array): void {
  const f = Math.fround;
  const E = L.nExpert;
  const k = L.nUsed;
  const off = t * E;
  if (mo.gating === 'softmax') softmax(probs, logits, E, off, off);
  else if (mo.gating === 'sigmoid') for (let i = 0; i < E; i++) probs[off + i] = f(1 / f(1 + f(Math.exp(-logits[off + i]))));
  else probs.set(logits.subarray(off, off + E), off);
  const sel = mo.selectLogits ? logits : probs;
  const o = t * k;
  for (let j = 0; j < k; j++) {
    let best = -1;
    for (let i = 0; i < E; i++) {
      let taken = false;
      for (let q = 0; q < j; q++) if (ids[o + q] === i) taken = true;
      if (!taken && (best < 0 || sel[off + i] > sel[off + best])) best = i;
    }
    ids[o + j] = best;
    wts[o + j] = probs[off + best];
  }
  if (mo.gating === 'softmaxTopK') softmax(wts, wts, k, o, o);
  if (mo.normW) {
    // ggml_sum_rows (in double), clamped to f16's smallest normal, then ggml_div
    let sum = 0;
    for (let j = 0; j < k; j++) sum += wts[o + j];
    const d = Math.max(f(sum), 6.103515625e-5);
    for (let j = 0; j < k; j++) wts[o + j] = f(wts[o + j] / d);
  }
  if (mo.wScale !== 0 && mo.wScale !== 1) for (let j = 0; j < k; j++) wts[o + j] = f(wts[o + j] * mo.wScale);
}

// ----------------------------------------------------------------------------------------------
// Forward

/** Buffers of a RunState's MoE layers, made on first use. */
interface MoeScratch {
  logits: Float32Array; // [maxBatch, nExpert]
  probs: Float32Array; //  [maxBatch, nExpert]
  ids: Int32Array; //      [maxBatch, kMax]
  wts: Float32Array; //    [maxBatch, kMax]
  rows: Int32Array; //     [maxBatch] the slots (t·k + j) routed to the current expert
  xin: Float32Array; //    [maxBatch, nEmbd] their inputs, gathered
  gate: Float32Array; //   [maxBatch, ffMax]
  up: Float32Array; //     [maxBatch, ffMax]
  eo: Float32Array; //     [maxBatch, nEmbd] the expert's outputs
  slots: Float32Array; //  [maxBatch, kMax, nEmbd] every chosen expert's weighted output, by slot
  out: Float32Array; //    [maxBatch, nEmbd] their sum (+ shared expert)
  sh: Float32Array; //     [maxBatch, nEmbd] shared expert's output
  shg: Float32Array; //    [maxBatch] its gate's logit
}

const scratches = new WeakMap<RunState, MoeScratch>();

function scratchFor(m: Model, s: RunState): MoeScratch {
  let S = scratches.get(s);
  if (S) return S;
  const mo = m.hp.moe!;
  const B = s.maxBatch;
  const D = m.hp.nEmbd;
  const E = mo.nExpert;
  const K = Math.max(...mo.nUsed);
  const F = Math.max(...mo.nFfExp, mo.nFfShexp);
  S = {
    logits: new Float32Array(B * E), probs: new Float32Array(B * E), ids: new Int32Array(B * K), wts: new Float32Array(B * K),
    rows: new Int32Array(B), xin: new Float32Array(B * D), gate: new Float32Array(B * F), up: new Float32Array(B * F),
    eo: new Float32Array(B * D), slots: new Float32Array(B * K * D), out: new Float32Array(B * D), sh: new Float32Array(B * D), shg: new Float32Array(B),
  };
  scratches.set(s, S);
  return S;
}

/** out[n, rows] = x[n, cols] · Wᵀ (+ bias[rows] per token): matvec for one row, matmul for more. */
function mm(be: MatBackend, out: Float32Array, w: WeightHandle, x: Float32Array, n: number, bias: Float32Array | null = null): void {
  const { rows, cols } = w.spec;
  if (n === 1) be.matvec(out.subarray(0, rows), w, x.subarray(0, cols));
  else be.matmul(out.subarray(0, n * rows), w, x.subarray(0, n * cols), n);
  if (bias) for (let t = 0; t < n; t++) for (let i = 0; i < rows; i++) out[t * rows + i] += bias[i];
}

/**
 * x[0..n) rounded to the half type of an F16 / BF16 expert weight, as ggml's CPU mul_mat_id does on
 * every CPU (ggml-cpu.c ggml_compute_forward_mul_mat_id converts src1 to the weight's vec_dot_type;
 * unlike mul_mat, no AMX or llamafile path takes f32 there). Dense products keep x in f32
 * (quant/float.ts); for experts this is llama.cpp's arithmetic wherever it runs on a CPU.
 */
function roundForExpert(x: Float32Array, type: number, n: number): void {
  if (type === GgmlType.F16) for (let i = 0; i < n; i++) x[i] = roundF16(x[i]);
  else if (type === GgmlType.BF16) for (let i = 0; i < n; i++) x[i] = bf16ToF32(f32ToBf16(x[i]));
}

/**
 * out[n, nEmbd] = down · act(gate · x, up · x) over x[n, nEmbd], with optional biases: SwiGLU
 * through the backend's fused matmulGated when nothing else is in the way.
 */
function gatedFfn(be: MatBackend, S: MoeScratch, out: Float32Array, gate: WeightHandle, up: WeightHandle, down: WeightHandle, x: Float32Array, n: number, act: MoeActivation | null, gateB: Float32Array | null, upB: Float32Array | null, downB: Float32Array | null, expert: boolean): void {
  const F = up.spec.rows;
  const D = up.spec.cols;
  if (expert) roundForExpert(x, up.spec.type, n * D);
  if (!act && !gateB && !upB) {
    be.matmulGated(S.gate.subarray(0, n * F), gate, up, x.subarray(0, n * D), n);
  } else {
    be.matmulShared([S.gate.subarray(0, n * F), S.up.subarray(0, n * F)], [gate, up], x.subarray(0, n * D), n, [gateB, upB]);
    if (act) act(S.gate, S.gate, S.up, n * F, 0, 0, 0);
    else gatedAct(S.gate, S.gate, S.up, silu, n * F);
  }
  if (expert) roundForExpert(S.gate, down.spec.type, n * F);
  mm(be, out, down, S.gate, n, downB);
}

/**
 * The layer's MoE FFN over s.xb[n, nEmbd] (the FFN-normed input), added into the residual s.x.
 * The rows routed to each expert are gathered and run as one product per expert, then each
 * token's weighted expert outputs are summed in slot order, as llama.cpp adds its views.
 */
export function moeFfn(m: Model, s: RunState, L: MoeLayer, n: number): void {
  const be = m.backend;
  const mo = m.hp.moe!;
  const D = m.hp.nEmbd;
  const S = scratchFor(m, s);
  const P = s.profile;
  const E = L.nExpert;
  const k = L.nUsed;
  const f = Math.fround;

  // router logits, and each token's choice
  mm(be, S.logits, L.router, s.xb, n, L.routerB);
  for (let t = 0; t < n; t++) route(mo, L, S.logits, S.probs, t, S.ids, S.wts);
  if (P) P.mark('moe router');

  // each expert over the rows routed to it
  for (let e = 0; e < E; e++) {
    let cnt = 0;
    for (let slot = 0; slot < n * k; slot++) {
      if (S.ids[slot] !== e) continue;
      const t = (slot / k) | 0;
      S.rows[cnt] = slot;
      const w = S.wts[slot];
      for (let i = 0; i < D; i++) S.xin[cnt * D + i] = mo.weightBeforeFfn ? f(s.xb[t * D + i] * w) : s.xb[t * D + i];
      cnt++;
    }
    if (cnt === 0) continue;
    const fb = L.nFf;
    gatedFfn(be, S, S.eo, L.gate[e], L.up[e], L.down[e], S.xin, cnt, mo.act,
      L.gateB && L.gateB.subarray(e * fb, (e + 1) * fb), L.upB && L.upB.subarray(e * fb, (e + 1) * fb), L.downB && L.downB.subarray(e * D, (e + 1) * D), true);
    for (let c = 0; c < cnt; c++) {
      const slot = S.rows[c];
      const w = mo.weightBeforeFfn ? 1 : S.wts[slot];
      for (let i = 0; i < D; i++) S.slots[slot * D + i] = mo.weightBeforeFfn ? S.eo[c * D + i] : f(S.eo[c * D + i] * w);
    }
  }
  for (let t = 0; t < n; t++) {
    const o = t * D;
    S.out.set(S.slots.subarray(t * k * D, t * k * D + D), o);
    for (let j = 1; j < k; j++) {
      const q = (t * k + j) * D;
      for (let i = 0; i < D; i++) S.out[o + i] += S.slots[q + i];
    }
  }
  if (P) P.mark('moe experts');

  // the shared expert, gated by sigmoid(gateInp · x) = silu(g) / g as qwen2moe.cpp computes it
  const sh = L.shared;
  if (sh) {
    gatedFfn(be, S, S.sh, sh.gate, sh.up, sh.down, s.xb, n, null, null, null, null, false);
    if (sh.gateInp) mm(be, S.shg, sh.gateInp, s.xb, n);
    for (let t = 0; t < n; t++) {
      const g = S.shg[t];
      const gs = sh.gateInp ? f(f(silu(g)) / g) : 1;
      for (let i = 0; i < D; i++) S.out[t * D + i] += sh.gateInp ? f(S.sh[t * D + i] * gs) : S.sh[t * D + i];
    }
    if (P) P.mark('moe shared expert');
  }

  // residual
  for (let i = 0; i < n * D; i++) s.x[i] += S.out[i];
  if (P) P.mark('residual');
}
