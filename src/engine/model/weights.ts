// Finding the weights: one walk over the tensor table by llama.cpp's names (llama-arch.cpp
// LLM_TENSOR_NAMES: token_embd, blk.N.attn_q, …), checking each shape, loading matrices into the
// compute backend and small vectors (norms, biases) into Float32Arrays.

import { ModelError } from '../../shared/errors.js';
import type { MatBackend, WeightHandle } from '../backend/types.js';
import { ggmlTypeName } from '../gguf/ggml-types.js';
import type { GgufHeader, GgufTensorInfo } from '../gguf/types.js';
import { dequantizeRow, dequantizeTensor } from '../quant/index.js';
import type { ArchSpec } from './arch.js';
import { loadDeltaNet, type DeltaNetWeights } from './deltanet.js';
import type { ModelHparams } from './hparams.js';
import { loadMoeLayer, type MoeLayer } from './moe.js';
import { tensorFill, type TensorReader } from './tensor-reader.js';

/** One transformer block. Shapes are [rows, cols] = [out, in]; qDim = nHead·headDimK, kvDimK = nHeadKv·headDimK, kvDimV = nHeadKv·headDimV. */
export interface LayerWeights {
  attnNorm: Float32Array | null; //   [nEmbd] (absent: olmo2 has no pre-norms)
  attnNormB: Float32Array | null; //  [nEmbd] (LayerNorm archs)
  wqkv: WeightHandle | null; //       [qDim + kvDimK + kvDimV, nEmbd] when fused (phi2, phi3)
  bqkv: Float32Array | null; //       [qDim + kvDimK + kvDimV]
  wq: WeightHandle | null; //         [qDim, nEmbd]
  wk: WeightHandle | null; //         [kvDimK, nEmbd]
  wv: WeightHandle | null; //         [kvDimV, nEmbd]
  bq: Float32Array | null; //         [qDim]
  bk: Float32Array | null; //         [kvDimK]
  bv: Float32Array | null; //         [kvDimV]
  qNorm: Float32Array | null; //      [headDimK] (qwen3, gemma3), [qDim] (olmo2, olmoe)
  kNorm: Float32Array | null; //      [headDimK] (qwen3, gemma3), [kvDimK] (olmo2, olmoe)
  wo: WeightHandle; //                [nEmbd, nHead·headDimV]
  bo: Float32Array | null; //         [nEmbd]
  attnPostNorm: Float32Array | null; //[nEmbd] on the attention output (gemma2, gemma3, olmo2)
  sinks: Float32Array | null; //      [nHead] attention sinks (gpt-oss)
  ffnNorm: Float32Array | null; //    [nEmbd] (absent for parallel phi2 and olmo2)
  ffnNormB: Float32Array | null; //   [nEmbd]
  wGate: WeightHandle | null; //      [nFf, nEmbd] (absent for plain GELU and fused gate+up)
  bGate: Float32Array | null; //      [nFf]
  wUp: WeightHandle | null; //        [nFf, nEmbd], or [2·nFf, nEmbd] with gate first (phi3); null with experts
  bUp: Float32Array | null; //        [nFf]
  wDown: WeightHandle | null; //      [nEmbd, nFf]; null with experts
  bDown: Float32Array | null; //      [nEmbd]
  ffnPostNorm: Float32Array | null; //[nEmbd] on the FFN output (gemma2, gemma3, olmo2)
  moe: MoeLayer | null; //            the layer's experts in place of the dense FFN (moe.ts)
  deltaNet: DeltaNetWeights | null; // a gated linear-attention layer (qwen35): these instead of q, k, v; wo is its ssm_out
}

export interface ModelWeights {
  tokEmbd: WeightHandle; //           [nVocab, nEmbd]
  layers: LayerWeights[]; //          (nLayer)
  outputNorm: Float32Array; //        [nEmbd]
  outputNormB: Float32Array | null; //[nEmbd]
  output: WeightHandle; //            [nVocab, nEmbd]; token_embd itself when the file has no output.weight (tied)
  outputB: Float32Array | null; //    [nVocab] (phi2)
  ropeFreqs: Float32Array | null; //  [nRot/2] RoPE frequency divisors, rope_freqs.weight (Llama 3.1)
  ropeLong: Float32Array | null; //   [nRot/2] rope_factors_long.weight (longrope: context above the original)
  ropeShort: Float32Array | null; //  [nRot/2] rope_factors_short.weight (longrope: context within the original)
}

/**
 * The frequency divisors RoPE uses at a context size (llama_model::get_rope_factors): rope_freqs
 * when the file has it, else longrope's long factors when the context exceeds
 * rope.scaling.original_context_length and its short ones otherwise. The context compared is
 * rounded up to a multiple of 256, as llama.cpp's (llama_context pads n_ctx), so both engines pick
 * the same factors even when the original length is not a multiple of 256.
 */
export function ropeFactorsFor(w: ModelWeights, hp: ModelHparams, contextSize: number): Float32Array | null {
  if (w.ropeFreqs) return w.ropeFreqs;
  return Math.ceil(contextSize / 256) * 256 > hp.rope.nCtxOrig ? w.ropeLong : w.ropeShort;
}

export type { TensorReader } from './tensor-reader.js';

export interface LoadWeightsOptions {
  /** Called after each tensor with bytes loaded so far. */
  onTensor?: (loadedBytes: number) => void;
  /** Called between tensors (after yielding to the event loop); throw to stop loading. */
  shouldStop?: () => void;
}

/** Let the event loop run (progress messages, a cancel request) between tensors. */
const yieldNow = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Tensors the model would read, with their total bytes (for the memory estimate). */
export function weightTensors(h: GgufHeader): GgufTensorInfo[] {
  return h.tensors.filter((t) => t.name.endsWith('.weight') || t.name.endsWith('.bias'));
}

export async function loadWeights(h: GgufHeader, hp: ModelHparams, spec: ArchSpec, backend: MatBackend, read: TensorReader, opts: LoadWeightsOptions = {}): Promise<ModelWeights> {
  const byName = new Map<string, GgufTensorInfo>();
  for (const t of h.tensors) byName.set(t.name, t);
  let loaded = 0;
  const done = async (t: GgufTensorInfo) => {
    loaded += t.bytes;
    opts.onTensor?.(loaded);
    await yieldNow();
    opts.shouldStop?.();
  };

  const find = (name: string, required: boolean): GgufTensorInfo | null => {
    const t = byName.get(name);
    if (!t && required) throw new ModelError('MISSING_TENSOR', `tensor "${name}" is missing from the file; it is needed to run a ${hp.arch} model`);
    return t ?? null;
  };
  const checkShape = (t: GgufTensorInfo, want: number[]) => {
    const dims = t.dims.length > want.length && t.dims.slice(want.length).every((d) => d === 1) ? t.dims.slice(0, want.length) : t.dims;
    if (dims.length !== want.length || dims.some((d, i) => d !== want[i])) {
      throw new ModelError('BAD_TENSOR_SHAPE', `tensor "${t.name}" has shape [${t.dims.join(', ')}], expected [${want.join(', ')}] for this model's hyperparameters`);
    }
  };

  /** A matrix [rows, cols] (GGUF dims [cols, rows]) into the backend. */
  const matrix = async (name: string, rows: number, cols: number, required = true): Promise<WeightHandle | null> => {
    const t = find(name, required);
    if (!t) return null;
    checkShape(t, [cols, rows]);
    let handle: WeightHandle;
    if (t.flatBlocks) {
      // Rows that are not whole blocks (tinyllamas-stories-260k-q8_0.gguf's ffn_down: rows of 172
      // in Q8_0, quantised by an old converter as one flat array of blocks). llama.cpp refuses such
      // a file; Pantheon dequantises the tensor flat to F32 once at load and runs it as F32, which
      // costs 4 bytes per weight for this one tensor but gives the values the file means.
      const raw = new Uint8Array(t.bytes);
      read(t, raw, 0);
      const f = dequantizeTensor(t, raw);
      const bytes = new Uint8Array(f.buffer);
      handle = backend.addWeight({ name, type: 0, rows, cols }, (dst, from) => dst.set(bytes.subarray(from, from + dst.length)));
    } else {
      handle = backend.addWeight({ name, type: t.type, rows, cols }, tensorFill(read, t));
    }
    await done(t);
    return handle;
  };

  /** A vector of n values as float32 (norm weights and biases; any type the quant module reads), of GGUF dims `dims`. */
  const vector = async (name: string, n: number, required = true, dims = [n]): Promise<Float32Array | null> => {
    const t = find(name, required);
    if (!t) return null;
    checkShape(t, dims);
    const raw = new Uint8Array(t.bytes);
    read(t, raw, 0);
    const out = new Float32Array(n);
    try {
      dequantizeRow(t.type, raw, 0, out, n);
    } catch {
      throw new ModelError('UNSUPPORTED_TYPE', `tensor "${name}" is ${ggmlTypeName(t.type)}, which Pantheon cannot read as a vector`);
    }
    await done(t);
    return out;
  };

  const { nEmbd, nHead, nHeadKv, headDimK, headDimV, nVocab } = hp;
  const qDim = nHead * headDimK;
  const kvDimK = nHeadKv * headDimK;
  const kvDimV = nHeadKv * headDimV;
  const layerNorm = spec.norm === 'layer';

  const tokEmbd = (await matrix('token_embd.weight', nVocab, nEmbd))!;
  const layers: LayerWeights[] = [];
  const dnLoad = { matrix: async (name: string, rows: number, cols: number) => (await matrix(name, rows, cols))!, vector: async (name: string, dims: number[]) => (await vector(name, dims.reduce((a, b) => a * b), true, dims))! };
  const moeCtx = { nEmbd, moe: hp.moe!, backend, find, checkShape, read, done, matrix, vector };
  const ffnNormName = spec.ffnNormName ?? 'ffn_norm';
  for (let l = 0; l < hp.nLayer; l++) {
    const p = `blk.${l}.`;
    if (hp.deltaNet?.recurrent[l]) {
      // gated linear attention: its own tensors, ssm_out as wo, then the usual FFN
      const dn = await loadDeltaNet(l, hp.deltaNet, nEmbd, dnLoad);
      const isMoe = hp.moe?.isMoe[l] ?? false;
      const nFf = isMoe ? 0 : hp.nFfLayer[l] || find(`${p}ffn_down.weight`, true)!.dims[0];
      layers.push({
        attnNorm: (await vector(`${p}attn_norm.weight`, nEmbd))!, attnNormB: null, wqkv: null, bqkv: null, wq: null, wk: null, wv: null, bq: null, bk: null, bv: null, qNorm: null, kNorm: null,
        wo: (await matrix(`${p}ssm_out.weight`, nEmbd, hp.deltaNet.nVHead * hp.deltaNet.dState))!, bo: null, attnPostNorm: null, sinks: null,
        ffnNorm: (await vector(`${p}${ffnNormName}.weight`, nEmbd))!, ffnNormB: null,
        wGate: isMoe ? null : await matrix(`${p}ffn_gate.weight`, nFf, nEmbd), bGate: null,
        wUp: isMoe ? null : await matrix(`${p}ffn_up.weight`, nFf, nEmbd), bUp: null,
        wDown: isMoe ? null : await matrix(`${p}ffn_down.weight`, nEmbd, nFf), bDown: null,
        moe: isMoe ? await loadMoeLayer(moeCtx, l) : null,
        ffnPostNorm: null, deltaNet: dn,
      });
      continue;
    }
    const fused = byName.has(`${p}attn_qkv.weight`);
    const isMoe = hp.moe?.isMoe[l] ?? false;
    const nFf = isMoe ? 0 : hp.nFfLayer[l] || find(`${p}ffn_down.weight`, true)!.dims[0];
    const dense = !isMoe;
    layers.push({
      attnNorm: spec.preNorms ? await vector(`${p}attn_norm.weight`, nEmbd) : null,
      attnNormB: await vector(`${p}attn_norm.bias`, nEmbd, layerNorm),
      wqkv: fused ? await matrix(`${p}attn_qkv.weight`, qDim + kvDimK + kvDimV, nEmbd) : null,
      bqkv: fused ? await vector(`${p}attn_qkv.bias`, qDim + kvDimK + kvDimV, false) : null,
      wq: fused ? null : await matrix(`${p}attn_q.weight`, spec.deltaNet ? 2 * qDim : qDim, nEmbd), // qwen35: [q; gate] per head
      wk: fused ? null : await matrix(`${p}attn_k.weight`, kvDimK, nEmbd),
      wv: fused ? null : await matrix(`${p}attn_v.weight`, kvDimV, nEmbd),
      bq: fused ? null : await vector(`${p}attn_q.bias`, qDim, false),
      bk: fused ? null : await vector(`${p}attn_k.bias`, kvDimK, false),
      bv: fused ? null : await vector(`${p}attn_v.bias`, kvDimV, false),
      qNorm: spec.qkNorm ? await vector(`${p}attn_q_norm.weight`, spec.qkNorm === 'full' ? qDim : headDimK) : null,
      kNorm: spec.qkNorm ? await vector(`${p}attn_k_norm.weight`, spec.qkNorm === 'full' ? kvDimK : headDimK) : null,
      wo: (await matrix(`${p}attn_output.weight`, nEmbd, nHead * headDimV))!,
      bo: await vector(`${p}attn_output.bias`, nEmbd, false),
      attnPostNorm: spec.postNorms ? await vector(`${p}post_attention_norm.weight`, nEmbd) : null,
      sinks: spec.sinks ? await vector(`${p}attn_sinks.weight`, nHead) : null,
      ffnNorm: spec.parallel || !spec.preNorms ? null : await vector(`${p}${ffnNormName}.weight`, nEmbd),
      ffnNormB: spec.parallel ? null : await vector(`${p}ffn_norm.bias`, nEmbd, false),
      wGate: !dense || spec.ffn === 'gelu' || spec.fusedGateUp ? null : await matrix(`${p}ffn_gate.weight`, nFf, nEmbd),
      bGate: !dense || spec.ffn === 'gelu' || spec.fusedGateUp ? null : await vector(`${p}ffn_gate.bias`, nFf, false),
      wUp: dense ? await matrix(`${p}ffn_up.weight`, spec.fusedGateUp ? 2 * nFf : nFf, nEmbd) : null,
      bUp: dense ? await vector(`${p}ffn_up.bias`, spec.fusedGateUp ? 2 * nFf : nFf, false) : null,
      wDown: dense ? await matrix(`${p}ffn_down.weight`, nEmbd, nFf) : null,
      bDown: dense ? await vector(`${p}ffn_down.bias`, nEmbd, false) : null,
      moe: isMoe ? await loadMoeLayer(moeCtx, l) : null,
      ffnPostNorm: spec.postNorms ? await vector(`${p}post_ffw_norm.weight`, nEmbd) : null,
      deltaNet: null,
    });
  }
  const outputNorm = (await vector('output_norm.weight', nEmbd))!;
  const outputNormB = await vector('output_norm.bias', nEmbd, layerNorm);
  // Tied output: no output.weight means the token embedding matrix is also the LM head
  // (llama.cpp: "if output is NULL, init from the input tok embed"; gemma always ties).
  const output = byName.has('output.weight') && !spec.alwaysTied ? (await matrix('output.weight', nVocab, nEmbd))! : tokEmbd;
  const outputB = await vector('output.bias', nVocab, false);
  // RoPE frequency factors, by the tensors llama.cpp's builder for this architecture creates (arch.ts ropeFactors)
  const longShort = spec.ropeFactors === 'longShort' || (spec.ropeFactors === 'freqs' && hp.ropeScaling === 'longrope');
  const ropeFreqs = spec.ropeFactors === 'freqs' && !longShort ? await vector('rope_freqs.weight', hp.nRot / 2, false) : null;
  const ropeLong = longShort ? await vector('rope_factors_long.weight', hp.nRot / 2, false) : null;
  const ropeShort = longShort ? await vector('rope_factors_short.weight', hp.nRot / 2, false) : null;
  return { tokEmbd, layers, outputNorm, outputNormB, output, outputB, ropeFreqs, ropeLong, ropeShort };
}
