// The "Server" tab in Chromium against the dev harness: load the demo model, start the local
// OpenAI-compatible server with an API key, call it with the official `openai` client from here,
// watch the request appear in the live log, and stop it. The server runs in the harness's engine
// process, over the model the page loaded.

import OpenAI from 'openai';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_CHROMIUM, launch, screenshot, watchProblems } from './browser.js';
import { startHarness, type RunningHarness } from './harness.js';

describe.skipIf(!HAVE_CHROMIUM)('the local server panel', () => {
  let harness: RunningHarness;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    harness = await startHarness({});
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

  it('starts, answers the openai client with the key, logs the request, and stops', async () => {
    await page.getByRole('list', { name: 'Demo model' }).getByRole('button').click();
    await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
    await page.getByRole('tab', { name: 'Server' }).click();
    const panel = page.getByRole('region', { name: 'Local server' });
    await panel.waitFor();
    // the chat may have loaded the model already; else load it from the panel
    const load = panel.getByRole('button', { name: 'Load model' });
    if (await load.isVisible()) await load.click();
    const startButton = panel.getByRole('button', { name: 'Start server' });
    await expect.poll(() => startButton.isEnabled(), { timeout: 30_000 }).toBe(true);
    await panel.getByLabel('Port').fill('0');
    await panel.getByLabel('API key (optional)').fill('e2e-key');
    await startButton.click();
    const url = (await panel.getByTestId('server-url').textContent({ timeout: 15_000 }))!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);

    const client = new OpenAI({ baseURL: url, apiKey: 'e2e-key', maxRetries: 0 });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['stories260K']);
    const r = await client.chat.completions.create({ model: 'stories260K', messages: [{ role: 'user', content: 'Once upon a time' }], temperature: 0, max_tokens: 8 });
    expect(r.usage?.completion_tokens).toBe(8);
    expect((await fetch(`${url}/models`)).status).toBe(401); // the key is required

    const log = panel.getByRole('table', { name: 'Request log' });
    await expect.poll(() => log.locator('tbody tr').count()).toBe(3);
    const rows = await log.locator('tbody tr').allTextContents();
    // newest first: the keyless call, the chat (with its tokens), the model list
    expect(rows[0]).toContain('/v1/models401');
    expect(rows[1]).toMatch(/POST\/v1\/chat\/completions200\d+ \+ 8/);
    expect(rows[2]).toContain('GET/v1/models200');
    await screenshot(page, 'server-01-running');

    await panel.getByRole('button', { name: 'Stop server' }).click();
    await panel.getByRole('button', { name: 'Start server' }).waitFor();
    await expect(fetch(`${url}/models`)).rejects.toThrow();
    expect(problems).toEqual([]);
  });
});
