// The `pantheon` CLI: inspect, tensors, and how it reports bad input.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/command.js';
import { HAVE_SHARED, ROOT, sharedModel } from '../helpers.js';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; }, isTty: false };
  const code = await main(argv, io);
  return { code, out, err };
}

describe('pantheon inspect', () => {
  it('--json gives the documented shape, offsets relative to the data section', async () => {
    const r = await run(['inspect', sharedModel('stories260K.gguf'), '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(Object.keys(j)).toEqual(['version', 'alignment', 'dataOffset', 'fileSize', 'metadata', 'tensors']);
    expect(j.version).toBe(3);
    expect(j.fileSize).toBe(1185376);
    expect(j.metadata['llama.embedding_length']).toBe(64);
    expect(j.metadata['tokenizer.ggml.tokens']).toHaveLength(512);
    expect(j.tensors).toHaveLength(48);
    const first = j.tensors[0];
    expect(first).toEqual({ name: first.name, type: 'F32', typeId: 0, dims: first.dims, offset: 0, bytes: first.bytes });
    // The last tensor ends at the end of the file.
    const last = j.tensors.reduce((a: { offset: number }, b: { offset: number }) => (b.offset > a.offset ? b : a));
    expect(j.dataOffset + last.offset + last.bytes).toBe(j.fileSize);
  });

  it('integers beyond 2^53 are strings in --json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pn-'));
    const { kv, writeGguf } = await import('../../src/engine/gguf/writer.js');
    const f = join(dir, 'big.gguf');
    writeFileSync(f, writeGguf([kv.u64('x.big', (1n << 60n) + 1n), kv.u64('x.small', 7)], []));
    const j = JSON.parse((await run(['inspect', f, '--json'])).out);
    expect(j.metadata['x.big']).toBe('1152921504606846977');
    expect(j.metadata['x.small']).toBe(7);
  });

  it('text summary: hyperparameters, quantisation mix, shortened arrays', async () => {
    const r = await run(['inspect', sharedModel('tinyllamas-stories-260k-q8_0.gguf')]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/GGUF version\s+2/);
    expect(r.out).toMatch(/Q8_0\s+37/);
    expect(r.out).toMatch(/n_head_kv\s+4/);
    expect(r.out).toMatch(/tokenizer\.ggml\.tokens \(ARRAY\) = \["<unk>", "<s>", "<\/s>".*\(512 items\)\] STRING\[512\]/);
    expect(r.out).toMatch(/warning .*blk\.0\.ffn_down\.weight.*flat array/);
  });
});

describe('pantheon inspect: memory to run', () => {
  // Hand-worked: f16 KV cache = layers × context × (K + V widths) × 2 bytes; gemma3-s1 has 6 layers
  // of 2 KV heads × 32 (K and V), so 6 × 4096 × 128 × 2 = 6 MiB at 4096. qwen35-s1 keeps rows for its
  // one attention layer only, plus the recurrent state.
  it.skipIf(!HAVE_SHARED)('weights + KV cache at the default context, before loading', async () => {
    const g = await run(['inspect', sharedModel('tiny-random/tiny-gemma3-s1.gguf')]);
    expect(g.out).toContain('Memory to run');
    expect(g.out).toMatch(/at 4096 +10\.5 MiB \(weights 4\.48 MiB \+ KV cache 6\.00 MiB\)/);
    const q = await run(['inspect', sharedModel('tiny-random/tiny-qwen35-s1.gguf')]);
    expect(q.out).toMatch(/KV cache and recurrent state/);
  });

  it.skipIf(!HAVE_SHARED)('an architecture Pantheon does not run says so, with the list', async () => {
    const r = await run(['inspect', sharedModel('llama.cpp-vocab/ggml-vocab-bert-bge.gguf')]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Runs in Pantheon +no: architecture "bert" is not supported; Pantheon runs llama, .*gemma3.*qwen35moe/);
  });
});

describe('pantheon tensors', () => {
  it('filters by regex and sorts by size', async () => {
    const r = await run(['tensors', sharedModel('stories260K.gguf'), '--filter', '^blk\\.0\\.', '--sort', 'size']);
    expect(r.code).toBe(0);
    const rows = r.out.trim().split('\n').slice(2, -1);
    expect(rows).toHaveLength(9);
    expect(rows[0]).toMatch(/^blk\.0\.ffn_(down|gate|up)\.weight/);
    expect(rows[8]).toMatch(/^blk\.0\.(attn|ffn)_norm\.weight/);
    expect(r.out).toMatch(/9 of 48 tensors/);
  });
});

describe('bad input', () => {
  it('a missing file: exit 1, one line naming the file', async () => {
    const r = await run(['inspect', '/nope/model.gguf']);
    expect(r.code).toBe(1);
    expect(r.err).toBe('error: /nope/model.gguf: no such file; check the path\n');
  });
  it('a truncated file: exit 1, one line with the byte offset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pn-'));
    const f = join(dir, 'cut.gguf');
    const { readFileSync } = await import('node:fs');
    writeFileSync(f, readFileSync(sharedModel('stories260K.gguf')).subarray(0, 5000));
    const r = await run(['inspect', f]);
    expect(r.code).toBe(1);
    expect(r.err.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.err).toMatch(/^error: .*cut\.gguf: file ends inside .* truncated.*\(at byte \d+\)/);
  });
  it('usage errors exit 2', async () => {
    expect((await run(['inspect'])).code).toBe(2);
    expect((await run(['tensors', 'x.gguf', '--sort', 'colour'])).code).toBe(2);
    expect((await run(['frobnicate'])).code).toBe(2);
  });
  it('the real binary prints no stack trace', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/pantheon.mjs'), 'inspect', join(ROOT, 'package.json')], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/instead of "GGUF": it is not a GGUF model/);
    const ok = execFileSync(process.execPath, [join(ROOT, 'bin/pantheon.mjs'), 'help'], { encoding: 'utf8' });
    expect(ok).toMatch(/inspect FILE/);
  });
});
