// Standalone Vite build of the renderer (src/renderer → out/renderer), for the browser dev harness and
// the e2e tests. The Electron build (electron.vite.config.ts) builds the same root the same way.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('./src/renderer', import.meta.url));
const outDir = fileURLToPath(new URL('./out/renderer', import.meta.url));

export default defineConfig({
  root,
  // Relative asset URLs: served from app:// in Electron and from the harness's origin in a browser.
  base: './',
  plugins: [react()],
  build: {
    outDir,
    emptyOutDir: true,
    // No inline scripts or styles: the app's CSP is script-src 'self'; style-src 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
  },
});
