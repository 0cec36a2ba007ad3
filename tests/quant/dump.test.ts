// `pantheon dump FILE TENSOR --f32 OUT` against ggml's dequantisation in quant-reference.gguf.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/command.js';
import { fixtureBytes, QUANT_REFERENCE } from './fixture.js';

function capture(): CliIo & { text: () => string; errors: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return { out: (t) => out.push(t), err: (t) => err.push(t), isTty: false, text: () => out.join('\n'), errors: () => err.join('\n') };
}

describe('pantheon dump', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pantheon-dump-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('dumping deq.q4_K (f32) gives exactly its stored bytes', async () => {
    const out = join(dir, 'deq.f32');
    const io = capture();
    expect(await main(['dump', QUANT_REFERENCE, 'deq.q4_K', '--f32', out], io)).toBe(0);
    expect(Buffer.compare(readFileSync(out), Buffer.from(fixtureBytes('deq.q4_K')))).toBe(0);
    expect(io.text()).toContain('4096 floats');
  });

  it("dumping q.q4_K gives ggml's dequantisation, deq.q4_K, byte for byte", async () => {
    const out = join(dir, 'q.f32');
    expect(await main(['dump', QUANT_REFERENCE, 'q.q4_K', '--f32', out], capture())).toBe(0);
    expect(Buffer.compare(readFileSync(out), Buffer.from(fixtureBytes('deq.q4_K')))).toBe(0);
  });

  it('without --f32 prints the statistics and first values', async () => {
    const io = capture();
    expect(await main(['dump', QUANT_REFERENCE, 'q.q8_0', '--head', '3'], io)).toBe(0);
    const deq = new Float32Array(fixtureBytes('deq.q8_0').slice().buffer);
    expect(io.text()).toContain(`first 3: ${deq[0]}, ${deq[1]}, ${deq[2]}`);
    expect(io.text()).toContain('Q8_0 [512, 8]');
  });

  it('names a missing tensor and exits 1', async () => {
    const io = capture();
    expect(await main(['dump', QUANT_REFERENCE, 'nope'], io)).toBe(1);
    expect(io.errors()).toContain('no tensor named "nope"');
  });
});
