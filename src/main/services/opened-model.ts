// What the page sees of an opened model: every metadata key with its type and a displayable value
// (bigints as decimal strings, long arrays summarised and fetched in slices), every tensor with its
// layer index, and whether the engine can run it. Built from the header only.

import type { MetaArraySlice, MetaEntry, MetaScalar, MetaValue, OpenedModel, TensorRow } from '../../shared/contract.js';
import { UsageError } from '../../shared/errors.js';
import {
  GGUF_TYPE_NAMES, GgufType, architecture, getNumber, ggmlTypeName, isGgufArray, parameterCount, quantLabel,
  type GgufHeader, type GgufValue,
} from '../../engine/gguf/index.js';

/** Arrays up to this long are sent whole; longer ones as a summary with this many head items. */
export const ARRAY_INLINE_MAX = 16;
/** The most items one `model:metaArray` call returns. */
export const META_SLICE_MAX = 1000;

/** The shortest decimal that reads back as the same float32 (1e-5 rather than 9.999999747378752e-6). */
export function shortestFloat32(x: number): number {
  if (!Number.isFinite(x) || Math.fround(x) !== x) return x;
  for (let p = 1; p <= 9; p++) {
    const y = Number(x.toPrecision(p));
    if (Math.fround(y) === x) return y;
  }
  return x;
}

function scalar(v: GgufValue, type: GgufType): MetaScalar {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && type === GgufType.FLOAT32) return shortestFloat32(v);
  return v as MetaScalar;
}

/** A metadata value as shown; `type` is the value's GGUF type (for arrays: the array itself). */
export function toMetaValue(v: GgufValue, type: GgufType): MetaValue {
  if (!isGgufArray(v)) return scalar(v, type);
  const nested = v.itemType === GgufType.ARRAY;
  if (!nested && v.items.length <= ARRAY_INLINE_MAX) return v.items.map((x) => scalar(x, v.itemType));
  return {
    array: true,
    itemType: GGUF_TYPE_NAMES[v.itemType] ?? String(v.itemType),
    length: v.items.length,
    head: v.items.slice(0, ARRAY_INLINE_MAX).map((x) => toMetaValue(x, v.itemType)),
  };
}

const LAYER = /^blk\.(\d+)\./;

export function layerOf(tensorName: string): number | null {
  const m = LAYER.exec(tensorName);
  return m ? Number(m[1]) : null;
}

export function tensorRows(h: GgufHeader): TensorRow[] {
  return h.tensors.map((t) => ({
    name: t.name,
    type: ggmlTypeName(t.type),
    typeId: t.type,
    dims: [...t.dims],
    elements: t.elements,
    bytes: t.bytes,
    offset: t.offset,
    layer: layerOf(t.name),
  }));
}

export function metadataEntries(h: GgufHeader): MetaEntry[] {
  return [...h.metadata.values()].map((kv) => ({
    key: kv.key,
    type: GGUF_TYPE_NAMES[kv.type] ?? String(kv.type),
    value: toMetaValue(kv.value, kv.type),
  }));
}

/**
 * Whether the engine runs this file, and why not when it does not: one sentence that the Chat tab
 * shows as it is, so it names what is missing and what still works.
 */
export function runnability(h: GgufHeader, supported: readonly string[]): { runnable: boolean; notRunnableReason: string | null } {
  const no = (why: string) => ({ runnable: false, notRunnableReason: why });
  const arch = architecture(h);
  if (!arch) return no('Pantheon cannot chat with this file: it has no general.architecture key, so it is not a model; its metadata and tensors can still be read.');
  // The architecture first: a vocabulary file of an architecture we do not run says the bigger reason.
  if (!supported.includes(arch)) {
    return no(`Pantheon cannot chat with this model: it does not run the "${arch}" architecture yet (it runs ${supported.join(', ')}); its metadata and tensors can still be read.`);
  }
  if (h.tensors.length === 0) return no('Pantheon cannot chat with this file: it holds a vocabulary but no weights (a vocabulary-only GGUF); its metadata can still be read.');
  if (!isGgufArray(h.metadata.get('tokenizer.ggml.tokens')?.value)) {
    return no('Pantheon cannot chat with this model: it has no tokenizer (tokenizer.ggml.tokens is missing); its metadata and tensors can still be read.');
  }
  return { runnable: true, notRunnableReason: null };
}

/** All of OpenedModel but its library entry: what comes from the header (built in the header worker). */
export function openedView(h: GgufHeader, supported: readonly string[]): Omit<OpenedModel, 'entry'> {
  const arch = architecture(h);
  return {
    version: h.version,
    alignment: h.alignment,
    dataOffset: h.dataOffset,
    tensorCount: h.tensors.length,
    parameters: parameterCount(h),
    quantization: quantLabel(h),
    contextLength: arch ? getNumber(h, `${arch}.context_length`) ?? null : null,
    warnings: [...h.warnings],
    metadata: metadataEntries(h),
    tensors: tensorRows(h),
    ...runnability(h, supported),
  };
}

/** Text an item is searched by: strings as they are, numbers and booleans in decimal. */
function itemText(v: GgufValue): string {
  if (isGgufArray(v)) return '';
  return typeof v === 'string' ? v : String(v);
}

/**
 * Spellings of a query as a vocabulary stores it: a space is "▁" in SentencePiece vocabularies
 * (llama, gemma) and "Ġ" in GPT-2 byte-level BPE ones (llama 3, qwen), so " the" finds "▁the" and "Ġthe".
 */
function spellings(q: string): string[] {
  const forms = new Set([q.toLowerCase()]);
  if (q.includes(' ')) {
    forms.add(q.replaceAll(' ', '\u2581').toLowerCase());
    forms.add(q.replaceAll(' ', '\u0120').toLowerCase());
  }
  return [...forms];
}

/**
 * A slice of a metadata array. Without a query: items [offset, offset+limit). With a query: "#123"
 * finds index 123 only; "123" finds index 123 first, then items whose text contains "123"; any other
 * text finds items containing it (case-insensitive). `offset`/`limit` then page through the matches.
 */
export function metaArraySlice(h: GgufHeader, key: string, offset: number, limit: number, query?: string): MetaArraySlice {
  const kv = h.metadata.get(key);
  if (!kv || !isGgufArray(kv.value)) throw new UsageError(`The model has no array metadata key "${key}".`);
  const { items, itemType } = kv.value;
  const n = Math.max(0, Math.min(limit, META_SLICE_MAX));
  const at = (i: number) => ({ index: i, value: toMetaValue(items[i], itemType) });
  const q = query?.trim() ? query : undefined;
  if (q === undefined) {
    const slice: MetaArraySlice['items'] = [];
    for (let i = offset; i < Math.min(items.length, offset + n); i++) slice.push(at(i));
    return { key, total: items.length, items: slice, matches: items.length };
  }
  const indexQuery = /^#\s*(\d+)$/.exec(q.trim());
  if (indexQuery) {
    const i = Number(indexQuery[1]);
    const hit = i < items.length ? [at(i)] : [];
    return { key, total: items.length, items: offset === 0 ? hit : [], matches: hit.length };
  }
  const matched: number[] = [];
  const digits = /^\d+$/.test(q.trim()) ? Number(q.trim()) : -1;
  if (digits >= 0 && digits < items.length) matched.push(digits);
  const forms = spellings(q);
  for (let i = 0; i < items.length; i++) {
    if (i === digits) continue;
    const text = itemText(items[i]).toLowerCase();
    if (forms.some((f) => text.includes(f))) matched.push(i);
  }
  return { key, total: items.length, items: matched.slice(offset, offset + n).map(at), matches: matched.length };
}
