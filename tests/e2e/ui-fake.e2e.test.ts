// Component tests of the renderer in Chromium against an in-page fake of PantheonApi (fake-api.ts),
// with the real stories260K header: picker, drop, metadata viewer, tensor browser, chat, reload.

import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { HAVE_CHROMIUM, dropFile, launch, screenshot, watchProblems } from './browser.js';
import { RENDERER_OUT } from './build-renderer.js';
import { installFakeApi, type FakeOptions } from './fake-api.js';
import { fakeModelFromFile } from './fake-model.js';
import { serveStatic } from './static-server.js';

const MODEL = sharedModel('stories260K.gguf');
const REPLY = 'Once upon a time there was a **little** girl named Lily. She liked to play with her ball in the park. ' + 'One day she saw a big dog. '.repeat(20);

describe.skipIf(!HAVE_CHROMIUM || !HAVE_SHARED)('renderer in Chromium (fake API)', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: { url: string; close(): Promise<void> };
  let problems: string[];

  beforeAll(async () => {
    server = await serveStatic(RENDERER_OUT);
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, permissions: ['clipboard-read', 'clipboard-write'] });
    const { model, arrays } = fakeModelFromFile(MODEL);
    const opts: FakeOptions = { model, arrays, tokenDelayMs: 25, reply: REPLY };
    await context.addInitScript(installFakeApi, opts);
    context.setDefaultTimeout(8_000);
    page = await context.newPage();
    problems = watchProblems(page);
    await page.goto(server.url);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the picker with the demo model and opens it', async () => {
    const demo = page.getByRole('list', { name: 'Demo model' }).getByRole('button');
    expect(await demo.textContent()).toContain('stories260K.gguf');
    await screenshot(page, 'fake-01-picker');
    await demo.click();
    await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
  });

  it('finds tokenizer.ggml.tokens in the metadata viewer and looks a token up', async () => {
    await page.getByRole('tab', { name: 'Metadata' }).click();
    await page.getByRole('searchbox', { name: 'Filter metadata' }).fill('tokenizer.ggml.tokens');
    const rows = page.locator('.meta-table tbody tr');
    expect(await rows.count()).toBe(1);
    await page.getByRole('button', { name: 'Browse tokenizer.ggml.tokens' }).click();
    const list = page.getByRole('list', { name: 'tokenizer.ggml.tokens items' });
    await list.getByRole('listitem').first().waitFor();
    // The first rows of the real vocabulary (stories260K: <unk>, <s>, </s>).
    await expect.poll(() => list.getByRole('listitem').nth(1).textContent()).toContain('"<s>"');
    await page.getByRole('searchbox', { name: 'Search tokenizer.ggml.tokens' }).fill('#2');
    await expect.poll(() => list.getByRole('listitem').count()).toBe(1);
    expect(await list.getByRole('listitem').first().textContent()).toContain('"</s>"');
    await screenshot(page, 'fake-02-metadata');
    await page.getByRole('searchbox', { name: 'Filter metadata' }).fill('general.architecture');
    await page.getByRole('button', { name: 'Copy value of general.architecture' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('llama');
  });

  it('filters tensors to blk.0, sorts by size, selects one', async () => {
    await page.getByRole('tab', { name: 'Tensors' }).click();
    const table = page.getByRole('table', { name: 'Tensors' });
    await table.waitFor();
    await page.getByRole('searchbox', { name: 'Filter tensors by name' }).fill('blk.0.');
    await page.getByRole('columnheader', { name: 'Bytes' }).getByRole('button').click();
    expect(await page.getByRole('columnheader', { name: 'Bytes' }).getAttribute('aria-sort')).toBe('descending');
    const names = await table.locator('tbody td.tensor-name').allTextContents();
    expect(names.length).toBeGreaterThan(3);
    expect(names.every((n) => n.startsWith('blk.0.'))).toBe(true);
    const bytes = await table.locator('tbody tr:not(.group-row):not(.spacer) td:nth-child(5)').evaluateAll((tds) => tds.map((td) => Number((td.getAttribute('title') ?? '').replace(/[^0-9]/g, ''))));
    expect(bytes).toEqual([...bytes].sort((a, b) => b - a));
    await table.getByRole('button', { name: names[0] }).click();
    await page.getByRole('region', { name: 'Tensor details' }).waitFor();
    await screenshot(page, 'fake-03-tensors');
  });

  it('sends a message, streams a reply, stops it, and finds the chat after a reload', async () => {
    await page.getByRole('tab', { name: 'Chat' }).click();
    await page.getByRole('textbox', { name: 'Message' }).fill('Tell me a story');
    await page.keyboard.press('Enter');
    const reply = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => reply.textContent(), { timeout: 10_000 }).toContain('Once upon a time');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    const stopped = (await reply.locator('.markdown').textContent()) ?? '';
    expect(stopped.length).toBeLessThan(REPLY.length);
    await expect.poll(() => reply.locator('.stats').textContent()).toMatch(/\d+ tokens · first token .* tokens\/s · stopped/);
    await reply.getByText('Show prompt').click();
    expect(await reply.locator('.prompt-text').textContent()).toContain('Tell me a story');
    await screenshot(page, 'fake-04-chat');

    // The reload comes back to the same model, tab and conversation.
    await page.reload();
    await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
    await page.getByRole('navigation', { name: 'Conversations' }).getByRole('button', { name: /^Tell me a story/ }).waitFor();
    expect(await page.getByRole('article', { name: 'Your message' }).textContent()).toContain('Tell me a story');
    expect(await page.getByRole('article', { name: 'Reply' }).locator('.markdown').textContent()).toBe(stopped);
    // The exact prompt is stored with the reply, so "Show prompt" is still there.
    await page.getByRole('article', { name: 'Reply' }).getByText('Show prompt').click();
    expect(await page.getByRole('article', { name: 'Reply' }).locator('.prompt-text').textContent()).toBe('<|user|>Tell me a story\n<|assistant|>');
  });

  it('regenerates and edits a sent message', async () => {
    await page.getByRole('button', { name: 'Regenerate' }).click();
    await page.getByRole('button', { name: 'Stop', exact: true }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    expect(await page.getByRole('article', { name: 'Reply' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Edit message and resend' }).click();
    await page.getByRole('textbox', { name: 'Edit message' }).fill('A different question');
    await page.getByRole('button', { name: 'Save and resend' }).click();
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    expect(await page.getByRole('article', { name: 'Your message' }).textContent()).toContain('A different question');
  });

  it('keeps every message when the engine crashes, and reloads it', async () => {
    await page.getByRole('textbox', { name: 'Message' }).fill('Another one');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const reply = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => reply.locator('.markdown').textContent()).toContain('Once');
    await page.evaluate(() => (window as unknown as { fakeHooks: { crash(): void } }).fakeHooks.crash());
    const banner = page.locator('.engine-bar.crashed');
    await expect.poll(() => banner.textContent()).toContain('The engine stopped unexpectedly');
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    expect(await page.getByRole('article', { name: 'Your message' }).allTextContents()).toEqual([expect.stringContaining('A different question'), expect.stringContaining('Another one')]);
    expect(await reply.locator('.markdown').textContent()).toContain('Once');
    await screenshot(page, 'fake-05-crashed');
    await page.getByRole('button', { name: 'Reload', exact: true }).click();
    await expect.poll(() => page.locator('.engine-bar.ready').count()).toBe(1);
  });

  it('says so when the context is full', async () => {
    await page.evaluate(() => (window as unknown as { fakeHooks: { fillContext(): void } }).fakeHooks.fillContext());
    await page.getByRole('textbox', { name: 'Message' }).fill('More');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'The context is full' }).count()).toBe(1);
    expect(await page.locator('.gauge').textContent()).toContain('512 / 512 tokens');
  });

  it('on the GPU setting, names the adapter and takes GPU layers (Auto or a number); the engine line says how many', async () => {
    const select = page.getByRole('combobox', { name: 'Compute on' });
    const panel = page.getByRole('group', { name: 'GPU offload' });
    expect(await panel.count()).toBe(0);
    await select.selectOption('gpu');
    // named before any load on the GPU (engine:gpuAdapter)
    await expect.poll(() => panel.textContent()).toContain('Adapter: fake adapter');
    const auto = panel.getByRole('checkbox', { name: 'Auto GPU layers' });
    expect(await auto.isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Reload with the GPU' }).click();
    const line = page.locator('.engine-bar.ready .engine-text');
    // stories260K has 5 blocks (llama.block_count); auto on the fake GPU takes them all
    await expect.poll(() => line.textContent()).toContain(' · GPU: 5 of 5 layers (fake adapter) · ');
    expect(await line.getAttribute('title')).toBe('webgpu (fake adapter) 5/5 layers + fake');
    expect(await panel.textContent()).toContain('Adapter: fake adapter');
    await auto.uncheck();
    const field = panel.getByRole('spinbutton', { name: 'GPU layers' });
    expect(await field.inputValue()).toBe('5');
    expect(await field.getAttribute('max')).toBe('5');
    expect(await panel.textContent()).toContain('of 5 layers; the rest run on the CPU');
    // auto → 5 loaded, 5 asked: nothing to reload
    expect(await page.getByRole('button', { name: /^Reload with/ }).count()).toBe(0);
    await field.fill('9');
    await field.press('Enter');
    expect(await field.inputValue()).toBe('5'); // above the model's blocks: refused, back to the value
    await field.fill('2');
    await field.press('Enter');
    await page.getByRole('button', { name: 'Reload with 2 GPU layers' }).click();
    await expect.poll(() => line.textContent()).toContain(' · GPU: 2 of 5 layers (fake adapter) · ');
    expect(await page.getByRole('button', { name: /^Reload with/ }).count()).toBe(0);
    await field.scrollIntoViewIfNeeded();
    await screenshot(page, 'fake-06-gpu-layers');
    await auto.check();
    expect(await panel.getByRole('spinbutton', { name: 'GPU layers' }).count()).toBe(0);
    await select.selectOption('cpu');
    await page.getByRole('button', { name: 'Reload with the CPU' }).click();
    await expect.poll(() => line.textContent()).toContain(' · fake · ');
    expect(await panel.count()).toBe(0);
    await select.selectOption('auto');
  });

  it('on the GPU setting, a GPU lost mid-reply keeps the text so far, says so once, and offers the CPU', async () => {
    const select = page.getByRole('combobox', { name: 'Compute on' });
    await select.selectOption('gpu');
    await page.getByRole('button', { name: 'Reload with the GPU' }).click();
    const line = page.locator('.engine-bar.ready .engine-text');
    await expect.poll(() => line.textContent()).toContain(' · GPU: 5 of 5 layers (fake adapter) · ');
    await page.getByRole('textbox', { name: 'Message' }).fill('Go on');
    await page.keyboard.press('Enter');
    const reply = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => reply.locator('.markdown').textContent()).toContain('Once');
    await page.evaluate(() => (window as unknown as { fakeHooks: { loseGpu(): void } }).fakeHooks.loseGpu());
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    const said = page.getByRole('alert').filter({ hasText: 'GPU device was lost' });
    await expect.poll(() => said.count()).toBe(1);
    expect(await said.textContent()).toContain('the GPU device was lost: simulated; reload the model to continue on the CPU');
    const kept = (await reply.locator('.markdown').textContent()) ?? '';
    expect(kept).toMatch(/^Once/);
    expect(kept.length).toBeLessThan(REPLY.length);
    await screenshot(page, 'fake-06-gpu-lost');
    await page.getByRole('button', { name: 'Reload with the CPU' }).click();
    await expect.poll(() => line.textContent()).toContain('(on the CPU: the GPU was lost; restart Pantheon to try it again)');
    expect(await page.getByRole('button', { name: /^Reload with/ }).count()).toBe(0);
    await select.selectOption('auto');
  });

  it("shows a reply's reasoning collapsed above it, expands it, and keeps it out of the next prompt", async () => {
    // Long enough (29 tokens, 25 ms each) for the live count to be seen before the answer starts.
    const thought = 'The user asks for 2 + 2. Two and two make four. That is simple arithmetic, so the answer can be short and needs no working shown at all. ';
    const thoughtTokens = thought.split(' ').filter(Boolean).length;
    await page.evaluate((t) => (window as unknown as { fakeHooks: { thinkNext(r: string, a: string): void } }).fakeHooks.thinkNext(t, 'It is **4**.'), thought);
    await page.getByRole('textbox', { name: 'Message' }).fill('What is 2 + 2?');
    await page.keyboard.press('Enter');
    const reply = page.getByRole('article', { name: 'Reply' }).last();
    const section = reply.locator('details.reasoning');
    // While the model thinks, the section streams its count and time.
    await expect.poll(() => section.locator('summary').textContent(), { timeout: 10_000 }).toMatch(/^Thinking… (\d+ ms|\d+\.\d s) · [1-9]\d* tokens?$/);
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    // Done: collapsed, with the engine's count, above the answer, which holds no reasoning.
    expect(await section.locator('summary').textContent()).toMatch(new RegExp(`^Thought for (\\d+ ms|\\d+\\.\\d s) · ${thoughtTokens} tokens$`));
    expect(await section.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    expect(await section.locator('.reasoning-text').isVisible()).toBe(false);
    expect((await reply.locator('.markdown').textContent())?.trim()).toBe('It is 4.');
    await section.locator('summary').click();
    expect(await section.locator('.reasoning-text').isVisible()).toBe(true);
    expect(await section.locator('.reasoning-text').textContent()).toBe(thought.trim());
    await screenshot(page, 'fake-06-thinking');

    // The next turn's prompt has the earlier answer but not its reasoning.
    await page.getByRole('textbox', { name: 'Message' }).fill('And 3 + 3?');
    await page.keyboard.press('Enter');
    const next = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => next.locator('.markdown').textContent(), { timeout: 10_000 }).toContain('Once upon');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    expect(await next.locator('details.reasoning').count()).toBe(0);
    await next.getByText('Show prompt').click();
    const prompt = (await next.locator('.prompt-text').textContent()) ?? '';
    expect(prompt).toContain('<|user|>What is 2 + 2?\n<|assistant|>It is **4**.\n<|user|>And 3 + 3?\n<|assistant|>');
    expect(prompt).not.toContain('Two and two');

    // Stored with the reply: after a reload the section is still there, with its numbers.
    await page.reload();
    const again = page.getByRole('article', { name: 'Reply' }).filter({ hasText: 'It is 4.' });
    expect(await again.locator('details.reasoning summary').textContent()).toMatch(new RegExp(`^Thought for (\\d+ ms|\\d+\\.\\d s) · ${thoughtTokens} tokens$`));
  });

  it('renames and deletes a conversation', async () => {
    const nav = page.getByRole('navigation', { name: 'Conversations' });
    await nav.getByRole('button', { name: /^Rename / }).first().click();
    await nav.getByRole('textbox', { name: 'Chat title' }).fill('Renamed chat');
    await nav.getByRole('textbox', { name: 'Chat title' }).press('Enter');
    await nav.getByRole('button', { name: /^Renamed chat/ }).waitFor();
    await page.getByRole('button', { name: 'New chat' }).click();
    await expect.poll(() => nav.getByRole('listitem').count()).toBe(2);
    await nav.getByRole('button', { name: 'Delete New chat' }).click();
    await nav.getByRole('button', { name: 'Confirm delete New chat' }).click();
    await expect.poll(() => nav.getByRole('listitem').count()).toBe(1);
  });

  it('Ctrl+O asks to open a model (the browser has no dialog: one clear line)', async () => {
    await page.keyboard.press('Control+o');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The file dialog is not available');
  });

  it('refuses a dropped non-GGUF file and a corrupt .gguf with one clear line', async () => {
    await dropFile(page, 'notes.txt', new TextEncoder().encode('hello'));
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('notes.txt is not a .gguf model file');
    await dropFile(page, 'broken.gguf', new TextEncoder().encode('NOPE this is not a model'));
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('broken.gguf is not a GGUF file');
    await screenshot(page, 'fake-07-corrupt');
  });

  it('opens a dropped .gguf', async () => {
    const bytes = readFileSync(MODEL);
    await dropFile(page, 'dropped-stories.gguf', bytes.subarray(0, 64));
    await expect.poll(() => page.locator('.current-model').getAttribute('title')).toBeTruthy();
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('follows the OS colour scheme, then the theme setting, and caused no console errors or CSP violations', async () => {
    const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.emulateMedia({ colorScheme: 'light' });
    const light = await bg();
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await bg();
    expect(dark).not.toBe(light);
    await page.getByRole('combobox', { name: 'Theme' }).selectOption('light');
    expect(await bg()).toBe(light);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.getByRole('combobox', { name: 'Theme' }).selectOption('dark');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await page.getByRole('tab', { name: 'Chat' }).click();
    await screenshot(page, 'fake-08-dark');
    // The other views in the dark theme, with a selection and focus, to look at.
    await page.getByRole('tab', { name: 'Metadata' }).click();
    await page.getByRole('searchbox', { name: 'Filter metadata' }).fill('tokenizer');
    await page.getByRole('button', { name: 'Browse tokenizer.ggml.tokens' }).click();
    await screenshot(page, 'fake-09-dark-metadata');
    await page.getByRole('tab', { name: 'Tensors' }).click();
    await page.getByRole('table', { name: 'Tensors' }).getByRole('button', { name: 'blk.1.attn_q.weight' }).click();
    await page.getByRole('searchbox', { name: 'Filter tensors by name' }).focus();
    await screenshot(page, 'fake-10-dark-tensors');
    expect(problems).toEqual([]);
  });
});
