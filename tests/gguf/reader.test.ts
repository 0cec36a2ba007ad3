// The GGUF reader against real files from ../shared and hand-made fixtures.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GgufError } from '../../src/shared/errors.js';
import { readGgufHeader, readGgufHeaderSync, readTensorBytes } from '../../src/engine/gguf/file.js';
import { parseGgufHeader } from '../../src/engine/gguf/parse.js';
import { getArray, getNumber, hyperparameters, parameterCount, summarize } from '../../src/engine/gguf/keys.js';
import { FIXTURES, MODELS, sharedModel } from '../helpers.js';

function ggufFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...ggufFilesUnder(p));
    else if (name.endsWith('.gguf')) out.push(p);
  }
  return out;
}

describe('real files from ../shared', () => {
  const files = [...ggufFilesUnder(MODELS), ...ggufFilesUnder(FIXTURES)].filter((f) => !f.includes('/legacy/'));

  it('finds the shared model files', () => {
    expect(files.length).toBeGreaterThanOrEqual(15);
  });

  for (const f of files) {
    it(`parses ${f.slice(MODELS.length - 6)}`, async () => {
      const h = await readGgufHeader(f);
      expect(h.fileSize).toBe(statSync(f).size);
      // Data ends inside the file, and the last tensor ends exactly at the end (SOURCES.md checked this).
      if (h.tensors.length) {
        const end = Math.max(...h.tensors.map((t) => h.dataOffset + t.offset + t.bytes));
        expect(end).toBeLessThanOrEqual(h.fileSize);
        expect(h.fileSize - end).toBeLessThan(h.alignment);
      }
    });
  }

  it('stories260K.gguf: exact expectations', async () => {
    const h = await readGgufHeader(sharedModel('stories260K.gguf'));
    expect(h.version).toBe(3);
    expect(h.tensors.length).toBe(48);
    expect(h.alignment).toBe(32);
    const hp = hyperparameters(h);
    expect(hp).toMatchObject({ arch: 'llama', nEmbd: 64, nLayer: 5, nHead: 8, nHeadKv: 4, nFf: 172, nVocab: 512, ropeFreqBase: 10000 });
    expect(getArray(h, 'tokenizer.ggml.tokens')!.length).toBe(512);
    expect(h.tensors.every((t) => t.type === 0)).toBe(true);
    // 512×64 embedding + 5 layers × (4 attn + 3 ffn + 2 norms) + output norm + output.
    const perLayer = 64 * 64 * 2 + 64 * 32 * 2 + 172 * 64 * 3 + 64 * 2;
    expect(parameterCount(h)).toBe(512 * 64 * 2 + 5 * perLayer + 64);
    const emb = h.tensors.find((t) => t.name === 'token_embd.weight')!;
    expect(emb.dims).toEqual([64, 512]);
    expect(emb.bytes).toBe(64 * 512 * 4);
  });

  it('a vocab-only file with no padding after the metadata', async () => {
    const f = sharedModel('llama.cpp-vocab/ggml-vocab-llama-spm.gguf');
    const h = await readGgufHeader(f);
    expect(h.tensors.length).toBe(0);
    expect(h.headerBytes).toBe(statSync(f).size);
    expect(getArray(h, 'tokenizer.ggml.tokens')!.length).toBe(32000);
    expect(summarize(h).architecture).toBe('llama');
  });

  it('the Q8_0 GGUF v2 file with flat-quantised ffn_down rows', () => {
    const h = readGgufHeaderSync(sharedModel('tinyllamas-stories-260k-q8_0.gguf'));
    expect(h.version).toBe(2);
    const down = h.tensors.filter((t) => t.flatBlocks);
    expect(down.map((t) => t.name).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `blk.${i}.ffn_down.weight`));
    expect(down[0].dims).toEqual([172, 64]);
    expect(down[0].bytes).toBe((172 * 64 / 32) * 34);
    expect(h.warnings.length).toBe(5);
  });

  it('refuses GGUF v1 with a message saying to re-convert', async () => {
    const err = await readGgufHeader(sharedModel('legacy/tinyllamas-stories-260k-f32.gguf')).catch((e) => e);
    expect(err).toBeInstanceOf(GgufError);
    expect(err.code).toBe('GGUF_VERSION');
    expect(err.message).toMatch(/version 1 .*re-convert/);
  });

  it('reads tensor bytes at the right offset', () => {
    const f = sharedModel('stories260K.gguf');
    const h = readGgufHeaderSync(f);
    const norm = readTensorBytes(f, h, 'output_norm.weight');
    expect(norm.length).toBe(64 * 4);
    const v = new Float32Array(norm.buffer, norm.byteOffset, 64);
    // RMSNorm gains of a trained model: positive, order 1.
    expect(Math.min(...v)).toBeGreaterThan(0);
    expect(Math.max(...v)).toBeLessThan(20);
  });

  it('u64 metadata beyond 2^53 stays exact', () => {
    const h = readGgufHeaderSync(sharedModel('stories260K.gguf'));
    expect(getNumber(h, 'tokenizer.ggml.padding_token_id')).toBe(4294967295);
  });
});

describe('bad input', () => {
  it('missing file: GGUF_NOT_FOUND', async () => {
    await expect(readGgufHeader('/nonexistent/x.gguf')).rejects.toMatchObject({ code: 'GGUF_NOT_FOUND' });
  });
  it('a folder: GGUF_IO', async () => {
    await expect(readGgufHeader(MODELS)).rejects.toMatchObject({ code: 'GGUF_IO' });
  });
  it('not a GGUF: names the magic it found', () => {
    expect(() => parseGgufHeader(new TextEncoder().encode('hello world'))).toThrow(/starts with "hell" instead of "GGUF"/);
  });
  it('big-endian: refused by name', () => {
    const b = new Uint8Array([0x47, 0x47, 0x55, 0x46, 0, 0, 0, 3, ...new Array(16).fill(0)]);
    expect(() => parseGgufHeader(b)).toThrow(expect.objectContaining({ code: 'GGUF_BIG_ENDIAN' }));
  });
  it('unknown version', () => {
    const b = new Uint8Array([0x47, 0x47, 0x55, 0x46, 9, 0, 0, 0, ...new Array(16).fill(0)]);
    expect(() => parseGgufHeader(b)).toThrow(/version 9 is not supported/);
  });
});
