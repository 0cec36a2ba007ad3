// Node side of the in-page fake: an OpenedModel built from a real GGUF header with the project's own
// reader, so the fake shows real metadata and tensors. Used only by the renderer's component tests.

import { basename } from 'node:path';
import type { MetaEntry, MetaValue, OpenedModel, TensorRow } from '../../src/shared/contract.js';
import { readGgufHeaderSync } from '../../src/engine/gguf/file.js';
import { ggmlTypeName } from '../../src/engine/gguf/ggml-types.js';
import { summarize } from '../../src/engine/gguf/keys.js';
import { GGUF_TYPE_NAMES, GgufType, isGgufArray, type GgufValue } from '../../src/engine/gguf/types.js';

function scalar(v: GgufValue): MetaValue {
  if (typeof v === 'bigint') return v.toString();
  if (isGgufArray(v)) return v.items.map(scalar) as MetaValue;
  return v;
}

export interface FakeModelData {
  model: OpenedModel;
  /** Every long array in full, for model.metaArray. */
  arrays: Record<string, MetaValue[]>;
}

export function fakeModelFromFile(path: string, id = 'demo', source: 'demo' | 'recent' = 'demo'): FakeModelData {
  const h = readGgufHeaderSync(path);
  const s = summarize(h);
  const arrays: Record<string, MetaValue[]> = {};
  const metadata: MetaEntry[] = [];
  for (const [key, kv] of h.metadata) {
    const v = kv.value;
    if (isGgufArray(v)) {
      const items = v.items.map(scalar);
      if (items.length > 16) {
        arrays[key] = items;
        metadata.push({ key, type: 'ARRAY', value: { array: true, itemType: GGUF_TYPE_NAMES[v.itemType], length: items.length, head: items.slice(0, 16) } });
      } else metadata.push({ key, type: 'ARRAY', value: items as MetaValue });
    } else metadata.push({ key, type: kv.type === GgufType.ARRAY ? 'ARRAY' : GGUF_TYPE_NAMES[kv.type], value: scalar(v) });
  }
  const tensors: TensorRow[] = h.tensors.map((t) => {
    const m = /^blk\.(\d+)\./.exec(t.name);
    return { name: t.name, type: ggmlTypeName(t.type), typeId: t.type, dims: [...t.dims], elements: t.elements, bytes: t.bytes, offset: t.offset, layer: m ? Number(m[1]) : null };
  });
  const entry = { id, path, fileName: basename(path), architecture: s.architecture, name: s.name, parameters: s.parameters, quantization: s.quantization, fileSize: s.fileSize, error: null, source };
  return {
    arrays,
    model: {
      entry,
      version: h.version,
      alignment: h.alignment,
      dataOffset: h.dataOffset,
      tensorCount: h.tensors.length,
      parameters: s.parameters,
      quantization: s.quantization,
      contextLength: s.contextLength,
      warnings: [...h.warnings],
      metadata,
      tensors,
      runnable: true,
      notRunnableReason: null,
    },
  };
}
