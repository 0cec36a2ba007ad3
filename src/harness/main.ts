// `npm run dev:web`: start the dev harness (server.ts) on 127.0.0.1 and print its URL, with the
// random token the page must present. A development tool, not the app. The script builds the
// renderer first (vite.renderer.config.ts → out/renderer).
//
// Environment: PORT (default 5199), PANTHEON_USER_DATA (default: the user's own data folder,
// pantheon-harness under $XDG_DATA_HOME or ~/.local/share, ~/Library/Application Support, or
// %LOCALAPPDATA%; mode 0700, kept across runs), PANTHEON_MODELS_DIR (what "Choose folder" answers), PANTHEON_MODEL_FILE (what
// "Open model" answers), PANTHEON_TEST_HOOKS=1 (serve the e2e tests' hooks, e.g.
// POST /__test/kill-engine; never set it otherwise).

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { consoleLogger } from '../main/services/log.js';
import { defaultHarnessUserData, privateFolder, startHarness } from './server.js';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

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
  const userData = privateFolder(resolve(env.PANTHEON_USER_DATA ?? defaultHarnessUserData(env, process.platform, homedir())));
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
