// Writer → reader round trips (property tests), every value type and every tensor type id, and the
// reader's behaviour on truncated and corrupted input.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GgufError } from '../../src/shared/errors.js';
import { GGML_TYPES } from '../../src/engine/gguf/ggml-types.js';
import { parseGgufHeader } from '../../src/engine/gguf/parse.js';
import { arrayAt, arrayHead, arrayLength, GgufType, isGgufArray, type GgufValue } from '../../src/engine/gguf/types.js';
import { kv, writeGguf, type WriterKv, type WriterTensor } from '../../src/engine/gguf/writer.js';

/** Arbitrary for a value of a given GGUF type, as the reader returns it. */
function valueOf(type: GgufType, depth = 0): fc.Arbitrary<GgufValue> {
  switch (type) {
    case GgufType.UINT8: return fc.integer({ min: 0, max: 255 });
    case GgufType.INT8: return fc.integer({ min: -128, max: 127 });
    case GgufType.UINT16: return fc.integer({ min: 0, max: 65535 });
    case GgufType.INT16: return fc.integer({ min: -32768, max: 32767 });
    case GgufType.UINT32: return fc.integer({ min: 0, max: 0xffffffff });
    case GgufType.INT32: return fc.integer({ min: -0x80000000, max: 0x7fffffff });
    case GgufType.FLOAT32: return fc.float({ noNaN: true });
    case GgufType.BOOL: return fc.boolean();
    case GgufType.STRING: return fc.string({ unit: 'grapheme', maxLength: 40 });
    case GgufType.UINT64: return fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((b) => (b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b));
    case GgufType.INT64: return fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }).map((b) => (b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b));
    case GgufType.FLOAT64: return fc.double({ noNaN: true });
    case GgufType.ARRAY: {
      const item = depth < 2 ? fc.integer({ min: 0, max: 12 }) : fc.integer({ min: 0, max: 12 }).filter((t) => t !== GgufType.ARRAY);
      return item.chain((itemType) => fc.array(valueOf(itemType, depth + 1), { maxLength: depth === 0 ? 300 : 5 }).map((items) => ({ itemType, items })));
    }
  }
  throw new Error(`type ${type}`);
}

const kvArb: fc.Arbitrary<WriterKv[]> = fc.uniqueArray(
  fc.record({ key: fc.string({ minLength: 1, maxLength: 30 }), type: fc.integer({ min: 0, max: 12 }) }).chain(({ key, type }) => valueOf(type).map((value) => ({ key, type, value }))),
  { selector: (k) => k.key, maxLength: 12 },
);

function plain(v: GgufValue): unknown {
  return isGgufArray(v) ? { t: v.itemType, items: v.items.map(plain) } : v;
}

/** Random bytes for a tensor of `type` with `rows` rows of one block each. */
function tensorOf(name: string, type: number, rows: number, seed: number): WriterTensor {
  const info = GGML_TYPES[type];
  const data = new Uint8Array(info.typeSize * rows);
  let x = seed * 2654435761 >>> 0;
  for (let i = 0; i < data.length; i++) data[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  return { name, dims: [info.blockSize, rows], type, data };
}

describe('GGUF writer → reader', () => {
  it('round-trips arbitrary metadata of every value type, arrays of arrays included', () => {
    fc.assert(
      fc.property(kvArb, (kvs) => {
        const h = parseGgufHeader(writeGguf(kvs, []));
        expect([...h.metadata.keys()]).toEqual(kvs.map((k) => k.key));
        for (const k of kvs) {
          const got = h.metadata.get(k.key)!;
          expect(got.type).toBe(k.type);
          expect(plain(got.value)).toEqual(plain(k.value));
        }
      }),
      { numRuns: 150 },
    );
  });

  it('big string arrays decode lazily: length, head and at agree with the decoded items', () => {
    const words = Array.from({ length: 1000 }, (_, i) => (i % 3 === 0 ? `Ġtok${i}` : i % 3 === 1 ? `▁é${i}` : `😀${i}`));
    const h = parseGgufHeader(writeGguf([kv.arr('tokenizer.ggml.tokens', GgufType.STRING, words)], []));
    const a = h.metadata.get('tokenizer.ggml.tokens')!.value;
    if (!isGgufArray(a)) throw new Error('not an array');
    expect(arrayLength(a)).toBe(1000);
    expect(arrayHead(a, 4)).toEqual(words.slice(0, 4));
    expect([0, 1, 2, 998, 999].map((i) => arrayAt(a, i))).toEqual([0, 1, 2, 998, 999].map((i) => words[i]));
    expect(arrayAt(a, 1000)).toBeUndefined();
    expect(a.items).toEqual(words);
    expect(arrayAt(a, 500)).toBe(words[500]);
  });

  it('round-trips a tensor of every ggml type id, aligned, bytes intact', () => {
    const live = GGML_TYPES.filter((t) => !t.removed);
    const tensors = live.map((t, i) => tensorOf(`t.${t.name}`, t.id, 3, i + 1));
    for (const alignment of [32, 64, 4096]) {
      const file = writeGguf([kv.u32('general.alignment', alignment), kv.str('general.architecture', 'llama')], tensors);
      const h = parseGgufHeader(file);
      expect(h.alignment).toBe(alignment);
      expect(h.dataOffset % alignment).toBe(0);
      expect(h.tensors.map((t) => t.type)).toEqual(live.map((t) => t.id));
      for (const [i, t] of h.tensors.entries()) {
        expect(t.offset % alignment).toBe(0);
        expect(t.dims).toEqual([live[i].blockSize, 3]);
        const bytes = file.subarray(h.dataOffset + t.offset, h.dataOffset + t.offset + t.bytes);
        expect(bytes).toEqual(tensors[i].data);
      }
    }
  });

  it('refuses removed type ids by name', () => {
    const file = writeGguf([], [tensorOf('w', 8, 1, 1)]);
    const h = parseGgufHeader(file);
    // Patch the type field (u32 after name, n_dims and dims) to removed id 31 (Q4_0_4_4).
    const typeAt = h.headerBytes - 8 - 4;
    new DataView(file.buffer).setUint32(typeAt, 31, true);
    expect(() => parseGgufHeader(file)).toThrow(/Q4_0_4_4 \(type 31\), a format ggml has removed/);
    new DataView(file.buffer).setUint32(typeAt, 77, true);
    expect(() => parseGgufHeader(file)).toThrow(/unknown ggml type 77/);
  });

  it('rejects duplicate keys and tensor names, bad alignment, overlapping tensors', () => {
    const dupKey = writeGguf([kv.u32('a', 1), kv.u32('a', 2)], []);
    expect(() => parseGgufHeader(dupKey)).toThrow(expect.objectContaining({ code: 'GGUF_DUPLICATE' }));
    const dupTensor = writeGguf([], [tensorOf('w', 0, 1, 1), tensorOf('w', 0, 1, 2)]);
    expect(() => parseGgufHeader(dupTensor)).toThrow(/tensor "w" appears twice/);
    const badAlign = writeGguf([kv.u32('general.alignment', 48)], []);
    expect(() => parseGgufHeader(badAlign)).toThrow(/power of two/);
    // Two tensors, the second's offset patched to the first's: overlap.
    const two = writeGguf([], [tensorOf('a', 0, 8, 1), tensorOf('b', 0, 8, 2)]);
    const h = parseGgufHeader(two);
    new DataView(two.buffer).setBigUint64(h.headerBytes - 8, 0n, true);
    expect(() => parseGgufHeader(two)).toThrow(/overlap/);
  });

  it('rejects a row length that is not a multiple of the block size', () => {
    const t = tensorOf('w', 12, 1, 1); // Q4_K, 256 per block
    t.dims = [128, 2]; // 256 elements in all, but rows of 128: flat blocks, a warning
    const h = parseGgufHeader(writeGguf([], [t]));
    expect(h.tensors[0].flatBlocks).toBe(true);
    expect(h.warnings[0]).toMatch(/rows of 128 elements/);
    const bad = tensorOf('w', 12, 1, 1);
    bad.dims = [100, 1];
    bad.data = new Uint8Array(0);
    // The writer checks sizes, so write a valid file and patch dims[0] to 100.
    const file = writeGguf([], [tensorOf('w', 12, 1, 1)]);
    const hh = parseGgufHeader(file);
    new DataView(file.buffer).setBigUint64(hh.headerBytes - 8 - 4 - 16, 100n, true);
    expect(() => parseGgufHeader(file)).toThrow(/rows of 100 elements, not a multiple of the 256-element Q4_K block/);
  });
});

describe('corrupted input never produces anything but a GgufError', () => {
  const small = writeGguf(
    [kv.str('general.architecture', 'llama'), kv.u32('llama.block_count', 1), kv.arr('tokenizer.ggml.tokens', GgufType.STRING, ['a', 'bb', 'ccc']),
      kv.arr('nested', GgufType.ARRAY, [{ itemType: GgufType.INT8, items: [1, -2] }]), kv.u64('big', 1n << 60n)],
    [tensorOf('w', 8, 2, 3), tensorOf('n', 0, 1, 4)],
  );

  function onlyGgufErrors(bytes: Uint8Array): void {
    try {
      const h = parseGgufHeader(bytes);
      // A lazily decoded array must decode without throwing too.
      for (const kvp of h.metadata.values()) if (isGgufArray(kvp.value)) void kvp.value.items.length;
    } catch (e) {
      if (!(e instanceof GgufError)) throw e;
    }
  }

  it('truncation at every byte', () => {
    const h = parseGgufHeader(small);
    expect(h.tensors.length).toBe(2);
    // Cutting only the padding after the last tensor leaves a complete file.
    const needed = h.dataOffset + Math.max(...h.tensors.map((t) => t.offset + t.bytes));
    expect(parseGgufHeader(small.slice(0, needed)).tensors.length).toBe(2);
    for (let n = 0; n < needed; n++) {
      const cut = small.slice(0, n);
      let err: unknown;
      try {
        parseGgufHeader(cut);
      } catch (e) {
        err = e;
      }
      expect(err, `cut at ${n}`).toBeInstanceOf(GgufError);
    }
  });

  it('random byte flips', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(small.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (flips) => {
        const b = small.slice();
        for (const [at, v] of flips) b[at] = v;
        onlyGgufErrors(b);
      }),
      { numRuns: 3000 },
    );
  });

  it('huge counts do not allocate', () => {
    const b = small.slice();
    // tensor count (u64 at byte 8) and kv count (u64 at byte 16) set to 2^62.
    new DataView(b.buffer).setBigUint64(8, 1n << 62n, true);
    expect(() => parseGgufHeader(b)).toThrow(/tensor count is 4611686018427387904, more than the rest of the file can hold/);
    const c = small.slice();
    new DataView(c.buffer).setBigUint64(16, 1n << 40n, true);
    expect(() => parseGgufHeader(c)).toThrow(/metadata count/);
  });
});
