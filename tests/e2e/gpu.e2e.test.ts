// The app's "Compute on" setting against the dev harness's real engine (stories260K): a greedy reply
// on the CPU, then GPU chosen in Settings and the model reloaded from the engine line: the line
// names the WebGPU adapter (Mesa's llvmpipe in CI, .ci/run) and the blocks on it, and the same
// chat's greedy reply is the CPU's, word for word; again with 2 GPU layers; then CPU again. Truth: the CPU backend's reply (its tokens are checked
// against llama.cpp in tests/model and tests/e2e/app.e2e.test.ts).

import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebGpuBackend } from '../../src/engine/backend/webgpu/backend.js';
import { HAVE_SHARED } from '../helpers.js';
import { openApp, openDemo, type AppSession } from './app-session.js';
import { HAVE_CHROMIUM, screenshot } from './browser.js';

const probe = HAVE_CHROMIUM && HAVE_SHARED ? WebGpuBackend.create({ fallback: 'allow' }) : null;
const adapter = probe?.adapter ?? null;
probe?.dispose();
if (HAVE_CHROMIUM && HAVE_SHARED && !probe) console.warn('tests/e2e/gpu: SKIPPED, no WebGPU adapter here (Mesa llvmpipe through OpenGL ES needs libegl-mesa0 libgles2 libgl1-mesa-dri, see .ci/run)');

async function setNumber(page: Page, name: string, value: string): Promise<void> {
  const field = page.getByRole('spinbutton', { name, exact: true });
  await field.fill(value);
  await field.press('Enter');
}

/** Send `text` in a new chat; the reply's text once it has ended. */
async function replyTo(page: Page, text: string): Promise<string> {
  await page.getByRole('button', { name: 'New chat' }).click();
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
  const reply: Locator = page.getByRole('article', { name: 'Reply' }).last();
  await expect.poll(() => reply.locator('.markdown').textContent(), { timeout: 60_000 }).toMatch(/\w{3}/);
  await page.getByRole('button', { name: 'Send', exact: true }).waitFor({ timeout: 60_000 });
  return (await reply.locator('.markdown').textContent()) ?? '';
}

const engineLine = (page: Page) => page.locator('.engine-bar.ready .engine-text').textContent();

describe.skipIf(!adapter)(`the Compute on setting (${adapter ?? 'no adapter'})`, () => {
  let app: AppSession;
  beforeAll(async () => {
    app = await openApp({ timeout: 30_000 });
    await openDemo(app.page);
  });
  afterAll(async () => app?.close());

  it('reloads on the GPU from the engine line; its greedy reply equals the CPU\'s; and back', async () => {
    const { page } = app;
    await setNumber(page, 'Temperature', '0');
    await setNumber(page, 'Max tokens', '40');
    const select = page.getByRole('combobox', { name: 'Compute on' });
    expect(await select.inputValue()).toBe('auto');
    const onCpu = await replyTo(page, 'Once upon a time');
    expect(await engineLine(page)).not.toContain('webgpu');

    await select.selectOption('gpu');
    // the adapter named before the model loads on it (engine:gpuAdapter: a short-lived host asks Dawn)
    const panel = page.getByRole('group', { name: 'GPU offload' });
    await expect.poll(() => panel.textContent(), { timeout: 30_000 }).toContain(`Adapter: ${adapter}`);
    await page.getByRole('button', { name: 'Reload with the GPU' }).click();
    // auto: every one of stories260K's 5 blocks on llvmpipe (docs/webgpu.md "GPU offload")
    await expect.poll(() => engineLine(page), { timeout: 60_000 }).toContain(` · GPU: 5 of 5 layers (${adapter}) · `);
    const onGpu = await replyTo(page, 'Once upon a time');
    expect(onGpu).toBe(onCpu);
    await screenshot(page, 'gpu-01-reply-on-webgpu');

    // 2 of the 5 blocks on the GPU, the rest on the CPU: the same greedy reply
    await panel.getByRole('checkbox', { name: 'Auto GPU layers' }).uncheck();
    await setNumber(page, 'GPU layers', '2');
    await page.getByRole('button', { name: 'Reload with 2 GPU layers' }).click();
    await expect.poll(() => engineLine(page), { timeout: 60_000 }).toContain(` · GPU: 2 of 5 layers (${adapter}) · `);
    expect(await replyTo(page, 'Once upon a time')).toBe(onCpu);
    await select.scrollIntoViewIfNeeded();
    await screenshot(page, 'gpu-02-setting');
    await panel.getByRole('checkbox', { name: 'Auto GPU layers' }).check();

    await select.selectOption('cpu');
    await page.getByRole('button', { name: 'Reload with the CPU' }).click();
    await expect.poll(() => engineLine(page), { timeout: 60_000 }).toMatch(/ · wasm-\S+ · /);
    expect(await page.getByRole('button', { name: /^Reload with/ }).count()).toBe(0);
    expect(app.problems).toEqual([]);
  });
});
