// A remote server in Chromium against the dev harness: `pantheon serve` (the OpenAI-compatible
// server) on the demo model is added in the picker with its API key, its model opened, and a chat
// streams from it; a wrong key is refused in one line.

import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoadedModel } from '../../src/engine/session.js';
import { OpenAiServer } from '../../src/engine/server/server.js';
import { ROOT } from '../helpers.js';
import { HAVE_BENCH, startLlamaServer } from '../host/llama-server.js';
import { openApp, type AppSession } from './app-session.js';
import { HAVE_CHROMIUM, screenshot } from './browser.js';

const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');
const KEY = 'e2e-remote-key';
describe.skipIf(!HAVE_CHROMIUM)('a remote server in Chromium', () => {
  let app: AppSession;
  let page: Page;
  let problems: string[];
  let served: LoadedModel;
  let server: OpenAiServer;

  beforeAll(async () => {
    served = await LoadedModel.load(DEMO, { contextSize: 512 });
    server = await OpenAiServer.start(served, { host: '127.0.0.1', port: 0, apiKey: KEY });
    app = await openApp({ viewport: { width: 1280, height: 860 }, timeout: 30_000 });
    ({ page, problems } = app);
  });

  afterAll(async () => {
    await app?.close();
    await server?.close();
    served?.dispose();
  });

  it('a wrong key is one line; the right key lists the model', async () => {
    const form = page.getByRole('form', { name: 'Add remote server' });
    await form.getByRole('textbox', { name: 'Server base URL' }).fill(server.url);
    await form.getByLabel('API key (optional)').fill('wrong');
    await form.getByRole('button', { name: 'Add remote server' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 30_000 }).toMatch(/refused the API key \(HTTP 401\)/);
    await form.getByLabel('API key (optional)').fill(KEY);
    await form.getByRole('button', { name: 'Add remote server' }).click();
    await page.getByRole('list', { name: `Models on ${server.url}` }).getByRole('button', { name: `Open stories260K on ${server.url}` }).waitFor();
    expect(await page.getByRole('region', { name: `Remote server ${server.url}` }).textContent()).toContain('key kept for this session only');
    await screenshot(page, 'remote-01-added');
  });

  it("opens the remote model and chats with it: the server's reply streams in", async () => {
    await page.getByRole('button', { name: `Open stories260K on ${server.url}` }).click();
    await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
    expect(await page.getByRole('tab', { name: 'Tensors' }).isDisabled()).toBe(true);
    await page.getByRole('spinbutton', { name: 'Max tokens' }).fill('12');
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Once upon a time');
    await box.press('Enter');
    const reply = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => reply.locator('.markdown').textContent(), { timeout: 30_000 }).toMatch(/\w{3}/);
    await expect.poll(() => reply.getAttribute('aria-busy'), { timeout: 30_000 }).toBe('false');
    expect(await page.locator('.engine-bar, [class*="engine"]').first().textContent()).toMatch(/remote \(127\.0\.0\.1:\d+\)/);
    await reply.getByText('Show prompt').click();
    expect(await reply.textContent()).toContain('"stream": true');
    await screenshot(page, 'remote-02-chat');
    expect(problems).toEqual([]);
  });

  // A second, independent server: llama.cpp's, without a key.
  it.skipIf(!HAVE_BENCH)('the same with llama.cpp behind node-llama-cpp', async () => {
    const llama = startLlamaServer(DEMO);
    try {
      const url = await llama.url;
      await page.getByRole('tab', { name: 'Models' }).click();
      const form = page.getByRole('form', { name: 'Add remote server' });
      await form.getByRole('textbox', { name: 'Server base URL' }).fill(url.replace(/\/v1$/, ''));
      await form.getByRole('button', { name: 'Add remote server' }).click();
      await page.getByRole('button', { name: `Open stories260K on ${url}` }).click();
      await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
      await page.getByRole('button', { name: 'New chat' }).click();
      const box = page.getByRole('textbox', { name: 'Message' });
      await box.fill('Once upon a time');
      await box.press('Enter');
      const reply = page.getByRole('article', { name: 'Reply' }).last();
      await expect.poll(() => reply.locator('.markdown').textContent(), { timeout: 30_000 }).toMatch(/\w{3}/);
      await expect.poll(() => reply.getAttribute('aria-busy'), { timeout: 30_000 }).toBe('false');
      expect(await reply.textContent()).toMatch(/\d+ tokens · first token \d+ ms/);
      await screenshot(page, 'remote-03-llama-cpp');
      expect(problems).toEqual([]);
    } finally {
      llama.child.kill();
    }
  }, 90_000);
});
