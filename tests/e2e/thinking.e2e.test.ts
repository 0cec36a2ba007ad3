// A reasoning model's reply in Chromium against the dev harness and its real engine: the scripted
// thinker (tests/chat/thinker-model.ts: Qwen3's template, a fixed "<think>…</think>answer" reply),
// opened through "Open model" (PANTHEON_MODEL_FILE). The thinking shows collapsed above the answer
// with the engine's token count and time, expands, stays out of the next turn's prompt, and is kept
// with the reply across a reload. Then the scripted Harmony model (gpt-oss's template), dropped on
// the window: its analysis channel shows the same way.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HARMONY_ANSWER, HARMONY_REASONING, HARMONY_REASONING_TOKENS, THINKER_ANSWER, THINKER_REASONING, THINKER_REASONING_TOKENS, writeThinkerModel } from '../chat/thinker-model.js';
import { HAVE_CHROMIUM, dropFile, launch, screenshot, watchProblems } from './browser.js';
import { startHarness, type RunningHarness } from './harness.js';

describe.skipIf(!HAVE_CHROMIUM)('a reply with reasoning, real engine, in Chromium', () => {
  let dir: string;
  let harness: RunningHarness;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pantheon-thinker-'));
    harness = await startHarness({ PANTHEON_MODEL_FILE: writeThinkerModel(dir) });
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
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the thinking collapsed above the answer, with its tokens and time, and expands it', async () => {
    await page.getByRole('button', { name: 'Open model', exact: true }).click();
    await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
    await page.getByRole('textbox', { name: 'Message' }).fill('Hi!');
    await page.keyboard.press('Enter');
    const reply = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => reply.locator('.markdown').textContent(), { timeout: 30_000 }).toContain(THINKER_ANSWER);
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor({ timeout: 30_000 });
    const section = reply.locator('details.reasoning');
    expect(await section.locator('summary').textContent()).toMatch(new RegExp(`^Thought for (\\d+ ms|\\d+\\.\\d s) · ${THINKER_REASONING_TOKENS} tokens$`));
    expect(await section.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    expect((await reply.locator('.markdown').textContent())?.trim()).toBe(THINKER_ANSWER);
    await section.locator('summary').click();
    expect(await section.locator('.reasoning-text').textContent()).toBe(THINKER_REASONING);
    expect(await reply.locator('.stats').textContent()).toMatch(/^20 tokens · .* · end of text$/);
  });

  it("keeps the thinking out of the next turn's prompt (Qwen3's template), and with the reply after a reload", async () => {
    await page.getByRole('textbox', { name: 'Message' }).fill('Thanks');
    await page.keyboard.press('Enter');
    const next = page.getByRole('article', { name: 'Reply' }).nth(1);
    await expect.poll(() => next.locator('.markdown').textContent(), { timeout: 30_000 }).toContain(THINKER_ANSWER);
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor({ timeout: 30_000 });
    await screenshot(page, 'thinking-01-chat');
    await next.getByText('Show prompt').click();
    expect(await next.locator('.prompt-text').textContent()).toBe(
      `<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n${THINKER_ANSWER}<|im_end|>\n<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n`);
    expect(await next.locator('.prompt').textContent()).toContain('template gguf');

    await page.reload();
    await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
    const first = page.getByRole('article', { name: 'Reply' }).first();
    await first.locator('details.reasoning').waitFor();
    expect(await first.locator('details.reasoning summary').textContent()).toMatch(new RegExp(` · ${THINKER_REASONING_TOKENS} tokens$`));
  });

  it("shows a Harmony model's analysis channel as its thinking (gpt-oss's template)", async () => {
    await dropFile(page, 'scripted-harmony.gguf', readFileSync(writeThinkerModel(dir, true)));
    await expect.poll(() => page.locator('.current-model').getAttribute('title')).toMatch(/scripted-harmony\.gguf$/);
    await page.getByRole('tab', { name: 'Chat' }).click();
    // The thinker is unloaded first; the new model loads when the message is sent.
    await expect.poll(() => page.locator('.engine-bar').textContent()).toContain('not loaded yet');
    await page.getByRole('button', { name: 'New chat' }).click();
    await page.getByRole('textbox', { name: 'Message' }).fill('Hi!');
    await page.keyboard.press('Enter');
    const reply = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => reply.locator('.markdown').textContent(), { timeout: 30_000 }).toContain(HARMONY_ANSWER);
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor({ timeout: 30_000 });
    const section = reply.locator('details.reasoning');
    expect(await section.locator('summary').textContent()).toMatch(new RegExp(`^Thought for (\\d+ ms|\\d+\\.\\d s) · ${HARMONY_REASONING_TOKENS} tokens$`));
    await section.locator('summary').click();
    expect(await section.locator('.reasoning-text').textContent()).toBe(HARMONY_REASONING);
    expect((await reply.locator('.markdown').textContent())?.trim()).toBe(HARMONY_ANSWER);
    expect(problems).toEqual([]);
  });
});
