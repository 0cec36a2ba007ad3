// The library's header reader: off the main thread, one file at a time, each under a time limit.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HeaderReader } from '../../src/main/services/header-reader.js';
import { GgufType, kv, readGgufHeader, writeGguf } from '../../src/engine/gguf/index.js';
import { metaArraySlice } from '../../src/main/services/opened-model.js';
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
  parentPort.postMessage({ id: job.id, ok: true, value: { architecture: 'llama', name: job.path, parameters: 1, quantization: 'F32' } });
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

/** A header of `n` one-byte metadata keys, written by hand: legal, under every cap, slow to parse. */
function manyKeys(n: number): Uint8Array {
  const keyLen = 8;
  const each = 8 + keyLen + 4 + 1;
  const b = new Uint8Array(24 + n * each);
  const v = new DataView(b.buffer);
  v.setUint32(0, 0x46554747, true); // "GGUF"
  v.setUint32(4, 3, true);
  v.setBigUint64(8, 0n, true);
  v.setBigUint64(16, BigInt(n), true);
  const enc = new TextEncoder();
  let p = 24;
  for (let i = 0; i < n; i++) {
    v.setBigUint64(p, BigInt(keyLen), true);
    enc.encodeInto(`k${String(i).padStart(7, '0')}`, b.subarray(p + 8, p + 8 + keyLen));
    p += 8 + keyLen;
    v.setUint32(p, GgufType.UINT8, true);
    p += 5;
  }
  return b;
}

/** Run `f` while a 10 ms timer ticks; the longest the main thread went without running it. */
async function longestStall<T>(f: () => Promise<T>): Promise<{ ms: number; result: PromiseSettledResult<T> }> {
  let last = performance.now();
  let worst = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 10);
  const [result] = await Promise.allSettled([f()]);
  clearInterval(tick);
  return { ms: Math.max(worst, performance.now() - last), result };
}

describe('opening a model through the header reader', () => {
  it('builds the page view and metadata slices in the worker, as in process', async () => {
    const r = new HeaderReader(() => {});
    readers.push(r);
    const view = await r.open(DEMO);
    const h = await readGgufHeader(DEMO);
    expect(view.tensorCount).toBe(h.tensors.length);
    expect(view.metadata.find((m) => m.key === 'general.architecture')).toMatchObject({ value: 'llama' });
    expect(await r.metaArray(DEMO, 'tokenizer.ggml.tokens', 100, 5)).toEqual(metaArraySlice(h, 'tokenizer.ggml.tokens', 100, 5));
    expect(await r.metaArray(DEMO, 'tokenizer.ggml.tokens', 0, 3, 'the')).toEqual(metaArraySlice(h, 'tokenizer.ggml.tokens', 0, 3, 'the'));
    await expect(r.metaArray(DEMO, 'general.name', 0, 3)).rejects.toMatchObject({ name: 'UsageError', message: 'The model has no array metadata key "general.name".' });
    await expect(r.open(join(dir, 'missing.gguf'))).rejects.toMatchObject({ name: 'GgufError', code: 'GGUF_NOT_FOUND' });
  }, 30_000);

  it('a hostile header that is slow to parse: main keeps running, the open fails after its limit', async () => {
    const f = join(dir, 'many-keys.gguf');
    writeFileSync(f, manyKeys(2_000_000)); // 42 MB, under the 64 MiB cap
    // In process (what model:open did on main's thread), main runs nothing until the parse is done.
    const inProcess = await longestStall(() => readGgufHeader(f));
    expect(inProcess.result.status).toBe('fulfilled');
    // A limit the parse passes (whole seconds, at least 1; timing under load varies by run).
    const limit = Math.max(1000, Math.floor(inProcess.ms / 2000) * 1000);
    const lines: string[] = [];
    const r = new HeaderReader((l) => lines.push(l), { timeoutMs: limit });
    readers.push(r);
    const viaWorker = await longestStall(() => r.open(f));
    expect(viaWorker.result).toMatchObject({ status: 'rejected', reason: { name: 'GgufError', message: `reading its header took longer than ${limit / 1000} s; the file is corrupt or not a model` } });
    console.log(`many-keys header: main stalled ${inProcess.ms.toFixed(0)} ms in process, ${viaWorker.ms.toFixed(0)} ms with the worker`);
    expect(inProcess.ms).toBeGreaterThan(limit); // the file would have frozen the window past the limit
    expect(viaWorker.ms).toBeLessThan(inProcess.ms / 3);
    expect(lines.join('\n')).toContain(`took over ${limit} ms; ending the reader`);
    expect((await r.open(DEMO)).tensorCount).toBeGreaterThan(0); // a fresh worker opens the next file
  }, 60_000);
});
