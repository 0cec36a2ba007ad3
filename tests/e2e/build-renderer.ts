// Build the renderer once for the e2e suite (vitest globalSetup): vite.renderer.config.ts →
// out/renderer, the folder the dev harness serves (as `npm run dev:web` builds it).

import { join } from 'node:path';
import { build } from 'vite';
import { ROOT } from '../helpers.js';

export const RENDERER_OUT = join(ROOT, 'out', 'renderer');

export async function buildRenderer(): Promise<string> {
  // vitest sets NODE_ENV=test, which would bundle React's development build; test what ships.
  const env = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ configFile: join(ROOT, 'vite.renderer.config.ts'), logLevel: 'warn', mode: 'production' });
  } finally {
    process.env.NODE_ENV = env;
  }
  return RENDERER_OUT;
}

export default async function setup(): Promise<void> {
  await buildRenderer();
}
