// End to end in Chromium against the dev harness and its real engine (stories260K): pick the demo
// model, read its metadata and tensors, chat (stream, Stop, reload), drop a .gguf, drop a corrupt one.
// The expected values come from the file itself, read in Node with the project's GGUF reader.

import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGgufHeaderSync } from '../../src/engine/gguf/file.js';
import { getArray } from '../../src/engine/gguf/keys.js';
import { HAVE_SHARED, ROOT, sharedModel } from '../helpers.js';
import { HAVE_CHROMIUM, dropFile, launch, screenshot, watchProblems } from './browser.js';
import { startHarness, type RunningHarness } from './harness.js';

const DEMO = `${ROOT}/resources/models/stories260K.gguf`;
const DROPPED = sharedModel('tinyllamas-stories-260k-q8_0.gguf');

describe.skipIf(!HAVE_CHROMIUM || !HAVE_SHARED)('Pantheon in Chromium against the dev harness', () => {
  let harness: RunningHarness;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  const header = readGgufHeaderSync(DEMO);

  beforeAll(async () => {
    harness = await startHarness();
    browser = await launch();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    problems = watchProblems(page);
    await page.goto(harness.url);
  });

  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });

  it('picks the demo model', async () => {
    const demo = page.getByRole('list', { name: 'Demo model' }).getByRole('button');
    await demo.waitFor();
    expect(await demo.textContent()).toContain('stories260K.gguf');
    await screenshot(page, 'app-01-picker');
    await demo.click();
    await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
    expect(await page.locator('.current-model').getAttribute('title')).toMatch(/stories260K\.gguf$/);
  });

  it('finds tokenizer.ggml.tokens in the metadata viewer and looks a token up by text and by id', async () => {
    const tokens = getArray(header, 'tokenizer.ggml.tokens') as string[];
    await page.getByRole('tab', { name: 'Metadata' }).click();
    await page.getByRole('searchbox', { name: 'Filter metadata' }).fill('tokenizer.ggml.tokens');
    await page.getByRole('button', { name: 'Browse tokenizer.ggml.tokens' }).click();
    const list = page.getByRole('list', { name: 'tokenizer.ggml.tokens items' });
    await expect.poll(() => list.getByRole('listitem').nth(5).textContent()).toContain(JSON.stringify(tokens[5]));

    // By text: a whole-word token from the vocabulary; every match shown contains it.
    const id = tokens.findIndex((t, i) => i > 300 && /^▁[a-z]{4,}$/.test(t));
    const word = tokens[id].slice(1);
    await page.getByRole('searchbox', { name: 'Search tokenizer.ggml.tokens' }).fill(word);
    await expect.poll(() => list.getByRole('listitem').allTextContents()).toContainEqual(expect.stringContaining(`${id}${JSON.stringify(tokens[id])}`));
    await screenshot(page, 'app-02-metadata');

    // By id.
    await page.getByRole('searchbox', { name: 'Search tokenizer.ggml.tokens' }).fill(`#${id}`);
    await expect.poll(() => list.getByRole('listitem').allTextContents()).toEqual([expect.stringContaining(JSON.stringify(tokens[id]))]);
  });

  it('filters tensors to blk.0 and sorts them by size', async () => {
    const want = header.tensors
      .filter((t) => t.name.startsWith('blk.0.'))
      .sort((a, b) => b.bytes - a.bytes || a.offset - b.offset)
      .map((t) => t.name);
    await page.getByRole('tab', { name: 'Tensors' }).click();
    await page.getByRole('searchbox', { name: 'Filter tensors by name' }).fill('blk.0.');
    const bytesHeader = page.getByRole('columnheader', { name: 'Bytes' });
    await bytesHeader.getByRole('button').click();
    expect(await bytesHeader.getAttribute('aria-sort')).toBe('descending');
    const table = page.getByRole('table', { name: 'Tensors' });
    expect(await table.locator('tbody td.tensor-name').allTextContents()).toEqual(want);
    await table.getByRole('button', { name: want[0] }).click();
    expect(await page.getByRole('region', { name: 'Tensor details' }).textContent()).toContain(want[0]);
    await screenshot(page, 'app-03-tensors');
  });

  it('sends a message and sees streamed text, then stops a reply mid-way', async () => {
    await page.getByRole('tab', { name: 'Chat' }).click();
    // A short first reply that ends by itself (max tokens).
    const maxTokens = page.getByRole('spinbutton', { name: 'Max tokens' });
    await maxTokens.fill('24');
    await maxTokens.press('Enter');
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Once upon a time');
    await box.press('Enter');
    const reply = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => reply.locator('.markdown').textContent(), { timeout: 30_000 }).toMatch(/\w{3}/);
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor({ timeout: 30_000 });
    const first = await reply.locator('.stats').textContent();
    expect(first).toMatch(/^24 tokens · first token .+ · [\d.]+ tokens\/s · max tokens reached/);
    await reply.getByText('Show prompt').click();
    expect(await reply.locator('.prompt-text').textContent()).toContain('Once upon a time');
    await screenshot(page, 'app-04-reply');

    // Ask for a long reply and press Stop as soon as its first words show (in the page, so the
    // click lands within a frame of the text appearing, however fast the engine is).
    await maxTokens.fill('400');
    await maxTokens.press('Enter');
    await page.evaluate(() => {
      const obs = new MutationObserver(() => {
        const replies = document.querySelectorAll('article[aria-label="Reply"]');
        const last = replies[replies.length - 1];
        const stop = [...document.querySelectorAll('button')].find((b) => b.textContent === 'Stop');
        if (replies.length >= 2 && last?.querySelector('.markdown')?.textContent && stop) {
          obs.disconnect();
          stop.click();
        }
      });
      obs.observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await box.fill('Tell me a story about a dog');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await expect.poll(() => page.getByRole('article', { name: 'Reply' }).count()).toBe(2);
    const second = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => second.locator('.stats').textContent(), { timeout: 30_000 }).toMatch(/stopped$/);
    const n = Number(/^(\d+) tokens/.exec((await second.locator('.stats').textContent()) ?? '')?.[1]);
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(400);
    await screenshot(page, 'app-05-stopped');
  });

  it('finds the conversation after a reload of the page', async () => {
    const before = await page.getByRole('article').allTextContents();
    await page.reload();
    await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
    await page.getByRole('navigation', { name: 'Conversations' }).getByRole('button', { name: /^Once upon a time/ }).waitFor();
    await expect.poll(() => page.getByRole('article').count()).toBe(4);
    const after = await page.getByRole('article').allTextContents();
    // The same messages and replies; "Show prompt" belongs to the session that generated them.
    expect(after.map((t) => t.replace(/Show prompt[\s\S]*$/, ''))).toEqual(before.map((t) => t.replace(/Show prompt[\s\S]*$/, '')));
    await screenshot(page, 'app-06-reloaded');
  });

  it('opens a dropped .gguf', async () => {
    await dropFile(page, 'tinyllamas-stories-260k-q8_0.gguf', readFileSync(DROPPED));
    await expect.poll(() => page.locator('.current-model').getAttribute('title'), { timeout: 20_000 }).toMatch(/tinyllamas-stories-260k-q8_0\.gguf$/);
    await page.getByRole('tab', { name: 'Tensors' }).click();
    await expect.poll(() => page.getByRole('img', { name: /^Bytes by type: Q8_0/ }).count()).toBe(1);
    await screenshot(page, 'app-07-dropped');
  });

  it('shows one clear line for a dropped corrupt file and for a file that is not a model', async () => {
    const good = readFileSync(DEMO);
    // The real magic and version, then the header cut short in the middle of the metadata.
    await dropFile(page, 'corrupt.gguf', good.subarray(0, 200));
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent(), { timeout: 20_000 }).toMatch(/\S/);
    const text = (await alert.textContent()) ?? '';
    expect(text).not.toMatch(/\n|\bat .+:\d+:\d+/);
    await screenshot(page, 'app-08-corrupt');
    await dropFile(page, 'notes.txt', new TextEncoder().encode('not a model'));
    await expect.poll(() => alert.textContent()).toContain('notes.txt is not a .gguf model file');
    expect(problems).toEqual([]);
  });
});
