// The Profile panel in Chromium against the dev harness and its real engine: with "Profile" on, a
// reply's time per op and per layer shows beside the chat, one bar per layer of the model (its
// block count read from the file here) and the forward pass's ops among the rows.

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGgufHeaderSync } from '../../src/engine/gguf/file.js';
import { ROOT } from '../helpers.js';
import { openApp, openDemo, type AppSession } from './app-session.js';
import { HAVE_CHROMIUM, screenshot } from './browser.js';

const DEMO = `${ROOT}/resources/models/stories260K.gguf`;

describe.skipIf(!HAVE_CHROMIUM)('the Profile panel in Chromium', () => {
  let app: AppSession;
  let page: Page;

  beforeAll(async () => {
    app = await openApp({ viewport: { width: 1280, height: 1000 }, timeout: 30_000 });
    page = app.page;
    await openDemo(page);
  });

  afterAll(async () => {
    await app?.close();
  });

  it("shows the last reply's time per op and per layer", async () => {
    const layers = Number(readGgufHeaderSync(DEMO).metadata.get('llama.block_count')?.value);
    await page.getByRole('checkbox', { name: /^Profile / }).check();
    await page.getByRole('spinbutton', { name: 'Max tokens' }).fill('12');
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Once upon a time');
    await box.press('Enter');
    const panel = page.getByRole('region', { name: 'Profile of the last reply' });
    const perLayer = panel.getByRole('img', { name: /^Time per layer of the last reply/ });
    await perLayer.waitFor();
    expect(await perLayer.getAttribute('aria-label')).toMatch(new RegExp(`^Time per layer of the last reply: ${layers} layers`));
    expect(await perLayer.locator('rect').count()).toBe(layers);
    const ops = (await panel.getByRole('img', { name: /^Time per op of the last reply/ }).getAttribute('aria-label'))!;
    for (const op of ['attention', 'norm', 'sampling']) expect(ops).toContain(op);
    expect(ops).toMatch(/matvec F32/);
    await panel.scrollIntoViewIfNeeded();
    await screenshot(page, 'profile-01-panel');
    expect(app.problems).toEqual([]);
  });
});
