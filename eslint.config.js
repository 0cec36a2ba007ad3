// Lint: TypeScript rules plus the layering rule from CONVENTIONS.md §1 (folders by runtime).
// A wrong import across a runtime boundary fails `npm test` with a message naming the allowed layers.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_BUILTINS = ['node:*', 'fs', 'fs/*', 'path', 'os', 'child_process', 'worker_threads', 'crypto', 'url', 'net', 'http', 'stream', 'util', 'events', 'module', 'readline'];

/** no-restricted-imports for one layer. */
function layer(files, message, groups) {
  return {
    files,
    rules: {
      'no-restricted-imports': ['error', { patterns: groups.map((group) => ({ group, message })) }],
    },
  };
}

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'bench/node_modules/**', 'build/**', 'src/engine/wasm/assembly/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['bin/**', 'scripts/**', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  layer(['src/shared/**'], 'src/shared runs anywhere: it may import nothing of ours outside shared, and no Node, Electron or DOM-only modules.',
    [['electron', 'electron/*', ...NODE_BUILTINS, '**/engine/**', '**/main/**', '**/renderer/**', '**/preload/**', 'react', 'react-dom', 'zustand']]),
  layer(['src/engine/**'], 'src/engine runs in Node workers, the utility process and the CLI: it may import src/shared only (no electron, no DOM, no renderer/main code).',
    [['electron', 'electron/*', '**/main/**', '**/renderer/**', '**/preload/**', 'react', 'react-dom', 'zustand']]),
  // the backends sit under the model: they take weights and vectors, never the model or the sampler
  layer(['src/engine/backend/**'], 'src/engine/backend sits under the model and the sampler: it may import src/shared and engine\'s gguf, quant and wasm, never model/ or sample/ (put what both need in backend/).',
    [['electron', 'electron/*', '**/main/**', '**/renderer/**', '**/preload/**', 'react', 'react-dom', 'zustand', '**/model/**', '**/sample/**', '**/session.js', '**/host/**']]),
  layer(['src/renderer/**'], 'src/renderer runs in the Chromium page: it may import src/shared only (no Node, no electron, no engine).',
    [['electron', 'electron/*', ...NODE_BUILTINS, '**/engine/**', '**/main/**', '**/preload/**']]),
  layer(['src/preload/**'], 'src/preload is the sandboxed bridge: it may import electron and src/shared only.',
    [[...NODE_BUILTINS, '**/engine/**', '**/main/**', '**/renderer/**']]),
  layer(['src/main/**'], 'src/main may import shared and engine (host side), never the renderer or preload.',
    [['**/renderer/**', '**/preload/**']]),
  // services are plain Node, shared by the app, the CLI and the dev harness
  layer(['src/main/services/**'], 'src/main/services is plain Node (the CLI and the dev harness run it too): it may import shared, engine and other services, never electron, the renderer, preload or the Electron side of main.',
    [['electron', 'electron/*', '**/renderer/**', '**/preload/**', '../*.js']]),
  layer(['src/cli/**', 'src/harness/**'], 'src/cli and src/harness run under plain Node: they may import shared, engine and main services, never electron, the renderer or preload.',
    [['electron', 'electron/*', '**/renderer/**', '**/preload/**']]),
);
