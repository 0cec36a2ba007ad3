// Debian's Chromium (playwright-core) for tests that run something in a browser engine: the e2e
// suite (tests/e2e/browser.ts) and the kernel tests that need relaxed SIMD where this Node lacks it.

import { chromium, type Page } from 'playwright-core';

/** Where Chromium is: PANTHEON_CHROMIUM, else Debian's /usr/bin/chromium. */
export const CHROMIUM = process.env.PANTHEON_CHROMIUM ?? '/usr/bin/chromium';

/** fn on a page of a fresh headless Chromium, closed afterwards whatever fn does. */
export async function inChromium<T>(fn: (page: Page) => Promise<T>): Promise<T> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    return await fn(await browser.newPage());
  } finally {
    await browser.close();
  }
}
