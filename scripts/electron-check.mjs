// `npm start`, first step: make sure Electron's binary is there (the electron package fetches it on
// first use). Where it is missing and cannot be fetched, say so in one line and name the browser
// harness, instead of the installer's stack trace.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const pkg = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
const present = () => {
  const pathFile = join(pkg, 'path.txt');
  return existsSync(pathFile) && existsSync(join(pkg, 'dist', readFileSync(pathFile, 'utf8').trim()));
};
if (!present() && !process.env.ELECTRON_OVERRIDE_DIST_PATH) {
  console.error("Fetching Electron's binary (once)…");
  spawnSync(process.execPath, [join(pkg, 'install.js')], { stdio: 'ignore' });
  if (!present()) {
    console.error("Electron's binary is missing and could not be fetched on this machine; `npm run dev:web` starts the same app in a browser.");
    process.exit(1);
  }
}
