// Hostile GGUF headers: caps on header bytes, array lengths and nested arrays, each named in the
// error; big numeric arrays kept as typed arrays with the same values as before.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_ARRAY_ITEMS, MAX_HEADER_BYTES, MAX_NESTED_ARRAYS, parseGgufHeader } from '../../src/engine/gguf/parse.js';
import { readGgufHeader } from '../../src/engine/gguf/file.js';
import { GgufType, arrayAt, arrayHead, arrayLength, type GgufArray } from '../../src/engine/gguf/types.js';
import { kv, writeGguf } from '../../src/engine/gguf/writer.js';

/** A header of `arrays` UINT8 arrays of `items` zero bytes each, written by hand (fast). */
function byteArrays(arrays: number, items: number): Uint8Array {
  const keyLen = 6; // "k00000"
  const each = 8 + keyLen + 4 + 4 + 8 + items;
  const b = new Uint8Array(24 + arrays * each);
  const v = new DataView(b.buffer);
  v.setUint32(0, 0x46554747, true); // "GGUF"
  v.setUint32(4, 3, true);
  v.setBigUint64(8, 0n, true);
  v.setBigUint64(16, BigInt(arrays), true);
  let p = 24;
  for (let i = 0; i < arrays; i++) {
    v.setBigUint64(p, BigInt(keyLen), true);
    b.set(new TextEncoder().encode(`k${String(i).padStart(5, '0')}`), p + 8);
    p += 8 + keyLen;
    v.setUint32(p, GgufType.ARRAY, true);
    v.setUint32(p + 4, GgufType.UINT8, true);
    v.setBigUint64(p + 8, BigInt(items), true);
    p += 16 + items;
  }
  return b;
}

describe('GGUF header limits', () => {
  it('refuses a header larger than the cap, saying the cap', () => {
    const items = MAX_ARRAY_ITEMS; // each array is allowed; together they pass the header cap
    const b = byteArrays(Math.ceil(MAX_HEADER_BYTES / items) + 1, items);
    const t0 = performance.now();
    expect(() => parseGgufHeader(b)).toThrow(/^the header is larger than 64 MiB, the most Pantheon reads \(real models need under 20 MiB\)/);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('the cap holds when reading from disk too: the read stops at 64 MiB', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pn-limits-'));
    const f = join(dir, 'huge.gguf');
    writeFileSync(f, byteArrays(Math.ceil(MAX_HEADER_BYTES / MAX_ARRAY_ITEMS) + 1, MAX_ARRAY_ITEMS));
    await expect(readGgufHeader(f)).rejects.toMatchObject({ code: 'GGUF_TOO_LARGE', message: expect.stringMatching(/larger than 64 MiB/) });
  });

  it('refuses an array longer than the cap, saying the cap', () => {
    const b = byteArrays(1, MAX_ARRAY_ITEMS + 1);
    expect(() => parseGgufHeader(b)).toThrow(`metadata "k00000" has ${MAX_ARRAY_ITEMS + 1} items, more than the ${MAX_ARRAY_ITEMS} Pantheon reads`);
  });

  it('refuses more nested arrays than the cap, fast', () => {
    const inner = Array.from({ length: MAX_NESTED_ARRAYS + 1 }, () => ({ itemType: GgufType.UINT8, items: [1] }));
    const b = writeGguf([kv.arr('x.nested', GgufType.ARRAY, inner)], []);
    const t0 = performance.now();
    expect(() => parseGgufHeader(b)).toThrow(`more than ${MAX_NESTED_ARRAYS}; real models nest none`);
    expect(performance.now() - t0).toBeLessThan(500);
    // just under the cap still parses
    const ok = parseGgufHeader(writeGguf([kv.arr('x.nested', GgufType.ARRAY, inner.slice(0, 100))], []));
    expect(arrayLength(ok.metadata.get('x.nested')!.value as GgufArray)).toBe(100);
  });
});

describe('big numeric arrays are typed arrays', () => {
  const n = 1000;
  const scores = Array.from({ length: n }, (_, i) => Math.fround(i / 7 - 3));
  const types = Array.from({ length: n }, (_, i) => i % 5);
  const flags = Array.from({ length: n }, (_, i) => i % 3 === 0);
  const big = Array.from({ length: n }, (_, i) => (i === 1 ? (1n << 60n) : i * 1000));
  const h = parseGgufHeader(writeGguf([
    kv.arr('tokenizer.ggml.scores', GgufType.FLOAT32, scores),
    kv.arr('tokenizer.ggml.token_type', GgufType.INT32, types),
    kv.arr('x.flags', GgufType.BOOL, flags),
    kv.arr('x.u64', GgufType.UINT64, big),
    kv.arr('x.small', GgufType.UINT32, [1, 2, 3]),
  ], []));
  const arr = (k: string) => h.metadata.get(k)!.value as GgufArray;

  it('stores them typed, with the same values through items, at and head', () => {
    expect(arr('tokenizer.ggml.scores').typed).toBeInstanceOf(Float32Array);
    expect(arr('tokenizer.ggml.token_type').typed).toBeInstanceOf(Int32Array);
    expect(arr('x.flags').typed).toBeInstanceOf(Uint8Array);
    expect(arr('x.u64').typed).toBeInstanceOf(BigUint64Array);
    expect(arr('x.small').typed).toBeUndefined();
    expect(arr('tokenizer.ggml.scores').items).toEqual(scores);
    expect(arr('tokenizer.ggml.token_type').items).toEqual(types);
    expect(arr('x.flags').items).toEqual(flags);
    expect(arr('x.u64').items).toEqual(big);
    expect(arrayLength(arr('x.flags'))).toBe(n);
    expect(arrayAt(arr('tokenizer.ggml.scores'), 10)).toBe(scores[10]);
    expect(arrayAt(arr('x.u64'), 1)).toBe(1n << 60n);
    expect(arrayAt(arr('x.flags'), n)).toBeUndefined();
    expect(arrayHead(arr('x.flags'), 4)).toEqual([true, false, false, true]);
    expect(arr('x.small').items).toEqual([1, 2, 3]);
  });

  it('round-trips through the writer', () => {
    const again = parseGgufHeader(writeGguf([...h.metadata.values()].map((e) => ({ key: e.key, type: e.type, value: e.value })), []));
    expect((again.metadata.get('tokenizer.ggml.scores')!.value as GgufArray).items).toEqual(scores);
  });

  it('a bool array with a byte other than 0 or 1 is corrupt', () => {
    const b = writeGguf([kv.arr('x.flags', GgufType.BOOL, flags)], []);
    b[b.length - 7] = 2; // an item near the end
    expect(() => parseGgufHeader(b)).toThrow(/x\.flags" is a bool with value 2: the file is corrupt/);
  });
});
