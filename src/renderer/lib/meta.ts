// Metadata values as text for the viewer: scalars, short arrays, and summaries of long arrays.

import type { MetaArrayInfo, MetaEntry, MetaValue } from '../../shared/contract.js';

export function isArrayInfo(v: MetaValue): v is MetaArrayInfo {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && (v as MetaArrayInfo).array === true;
}

/** One value as display text; strings quoted so spaces and empty strings are visible. */
export function valueText(v: MetaValue, max = 400): string {
  if (typeof v === 'string') {
    const s = JSON.stringify(v);
    return s.length > max ? `${s.slice(0, max)}… (${v.length} chars)` : s;
  }
  if (Array.isArray(v)) return `[${v.map((x) => valueText(x, 80)).join(', ')}]`;
  if (isArrayInfo(v)) return `[${v.head.map((x) => valueText(x, 40)).join(', ')}${v.length > v.head.length ? ', …' : ''}]`;
  return String(v);
}

/** The type column: 'UINT32', or 'ARRAY of STRING [32000]'. */
export function typeText(e: MetaEntry): string {
  if (isArrayInfo(e.value)) return `${e.value.itemType}[${e.value.length}]`;
  if (Array.isArray(e.value)) return `${e.type}[${e.value.length}]`;
  return e.type;
}

/** The value as copied to the clipboard: strings raw, everything else as JSON. */
export function copyText(v: MetaValue): string {
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** Filter entries by key, type or value text (case-insensitive). */
export function filterMeta(entries: readonly MetaEntry[], q: string): MetaEntry[] {
  const s = q.trim().toLowerCase();
  if (!s) return [...entries];
  return entries.filter((e) => e.key.toLowerCase().includes(s) || typeText(e).toLowerCase().includes(s) || valueText(e.value).toLowerCase().includes(s));
}

/** The model's blocks (`<architecture>.block_count`): the GPU layers control's maximum; null when the header has none. */
export function modelLayers(model: { metadata: readonly MetaEntry[] }): number | null {
  const arch = model.metadata.find((e) => e.key === 'general.architecture')?.value;
  const n = typeof arch === 'string' ? model.metadata.find((e) => e.key === `${arch}.block_count`)?.value : undefined;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : null;
}
