// Chromium for the e2e tests: Debian's /usr/bin/chromium driven by playwright-core, plus helpers to
// drop files on the page, collect console errors and CSP violations, and save screenshots.

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM } from '../chromium.js';
import { ROOT } from '../helpers.js';

export const HAVE_CHROMIUM = existsSync(CHROMIUM);
// On CI the end-to-end tests must run, never skip: .ci/run installs Debian's Chromium.
if (!HAVE_CHROMIUM && process.env.CI) throw new Error(`CI needs Chromium at ${CHROMIUM} (apt-get install chromium)`);
export const SCREENSHOTS = join(ROOT, 'tests', 'e2e', 'screenshots');

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** Console errors, page errors and CSP violations seen by a page (the app must cause none). */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  return problems;
}

/** Drop a file built from bytes onto the page, as a user dragging it from the desktop would. */
export async function dropFile(page: Page, name: string, bytes: Uint8Array): Promise<void> {
  // Base64 crosses to the page far faster than an array of numbers (a 700 KB file: ms, not seconds).
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  const dt = await page.evaluateHandle(
    ({ name, data }) => {
      const bin = atob(data);
      const buf = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) buf[i] = bin.charCodeAt(i);
      const dt = new DataTransfer();
      dt.items.add(new File([buf], name, { type: 'application/octet-stream' }));
      return dt;
    },
    { name, data },
  );
  await page.dispatchEvent('body', 'dragenter', { dataTransfer: dt });
  await page.dispatchEvent('body', 'dragover', { dataTransfer: dt });
  await page.dispatchEvent('body', 'drop', { dataTransfer: dt });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}
