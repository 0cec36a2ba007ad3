// When the WebAssembly kernels cannot start (here: a corrupt kernels file found first), the default
// backend falls back to the scalar reference and says so on stderr, instead of running many times
// slower in silence; the tokens are still llama.cpp's.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { readGolden } from '../model/golden.js';

function corruptKernelDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pantheon-badwasm-'));
  for (const f of ['kernels.wasm', 'kernels-relaxed.wasm']) writeFileSync(join(dir, f), 'not wasm');
  return dir;
}

describe.skipIf(!HAVE_SHARED)('the scalar fallback is said', () => {
  it('a corrupt kernels.wasm: one note naming the file and the fix, then the same greedy tokens', () => {
    const dir = corruptKernelDir();
    const r = spawnSync(process.execPath, ['bin/pantheon.mjs', 'run', sharedModel('stories260K.gguf'), '-p', 'Once upon a time', '-n', '8', '--temp', '0', '--json', '--ctx', '64'], {
      env: { ...process.env, PANTHEON_WASM_DIR: dir },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const notes = r.stderr.split('\n').filter((l) => l.startsWith('note:'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/scalar reference: .*kernels(-relaxed)?\.wasm could not be compiled.*npm run build:wasm/);
    const out = JSON.parse(r.stdout);
    expect(out.backend).toBe('scalar');
    expect(out.tokens).toEqual(readGolden('stories260K')!.cases[0].tokens.slice(0, 8));
  });

  it('quantize without its kernels: one note, and the same bytes as with them', () => {
    const out = mkdtempSync(join(tmpdir(), 'pantheon-q-'));
    const q = (env: NodeJS.ProcessEnv, file: string) =>
      spawnSync(process.execPath, ['bin/pantheon.mjs', 'quantize', sharedModel('stories260K.gguf'), join(out, file), '--type', 'Q4_K_M', '--threads', '1'], { env, encoding: 'utf8', timeout: 120_000 });
    const fast = q(process.env, 'fast.gguf');
    expect(fast.status, fast.stderr).toBe(0);
    expect(fast.stderr).not.toMatch(/note:/);
    const slow = q({ ...process.env, PANTHEON_WASM_DIR: corruptKernelDir() }, 'slow.gguf');
    expect(slow.status, slow.stderr).toBe(0);
    expect(slow.stderr.split('\n').filter((l) => l.startsWith('note:'))).toEqual([expect.stringMatching(/WebAssembly kernels did not load.*npm run build:wasm/)]);
    expect(readFileSync(join(out, 'slow.gguf')).equals(readFileSync(join(out, 'fast.gguf')))).toBe(true);
  });
});
