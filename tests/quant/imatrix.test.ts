// `pantheon imatrix`: the importance matrix against llama.cpp's llama-imatrix (goldens recorded by
// bench/record-imatrix-goldens.ts over tests/quant/imatrix-text.ts), against a hand computation of
// layer 0's attention input, and the two file formats byte for byte against llama.cpp's files.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/command.js';
import { ScalarBackend } from '../../src/engine/backend/scalar.js';
import { readGgufHeaderSync, readTensorBytes } from '../../src/engine/gguf/file.js';
import { getNumber } from '../../src/engine/gguf/keys.js';
import { computeImatrix } from '../../src/engine/imatrix-run.js';
import { dequantizeTensor } from '../../src/engine/quant/index.js';
import { imatrixToDat, imatrixToGguf, importanceOf, readImatrix, type Imatrix } from '../../src/engine/quant/imatrix.js';
import { tokenizerFromGguf } from '../../src/engine/tokenizer/tokenizer.js';
import { ModelError } from '../../src/shared/errors.js';
import { ROOT, sharedModel } from '../helpers.js';
import { GOLDEN_CHUNKS, GOLDEN_CTX, GOLDEN_DATASET, imatrixText } from './imatrix-text.js';

const GOLDEN = join(ROOT, 'tests', 'golden', 'llama.cpp', 'imatrix');
const MODELS = ['tiny-llama-s5', 'tiny-qwen3moe-s1'];
const text = imatrixText();

const layerOf = (name: string) => Number(/^blk\.(\d+)\./.exec(name)![1]);

/**
 * Largest |a - b| per matrix (per expert) relative to that matrix's largest sum in b, over the
 * matrices (experts) both counted the same number of tokens for, in layers below `below`.
 */
function worstRelative(a: Imatrix, b: Imatrix, below = Infinity, from = 0): number {
  let worst = 0;
  for (const [name, eb] of b.entries) {
    if (layerOf(name) >= below || layerOf(name) < from) continue;
    const ea = a.entries.get(name)!;
    const cols = eb.cols;
    for (let m = 0; m < eb.counts.length; m++) {
      if (ea.counts[m] !== eb.counts[m]) continue;
      let max = 0;
      for (let j = 0; j < cols; j++) max = Math.max(max, eb.sums[m * cols + j]);
      for (let j = 0; j < cols; j++) worst = Math.max(worst, Math.abs(ea.sums[m * cols + j] - eb.sums[m * cols + j]) / (max || 1));
    }
  }
  return worst;
}

describe.each(MODELS)('imatrix of %s against llama-imatrix', (name) => {
  const model = sharedModel(`tiny-random/${name}.gguf`);
  const have = existsSync(model);
  // the reference backend on the dense model, the production one on both
  for (const backend of name === 'tiny-llama-s5' ? (['scalar', 'default'] as const) : (['default'] as const)) {
    it.skipIf(!have)(`same matrices, token counts (per expert) and sums within float noise (${backend} backend)`, async () => {
      const ref = readImatrix(join(GOLDEN, `${name}.imatrix`));
      const mine = await computeImatrix(model, text, { ctx: GOLDEN_CTX, chunks: GOLDEN_CHUNKS, dataset: GOLDEN_DATASET, backend: backend === 'scalar' ? new ScalarBackend() : undefined });
      expect([...mine.entries.keys()].sort()).toEqual([...ref.entries.keys()].sort());
      // A router near a tie can send a token to another expert in one engine (float noise in the
      // router logits): allow two such tokens per layer; dense matrices count exactly.
      for (const [n, e] of ref.entries) {
        const c = mine.entries.get(n)!.counts;
        expect(c.length, n).toBe(e.counts.length);
        expect(c.reduce((x, y) => x + y, 0), n).toBe(e.counts.reduce((x, y) => x + y, 0));
        expect(c.reduce((x, y, i) => x + Math.abs(y - e.counts[i]), 0), n).toBeLessThanOrEqual(4);
        if (c.length === 1) expect(c[0], n).toBe(e.counts[0]);
      }
      expect({ chunks: mine.chunkCount, size: mine.chunkSize, datasets: mine.datasets }).toEqual({ chunks: ref.chunkCount, size: ref.chunkSize, datasets: ref.datasets });
      // float noise up to the first layer where a token went to another expert; after it, that
      // token's hidden state differs, so the sums of later layers differ by more
      let flip = Infinity;
      for (const [n, e] of ref.entries) if (e.counts.some((c, i) => c !== mine.entries.get(n)!.counts[i])) flip = Math.min(flip, layerOf(n));
      expect(worstRelative(mine, ref, flip + 1)).toBeLessThan(5e-3);
      expect(worstRelative(mine, ref, Infinity, flip + 1)).toBeLessThan(5e-2);
    });
  }
});

describe('imatrix by hand', () => {
  const model = sharedModel('tiny-random/tiny-llama-s5.gguf');
  it.skipIf(!existsSync(model))("layer 0's q/k/v sums are Σ over the chunks' tokens of RMSNorm(embedding)² (BOS first in each chunk)", async () => {
    const h = readGgufHeaderSync(model);
    const tok = tokenizerFromGguf(h);
    const ctx = 32;
    const chunks = 3;
    const tokens = tok.encode(text, { addSpecial: true, parseSpecial: false });
    const emb = dequantizeTensor(h.tensors.find((t) => t.name === 'token_embd.weight')!, readTensorBytes(model, h, 'token_embd.weight'));
    const norm = new Float32Array(readTensorBytes(model, h, 'blk.0.attn_norm.weight').slice().buffer);
    const eps = getNumber(h, 'llama.attention.layer_norm_rms_epsilon')!;
    const D = norm.length;
    const want = new Float64Array(D);
    for (let c = 0; c < chunks; c++) {
      for (let i = 0; i < ctx; i++) {
        const t = i === 0 ? tok.bos! : tokens[c * ctx + i];
        let ss = 0;
        for (let j = 0; j < D; j++) ss += emb[t * D + j] ** 2;
        const scale = 1 / Math.sqrt(ss / D + eps);
        for (let j = 0; j < D; j++) want[j] += (emb[t * D + j] * scale * norm[j]) ** 2;
      }
    }
    const im = await computeImatrix(model, text, { ctx, chunks, backend: new ScalarBackend() });
    for (const m of ['attn_q', 'attn_k', 'attn_v']) {
      const e = im.entries.get(`blk.0.${m}.weight`)!;
      expect(Array.from(e.counts)).toEqual([ctx * chunks]);
      for (let j = 0; j < D; j++) expect(Math.abs(e.sums[j] - want[j]) / want[j]).toBeLessThan(1e-5);
    }
    // the importance quantize uses: the mean square
    const imp = importanceOf(im, 'blk.0.attn_q.weight')!;
    for (let j = 0; j < D; j++) expect(Math.abs(imp[j] - want[j] / (ctx * chunks)) / imp[j]).toBeLessThan(1e-5);
  });
});

describe('imatrix files', () => {
  for (const name of MODELS) {
    it(`${name}: reading llama.cpp's GGUF and .dat and writing them back gives llama.cpp's bytes`, () => {
      const gguf = join(GOLDEN, `${name}.imatrix`);
      const dat = join(GOLDEN, `${name}.dat`);
      const fromGguf = readImatrix(gguf);
      expect(Buffer.compare(imatrixToGguf(fromGguf), readFileSync(gguf))).toBe(0);
      expect(Buffer.compare(imatrixToDat(fromGguf), readFileSync(dat))).toBe(0);
      const fromDat = readImatrix(dat);
      expect(Buffer.compare(imatrixToDat(fromDat), readFileSync(dat))).toBe(0);
      expect(fromDat.datasets).toEqual(fromGguf.datasets);
      expect(fromDat.chunkCount).toBe(fromGguf.chunkCount);
      for (const n of fromGguf.entries.keys()) {
        const a = importanceOf(fromGguf, n)!;
        const b = importanceOf(fromDat, n)!;
        expect(a.length).toBe(b.length);
        for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i])).toBeLessThanOrEqual(1e-6 * Math.abs(a[i]));
      }
    });
  }

  it('bad files and short texts give a one-line ModelError', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imx-'));
    const junk = join(dir, 'junk.dat');
    writeFileSync(junk, new Uint8Array([5, 0, 0, 0, 200, 0, 0, 0, 1, 2]));
    expect(() => readImatrix(junk)).toThrow(ModelError);
    const model = sharedModel('tiny-random/tiny-llama-s5.gguf');
    if (!existsSync(model)) return;
    expect(() => readImatrix(model)).toThrow(/without importance matrix tensors/);
    await expect(computeImatrix(model, 'too short', { ctx: 64, backend: new ScalarBackend() })).rejects.toThrow(/needs at least 128/);
  });
});

describe('pantheon imatrix', () => {
  const model = sharedModel('tiny-random/tiny-llama-s5.gguf');
  it.skipIf(!existsSync(model))('writes a GGUF imatrix (and --output-format dat) that reads back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imx-'));
    const txt = join(dir, 'text.txt');
    writeFileSync(txt, text);
    let out = '';
    const io: CliIo = { out: (t) => { out += `${t}\n`; }, err: () => {}, isTty: false };
    expect(await main(['imatrix', model, txt, '-o', join(dir, 'a.imatrix'), '--ctx', '32', '--chunks', '2'], io)).toBe(0);
    expect(await main(['imatrix', model, txt, '-o', join(dir, 'a.dat'), '--ctx', '32', '--chunks', '2', '--output-format', 'dat'], io)).toBe(0);
    expect(out).toMatch(/14 matrices over 2 chunks of 32 tokens/);
    const a = readImatrix(join(dir, 'a.imatrix'));
    const b = readImatrix(join(dir, 'a.dat'));
    expect(a.datasets).toEqual([txt]);
    expect(a.chunkCount).toBe(2);
    expect(importanceOf(b, 'blk.1.ffn_down.weight')!.length).toBe(160);
    expect(await main(['imatrix', model, txt], io)).not.toBe(0);
  });
});
