// Where the built app's pieces are. electron-vite writes out/main (this file's bundle, the engine
// host entry), out/preload/index.cjs and out/renderer; electron-builder ships the demo model as an
// extra resource (resources/models → <resources>/models).

import { app } from 'electron';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export const PRELOAD = join(here, '..', 'preload', 'index.cjs');
export const RENDERER_DIR = join(here, '..', 'renderer');
/** The utility-process entry (src/engine/host/utility-entry.ts), built beside main. */
export const ENGINE_HOST = join(here, 'engine-host.js');

export function demoModelPath(): string {
  return app.isPackaged
    ? join(process.resourcesPath, 'models', 'stories260K.gguf')
    : join(app.getAppPath(), 'resources', 'models', 'stories260K.gguf');
}

/** electron-vite's dev server for the renderer (`electron-vite dev`), only when not packaged. */
export function devRendererUrl(): string | null {
  const url = process.env.ELECTRON_RENDERER_URL;
  return !app.isPackaged && url ? url : null;
}
