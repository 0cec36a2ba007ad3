// `pantheon quantize --imatrix`: every blk.* tensor of tiny256 quantised to 14 file types with
// llama.cpp's importance matrix gets llama-quantize's type and bytes (sha256 of each tensor's first
// GOLDEN_ROWS rows in tests/golden/llama.cpp/imatrix/quantized.json, recorded by
// bench/record-imatrix-goldens.ts; rows are quantised independently), the
// CLI writes llama-quantize's quantize.imatrix.* keys, and types that need an imatrix refuse without one.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeTiny256 } from '../../bench/make-tiny256.js';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/command.js';
import { readGgufHeaderSync, readTensorBytes } from '../../src/engine/gguf/file.js';
import { ggmlTypeName } from '../../src/engine/gguf/ggml-types.js';
import { getNumber, getString } from '../../src/engine/gguf/keys.js';
import type { GgufHeader } from '../../src/engine/gguf/types.js';
import { importanceOf, readImatrix } from '../../src/engine/quant/imatrix.js';
import { dequantizeTensor, quantizeRows } from '../../src/engine/quant/index.js';
import { quantizeModelFile, recipeModel } from '../../src/engine/quant/model.js';
import { fileTypeByName, planQuantization } from '../../src/engine/quant/recipe.js';
import { ModelError } from '../../src/shared/errors.js';
import { ROOT, sharedModel } from '../helpers.js';
import { GOLDEN_ROWS } from './imatrix-text.js';

const GOLDEN = join(ROOT, 'tests', 'golden', 'llama.cpp', 'imatrix');
const golden = JSON.parse(readFileSync(join(GOLDEN, 'quantized.json'), 'utf8')) as { types: Record<string, Record<string, { type: string; sha256: string }>> };
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

const dir = mkdtempSync(join(tmpdir(), 'imxq-'));
const tiny256 = join(dir, 'tiny256.gguf');
let h: GgufHeader;
/** The first GOLDEN_ROWS rows of every blk.* matrix of tiny256. */
const f32 = new Map<string, Float32Array>();
beforeAll(() => {
  writeTiny256(tiny256);
  h = readGgufHeaderSync(tiny256);
  for (const t of h.tensors) {
    if (t.name.startsWith('blk.') && t.dims.length > 1) f32.set(t.name, dequantizeTensor(t, readTensorBytes(tiny256, h, t.name)).subarray(0, GOLDEN_ROWS * t.dims[0]));
  }
});

describe('tiny256 quantised with an importance matrix, against llama-quantize --imatrix', () => {
  const im = readImatrix(join(GOLDEN, 'tiny256.imatrix'));
  for (const [type, tensors] of Object.entries(golden.types)) {
    it(`${type}: every blk.* tensor's type and bytes`, () => {
      const plan = planQuantization(fileTypeByName(type)!, recipeModel(h), h.tensors, { hasImatrix: true });
      const names = Object.keys(tensors);
      expect(names.length).toBeGreaterThan(10);
      for (const name of names) {
        const p = plan.find((x) => x.name === name)!;
        expect(ggmlTypeName(p.to), name).toBe(tensors[name].type);
        if (p.to === p.from) continue;
        const info = h.tensors.find((t) => t.name === name)!;
        const bytes = quantizeRows(p.to, f32.get(name)!, Math.min(GOLDEN_ROWS, info.dims[1]), info.dims[0], importanceOf(im, name));
        expect(sha(bytes), `${name} (${tensors[name].type})`).toBe(tensors[name].sha256);
      }
    });
  }
});

describe('pantheon quantize --imatrix', () => {
  const model = sharedModel('tiny-random/tiny-llama-s5.gguf');
  const have = existsSync(model);
  const run = async (argv: string[]) => {
    let out = '';
    let err = '';
    const io: CliIo = { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; }, isTty: false };
    const code = await main(argv, io);
    return { code, out, err };
  };
  it.skipIf(!have)("writes llama-quantize's quantize.imatrix.* keys and the weighted bytes (threads split rows)", async () => {
    const imPath = join(GOLDEN, 'tiny-llama-s5.imatrix');
    const out = join(dir, 'q4_0.gguf');
    const r = await run(['quantize', model, out, '--type', 'Q4_0', '--imatrix', imPath, '--threads', '2']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/importance matrix .*: 14 entries/);
    const ho = readGgufHeaderSync(out);
    expect(getString(ho, 'quantize.imatrix.file')).toBe(imPath);
    expect(getString(ho, 'quantize.imatrix.dataset')).toBe('imatrix-text.txt');
    expect(getNumber(ho, 'quantize.imatrix.entries_count')).toBe(14);
    expect(getNumber(ho, 'quantize.imatrix.chunks_count')).toBe(4);
    const hi = readGgufHeaderSync(model);
    const info = hi.tensors.find((t) => t.name === 'blk.1.ffn_down.weight')!;
    const want = quantizeRows(ho.tensors.find((t) => t.name === info.name)!.type, dequantizeTensor(info, readTensorBytes(model, hi, info.name)), info.dims[1], info.dims[0], importanceOf(readImatrix(imPath), info.name));
    expect(Buffer.compare(readTensorBytes(out, ho, info.name), want)).toBe(0);
    // and not the unweighted bytes
    const plain = join(dir, 'plain.gguf');
    quantizeModelFile(model, plain, fileTypeByName('Q4_0')!);
    const hp = readGgufHeaderSync(plain);
    expect(Buffer.compare(readTensorBytes(out, ho, info.name), readTensorBytes(plain, hp, info.name))).not.toBe(0);
  });

  it('types that need an importance matrix refuse without one, in one sentence', async () => {
    for (const type of ['IQ2_XXS', 'IQ2_XS', 'IQ2_S', 'IQ2_M', 'IQ1_S', 'IQ1_M', 'IQ3_XXS', 'Q2_K_S']) {
      expect(() => quantizeModelFile(tiny256, join(dir, 'x.gguf'), fileTypeByName(type)!)).toThrow(ModelError);
      const r = await run(['quantize', tiny256, join(dir, 'x.gguf'), '--type', type]);
      expect(r.code).not.toBe(0);
      expect(r.err.trim().split('\n').filter((l) => !l.startsWith('note:'))).toHaveLength(1); // (a note where build/wasm is missing)
      expect(r.err).toMatch(new RegExp(`${type} needs an importance matrix`));
    }
    if (!have) return;
    const missing = await run(['quantize', model, join(dir, 'x.gguf'), '--type', 'Q4_0', '--imatrix', join(dir, 'nope.imatrix')]);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toMatch(/cannot read the importance matrix/);
    // an importance matrix made for another model
    const other = await run(['quantize', model, join(dir, 'x.gguf'), '--type', 'Q4_0', '--imatrix', join(GOLDEN, 'tiny-qwen3moe-s1.imatrix')]);
    expect(other.code).not.toBe(0);
    expect(other.err).toMatch(/values for tensor .* which needs|made for another model/);
  });
});
