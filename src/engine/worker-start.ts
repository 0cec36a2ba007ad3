// How the engine starts a worker thread, the one way for every pool (backend/worker-pool.ts, the
// kernels' threads; quant/quantize-pool.ts, the quantiser's). A worker is started from source text
// (`eval`), so there is no worker file to locate: the same call works under plain Node, in vitest,
// through tsx and inside the Electron utility process bundled by electron-vite. A worker whose
// program is a module of its own (the quantiser's, which imports the quantisers) gets a short
// source that imports that module (moduleWorkerSource). Started workers are unref'd: an idle pool
// never keeps the process alive.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** A worker running `source` (CommonJS text; `require('node:worker_threads').workerData` is `data`). */
export function startWorker(source: string, data?: unknown): Worker {
  const w = new Worker(source, { eval: true, workerData: data });
  w.unref();
  return w;
}

/** The file URL of tsx's ESM API (package export "./esm/api", import condition). */
function tsxEsmApi(): string {
  const req = createRequire(import.meta.url);
  const pkgPath = req.resolve('tsx/package.json');
  const pkg = req(pkgPath) as { exports: Record<string, { import: { default: string } }> };
  return pathToFileURL(join(dirname(pkgPath), pkg.exports['./esm/api'].import.default)).href;
}

/**
 * A worker source that imports the module at `url` (a .ts or .js file URL). From source (.ts) it
 * registers tsx's loader first (a worker given `--import tsx` in execArgv did not load .ts files).
 * A failure to import ends the worker with exit code 70.
 */
export function moduleWorkerSource(url: URL): string {
  const ts = url.pathname.endsWith('.ts');
  const steps = ts ? `const { register } = await import(${JSON.stringify(tsxEsmApi())}); register();` : '';
  return `(async () => { ${steps} await import(${JSON.stringify(url.href)}); })().catch((e) => { console.error(e); process.exit(70); });`;
}
