// Quantising a whole model file: read each tensor, convert it to the type the recipe chose, write
// it to the output file, drop it. Metadata is copied, with general.file_type and
// general.quantization_version set as llama.cpp's llama_model_quantize_impl sets them.

import { closeSync, openSync } from 'node:fs';
import { ModelError } from '../../shared/errors.js';
import { readGgufHeaderSync, readTensorBytesSync } from '../gguf/file.js';
import { ggmlTypeName } from '../gguf/ggml-types.js';
import { getNumber, getString } from '../gguf/keys.js';
import { writeGgufToFile, tensorBytes } from '../gguf/stream-writer.js';
import { GgufType, type GgufHeader } from '../gguf/types.js';
import type { WriterKv } from '../gguf/writer.js';
import { canQuantize, dequantizeTensor, isSupportedType, quantizeRows } from './index.js';
import { planQuantization, type FileType, type RecipeModel, type TensorPlan } from './recipe.js';

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

/** The metadata for the output: everything from the input, split keys dropped, file type and version set. */
function outputMetadata(h: GgufHeader, ft: FileType): WriterKv[] {
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
  return kvs;
}

/**
 * Quantise the model at `inPath` to file type `ft`, writing `outPath`. `onTensor` is called after
 * each tensor (for a progress bar). Returns what happened to every tensor.
 */
export function quantizeModelFile(
  inPath: string, outPath: string, ft: FileType, onTensor?: (done: number, total: number, t: QuantizedTensor) => void,
): QuantizeSummary {
  const h = readGgufHeaderSync(inPath);
  const byName = new Map(h.tensors.map((t) => [t.name, t]));
  const plans = planQuantization(ft, recipeModel(h), h.tensors);
  const tensors: QuantizedTensor[] = plans.map((p) => {
    const info = byName.get(p.name)!;
    if (p.to !== p.from) {
      if (!isSupportedType(p.from)) throw new ModelError('UNSUPPORTED_TYPE', `tensor "${p.name}" is ${ggmlTypeName(p.from)}, which Pantheon cannot dequantise, so it cannot be converted to ${ggmlTypeName(p.to)}`);
      if (!canQuantize(p.to)) throw new ModelError('UNSUPPORTED_TYPE', `Pantheon cannot quantise to ${ggmlTypeName(p.to)} (tensor "${p.name}")`);
    }
    const bytesOut = tensorBytes({ name: p.name, dims: [...info.dims], type: p.to });
    return { ...p, dims: info.dims, bytesIn: info.bytes, bytesOut };
  });
  const fd = openSync(inPath, 'r');
  try {
    writeGgufToFile(outPath, outputMetadata(h, ft), tensors.map((t) => ({ name: t.name, dims: [...t.dims], type: t.to })), (i) => {
      const t = tensors[i];
      const info = byName.get(t.name)!;
      const src = readTensorBytesSync(fd, h, info);
      let out: Uint8Array;
      if (t.to === t.from) {
        out = src;
      } else {
        const f32 = dequantizeTensor(info, src);
        const cols = info.dims[0];
        out = quantizeRows(t.to, f32, info.elements / cols, cols);
      }
      onTensor?.(i + 1, tensors.length, t);
      return out;
    });
  } finally {
    closeSync(fd);
  }
  return {
    fileType: ft,
    tensors,
    bytesIn: tensors.reduce((a, t) => a + t.bytesIn, 0),
    bytesOut: tensors.reduce((a, t) => a + t.bytesOut, 0),
    elements: h.tensors.reduce((a, t) => a + t.elements, 0),
  };
}
