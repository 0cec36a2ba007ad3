// `npm run dev:web`: start the dev harness (server.ts) on 127.0.0.1 and print its URL, with the
// random token the page must present. A development tool, not the app. The script builds the
// renderer first (vite.renderer.config.ts → out/renderer).
//
// Environment: PORT (default 5199), PANTHEON_USER_DATA (default: the user's own data folder,
// pantheon-harness under $XDG_DATA_HOME or ~/.local/share, ~/Library/Application Support, or
// %LOCALAPPDATA%; mode 0700, kept across runs), PANTHEON_MODELS_DIR (what "Choose folder" answers), PANTHEON_MODEL_FILE (what
// "Open model" answers), PANTHEON_TEST_HOOKS=1 (serve the e2e tests' hooks, e.g.
// POST /__test/kill-engine; never set it otherwise).

import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { consoleLogger } from '../main/services/log.js';
import { startHarness } from './server.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The harness's data folder for this user (not a shared path in /tmp): created with mode 0700. */
function defaultUserData(): string {
  const env = process.env;
  const base = process.platform === 'win32' ? env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local')
    : process.platform === 'darwin' ? join(homedir(), 'Library', 'Application Support')
      : env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(base, 'pantheon-harness');
}

async function main(): Promise<void> {
  const env = process.env;
  const port = env.PORT ? Number(env.PORT) : 5199;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number (got "${env.PORT}").`);
  const rendererDir = join(ROOT, 'out', 'renderer');
  if (!existsSync(join(rendererDir, 'index.html'))) {
    console.error('note: out/renderer/index.html is missing; build it with `npx vite build -c vite.renderer.config.ts` (npm run dev:web does).');
  }
  const demo = join(ROOT, 'resources', 'models', 'stories260K.gguf');
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const userData = resolve(env.PANTHEON_USER_DATA ?? defaultUserData());
  mkdirSync(userData, { recursive: true, mode: 0o700 });
  if (process.platform !== 'win32') chmodSync(userData, 0o700); // also an older folder: chats are private
  const harness = await startHarness({
    port,
    userData,
    rendererDir,
    demoPath: existsSync(demo) ? demo : null,
    modelsDir: env.PANTHEON_MODELS_DIR ? resolve(env.PANTHEON_MODELS_DIR) : null,
    modelFile: env.PANTHEON_MODEL_FILE ? resolve(env.PANTHEON_MODEL_FILE) : null,
    log: consoleLogger('harness'),
    version,
    testHooks: env.PANTHEON_TEST_HOOKS === '1',
  });
  console.log(`Pantheon dev harness: ${harness.url}`);
  for (const notice of await harness.backend.takeNotices()) console.error(`note: ${notice}`);
  const stop = () => {
    void harness.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(`pantheon dev harness: ${(err as Error).message}`);
  process.exit(1);
});
