// GPU offload's plan, made from the header before any weight is read: which blocks go to the GPU
// (offload.ts routes by it), how many bytes that puts there, and what stays for the CPU pool to
// plan (pool-plan.ts planPool gets only the CPU part).
//
// Convention (llama.cpp src/llama-model.cpp load_tensors, read for this): llama.cpp's
// -ngl N puts the LAST N of its n_layer + 1 layers on the GPU, the output matrix counting as layer
// n_layer (so -ngl 1 is the output alone and -ngl n_layer + 1 is everything), and keeps the input
// layer (token_embd) on the CPU always ("very little benefit to offloading the input layer"). Here
// N counts blocks from the FIRST, as LM Studio's "GPU offload: N/32" slider shows them: blocks
// [0, N) on the GPU, [N, n_layer) on the CPU. The output matrix keeps llama.cpp's place, the layer
// after the last block, so it moves with the last block: on the GPU exactly when all n_layer blocks
// are (our N = n_layer is llama.cpp's -ngl n_layer + 1), on the CPU otherwise (llama.cpp's
// -ngl 0). The token embedding stays on the CPU, as llama.cpp's; a tied output (no output.weight)
// on the GPU is a second copy of token_embd there, as llama.cpp's TENSOR_DUPLICATED.

import { UsageError } from '../../shared/errors.js';
import { ggmlTypeInfo, rowBytes } from '../gguf/ggml-types.js';
import type { GgufHeader, GgufTensorInfo } from '../gguf/types.js';
import { gpuFormat } from './webgpu/kernels.js';

/** What the user asks for: a number of blocks (above the count means all), all, or chosen from the GPU's memory. */
export type GpuLayers = number | 'all' | 'auto';

/** Where the weights go. */
export interface OffloadSplit {
  /** Blocks of the model. */
  nLayer: number;
  /** Blocks [0, gpuLayers) on the GPU; the output matrix too when gpuLayers = nLayer. */
  gpuLayers: number;
  /** The file has no output.weight (or the architecture always ties): the output is token_embd. */
  tied: boolean;
}

/** True when the split puts the output matrix on the GPU (all blocks there). */
export const outputOnGpu = (s: OffloadSplit): boolean => s.gpuLayers >= s.nLayer;

/**
 * `--gpu-layers` as typed: a whole number ≥ 0, "all" or "auto"; anything else is one line of
 * UsageError. (A number above the model's blocks means all: resolved by planOffload.)
 */
export function parseGpuLayers(text: string): GpuLayers {
  const t = text.trim().toLowerCase();
  if (t === 'all' || t === 'auto') return t;
  const n = Number(t);
  if (t === '' || !Number.isInteger(n) || n < 0) throw new UsageError(`--gpu-layers needs a whole number of layers (0 or more), "all" or "auto", not "${text}"`);
  return n;
}

/**
 * Per block, the GPU buffers its matrices take (WebGpuBackend.addWeight: rows split into buffers
 * of at most `chunkBytes`, each padded to 4 bytes). Vectors (norms, biases) and types without a
 * WGSL kernel stay in host memory.
 */
export interface LayerBytes {
  /** [nLayer] buffer sizes per block. */
  buffers: number[][];
  /** The output matrix's buffers (token_embd's again when tied). */
  output: number[];
}

const pad4 = (n: number) => (n + 3) & ~3;

/** The buffers a matrix of `rows` rows of `rb` bytes takes, split at chunkBytes (as WebGpuBackend.addWeight). */
function chunks(rows: number, rb: number, chunkBytes: number): number[] {
  const per = Math.max(1, Math.floor(chunkBytes / rb));
  const out: number[] = [];
  for (let r0 = 0; r0 < rows; r0 += per) out.push(pad4(Math.min(per, rows - r0) * rb));
  return out;
}

/**
 * A tensor's GPU buffers, or null when it stays on the CPU: a vector (fewer than two dims above
 * 1), or a type with no WGSL kernel. Experts ([cols, rows, nExpert]) are one matrix per expert
 * (moe.ts); a flat-block tensor is loaded as F32 (weights.ts).
 */
function tensorBuffers(t: GgufTensorInfo, chunkBytes: number): number[] | null {
  const dims = t.dims;
  if (!t.name.endsWith('.weight') || dims.length < 2 || dims[1] <= 1) return null;
  const cols = dims[0], rows = dims[1], count = dims.slice(2).reduce((a, b) => a * b, 1);
  const type = t.flatBlocks ? 0 : t.type;
  const info = ggmlTypeInfo(type);
  if (!gpuFormat(type) || !info || cols % info.blockSize !== 0) return null;
  const one = chunks(rows, rowBytes(type, cols), chunkBytes);
  return Array.from({ length: count }, () => one).flat();
}

/** The model's GPU buffers by block and the output's, from the tensor table. */
export function layerBytes(h: GgufHeader, nLayer: number, tied: boolean, chunkBytes: number): LayerBytes {
  const buffers: number[][] = Array.from({ length: nLayer }, () => []);
  let output: number[] = [];
  for (const t of h.tensors) {
    const m = /^blk\.(\d+)\./.exec(t.name);
    const b = tensorBuffers(t, chunkBytes);
    if (m && Number(m[1]) < nLayer) {
      if (b) buffers[Number(m[1])].push(...b);
    } else if ((t.name === 'output.weight' && !tied) || (t.name === 'token_embd.weight' && tied)) {
      output = b ?? [];
    }
  }
  return { buffers, output };
}

/** What planOffload needs of the adapter. */
export interface GpuBudget {
  /** Largest buffer the GPU backend makes (its storage binding limit). */
  chunkBytes: number;
  /**
   * The software adapter (llvmpipe): its "GPU memory" is the host's, committed only when written,
   * so an allocation never fails to tell when it is full; auto then means all (planPool counts
   * that part against the host's memory instead).
   */
  software: boolean;
  /**
   * How many of these groups of buffers, taken in order, the GPU can hold with `reserve` bytes
   * left over (WebGpuBackend.probe: allocated inside pushErrorScope('out-of-memory'), then freed).
   */
  probe(groups: number[][], reserve: number): number;
}

export interface OffloadPlan {
  split: OffloadSplit;
  /** Bytes of GPU buffers the split takes. */
  gpuBytes: number;
  /** Bytes of weights (as the file holds them) left for the CPU pool: what planPool plans. */
  cpuWeights: number;
}

/** GPU memory left free by auto: the GPU backend's working buffers (x, y, parameters, read-back) and whatever else runs there. */
export const GPU_RESERVE = 512 * 2 ** 20;

/**
 * The split for `want` blocks on the GPU. auto: as many blocks, first to last, as the GPU holds
 * with GPU_RESERVE + the KV cache (`kvCache`, for when a whole token runs there) to spare; the
 * last block counts with the output matrix, which goes with it. A number above the count is all.
 */
export function planOffload(h: GgufHeader, nLayer: number, tied: boolean, want: GpuLayers, gpu: GpuBudget, weights: number, kvCache: number): OffloadPlan {
  const lb = layerBytes(h, nLayer, tied, gpu.chunkBytes);
  // the groups in the order they move: block 0, 1, …, the last with the output
  const groups = lb.buffers.map((b, l) => (l === nLayer - 1 ? [...b, ...lb.output] : b));
  let n: number;
  if (want === 'all') n = nLayer;
  else if (want === 'auto') n = gpu.software ? nLayer : gpu.probe(groups, GPU_RESERVE + kvCache);
  else n = Math.min(want, nLayer);
  n = Math.max(0, Math.min(nLayer, n));
  const sum = (a: number[]) => a.reduce((s, v) => s + v, 0);
  let gpuBytes = 0, onGpu = 0;
  for (let l = 0; l < n; l++) {
    gpuBytes += sum(groups[l]);
    onGpu += sum(lb.buffers[l]);
  }
  // the file's bytes of what moved (buffers are the file's rows, padded: close enough to subtract)
  const outputMoved = n === nLayer && !tied ? sum(lb.output) : 0;
  return { split: { nLayer, gpuLayers: n, tied }, gpuBytes, cpuWeights: Math.max(0, weights - onGpu - outputMoved) };
}
