// Export a chat as Markdown and JSON and import the JSON back, in Chromium against the dev
// harness and its real engine (the demo model): the downloads hold the chat's turns and stats, and
// the import is a new chat with the same messages.

import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, openDemo, type AppSession } from './app-session.js';
import { HAVE_CHROMIUM, screenshot } from './browser.js';

describe.skipIf(!HAVE_CHROMIUM)('chat export and import in Chromium', () => {
  let app: AppSession;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    app = await openApp({ timeout: 30_000, acceptDownloads: true });
    ({ page, problems } = app);
    await openDemo(page);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('exports the open chat as Markdown and JSON, and imports the JSON as a new chat', async () => {
    await page.getByRole('spinbutton', { name: 'Max tokens' }).fill('12');
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Once upon a time');
    await box.press('Enter');
    const article = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => article.locator('.markdown').textContent(), { timeout: 30_000 }).toMatch(/\w{3}/);
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    await expect.poll(() => article.getAttribute('aria-busy'), { timeout: 30_000 }).toBe('false');
    const reply = (await article.locator('.markdown').textContent())?.trim() ?? '';

    const files = page.getByRole('group', { name: 'Export or import a chat' });
    const [md] = await Promise.all([page.waitForEvent('download'), files.getByRole('button', { name: 'Export .md' }).click()]);
    const mdText = readFileSync((await md.path())!, 'utf8');
    expect(md.suggestedFilename()).toMatch(/\.md$/);
    expect(mdText).toMatch(/^---\ntitle: "Once upon a time"/);
    expect(mdText).toContain('## User\n\nOnce upon a time\n');
    expect(mdText).toMatch(/\*model .* · \d+ prompt tokens · \d+ generated · [\d.]+ tok\/s/);

    const [json] = await Promise.all([page.waitForEvent('download'), files.getByRole('button', { name: 'Export .json' }).click()]);
    const jsonPath = (await json.path())!;
    const exported = JSON.parse(readFileSync(jsonPath, 'utf8'));
    expect(exported.format).toBe('pantheon-chat');
    expect(exported.chat.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);

    const before = await page.getByRole('navigation', { name: 'Conversations' }).getByRole('listitem').count();
    await page.getByLabel('Chat file to import').setInputFiles(jsonPath);
    const list = page.getByRole('navigation', { name: 'Conversations' }).getByRole('listitem');
    await expect.poll(() => list.count(), { timeout: 30_000 }).toBe(before + 1);
    await page.getByRole('region', { name: 'Chat: Once upon a time' }).waitFor();
    expect((await page.getByRole('article', { name: 'Your message' }).locator('.user-text').allTextContents())).toEqual(['Once upon a time']);
    expect((await page.getByRole('article', { name: 'Reply' }).locator('.markdown').allTextContents()).map((t) => t.trim())).toEqual([reply]);
    await screenshot(page, 'chat-files-01-imported');
    expect(problems).toEqual([]);
  });
});
