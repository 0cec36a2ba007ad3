// Paths shared by the tests. The reference material lives beside the checkout in ../shared.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SHARED = resolve(ROOT, '..', 'shared');
export const MODELS = join(SHARED, 'models');
export const FIXTURES = join(SHARED, 'fixtures');
export const HAVE_SHARED = existsSync(MODELS);

export function sharedModel(rel: string): string {
  return join(MODELS, rel);
}
