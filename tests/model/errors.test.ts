// What a user sees when a file cannot run: the architecture named with the supported list, a
// missing tensor named, a wrong shape named with both shapes.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScalarBackend } from '../../src/engine/backend/scalar.js';
import { readGgufHeaderSync } from '../../src/engine/gguf/file.js';
import { kv, writeGguf, type WriterKv, type WriterTensor } from '../../src/engine/gguf/writer.js';
import { loadModelFile, SUPPORTED_ARCHITECTURES } from '../../src/engine/model/index.js';
import { LoadedModel } from '../../src/engine/session.js';
import { ModelError } from '../../src/shared/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'pantheon-model-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const f32 = (n: number) => new Uint8Array(new Float32Array(n).fill(0.01).buffer);

/** A 1-layer llama with n_embd 8, 2 heads, ffn 16, vocab 4; `drop` leaves a tensor out. */
function tinyLlama(arch: string, opts: { drop?: string; qRows?: number } = {}): string {
  const kvs: WriterKv[] = [
    kv.str('general.architecture', arch),
    kv.u32(`${arch}.embedding_length`, 8),
    kv.u32(`${arch}.block_count`, 1),
    kv.u32(`${arch}.attention.head_count`, 2),
    kv.u32(`${arch}.feed_forward_length`, 16),
    kv.u32(`${arch}.context_length`, 32),
    kv.f32(`${arch}.attention.layer_norm_rms_epsilon`, 1e-5),
  ];
  const t = (name: string, dims: number[]): WriterTensor => ({ name, dims, type: 0, data: f32(dims.reduce((a, b) => a * b, 1)) });
  const tensors = [
    t('token_embd.weight', [8, 4]),
    t('blk.0.attn_norm.weight', [8]),
    t('blk.0.attn_q.weight', [8, opts.qRows ?? 8]),
    t('blk.0.attn_k.weight', [8, 8]),
    t('blk.0.attn_v.weight', [8, 8]),
    t('blk.0.attn_output.weight', [8, 8]),
    t('blk.0.ffn_norm.weight', [8]),
    t('blk.0.ffn_gate.weight', [8, 16]),
    t('blk.0.ffn_up.weight', [8, 16]),
    t('blk.0.ffn_down.weight', [16, 8]),
    t('output_norm.weight', [8]),
  ].filter((x) => x.name !== opts.drop);
  const path = join(dir, `${arch}-${opts.drop ?? 'all'}-${opts.qRows ?? 8}.gguf`);
  writeFileSync(path, writeGguf(kvs, tensors));
  return path;
}

async function loadError(path: string): Promise<ModelError> {
  try {
    await loadModelFile(path, readGgufHeaderSync(path), new ScalarBackend());
  } catch (err) {
    if (err instanceof ModelError) return err;
    throw err;
  }
  throw new Error('expected a ModelError');
}

describe('model errors', () => {
  it('names an unsupported architecture and lists the supported ones', async () => {
    const path = tinyLlama('mamba');
    const err = await LoadedModel.load(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).code).toBe('UNSUPPORTED_ARCHITECTURE');
    expect((err as ModelError).message).toBe(`architecture "mamba" is not supported; Pantheon runs ${SUPPORTED_ARCHITECTURES.join(', ')}`);
    for (const a of ['llama', 'qwen2', 'qwen3', 'phi2', 'phi3', 'gemma']) expect((err as ModelError).message).toContain(a);
  });

  it('says a vocabulary-only file can be inspected but not run', async () => {
    const f = join(dir, 'vocab-only.gguf');
    writeFileSync(f, writeGguf([kv.str('general.architecture', 'llama'), kv.u32('llama.embedding_length', 8)], []));
    await expect(LoadedModel.load(f, { backend: new ScalarBackend() })).rejects.toThrow(/holds no weights \(a vocabulary-only GGUF\): it can be inspected but not run/);
  });

  it('names a missing tensor', async () => {
    const err = await loadError(tinyLlama('llama', { drop: 'blk.0.ffn_down.weight' }));
    expect(err.code).toBe('MISSING_TENSOR');
    expect(err.message).toBe('tensor "blk.0.ffn_down.weight" is missing from the file; it is needed to run a llama model');
  });

  it('names a tensor whose shape does not fit the hyperparameters', async () => {
    const err = await loadError(tinyLlama('llama', { qRows: 4 }));
    expect(err.code).toBe('BAD_TENSOR_SHAPE');
    expect(err.message).toContain('tensor "blk.0.attn_q.weight" has shape [8, 4], expected [8, 8]');
  });

  it('loads the complete file and ties the output to token_embd', async () => {
    const path = tinyLlama('llama');
    const m = await loadModelFile(path, readGgufHeaderSync(path), new ScalarBackend());
    expect(m.w.output).toBe(m.w.tokEmbd);
    expect(m.hp).toMatchObject({ nEmbd: 8, nHead: 2, nHeadKv: 2, headDimK: 4, nRot: 4, nVocab: 4 });
  });
});
