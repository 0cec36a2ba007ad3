// One E2E session: the dev harness (with extra environment), Chromium, a page on the harness's URL
// watched for console errors and CSP violations; and, for tests that chat, the demo model opened.

import type { Browser, Page } from 'playwright-core';
import { launch, watchProblems } from './browser.js';
import { startHarness, type RunningHarness } from './harness.js';

export interface AppSession {
  harness: RunningHarness;
  browser: Browser;
  page: Page;
  /** Console errors, page errors and CSP violations so far. */
  problems: string[];
  close(): Promise<void>;
}

export interface AppSessionOptions {
  env?: Record<string, string>;
  viewport?: { width: number; height: number };
  /** Default timeout of the page's actions (ms). */
  timeout?: number;
  acceptDownloads?: boolean;
}

export async function openApp(opts: AppSessionOptions = {}): Promise<AppSession> {
  const harness = await startHarness(opts.env ?? {});
  const browser = await launch();
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 800 }, acceptDownloads: opts.acceptDownloads ?? false });
  context.setDefaultTimeout(opts.timeout ?? 15_000);
  const page = await context.newPage();
  const problems = watchProblems(page);
  await page.goto(harness.url);
  return {
    harness, browser, page, problems,
    close: async () => {
      await browser.close();
      await harness.stop();
    },
  };
}

/** Open the bundled demo model from the picker and wait for the Chat tab. */
export async function openDemo(page: Page): Promise<void> {
  await page.getByRole('list', { name: 'Demo model' }).getByRole('button').click();
  await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
}
