// Quantising a whole model file: read each tensor, convert it to the type the recipe chose, write
// it to the output file, drop it (with threads, each thread reads and converts its own rows).
// Metadata is copied, with general.file_type and general.quantization_version set as llama.cpp's
// llama_model_quantize_impl sets them.

import { closeSync, openSync, writeSync } from 'node:fs';
import { ModelError } from '../../shared/errors.js';
import { readGgufHeaderSync, readTensorBytesSync } from '../gguf/file.js';
import { ggmlTypeName, rowBytes } from '../gguf/ggml-types.js';
import { getNumber, getString } from '../gguf/keys.js';
import { ggufHeaderFor, writeGgufToFile, tensorBytes } from '../gguf/stream-writer.js';
import { GGUF_DEFAULT_ALIGNMENT, GgufType, type GgufHeader } from '../gguf/types.js';
import type { WriterKv } from '../gguf/writer.js';
import { importanceOf, type Imatrix } from './imatrix.js';
import { canQuantize, dequantizeTensor, isSupportedType, quantizeRows, usesImportance } from './index.js';
import { QuantizePool } from './quantize-pool.js';
import { planQuantization, requiresImatrix, type FileType, type RecipeModel, type TensorPlan } from './recipe.js';

/** ggml.h GGML_QNT_VERSION, written as general.quantization_version. */
export const GGML_QNT_VERSION = 2;

export interface QuantizedTensor extends TensorPlan {
  dims: readonly number[];
  bytesIn: number;
  bytesOut: number;
}

export interface QuantizeSummary {
  fileType: FileType;
  tensors: QuantizedTensor[];
  bytesIn: number;
  bytesOut: number;
  elements: number;
}

/** The recipe's view of a model's hyperparameters (llama.cpp's defaults when a key is missing). */
export function recipeModel(h: GgufHeader): RecipeModel {
  const arch = getString(h, 'general.architecture') ?? '';
  const nHead = getNumber(h, `${arch}.attention.head_count`) ?? 0;
  return {
    arch,
    nLayer: getNumber(h, `${arch}.block_count`) ?? 0,
    nHead,
    nHeadKv: getNumber(h, `${arch}.attention.head_count_kv`) ?? nHead,
    nExpert: getNumber(h, `${arch}.expert_count`) ?? 0,
  };
}

/** An importance matrix to quantise with, and the file it came from (recorded as quantize.imatrix.file). */
export interface ImatrixInput {
  imatrix: Imatrix;
  path: string;
}

/**
 * The metadata for the output: everything from the input, split keys dropped, file type and
 * version set, and with an importance matrix the quantize.imatrix.* keys llama-quantize writes.
 */
function outputMetadata(h: GgufHeader, ft: FileType, im?: ImatrixInput): WriterKv[] {
  const drop = new Set(['split.no', 'split.count', 'split.tensors.count']);
  const kvs: WriterKv[] = [];
  for (const kv of h.metadata.values()) if (!drop.has(kv.key)) kvs.push({ key: kv.key, type: kv.type, value: kv.value });
  const set = (key: string, value: number) => {
    const i = kvs.findIndex((k) => k.key === key);
    const kv = { key, type: GgufType.UINT32, value };
    if (i >= 0) kvs[i] = kv;
    else kvs.push(kv);
  };
  set('general.quantization_version', GGML_QNT_VERSION);
  set('general.file_type', ft.ftype);
  if (im) {
    const put = (kv: WriterKv) => {
      const i = kvs.findIndex((k) => k.key === kv.key);
      if (i >= 0) kvs[i] = kv;
      else kvs.push(kv);
    };
    put({ key: 'quantize.imatrix.file', type: GgufType.STRING, value: im.path });
    if (im.imatrix.datasets.length) put({ key: 'quantize.imatrix.dataset', type: GgufType.STRING, value: im.imatrix.datasets[0] });
    put({ key: 'quantize.imatrix.entries_count', type: GgufType.INT32, value: im.imatrix.entries.size });
    if (im.imatrix.chunkCount > 0) put({ key: 'quantize.imatrix.chunks_count', type: GgufType.INT32, value: im.imatrix.chunkCount });
  }
  return kvs;
}

/** What the recipe does with each tensor of `h`, checked to be possible (with `im` where a type needs one). */
function planTensors(h: GgufHeader, ft: FileType, im?: ImatrixInput): QuantizedTensor[] {
  const byName = new Map(h.tensors.map((t) => [t.name, t]));
  const plans = planQuantization(ft, recipeModel(h), h.tensors, { hasImatrix: im !== undefined });
  return plans.map((p) => {
    const info = byName.get(p.name)!;
    if (p.to !== p.from) {
      if (!isSupportedType(p.from)) throw new ModelError('UNSUPPORTED_TYPE', `tensor "${p.name}" is ${ggmlTypeName(p.from)}, which Pantheon cannot dequantise, so it cannot be converted to ${ggmlTypeName(p.to)}`);
      const entry = im?.imatrix.entries.get(p.name);
      if (requiresImatrix(p.name, p.to, ft) && !entry) {
        throw new ModelError('IMATRIX_REQUIRED', im
          ? `the importance matrix ${im.path} has no entry for tensor "${p.name}", which ${ggmlTypeName(p.to)} cannot do without`
          : `${ft.name} needs an importance matrix for its ${ggmlTypeName(p.to)} tensors: make one with \`pantheon imatrix MODEL TEXT -o FILE\` and pass --imatrix FILE`);
      }
      if (!canQuantize(p.to) && !(entry && usesImportance(p.to))) throw new ModelError('UNSUPPORTED_TYPE', `Pantheon cannot quantise to ${ggmlTypeName(p.to)} (tensor "${p.name}")`);
      const want = info.dims[0] * (info.dims[2] ?? 1);
      if (entry && entry.sums.length !== want) {
        throw new ModelError('IMATRIX_MISMATCH', `the importance matrix has ${entry.sums.length} values for tensor "${p.name}", which needs ${want} (was it made for another model?)`);
      }
    }
    const bytesOut = tensorBytes({ name: p.name, dims: [...info.dims], type: p.to });
    return { ...p, dims: info.dims, bytesIn: info.bytes, bytesOut };
  });
}

function summarize(h: GgufHeader, ft: FileType, tensors: QuantizedTensor[]): QuantizeSummary {
  return {
    fileType: ft,
    tensors,
    bytesIn: tensors.reduce((a, t) => a + t.bytesIn, 0),
    bytesOut: tensors.reduce((a, t) => a + t.bytesOut, 0),
    elements: h.tensors.reduce((a, t) => a + t.elements, 0),
  };
}

/**
 * Quantise the model at `inPath` to file type `ft`, writing `outPath`. `onTensor` is called after
 * each tensor (for a progress bar). Returns what happened to every tensor.
 */
export function quantizeModelFile(
  inPath: string, outPath: string, ft: FileType, onTensor?: (done: number, total: number, t: QuantizedTensor) => void, im?: ImatrixInput,
): QuantizeSummary {
  const h = readGgufHeaderSync(inPath);
  const byName = new Map(h.tensors.map((t) => [t.name, t]));
  const tensors = planTensors(h, ft, im);
  const fd = openSync(inPath, 'r');
  try {
    writeGgufToFile(outPath, outputMetadata(h, ft, im), tensors.map((t) => ({ name: t.name, dims: [...t.dims], type: t.to })), (i) => {
      const t = tensors[i];
      const info = byName.get(t.name)!;
      const src = readTensorBytesSync(fd, h, info);
      let out: Uint8Array;
      if (t.to === t.from) {
        out = src;
      } else {
        const x = dequantizeTensor(info, src), cols = info.dims[0];
        out = joinBytes(perMatrix(info.elements, cols, im && importanceOf(im.imatrix, t.name), (m, rows, w) => quantizeRows(t.to, x.subarray(m * rows * cols, (m + 1) * rows * cols), rows, cols, w)));
      }
      onTensor?.(i + 1, tensors.length, t);
      return out;
    });
  } finally {
    closeSync(fd);
  }
  return summarize(h, ft, tensors);
}

/**
 * q(m, rows, imatrix) for each matrix m of a tensor (an expert tensor [cols, rows, nMat] is nMat
 * matrices), each with its own slice of the importance `imp` ([nMat, cols]) when given, as
 * llama_tensor_quantize_impl hands ggml_quantize_chunk `imatrix + expert·n_per_row`.
 */
function perMatrix<R>(elements: number, cols: number, imp: Float32Array | undefined, q: (m: number, rows: number, imatrix?: Float32Array) => R): R[] {
  const nMat = imp ? imp.length / cols : 1;
  const rows = elements / cols / nMat;
  return Array.from({ length: nMat }, (_, m) => q(m, rows, imp?.subarray(m * cols, (m + 1) * cols)));
}

/** The matrices' bytes one after the other. */
function joinBytes(ps: Uint8Array[]): Uint8Array {
  if (ps.length === 1) return ps[0];
  const out = new Uint8Array(ps.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of ps) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export interface QuantizeFileOptions {
  /** Threads that quantise, the calling thread included (default os.availableParallelism()). */
  threads?: number;
  /** Quantise with this importance matrix (pantheon quantize --imatrix). */
  imatrix?: ImatrixInput;
  onTensor?: (done: number, total: number, t: QuantizedTensor) => void;
}

/**
 * quantizeModelFile with each tensor's rows split across worker threads (quantize-pool.ts); the
 * output file is byte-identical to quantizeModelFile's. Written like writeGgufToFile: the header
 * laid out from the tensor sizes, then each tensor's bytes, padded to the alignment.
 */
export async function quantizeModelFileThreaded(inPath: string, outPath: string, ft: FileType, opts: QuantizeFileOptions = {}): Promise<QuantizeSummary> {
  const h = readGgufHeaderSync(inPath);
  const byName = new Map(h.tensors.map((t) => [t.name, t]));
  const tensors = planTensors(h, ft, opts.imatrix);
  const kvs = outputMetadata(h, ft, opts.imatrix);
  const layout = tensors.map((t) => ({ name: t.name, dims: [...t.dims], type: t.to }));
  const alignKv = kvs.find((k) => k.key === 'general.alignment');
  const alignment = alignKv ? Number(alignKv.value) : GGUF_DEFAULT_ALIGNMENT;
  const pool = new QuantizePool({ threads: opts.threads });
  const fdIn = openSync(inPath, 'r');
  let fdOut: number | undefined;
  try {
    fdOut = openSync(outPath, 'w');
    const out = fdOut;
    const put = (b: Uint8Array) => {
      for (let w = 0; w < b.length;) w += writeSync(out, b, w, b.length - w);
    };
    put(ggufHeaderFor(kvs, layout));
    const zeros = new Uint8Array(alignment);
    for (let i = 0; i < tensors.length; i++) {
      const t = tensors[i];
      const info = byName.get(t.name)!;
      let data: Uint8Array;
      if (t.to === t.from) {
        data = readTensorBytesSync(fdIn, h, info);
      } else {
        // each thread reads and converts its own rows (quantize-pool.ts quantizeFileRows)
        const imp = opts.imatrix && importanceOf(opts.imatrix.imatrix, t.name);
        const cols = info.dims[0], inRow = rowBytes(info.type, cols);
        const at = h.dataOffset + info.offset;
        data = joinBytes(await Promise.all(perMatrix(info.elements, cols, imp, (m, rows, w) =>
          pool.quantizeFileRows(t.to, { path: inPath, at: at + m * rows * inRow, type: info.type, name: t.name }, rows, cols, w))));
      }
      if (data.length !== t.bytesOut) throw new ModelError('BAD_TENSOR', `tensor "${t.name}": ${data.length} bytes produced, ${t.bytesOut} expected`);
      put(data);
      const pad = (alignment - (data.length % alignment)) % alignment;
      if (pad) put(zeros.subarray(0, pad));
      opts.onTensor?.(i + 1, tensors.length, t);
    }
  } finally {
    closeSync(fdIn);
    if (fdOut !== undefined) closeSync(fdOut);
    await pool.close();
  }
  return summarize(h, ft, tensors);
}
