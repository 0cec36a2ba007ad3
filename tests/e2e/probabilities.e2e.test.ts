// "Probabilities" in Chromium against the dev harness and its real engine (the demo model, greedy):
// each token of a reply is shown with its probability, a focused token lists the 10 most likely
// at that step, and choosing another branches the reply: the new reply is the cut text, the chosen
// token, and then exactly the engine's greedy continuation of that prompt (from the CLI); the
// replaced reply stays as an earlier version.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers.js';
import { openApp, openDemo, type AppSession } from './app-session.js';
import { HAVE_CHROMIUM, screenshot } from './browser.js';

const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');
const N = 16;

/** The engine's greedy continuation of a raw prompt (`pantheon run`, which adds BOS itself). */
function greedy(prompt: string, n: number): string {
  const raw = prompt.startsWith('<s>') ? prompt.slice(3) : prompt;
  const out = execFileSync(process.execPath, [join(ROOT, 'bin', 'pantheon.mjs'), 'run', DEMO, '-p', raw, '--temp', '0', '-n', String(n), '--json'], { cwd: ROOT, encoding: 'utf8' });
  return (JSON.parse(out) as { text: string }).text;
}

describe.skipIf(!HAVE_CHROMIUM)('token probabilities and branching in Chromium', () => {
  let app: AppSession;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    app = await openApp({ viewport: { width: 1280, height: 820 }, timeout: 30_000 });
    ({ page, problems } = app);
    await openDemo(page);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('shows each token with its alternatives, and a branch continues as the engine would', async () => {
    await page.getByLabel('Probabilities').check();
    await page.getByRole('spinbutton', { name: 'Temperature' }).fill('0');
    await page.getByRole('spinbutton', { name: 'Max tokens' }).fill(String(N));
    await page.getByRole('spinbutton', { name: 'Max tokens' }).press('Tab');
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Once upon a time');
    await box.press('Enter');
    const reply = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => reply.getAttribute('aria-busy'), { timeout: 30_000 }).toBe('false');
    const tokens = reply.getByRole('group', { name: 'Reply tokens by probability' }).locator('.tok');
    expect(await tokens.count()).toBe(N);

    // Greedy: every chosen token is the most likely one at its step.
    await tokens.nth(2).focus();
    const tip = page.getByRole('tooltip');
    const alts = tip.getByRole('button');
    expect(await alts.count()).toBe(10);
    const chosen = await tokens.nth(2).evaluate((e) => e.firstChild?.textContent ?? '');
    expect(await alts.first().getAttribute('aria-label')).toContain(`"${chosen}"`);
    await screenshot(page, 'probabilities-01-alternatives');

    // Branch at token 2 with the second most likely token.
    const texts = await tokens.evaluateAll((els) => els.map((e) => e.firstChild?.textContent ?? ''));
    const alt = /^Branch with "(.*)":/.exec((await alts.nth(1).getAttribute('aria-label'))!)![1];
    await alts.nth(1).click();
    await expect.poll(() => page.getByRole('article', { name: 'Reply' }).last().getAttribute('aria-busy'), { timeout: 30_000 }).toBe('false');
    const branched = page.getByRole('article', { name: 'Reply' }).last();
    const got = (await branched.getByRole('group', { name: 'Reply tokens by probability' }).locator('.tok').evaluateAll((els) => els.map((e) => e.firstChild?.textContent ?? ''))).join('');
    const prefix = texts.slice(0, 2).join('') + JSON.parse(`"${alt}"`);
    expect(got.startsWith(prefix)).toBe(true);
    // Its prompt is the chat's prompt with the cut reply after it; the rest is the greedy run of that.
    await branched.getByText('Show prompt').click();
    const prompt = (await branched.locator('.prompt-text').textContent())!;
    expect(prompt.endsWith(prefix)).toBe(true);
    expect(got.slice(prefix.length)).toBe(greedy(prompt, N));
    expect(await page.getByRole('article', { name: 'Reply' }).count()).toBe(1);
    // The reply it replaced stays, as an earlier version.
    await branched.getByText('1 earlier version').click();
    expect((await branched.getByRole('listitem', { name: 'Version 1' }).locator('.markdown').textContent())?.trim()).toBe(texts.join('').trim());
    await screenshot(page, 'probabilities-02-branch');
    expect(problems).toEqual([]);
  });
});
