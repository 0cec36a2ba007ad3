// The tensor browser's statistics and "Compare with…" in Chromium against the dev harness: the
// numbers shown for a tensor of the demo model (F32, so its values are read here straight from
// the file, independently of the engine's code), its histogram and heatmap, and a comparison with
// the Q8_0 build of the same model picked through the open dialog (PANTHEON_MODEL_FILE).

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGgufHeaderSync, readTensorBytes } from '../../src/engine/gguf/file.js';
import { HAVE_SHARED, ROOT, sharedModel } from '../helpers.js';
import { openApp, openDemo, type AppSession } from './app-session.js';
import { HAVE_CHROMIUM, screenshot } from './browser.js';

const DEMO = `${ROOT}/resources/models/stories260K.gguf`;
const Q8 = sharedModel('tinyllamas-stories-260k-q8_0.gguf');
const TENSOR = 'blk.0.ffn_gate.weight';

describe.skipIf(!HAVE_CHROMIUM || !HAVE_SHARED)('tensor statistics and comparison in Chromium', () => {
  let app: AppSession;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    app = await openApp({ env: { PANTHEON_MODEL_FILE: Q8 }, viewport: { width: 1280, height: 860 } });
    ({ page, problems } = app);
    await openDemo(page);
  });

  afterAll(async () => {
    await app?.close();
  });

  it("shows a tensor's min, max, mean and std, its histogram and heatmap", async () => {
    const h = readGgufHeaderSync(DEMO);
    const bytes = readTensorBytes(DEMO, h, TENSOR);
    const v = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    let min = Infinity;
    let max = -Infinity;
    let sum = 0;
    for (const x of v) { min = Math.min(min, x); max = Math.max(max, x); sum += x; }
    const mean = sum / v.length;
    const std = Math.sqrt(v.reduce((a, x) => a + (x - mean) ** 2, 0) / v.length);

    await page.getByRole('tab', { name: 'Tensors' }).click();
    await page.getByRole('table', { name: 'Tensors' }).getByRole('button', { name: TENSOR }).click();
    const panel = page.getByRole('region', { name: `Statistics of ${TENSOR}` });
    await panel.getByRole('img', { name: new RegExp(`^Histogram of ${TENSOR.replace(/\./g, '\\.')}`) }).waitFor();
    const fact = async (k: string) => Number(await panel.locator('.facts div').filter({ has: page.getByText(k, { exact: true }) }).locator('dd').textContent());
    expect(await fact('Min')).toBeCloseTo(min, 4);
    expect(await fact('Max')).toBeCloseTo(max, 4);
    expect(Math.abs((await fact('Mean')) - mean)).toBeLessThan(1e-7);
    expect(await fact('Std')).toBeCloseTo(std, 4);
    expect(await panel.getByRole('img', { name: new RegExp(`^Heatmap of ${TENSOR.replace(/\./g, '\\.')}`) }).count()).toBe(1);
    await screenshot(page, 'inspect-01-stats');
  });

  it('compares with the Q8_0 file: the tensors that differ, largest first, and the metadata', async () => {
    const a = readGgufHeaderSync(DEMO);
    const b = readGgufHeaderSync(Q8);
    const inB = new Map(b.tensors.map((t) => [t.name, t]));
    const differ = a.tensors.filter((t) => inB.has(t.name) && (inB.get(t.name)!.type !== t.type || inB.get(t.name)!.bytes !== t.bytes)).length;
    await page.getByRole('button', { name: 'Compare with…' }).click();
    const region = page.getByRole('region', { name: 'Compare with another file' });
    await region.getByRole('button', { name: 'Choose a file…' }).click();
    const table = region.getByRole('table', { name: 'Tensors that differ' });
    await table.waitFor();
    expect(await region.getByRole('status').textContent()).toContain(`${differ} tensors differ`);
    const rel = (await table.locator('tbody tr td:nth-child(4)').allTextContents()).map(Number);
    expect(rel.length).toBe(differ);
    expect(rel.every((x, i) => i === 0 || x <= rel[i - 1])).toBe(true);
    // Q8_0 keeps about 8 bits: every quantised tensor is off by well under 1% RMS, none by nothing.
    expect(rel.every((x) => x > 0 && x < 0.01)).toBe(true);
    expect(await region.getByRole('img', { name: /^Difference by layer/ }).count()).toBe(1);
    await screenshot(page, 'inspect-02-compare');
    expect(problems).toEqual([]);
  });
});
