// `pantheon quantize` end to end: the per-tensor types llama.cpp's rules give (worked by hand in
// the tables below), the metadata, and dequantised weights close to the source.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/command.js';
import { readGgufHeaderSync, readTensorBytes } from '../../src/engine/gguf/file.js';
import { GgmlType, ggmlTypeName } from '../../src/engine/gguf/ggml-types.js';
import { writeGgufToFile } from '../../src/engine/gguf/stream-writer.js';
import { GgufType, isGgufArray, type GgufHeader, type GgufValue } from '../../src/engine/gguf/types.js';
import { kv, writeGguf, type WriterTensor } from '../../src/engine/gguf/writer.js';
import { dequantizeTensor, quantizeRows } from '../../src/engine/quant/index.js';
import { sharedModel } from '../helpers.js';

const TINY = sharedModel('tiny-random/tiny-llama-s5.gguf');

function quietIo(): CliIo & { text: () => string } {
  const out: string[] = [];
  return { out: (t) => out.push(t), err: (t) => out.push(t), isTty: false, text: () => out.join('\n') };
}

/** Relative RMS error of a against the reference b. */
function relRmse(a: Float32Array, b: Float32Array): number {
  let e = 0;
  let r = 0;
  for (let i = 0; i < a.length; i++) {
    e += (a[i] - b[i]) ** 2;
    r += b[i] ** 2;
  }
  return Math.sqrt(e / r);
}

// Relative RMS error allowed per output type: about 1/(levels − 1) for b-bit levels on random
// weights, with margin (Q8_0 1/255, Q6_K 1/63, Q5 1/31, Q4 1/15).
const MAX_REL_ERR: Record<string, number> = {
  F32: 0, F16: 1e-3, Q8_0: 0.01, Q6_K: 0.03, Q5_0: 0.06, Q5_1: 0.06, Q5_K: 0.06, Q4_0: 0.12, Q4_1: 0.12, Q4_K: 0.12, Q3_K: 0.25, Q2_K: 0.45,
};

function checkCloseness(inPath: string, hin: GgufHeader, outPath: string, hout: GgufHeader): void {
  for (const t of hout.tensors) {
    const src = hin.tensors.find((x) => x.name === t.name)!;
    const a = dequantizeTensor(t, readTensorBytes(outPath, hout, t.name));
    const b = dequantizeTensor(src, readTensorBytes(inPath, hin, t.name));
    expect(relRmse(a, b), `${t.name} as ${ggmlTypeName(t.type)}`).toBeLessThanOrEqual(MAX_REL_ERR[ggmlTypeName(t.type)]);
  }
}

/** True when two metadata values hold the same data (the parser's lazy arrays carry functions). */
function sameValue(a: GgufValue, b: GgufValue): boolean {
  if (!isGgufArray(a) || !isGgufArray(b)) return a === b;
  if (a.itemType !== b.itemType || a.items.length !== b.items.length) return false;
  for (let i = 0; i < a.items.length; i++) if (!sameValue(a.items[i], b.items[i])) return false;
  return true;
}

function checkMetadata(hin: GgufHeader, hout: GgufHeader, ftype: number): void {
  expect(hout.metadata.get('general.file_type')).toMatchObject({ type: GgufType.UINT32, value: ftype });
  expect(hout.metadata.get('general.quantization_version')).toMatchObject({ type: GgufType.UINT32, value: 2 });
  for (const [key, kvIn] of hin.metadata) {
    if (key === 'general.file_type') continue;
    const kvOut = hout.metadata.get(key);
    expect(kvOut?.type, key).toBe(kvIn.type);
    expect(sameValue(kvOut!.value, kvIn.value), key).toBe(true);
  }
}

// tiny-llama-s5: n_embd 64, 2 layers, 4 heads / 2 KV heads (GQA 2), ffn 160. Every row is 64 or
// 160 wide, so no K-quant fits (256) and llama.cpp's fallbacks apply: Q2_K/Q3_K → Q4_0,
// Q4_K → Q5_0, Q5_K → Q5_1, Q6_K → Q8_0. use_more_bits(i, 2) is true only for layer 1.
// output.weight: the base type's block fits 64 only for the 32-element types, then → Q6_K → Q8_0;
// with a 256-element base type it is Q8_0 directly.
type Expect = { rest: string; output: string; embd: string; v: [string, string]; down: [string, string]; attnOut: string };
const EXPECTED: Record<string, { ftype: number } & Expect> = {
  Q4_0: { ftype: 2, rest: 'Q4_0', output: 'Q8_0', embd: 'Q4_0', v: ['Q4_0', 'Q4_0'], down: ['Q4_0', 'Q4_0'], attnOut: 'Q4_0' },
  Q4_1: { ftype: 3, rest: 'Q4_1', output: 'Q8_0', embd: 'Q4_1', v: ['Q4_1', 'Q4_1'], down: ['Q4_1', 'Q4_1'], attnOut: 'Q4_1' },
  Q5_0: { ftype: 8, rest: 'Q5_0', output: 'Q8_0', embd: 'Q5_0', v: ['Q5_0', 'Q5_0'], down: ['Q5_0', 'Q5_0'], attnOut: 'Q5_0' },
  Q5_1: { ftype: 9, rest: 'Q5_1', output: 'Q8_0', embd: 'Q5_1', v: ['Q5_1', 'Q5_1'], down: ['Q5_1', 'Q5_1'], attnOut: 'Q5_1' },
  Q8_0: { ftype: 7, rest: 'Q8_0', output: 'Q8_0', embd: 'Q8_0', v: ['Q8_0', 'Q8_0'], down: ['Q8_0', 'Q8_0'], attnOut: 'Q8_0' },
  // Q2_K: attn_v → Q3_K (GQA < 4), ffn_down → Q3_K, attn_output → Q3_K: all fall back to Q4_0.
  Q2_K: { ftype: 10, rest: 'Q4_0', output: 'Q8_0', embd: 'Q4_0', v: ['Q4_0', 'Q4_0'], down: ['Q4_0', 'Q4_0'], attnOut: 'Q4_0' },
  // Q3_K_M: attn_v of layers 0, 1 → Q5_K (→ Q5_1); ffn_down, attn_output → Q4_K (→ Q5_0).
  Q3_K: { ftype: 12, rest: 'Q4_0', output: 'Q8_0', embd: 'Q4_0', v: ['Q5_1', 'Q5_1'], down: ['Q5_0', 'Q5_0'], attnOut: 'Q5_0' },
  // Q4_K_M: layer 1's attn_v and ffn_down → Q6_K (→ Q8_0); the rest Q4_K (→ Q5_0).
  Q4_K: { ftype: 15, rest: 'Q5_0', output: 'Q8_0', embd: 'Q5_0', v: ['Q5_0', 'Q8_0'], down: ['Q5_0', 'Q8_0'], attnOut: 'Q5_0' },
  Q4_K_M: { ftype: 15, rest: 'Q5_0', output: 'Q8_0', embd: 'Q5_0', v: ['Q5_0', 'Q8_0'], down: ['Q5_0', 'Q8_0'], attnOut: 'Q5_0' },
  Q5_K: { ftype: 17, rest: 'Q5_1', output: 'Q8_0', embd: 'Q5_1', v: ['Q5_1', 'Q8_0'], down: ['Q5_1', 'Q8_0'], attnOut: 'Q5_1' },
  Q5_K_M: { ftype: 17, rest: 'Q5_1', output: 'Q8_0', embd: 'Q5_1', v: ['Q5_1', 'Q8_0'], down: ['Q5_1', 'Q8_0'], attnOut: 'Q5_1' },
  Q6_K: { ftype: 18, rest: 'Q8_0', output: 'Q8_0', embd: 'Q8_0', v: ['Q8_0', 'Q8_0'], down: ['Q8_0', 'Q8_0'], attnOut: 'Q8_0' },
};

function expectedType(e: Expect, name: string): string {
  if (name.endsWith('_norm.weight')) return 'F32';
  if (name === 'output.weight') return e.output;
  if (name === 'token_embd.weight') return e.embd;
  const layer = Number(/^blk\.(\d+)\./.exec(name)![1]);
  if (name.endsWith('attn_v.weight')) return e.v[layer];
  if (name.endsWith('ffn_down.weight')) return e.down[layer];
  if (name.endsWith('attn_output.weight')) return e.attnOut;
  return e.rest;
}

describe('pantheon quantize tiny-llama-s5.gguf', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pantheon-quantize-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const hin = readGgufHeaderSync(TINY);

  for (const [typeName, e] of Object.entries(EXPECTED)) {
    it(`--type ${typeName}: types per llama.cpp's recipe, metadata copied, weights close to the source`, async () => {
      const out = join(dir, `${typeName}.gguf`);
      const io = quietIo();
      expect(await main(['quantize', TINY, out, '--type', typeName, '--threads', '1'], io)).toBe(0);
      const hout = readGgufHeaderSync(out);
      expect(hout.tensors.map((t) => t.name).sort()).toEqual(hin.tensors.map((t) => t.name).sort());
      for (const t of hout.tensors) {
        expect(ggmlTypeName(t.type), t.name).toBe(expectedType(e, t.name));
        expect(t.dims).toEqual(hin.tensors.find((x) => x.name === t.name)!.dims);
      }
      checkMetadata(hin, hout, e.ftype);
      checkCloseness(TINY, hin, out, hout);
      if (typeName.startsWith('Q4_K')) expect(io.text()).toContain('rows of 64 do not fit Q4_K → Q5_0');
    });
  }

  it('rejects an unknown type with the list of valid ones', async () => {
    const io = quietIo();
    expect(await main(['quantize', TINY, join(dir, 'x.gguf'), '--type', 'Q7_K'], io)).toBe(2);
    expect(io.text()).toContain('--type must be one of');
  });
});

describe('pantheon quantize, a 256-wide model (the K-quants themselves)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pantheon-quantize-k-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const input = join(dir, 'wide.gguf');

  // A 2-layer llama with 256-wide rows (few of them, to keep the K-quant search quick) and
  // deterministic pseudo-random F32 weights.
  let s = 12345;
  const rand = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s / 2 ** 32 - 0.5) * 0.2;
  };
  const t = (name: string, dims: number[]): WriterTensor => {
    const n = dims.reduce((a, b) => a * b, 1);
    const f = new Float32Array(n);
    for (let i = 0; i < n; i++) f[i] = name.includes('norm') ? 1 : rand();
    return { name, dims, type: GgmlType.F32, data: new Uint8Array(f.buffer) };
  };
  const tensors: WriterTensor[] = [t('token_embd.weight', [256, 64]), t('output_norm.weight', [256]), t('output.weight', [256, 64])];
  for (let i = 0; i < 2; i++) {
    for (const m of ['attn_q', 'attn_k', 'attn_v', 'attn_output', 'ffn_gate', 'ffn_up', 'ffn_down']) tensors.push(t(`blk.${i}.${m}.weight`, [256, 32]));
    tensors.push(t(`blk.${i}.attn_norm.weight`, [256]), t(`blk.${i}.ffn_norm.weight`, [256]));
  }
  writeFileSync(input, writeGguf([
    kv.str('general.architecture', 'llama'), kv.u32('llama.block_count', 2), kv.u32('llama.embedding_length', 256),
    kv.u32('llama.attention.head_count', 4), kv.u32('llama.attention.head_count_kv', 4), kv.u32('general.file_type', 0),
  ], tensors));
  const hin = readGgufHeaderSync(input);

  it('Q4_K_M: layer 1\'s attn_v and ffn_down Q6_K, the rest Q4_K, output Q6_K; bytes are the reference quantiser\'s', async () => {
    const out = join(dir, 'q4km.gguf');
    expect(await main(['quantize', input, out, '--type', 'Q4_K_M', '--threads', '1'], quietIo())).toBe(0);
    const hout = readGgufHeaderSync(out);
    const type = (n: string) => ggmlTypeName(hout.tensors.find((x) => x.name === n)!.type);
    expect(type('blk.0.attn_v.weight')).toBe('Q4_K');
    expect(type('blk.1.attn_v.weight')).toBe('Q6_K');
    expect(type('blk.1.ffn_down.weight')).toBe('Q6_K');
    expect(type('blk.0.ffn_up.weight')).toBe('Q4_K');
    expect(type('output.weight')).toBe('Q6_K');
    expect(type('token_embd.weight')).toBe('Q4_K');
    expect(type('blk.0.attn_norm.weight')).toBe('F32');
    checkMetadata(hin, hout, 15);
    checkCloseness(input, hin, out, hout);
    // Data written is exactly the reference quantiser applied to the source rows.
    const src = new Float32Array(tensors.find((x) => x.name === 'blk.0.attn_q.weight')!.data.slice().buffer);
    expect(Buffer.compare(readTensorBytes(out, hout, 'blk.0.attn_q.weight'), quantizeRows(GgmlType.Q4_K, src, 32, 256))).toBe(0);
  });

  it('Q2_K: attn_v, ffn_down, attn_output Q3_K, the rest Q2_K, within 2-bit error', async () => {
    const out = join(dir, 'q2k.gguf');
    expect(await main(['quantize', input, out, '--type', 'Q2_K', '--threads', '1'], quietIo())).toBe(0);
    const hout = readGgufHeaderSync(out);
    const type = (n: string) => ggmlTypeName(hout.tensors.find((x) => x.name === n)!.type);
    expect(type('blk.0.attn_v.weight')).toBe('Q3_K');
    expect(type('blk.1.ffn_down.weight')).toBe('Q3_K');
    expect(type('blk.1.attn_output.weight')).toBe('Q3_K');
    expect(type('blk.1.attn_q.weight')).toBe('Q2_K');
    checkCloseness(input, hin, out, hout);
  });

  it('the streaming writer writes the same bytes as writeGguf', () => {
    const path = join(dir, 'stream.gguf');
    const kvs = [kv.str('general.architecture', 'llama'), kv.u32('general.alignment', 64), kv.f32('x.y', 1.5)];
    const few = tensors.slice(0, 4);
    writeGgufToFile(path, kvs, few.map((x) => ({ name: x.name, dims: x.dims, type: x.type })), (i) => few[i].data);
    expect(Buffer.compare(readFileSync(path), Buffer.from(writeGguf(kvs, few)))).toBe(0);
  });
});
