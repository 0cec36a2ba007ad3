// End to end in Chromium against the dev harness and its real engine (stories260K): pick the demo
// model, read its metadata and tensors, chat (stream, Stop, reload with the exact prompts kept), the
// engine process killed mid-reply and reloaded, a full context, rename and delete kept across a
// reload, drop a .gguf, drop a corrupt one, and files the engine cannot run (vocabulary-only, an
// unsupported architecture). The expected values come from the files themselves, read in Node with
// the project's GGUF reader; the harness runs with its test hooks (PANTHEON_TEST_HOOKS=1).

import { SUPPORTED_ARCHITECTURES } from '../../src/engine/model/arch.js';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGgufHeaderSync } from '../../src/engine/gguf/file.js';
import { getArray } from '../../src/engine/gguf/keys.js';
import { HAVE_SHARED, ROOT, sharedModel } from '../helpers.js';
import { HAVE_CHROMIUM, dropFile, launch, screenshot, watchProblems } from './browser.js';
import { startHarness, type RunningHarness } from './harness.js';

const DEMO = `${ROOT}/resources/models/stories260K.gguf`;
const DROPPED = sharedModel('tinyllamas-stories-260k-q8_0.gguf');
const VOCAB_ONLY = sharedModel('llama.cpp-vocab/ggml-vocab-llama-spm.gguf');
const OTHER_ARCH = sharedModel('llama.cpp-vocab/ggml-vocab-bert-bge.gguf');

/**
 * The engine's greedy continuation (temperature 0) of the prompt a reply's "Show prompt" shows, from
 * the CLI (`pantheon run MODEL -p TEXT --temp 0 -n N`), which tokenizes a raw prompt as the chat
 * does its rendered one but adds BOS itself: so without the BOS text at the start.
 */
function greedyFromCli(prompt: string, bosText: string, n: number): string {
  const raw = prompt.startsWith(bosText) ? prompt.slice(bosText.length) : prompt;
  const out = execFileSync(process.execPath, [join(ROOT, 'bin', 'pantheon.mjs'), 'run', DEMO, '-p', raw, '--temp', '0', '-n', String(n), '--json'], { cwd: ROOT, encoding: 'utf8' });
  return (JSON.parse(out) as { text: string }).text;
}

/** Text as the page shows it, to compare: runs of white space as one space, none at the ends. */
const squash = (s: string | null) => (s ?? '').replace(/\s+/g, ' ').trim();

/** Send `text` from the message box; wait for the reply's first words and for the reply to end. */
async function sendAndWait(page: Page, text: string): Promise<Locator> {
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
  const reply = page.getByRole('article', { name: 'Reply' }).last();
  await expect.poll(() => reply.locator('.markdown').textContent(), { timeout: 30_000 }).toMatch(/\w{3}/);
  await page.getByRole('button', { name: 'Send', exact: true }).waitFor({ timeout: 30_000 });
  return reply;
}

describe.skipIf(!HAVE_CHROMIUM || !HAVE_SHARED)('Pantheon in Chromium against the dev harness', () => {
  let harness: RunningHarness;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  const header = readGgufHeaderSync(DEMO);
  // The engine names a model by its general.name ("llama" for stories260K).
  const modelName = String(header.metadata.get('general.name')?.value);

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

  it('picks the demo model', async () => {
    const demo = page.getByRole('list', { name: 'Demo model' }).getByRole('button');
    await demo.waitFor();
    expect(await demo.textContent()).toContain('stories260K.gguf');
    await screenshot(page, 'app-01-picker');
    await demo.click();
    await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
    expect(await page.locator('.current-model').getAttribute('title')).toMatch(/stories260K\.gguf$/);
  });

  it('finds tokenizer.ggml.tokens in the metadata viewer and looks a token up by text and by id', async () => {
    const tokens = getArray(header, 'tokenizer.ggml.tokens') as string[];
    await page.getByRole('tab', { name: 'Metadata' }).click();
    await page.getByRole('searchbox', { name: 'Filter metadata' }).fill('tokenizer.ggml.tokens');
    await page.getByRole('button', { name: 'Browse tokenizer.ggml.tokens' }).click();
    const list = page.getByRole('list', { name: 'tokenizer.ggml.tokens items' });
    await expect.poll(() => list.getByRole('listitem').nth(5).textContent()).toContain(JSON.stringify(tokens[5]));

    // By text: a whole-word token from the vocabulary; every match shown contains it.
    const id = tokens.findIndex((t, i) => i > 300 && /^▁[a-z]{4,}$/.test(t));
    const word = tokens[id].slice(1);
    await page.getByRole('searchbox', { name: 'Search tokenizer.ggml.tokens' }).fill(word);
    await expect.poll(() => list.getByRole('listitem').allTextContents()).toContainEqual(expect.stringContaining(`${id}${JSON.stringify(tokens[id])}`));
    await screenshot(page, 'app-02-metadata');

    // By id.
    await page.getByRole('searchbox', { name: 'Search tokenizer.ggml.tokens' }).fill(`#${id}`);
    await expect.poll(() => list.getByRole('listitem').allTextContents()).toEqual([expect.stringContaining(JSON.stringify(tokens[id]))]);
  });

  it('filters tensors to blk.0 and sorts them by size', async () => {
    const want = header.tensors
      .filter((t) => t.name.startsWith('blk.0.'))
      .sort((a, b) => b.bytes - a.bytes || a.offset - b.offset)
      .map((t) => t.name);
    await page.getByRole('tab', { name: 'Tensors' }).click();
    await page.getByRole('searchbox', { name: 'Filter tensors by name' }).fill('blk.0.');
    const bytesHeader = page.getByRole('columnheader', { name: 'Bytes' });
    await bytesHeader.getByRole('button').click();
    expect(await bytesHeader.getAttribute('aria-sort')).toBe('descending');
    const table = page.getByRole('table', { name: 'Tensors' });
    expect(await table.locator('tbody td.tensor-name').allTextContents()).toEqual(want);
    await table.getByRole('button', { name: want[0] }).click();
    expect(await page.getByRole('region', { name: 'Tensor details' }).textContent()).toContain(want[0]);
    await screenshot(page, 'app-03-tensors');
  });

  it('sends a message and sees streamed text, then stops a reply mid-way', async () => {
    await page.getByRole('tab', { name: 'Chat' }).click();
    // A short first reply that ends by itself (max tokens), greedy: the engine's own tokens.
    const maxTokens = page.getByRole('spinbutton', { name: 'Max tokens' });
    await maxTokens.fill('24');
    await maxTokens.press('Enter');
    const temperature = page.getByRole('spinbutton', { name: 'Temperature' });
    await temperature.fill('0');
    await temperature.press('Enter');
    const reply = await sendAndWait(page, 'Once upon a time');
    const box = page.getByRole('textbox', { name: 'Message' });
    const first = await reply.locator('.stats').textContent();
    expect(first).toMatch(/^24 tokens · first token .+ · [\d.]+ tokens\/s · max tokens reached/);
    await reply.getByText('Show prompt').click();
    const prompt = (await reply.locator('.prompt-text').textContent()) ?? '';
    expect(prompt).toContain('Once upon a time');
    // The reply shows the engine's greedy stream, not some other (stories260K: " Anna, Anna, I'm ready to come b")
    const tokens = getArray(header, 'tokenizer.ggml.tokens') as string[];
    const bos = tokens[Number(header.metadata.get('tokenizer.ggml.bos_token_id')?.value)];
    expect(squash(await reply.locator('.markdown').textContent())).toBe(squash(greedyFromCli(prompt, bos, 24)));
    await temperature.fill('0.8');
    await temperature.press('Enter');
    await screenshot(page, 'app-04-reply');

    // Ask for a long reply and press Stop as soon as its first words show (in the page, so the
    // click lands within a frame of the text appearing, however fast the engine is).
    await maxTokens.fill('400');
    await maxTokens.press('Enter');
    await page.evaluate(() => {
      const obs = new MutationObserver(() => {
        const replies = document.querySelectorAll('article[aria-label="Reply"]');
        const last = replies[replies.length - 1];
        const stop = [...document.querySelectorAll('button')].find((b) => b.textContent === 'Stop');
        if (replies.length >= 2 && last?.querySelector('.markdown')?.textContent && stop) {
          obs.disconnect();
          stop.click();
        }
      });
      obs.observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await box.fill('Tell me a story about a dog');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await expect.poll(() => page.getByRole('article', { name: 'Reply' }).count()).toBe(2);
    const second = page.getByRole('article', { name: 'Reply' }).last();
    await expect.poll(() => second.locator('.stats').textContent(), { timeout: 30_000 }).toMatch(/stopped$/);
    const n = Number(/^(\d+) tokens/.exec((await second.locator('.stats').textContent()) ?? '')?.[1]);
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(400);
    await screenshot(page, 'app-05-stopped');
  });

  it('finds the conversation after a reload of the page', async () => {
    const before = await page.getByRole('article').allTextContents();
    await page.reload();
    await page.getByRole('tab', { name: 'Chat', selected: true }).waitFor();
    await page.getByRole('navigation', { name: 'Conversations' }).getByRole('button', { name: /^Once upon a time/ }).waitFor();
    await expect.poll(() => page.getByRole('article').count()).toBe(4);
    // The same messages and replies, each reply with the exact prompt it came from (stored with it).
    expect(await page.getByRole('article').allTextContents()).toEqual(before);
    const replies = page.getByRole('article', { name: 'Reply' });
    await replies.first().getByText('Show prompt').click();
    const prompt = (await replies.first().locator('.prompt-text').textContent()) ?? '';
    expect(prompt).toContain('Once upon a time');
    expect(prompt).not.toContain('Tell me a story about a dog');
    await replies.last().getByText('Show prompt').click();
    // The second prompt holds the whole conversation: both messages and the first reply.
    const second = (await replies.last().locator('.prompt-text').textContent()) ?? '';
    const firstReply = ((await replies.first().locator('.markdown').textContent()) ?? '').trim();
    // Markdown drops the reply's line breaks from textContent, so compare without whitespace.
    const squash = (t: string) => t.replace(/\s+/g, '');
    for (const part of ['Once upon a time', firstReply, 'Tell me a story about a dog']) expect(squash(second)).toContain(squash(part));
    await screenshot(page, 'app-06-reloaded');
  });

  it('keeps every message when the engine process is killed mid-reply; Reload brings it back and a new reply streams', async () => {
    const box = page.getByRole('textbox', { name: 'Message' });
    const maxTokens = page.getByRole('spinbutton', { name: 'Max tokens' });
    expect(await maxTokens.inputValue()).toBe('400');
    // SIGKILL the engine host as soon as the third reply shows its first words (from the page, so
    // the kill lands within a frame of the text appearing, long before 400 tokens).
    await page.evaluate(() => {
      const obs = new MutationObserver(() => {
        const replies = document.querySelectorAll('article[aria-label="Reply"]');
        if (replies.length >= 3 && replies[replies.length - 1].querySelector('.markdown')?.textContent) {
          obs.disconnect();
          void fetch('/__test/kill-engine', { method: 'POST' });
        }
      });
      obs.observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await box.fill('The little bird');
    await box.press('Enter');
    const banner = page.locator('.engine-bar.crashed');
    await expect.poll(() => banner.locator('span').textContent(), { timeout: 30_000 })
      .toBe(`The engine process was killed while running ${modelName} (signal SIGKILL); press Reload to start it again.`);
    // One sentence, said once; every message is still there, the cut reply with its text.
    expect(await page.getByRole('alert').count()).toBe(1);
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
    expect(await page.getByRole('article', { name: 'Your message' }).allTextContents()).toEqual([
      expect.stringContaining('Once upon a time'), expect.stringContaining('Tell me a story about a dog'), expect.stringContaining('The little bird'),
    ]);
    const cut = page.getByRole('article', { name: 'Reply' }).nth(2);
    expect(await cut.locator('.markdown').textContent()).toMatch(/\S/);
    expect(await cut.locator('.stats').textContent()).toBe('interrupted');
    await screenshot(page, 'app-07-killed');

    await banner.getByRole('button', { name: 'Reload' }).click();
    await page.locator('.engine-bar.ready').waitFor({ timeout: 30_000 });
    await maxTokens.fill('24');
    await maxTokens.press('Enter');
    await box.fill('A new day');
    await box.press('Enter');
    const fresh = page.getByRole('article', { name: 'Reply' }).nth(3);
    await expect.poll(() => fresh.locator('.stats').textContent(), { timeout: 30_000 }).toMatch(/^24 tokens · first token .+ · max tokens reached$/);
    expect(await fresh.locator('.markdown').textContent()).toMatch(/\w{3}/);
    expect(await page.getByRole('alert').count()).toBe(0);

    // The same window in the dark theme, a reply with its prompt open.
    await fresh.getByText('Show prompt').click();
    await page.locator('.messages').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'app-08-dark-reply');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('keeps a reply cut by a reload of the page: its text so far, marked interrupted', async () => {
    const box = page.getByRole('textbox', { name: 'Message' });
    const maxTokens = page.getByRole('spinbutton', { name: 'Max tokens' });
    await page.getByRole('button', { name: 'New chat' }).click();
    await maxTokens.fill('2000');
    await maxTokens.press('Enter');
    // Reload the page as soon as the reply shows its first words (from the page, within a frame).
    await page.evaluate(() => {
      const obs = new MutationObserver(() => {
        const reply = document.querySelector('article[aria-label="Reply"]');
        if (reply?.querySelector('.markdown')?.textContent) {
          obs.disconnect();
          location.reload();
        }
      });
      obs.observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await box.fill('A cat sat on the mat');
    await box.press('Enter');
    await page.waitForEvent('load', { timeout: 30_000 });
    const nav = page.getByRole('navigation', { name: 'Conversations' });
    await nav.getByRole('button', { name: /^A cat sat on the mat/ }).click();
    await expect.poll(() => page.getByRole('article').count()).toBe(2);
    const cut = page.getByRole('article', { name: 'Reply' });
    expect(await cut.locator('.markdown').textContent()).toMatch(/\S/);
    expect(await cut.locator('.stats').textContent()).toBe('interrupted');
    // The engine stopped that reply when the page went: a new one streams to its end.
    await maxTokens.fill('24');
    await maxTokens.press('Enter');
    await box.fill('The dog ran');
    await box.press('Enter');
    const next = page.getByRole('article', { name: 'Reply' }).nth(1);
    await expect.poll(() => next.locator('.stats').textContent(), { timeout: 30_000 }).toMatch(/^24 tokens · .* · max tokens reached$/);
    expect(await page.getByRole('alert').count()).toBe(0);
    await screenshot(page, 'app-08b-reload-mid-reply');
    // This chat goes again, so the conversations are the ones the later tests expect.
    const mine = nav.getByRole('listitem').filter({ hasText: /^A cat sat on the mat/ });
    await mine.hover();
    const title = (await mine.locator('.chat-title').textContent()) ?? '';
    await mine.getByRole('button', { name: `Delete ${title}` }).click();
    await mine.getByRole('button', { name: `Confirm delete ${title}` }).click();
    await expect.poll(() => nav.getByRole('listitem').count()).toBe(1);
    await nav.getByRole('button', { name: /^Once upon a time/ }).click();
    await expect.poll(() => page.getByRole('article').count()).toBe(8);
  });

  it('says the context is full, with a small context loaded from Settings', async () => {
    const context = page.getByRole('spinbutton', { name: 'Context size' });
    await context.fill('64');
    await context.press('Enter');
    // The loaded engine still has 2048; the engine line offers the load that applies 64.
    await page.getByRole('button', { name: 'Reload with context 64' }).click();
    await expect.poll(() => page.locator('.engine-bar.ready').textContent(), { timeout: 30_000 }).toContain('context 64 ·');
    await page.getByRole('button', { name: 'New chat' }).click();
    const maxTokens = page.getByRole('spinbutton', { name: 'Max tokens' });
    await maxTokens.fill('-1');
    await maxTokens.press('Enter');
    const seed = page.getByRole('spinbutton', { name: 'Seed' });
    await seed.fill('7');
    await seed.press('Enter');
    const box = page.getByRole('textbox', { name: 'Message' });
    // A long first message: the prompt takes most of the 64 tokens, so the reply fills the rest in a
    // few tokens (too few to end the story by itself), whatever the sampled words.
    await box.fill('Lily and Ben went to the park with their mom. They saw a big tree and a little bird. They played with a red ball all day. Lily said');
    await box.press('Enter');
    const full = page.getByRole('status').filter({ hasText: 'The context is full' });
    await expect.poll(() => full.locator('.line-text').textContent(), { timeout: 30_000 }).toBe('The context is full (64 of 64 tokens). Start a new chat, or load the model with a larger context in Settings.');
    expect(await page.locator('.gauge').textContent()).toBe('64 / 64 tokens');
    expect(await page.getByRole('article', { name: 'Reply' }).locator('.stats').textContent()).toMatch(/ · context full$/);
    await screenshot(page, 'app-09-context-full');

    // One more message cannot fit at all: the engine refuses it with the sizes.
    await box.fill('And then?');
    await box.press('Enter');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'context holds 64' }).locator('.line-text').textContent(), { timeout: 30_000 })
      .toMatch(/^The conversation needs \d+ tokens but the context holds 64\. Start a new chat or load the model with a larger context\./);
  });

  it('loads the model on the thread count set in Settings (the worker pool for 2) and replies on it', async () => {
    const threads = page.getByRole('spinbutton', { name: 'Threads' });
    expect(await threads.inputValue()).toBe('0');
    await threads.fill('2');
    await threads.press('Enter');
    await page.getByRole('button', { name: 'Reload with 2 threads' }).click();
    await expect.poll(() => page.locator('.engine-bar.ready').textContent(), { timeout: 30_000 }).toMatch(/ · context 64 · 2 threads · wasm-\w+-pool · /);
    await page.getByRole('button', { name: 'New chat' }).click();
    await sendAndWait(page, 'Tom had a red kite');
    await screenshot(page, 'app-16-two-threads');
    // Back to automatic: nothing to offer (what it picks shows after the next load).
    await threads.fill('0');
    await threads.press('Enter');
    await expect.poll(() => page.getByRole('button', { name: /^Reload with/ }).count()).toBe(0);
    // This chat goes again, so the conversations are the two the next test expects.
    const nav = page.getByRole('navigation', { name: 'Conversations' });
    const mine = nav.getByRole('listitem').filter({ hasText: /^Tom had a red kite/ });
    await mine.hover();
    const title = (await mine.locator('.chat-title').textContent()) ?? '';
    await mine.getByRole('button', { name: `Delete ${title}` }).click();
    await mine.getByRole('button', { name: `Confirm delete ${title}` }).click();
    await expect.poll(() => nav.getByRole('listitem').count()).toBe(2);
  });

  it('renames one conversation and deletes another, and finds both changes after a reload', async () => {
    const nav = page.getByRole('navigation', { name: 'Conversations' });
    await expect.poll(() => nav.getByRole('listitem').count()).toBe(2);
    await nav.getByRole('button', { name: /^Once upon a time/ }).click();
    await nav.getByRole('button', { name: 'Rename Once upon a time' }).click();
    await nav.getByRole('textbox', { name: 'Chat title' }).fill('Stories with a dog');
    await nav.getByRole('textbox', { name: 'Chat title' }).press('Enter');
    await nav.getByRole('button', { name: /^Stories with a dog/ }).waitFor();
    const other = nav.getByRole('listitem').filter({ hasText: /^Lily and Ben/ });
    await other.hover();
    const title = (await other.locator('.chat-title').textContent()) ?? '';
    await other.getByRole('button', { name: `Delete ${title}` }).click();
    await other.getByRole('button', { name: `Confirm delete ${title}` }).click();
    await expect.poll(() => nav.getByRole('listitem').count()).toBe(1);
    // On disk: one chat file left.
    expect(readdirSync(join(harness.userData, 'chats')).filter((f) => f.endsWith('.json') && !f.startsWith('.'))).toHaveLength(1);

    await page.reload();
    await nav.getByRole('button', { name: /^Stories with a dog/ }).waitFor();
    expect(await nav.getByRole('listitem').count()).toBe(1);
    expect(await nav.textContent()).not.toContain('Lily and Ben');
    // Everything the renamed chat held, the reply cut by the kill included.
    await expect.poll(() => page.getByRole('article').count()).toBe(8);
    expect(await page.getByRole('article', { name: 'Reply' }).nth(2).locator('.stats').textContent()).toBe('interrupted');
    await screenshot(page, 'app-10-renamed');
  });

  it('opens a dropped .gguf', async () => {
    await dropFile(page, 'tinyllamas-stories-260k-q8_0.gguf', readFileSync(DROPPED));
    await expect.poll(() => page.locator('.current-model').getAttribute('title'), { timeout: 20_000 }).toMatch(/tinyllamas-stories-260k-q8_0\.gguf$/);
    await page.getByRole('tab', { name: 'Tensors' }).click();
    await expect.poll(() => page.getByRole('img', { name: /^Bytes by type: Q8_0/ }).count()).toBe(1);
    await screenshot(page, 'app-11-dropped');
  });

  it('shows one clear line for a dropped corrupt file and for a file that is not a model', async () => {
    const good = readFileSync(DEMO);
    // The real magic and version, then the header cut short in the middle of the metadata.
    await dropFile(page, 'corrupt.gguf', good.subarray(0, 200));
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent(), { timeout: 20_000 }).toMatch(/\S/);
    const text = (await alert.textContent()) ?? '';
    expect(text).not.toMatch(/\n|\bat .+:\d+:\d+/);
    await screenshot(page, 'app-12-corrupt');
    await dropFile(page, 'notes.txt', new TextEncoder().encode('not a model'));
    await expect.poll(() => alert.textContent()).toContain('notes.txt is not a .gguf model file');
    await alert.getByRole('button', { name: 'Dismiss message' }).click();
  });

  it('opens a vocabulary-only file: metadata works, no tensors, and Chat says in one sentence why it cannot chat', async () => {
    const vocab = readGgufHeaderSync(VOCAB_ONLY);
    expect(vocab.tensors).toHaveLength(0);
    await dropFile(page, 'ggml-vocab-llama-spm.gguf', readFileSync(VOCAB_ONLY));
    await expect.poll(() => page.locator('.current-model').getAttribute('title'), { timeout: 20_000 }).toMatch(/ggml-vocab-llama-spm\.gguf$/);

    // Tensors (the tab that was open): an empty state, not an empty table with a filter message.
    expect(await page.getByRole('tab', { name: 'Tensors', selected: true }).count()).toBe(1);
    await expect.poll(() => page.locator('.tensors .empty').textContent()).toBe('This file holds no tensors.');
    await screenshot(page, 'app-13-vocab-tensors');

    await page.getByRole('tab', { name: 'Metadata' }).click();
    await page.getByRole('searchbox', { name: 'Filter metadata' }).fill('');
    await expect.poll(() => page.locator('.meta-table tbody tr').count()).toBe(vocab.metadata.size);
    await page.getByRole('searchbox', { name: 'Filter metadata' }).fill('tokenizer.ggml.tokens');
    await page.getByRole('button', { name: 'Browse tokenizer.ggml.tokens' }).click();
    const tokens = getArray(vocab, 'tokenizer.ggml.tokens') as string[];
    const list = page.getByRole('list', { name: 'tokenizer.ggml.tokens items' });
    await page.getByRole('searchbox', { name: 'Search tokenizer.ggml.tokens' }).fill('#1000');
    await expect.poll(() => list.getByRole('listitem').allTextContents()).toEqual([expect.stringContaining(JSON.stringify(tokens[1000]))]);

    await page.getByRole('tab', { name: 'Chat' }).click();
    await expect.poll(() => page.locator('.engine-bar.not-runnable').textContent())
      .toBe('Pantheon cannot chat with this file: it holds a vocabulary but no weights (a vocabulary-only GGUF); its metadata can still be read.');
    expect(await page.getByRole('textbox', { name: 'Message' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Load model' }).count()).toBe(0);
    await page.getByRole('button', { name: 'New chat' }).click();
    await page.getByRole('heading', { name: 'No chat with this file' }).waitFor();
    await screenshot(page, 'app-14-vocab-chat');
    await page.getByRole('button', { name: 'Show metadata' }).click();
    await page.getByRole('tab', { name: 'Metadata', selected: true }).waitFor();
  });

  it('opens a file of an architecture Pantheon does not run: Chat names the architecture', async () => {
    const bert = readGgufHeaderSync(OTHER_ARCH);
    const arch = String(bert.metadata.get('general.architecture')?.value);
    expect(arch).toBe('bert');
    await dropFile(page, 'ggml-vocab-bert-bge.gguf', readFileSync(OTHER_ARCH));
    await expect.poll(() => page.locator('.current-model').getAttribute('title'), { timeout: 20_000 }).toMatch(/ggml-vocab-bert-bge\.gguf$/);
    await page.getByRole('searchbox', { name: 'Filter metadata' }).fill('general.architecture');
    expect(await page.locator('.meta-table tbody tr').textContent()).toContain('bert');
    await page.getByRole('tab', { name: 'Chat' }).click();
    await expect.poll(() => page.locator('.engine-bar.not-runnable').textContent())
      .toBe(`Pantheon cannot chat with this model: it does not run the "bert" architecture yet (it runs ${SUPPORTED_ARCHITECTURES.join(', ')}); its metadata and tensors can still be read.`);
    await screenshot(page, 'app-15-other-arch');
    // The picker now lists what was opened, newest first.
    await page.getByRole('tab', { name: 'Models' }).click();
    const recent = page.getByRole('list', { name: 'Recent models' });
    await expect.poll(() => recent.getByRole('listitem').first().textContent()).toContain('ggml-vocab-bert-bge.gguf');
    await screenshot(page, 'app-16-picker-recent');
    expect(problems).toEqual([]);
  });
});
