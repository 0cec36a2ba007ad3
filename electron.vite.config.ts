// electron-vite build of the desktop app (`npm start`, `npm run dist`):
//   out/main/index.js         Electron main (src/main/index.ts)
//   out/main/engine-host.js   the engine's utility-process entry (src/engine/host/utility-entry.ts)
//   out/main/header-worker.js the library's header-reading worker thread (src/main/services/header-worker.ts)
//   out/main/inspect-worker.js tensor statistics and model comparison (src/main/services/inspect-worker.ts)
//   out/preload/index.cjs     the sandboxed preload: one CommonJS file, everything but electron inlined
//   out/renderer/             the page (src/renderer), built like vite.renderer.config.ts
// The engine's worker pool evaluates its worker source inline (backend/pool.ts), so it needs no
// extra entry; the WebAssembly kernels (build/wasm) ship as extra resources.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  main: {
    build: {
      outDir: here('./out/main'),
      rollupOptions: {
        input: {
          index: here('./src/main/index.ts'),
          'engine-host': here('./src/engine/host/utility-entry.ts'),
          // the library's header reader (src/main/services/header-reader.ts)
          'header-worker': here('./src/main/services/header-worker.ts'),
          // tensor statistics and comparisons (src/main/services/inspect-jobs.ts)
          'inspect-worker': here('./src/main/services/inspect-worker.ts'),
        },
        output: { format: 'es', entryFileNames: '[name].js' },
      },
    },
  },
  preload: {
    build: {
      outDir: here('./out/preload'),
      // A sandboxed preload cannot require() our modules: bundle them all into one file.
      externalizeDeps: false,
      isolatedEntries: true,
      rollupOptions: {
        input: { index: here('./src/preload/index.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: here('./src/renderer'),
    base: './',
    plugins: [react()],
    build: {
      outDir: here('./out/renderer'),
      emptyOutDir: true,
      // No inline scripts or styles: the CSP is script-src 'self'; style-src 'self'.
      assetsInlineLimit: 0,
      modulePreload: { polyfill: false },
      rollupOptions: { input: { index: here('./src/renderer/index.html') } },
    },
  },
});
