#!/usr/bin/env node
// Run a command with llama.cpp limited to one of its prebuilt CPU variants (dev only).
//
//   node bench/llama-cpu-variant.mjs alderlake -- npm run -s bench -- MODEL --engines llama.cpp --json
//
// node-llama-cpp ships one libggml-cpu-<variant>.so per x86 generation and ggml loads the best one
// the CPU supports: on this machine `sapphirerapids`, whose prompt matmuls run on AMX int8 tiles.
// Consumer CPUs have no AMX (nor, since Alder Lake, AVX-512), so llama.cpp on a laptop runs e.g.
// the `alderlake` variant (AVX2 + AVX-VNNI). This script moves the other variants aside into a
// sibling folder for the duration of the command and puts them back afterwards (also after a crash
// of an earlier run: it restores whatever it finds there first).

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [variant, sep, ...command] = process.argv.slice(2);
if (!variant || sep !== '--' || command.length === 0) {
  console.error('usage: node bench/llama-cpu-variant.mjs VARIANT -- COMMAND [ARGS...]   (VARIANT e.g. alderlake, haswell, icelake)');
  process.exit(2);
}

const bins = join(dirname(fileURLToPath(import.meta.url)), 'node_modules', '@node-llama-cpp', 'linux-x64', 'bins', 'linux-x64');
if (!existsSync(bins)) {
  console.error('node-llama-cpp\'s linux-x64 binaries are not installed: run `npm run bench:install` first');
  process.exit(2);
}
const aside = join(bins, '.moved-by-pantheon');

function restore() {
  if (!existsSync(aside)) return;
  for (const f of readdirSync(aside)) renameSync(join(aside, f), join(bins, f));
  rmdirSync(aside);
}

restore();
const all = readdirSync(bins).filter((f) => /^libggml-cpu-.*\.so$/.test(f));
const keep = `libggml-cpu-${variant}.so`;
if (!all.includes(keep)) {
  console.error(`no llama.cpp CPU variant "${variant}"; there are: ${all.map((f) => f.slice(12, -3)).join(', ')}`);
  process.exit(2);
}
mkdirSync(aside);
let status = 1;
try {
  for (const f of all) if (f !== keep) renameSync(join(bins, f), join(aside, f));
  console.error(`llama.cpp CPU variant: ${variant} only`);
  const r = spawnSync(command[0], command.slice(1), { stdio: 'inherit' });
  status = r.status ?? 1;
} finally {
  restore();
}
process.exit(status);
