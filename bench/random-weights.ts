// Deterministic random weights for the models the bench and the tests generate (make-models.ts,
// make-tiny256.ts): one generator per tensor (mulberry32, seeded by the FNV-1a hash of a name),
// normal numbers by Box-Muller, F16 by Pantheon's converter, tokenizer keys copied from a
// vocab-only GGUF. The same name gives the same bytes on every run and machine.

import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readGgufHeaderSync } from '../src/engine/gguf/file.js';
import { isGgufArray } from '../src/engine/gguf/types.js';
import { kv, type WriterKv } from '../src/engine/gguf/writer.js';
import { f32ToF16 } from '../src/engine/quant/index.js';

/** 32-bit FNV-1a of a string (the seed of a tensor). */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** mulberry32: a small 32-bit generator, uniform in [0, 1). */
export function uniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fill out[] with normal(0, std) numbers (Box-Muller, two per pair of uniforms); returns out. */
export function fillNormal(out: Float32Array, std: number, u: () => number): Float32Array {
  for (let i = 0; i < out.length; i += 2) {
    const r = std * Math.sqrt(-2 * Math.log(1 - u()));
    const th = 2 * Math.PI * u();
    out[i] = r * Math.cos(th);
    if (i + 1 < out.length) out[i + 1] = r * Math.sin(th);
  }
  return out;
}

/** x as little-endian F16 bytes, converted into `u16` (at least x.length long; a new array by default). */
export function f16Bytes(x: Float32Array, u16 = new Uint16Array(x.length)): Uint8Array {
  for (let i = 0; i < x.length; i++) u16[i] = f32ToF16(x[i]);
  return new Uint8Array(u16.buffer, u16.byteOffset, x.length * 2);
}

/** n normal(0, std) numbers from the generator seeded by `name`, as F16 bytes. */
export function normalF16(name: string, n: number, std: number): Uint8Array {
  return f16Bytes(fillNormal(new Float32Array(n), std, uniform(fnv1a(name))));
}

/** The tokenizer.* keys of a vocab-only GGUF, as writer entries. */
export function tokenizerKvs(vocabPath: string): WriterKv[] {
  const h = readGgufHeaderSync(vocabPath);
  const out: WriterKv[] = [];
  for (const e of h.metadata.values()) {
    if (!e.key.startsWith('tokenizer.')) continue;
    out.push(isGgufArray(e.value) ? kv.arr(e.key, e.value.itemType, e.value.items) : { key: e.key, type: e.type, value: e.value });
  }
  return out;
}

/** The vocabulary size of a model's metadata (the length of its tokenizer.ggml.tokens entry). */
export function vocabSize(kvs: readonly WriterKv[]): number {
  const tokens = kvs.find((e) => e.key === 'tokenizer.ggml.tokens')?.value;
  return tokens !== undefined && isGgufArray(tokens) ? tokens.items.length : 0;
}

/**
 * The command line of a model generator (`node bin/run-ts.mjs bench/make-X.ts [outDir]`): when the
 * module at `moduleUrl` is the script being run, write each of `names` as outDir/<name>.gguf
 * (outDir by default bench/models/<sub>) and print its path.
 */
export function writeModelsWhenRun(moduleUrl: string, sub: string, names: readonly string[], write: (name: string, path: string) => void): void {
  if (!process.argv[1] || resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  const dir = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), 'models', sub));
  mkdirSync(dir, { recursive: true });
  for (const name of names) {
    const path = join(dir, `${name}.gguf`);
    write(name, path);
    console.log(path);
  }
}
