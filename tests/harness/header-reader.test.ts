// The library's header reader: off the main thread, one file at a time, each under a time limit.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HeaderReader } from '../../src/main/services/header-reader.js';
import { GgufType, kv, writeGguf } from '../../src/engine/gguf/index.js';
import { ROOT } from '../helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'pn-headers-'));
const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');
const readers: HeaderReader[] = [];
afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()));
});

describe('header reader', () => {
  it('reads summaries in a worker thread; a hostile header gets its one-line error', async () => {
    const r = new HeaderReader(() => {});
    readers.push(r);
    expect(await r.summary(DEMO)).toMatchObject({ architecture: 'llama' });
    const nested = join(dir, 'nested.gguf');
    writeFileSync(nested, writeGguf([kv.arr('x.nested', GgufType.ARRAY, Array.from({ length: 70000 }, () => ({ itemType: GgufType.UINT8, items: [1] })))], []));
    await expect(r.summary(nested)).rejects.toThrow(/more than 65536; real models nest none/);
    await expect(r.summary(join(dir, 'missing.gguf'))).rejects.toThrow(/no such file/);
    expect(await r.summary(DEMO)).toMatchObject({ architecture: 'llama' }); // still works after errors
  }, 30_000);

  it('a header that takes too long: error after the limit, main stays responsive, the next file is read', async () => {
    // a stand-in worker that never answers for "slow" paths (a busy loop) and answers the others
    const script = join(dir, 'slow-worker.mjs');
    writeFileSync(script, `import { parentPort } from 'node:worker_threads';
parentPort.on('message', (job) => {
  if (job.path.includes('slow')) for (;;) {}
  parentPort.postMessage({ id: job.id, ok: true, summary: { architecture: 'llama', name: job.path, parameters: 1, quantization: 'F32' } });
});`);
    const lines: string[] = [];
    const r = new HeaderReader((l) => lines.push(l), { timeoutMs: 300, script: { file: script } });
    readers.push(r);
    let ticks = 0;
    const tick = setInterval(() => ticks++, 20);
    const t0 = performance.now();
    const slow = r.summary('/x/slow.gguf');
    const next = r.summary('/x/fine.gguf');
    await expect(slow).rejects.toThrow('reading its header took longer than 0.3 s; the file is corrupt or not a model');
    const ms = performance.now() - t0;
    clearInterval(tick);
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(3000);
    expect(ticks).toBeGreaterThanOrEqual(5); // the main thread ran timers meanwhile
    expect(await next).toMatchObject({ name: '/x/fine.gguf' });
    expect(lines.join('\n')).toContain('took over 300 ms; ending the reader');
  }, 30_000);
});
