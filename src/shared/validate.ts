// Checks for payloads that arrive from the page (over IPC, a MessagePort or the harness WebSocket)
// or from a file: every field is checked for type and range before use, and a bad payload fails
// with one UsageError line naming the field. The field checks and the limits live here; what each
// request of the contract takes is in requests.ts, built from them.

import { UsageError } from './errors.js';

export type Fields = Record<string, unknown>;

export function record(v: unknown, what: string): Fields {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new UsageError(`${what} must be an object.`);
  return v as Fields;
}

export function string(v: unknown, what: string, maxLength: number): string {
  if (typeof v !== 'string') throw new UsageError(`${what} must be a string.`);
  if (v.length > maxLength) throw new UsageError(`${what} is too long (${v.length} characters; at most ${maxLength}).`);
  return v;
}

export function number(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new UsageError(`${what} must be a finite number.`);
  if (v < min || v > max) throw new UsageError(`${what} must be between ${min} and ${max} (got ${v}).`);
  return v;
}

/** A finite number in (0, max]. */
export function positive(v: unknown, what: string, max: number): number {
  const n = number(v, what, 0, max);
  if (n === 0) throw new UsageError(`${what} must be greater than 0.`);
  return n;
}

export function integer(v: unknown, what: string, min: number, max: number): number {
  const n = number(v, what, min, max);
  if (!Number.isInteger(n)) throw new UsageError(`${what} must be a whole number (got ${n}).`);
  return n;
}

export function bool(v: unknown, what: string): boolean {
  if (typeof v !== 'boolean') throw new UsageError(`${what} must be true or false.`);
  return v;
}

export function oneOf<T extends string>(v: unknown, what: string, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw new UsageError(`${what} must be one of ${allowed.map((a) => `"${a}"`).join(', ')}.`);
  }
  return v as T;
}

export function array(v: unknown, what: string, maxItems: number): unknown[] {
  if (!Array.isArray(v)) throw new UsageError(`${what} must be an array.`);
  if (v.length > maxItems) throw new UsageError(`${what} has too many items (${v.length}; at most ${maxItems}).`);
  return v;
}

// Limits: generous for real use, small enough that a hostile page cannot make us allocate much.
export const MAX_MESSAGE_CHARS = 4_000_000;
export const MAX_MESSAGES = 10_000;
export const MAX_STOP_STRINGS = 16;
export const MAX_STOP_CHARS = 256;
export const MAX_TITLE = 200;
export const MAX_SYSTEM_PROMPT = 100_000;
/** Context sizes a model may be loaded with: from the settings (MIN_CONTEXT up) or the CLI (1 up). */
export const MIN_CONTEXT = 16;
export const MAX_CONTEXT = 1 << 20;
export const MAX_THREADS = 256;
