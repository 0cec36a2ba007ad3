#!/usr/bin/env node
// One llama.cpp benchmark run in a fresh process (started by bench/compare.ts and make-models.ts).
//
//   node bench/child-llama.mjs '{"model": PATH, "threads": 2, "contextSize": 512, "batchSize": 512,
//                                "prompt": [ids...], "gen": 64, "warmup": true}'
//   node bench/child-llama.mjs '{"check": true, "model": PATH}'   (load, then 4 greedy tokens)
//
// Prints one JSON line on stdout (the last line): see RunResult in bench/compare.ts. Times are wall
// clock around node-llama-cpp, the same clocks bench/child-pantheon.ts uses for Pantheon; llama.cpp's
// own perf counters (decode time only) come along as `perf`.

import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { dispose, getReference, greedy, loadModel, perfTimings, specialTokens } from './llama.mjs';

/** Peak resident set of this process in bytes (VmHWM; maxRSS where /proc is missing). */
export function peakRssBytes() {
  try {
    const m = /VmHWM:\s*(\d+)\s*kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}

const args = JSON.parse(process.argv[2] ?? '{}');
if (!args.model) {
  console.error('usage: node bench/child-llama.mjs \'{"model": "file.gguf", ...}\'');
  process.exit(2);
}

// the native runtime, like importing Pantheon's modules: not load time
await getReference(args.gpu ?? false).catch((err) => {
  console.error(`llama.cpp's ${args.gpu || 'CPU'} binary cannot start here: ${String(err?.message ?? err).split('\n')[0]}`);
  process.exit(1);
});
const t0 = performance.now();
const mc = await loadModel(args.model, {
  threads: args.threads ?? 1,
  contextSize: args.contextSize ?? 512,
  batchSize: args.batchSize ?? 512,
  gpu: args.gpu ?? false,
});
const loadMs = performance.now() - t0;

if (args.check) {
  const sp = specialTokens(mc);
  const prompt = sp.bos != null ? [sp.bos, 100, 200, 300] : [100, 200, 300];
  const r = await greedy(mc, prompt, 4);
  process.stdout.write(`${JSON.stringify({ engine: 'llama.cpp', loadMs, tokens: r.tokens, vocab: mc.model.tokens.size ?? null })}\n`);
} else {
  const prompt = args.prompt;
  const gen = args.gen ?? 64;
  if (args.warmup) await greedy(mc, prompt.slice(0, 8), 2);
  await perfTimings(mc); // reset llama.cpp's counters
  const r = await greedy(mc, prompt, gen);
  const perf = await perfTimings(mc);
  const result = {
    engine: 'llama.cpp',
    settings: mc.settings,
    loadMs,
    promptTokens: prompt.length,
    ttftMs: r.timing.promptMs,
    promptTokensPerS: (1000 * prompt.length) / r.timing.promptMs,
    generatedTokens: r.tokens.length,
    genTokensPerS: r.timing.genTokens > 0 ? (1000 * r.timing.genTokens) / r.timing.genMs : null,
    peakRssBytes: peakRssBytes(),
    tokens: r.tokens,
    perf: {
      promptMs: perf.prompt?.ms ?? null,
      promptTokens: perf.prompt?.tokens ?? null,
      evalMs: perf.eval?.ms ?? null,
      evalTokens: perf.eval?.tokens ?? null,
    },
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
await dispose(mc);
