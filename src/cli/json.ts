// Converting metadata values to JSON-safe values: integers beyond 2^53 become strings.

import { isGgufArray, type GgufValue } from '../engine/gguf/types.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

export function toJsonValue(v: GgufValue): JsonValue {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (isGgufArray(v)) return v.items.map(toJsonValue);
  return v;
}
