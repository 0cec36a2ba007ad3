// Structured output end to end in Chromium against the dev harness and its real engine
// (stories260K): the sampling panel's "Structured output" set to a pasted JSON schema makes the
// reply JSON that satisfies the schema (validate.ts reads the schema, not the grammar), and a
// schema that is not JSON is said in the panel.

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_SHARED } from '../helpers.js';
import { validate } from '../grammar/validate.js';
import { HAVE_CHROMIUM, launch, screenshot, watchProblems } from './browser.js';
import { startHarness, type RunningHarness } from './harness.js';

const SCHEMA = { type: 'object', properties: { hero: { type: 'string', maxLength: 10 }, happy: { type: 'boolean' }, age: { type: 'integer', minimum: 1, maximum: 9 } }, required: ['hero', 'happy', 'age'] };

describe.skipIf(!HAVE_CHROMIUM || !HAVE_SHARED)('Structured output in Chromium against the dev harness', () => {
  let harness: RunningHarness;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    harness = await startHarness({ PANTHEON_TEST_HOOKS: '1' });
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

  it('a pasted JSON schema: the reply is JSON that satisfies it', async () => {
    await page.getByRole('list', { name: 'Demo model' }).getByRole('button').click();
    await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
    const kind = page.getByRole('combobox', { name: 'Structured output' });
    await kind.selectOption('json-schema');
    const text = page.getByRole('textbox', { name: 'JSON schema' });
    await text.fill('{"type": ');
    await expect.poll(() => page.getByText('This is not valid JSON yet.').count()).toBe(1);
    await text.fill(JSON.stringify(SCHEMA, null, 1));
    await text.blur();
    const temperature = page.getByRole('spinbutton', { name: 'Temperature' });
    await temperature.fill('1');
    await temperature.press('Enter');
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Tell me about the hero.');
    await box.press('Enter');
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor({ timeout: 60_000 });
    const reply = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => reply.locator('.stats').textContent(), { timeout: 30_000 }).toMatch(/tokens/);
    await screenshot(page, 'structured-01-json-schema');
    const shown = (await reply.locator('.markdown').textContent()) ?? '';
    expect(validate(JSON.parse(shown), SCHEMA), shown).toBeNull();
    expect(problems).toEqual([]);
  });
});
