#!/usr/bin/env node
// llama.cpp's speed on the test models, for comparison with Pantheon's engine.
//
//   node bench/speed.mjs [--threads 1,2] [--n 128] [--reps 3] [model.gguf ...]
//
// Per model and thread count: pp = prompt processing of an n-token prompt in one batch, tg = greedy
// generation of n tokens after a short prompt (like llama-bench's pp/tg). Two clocks: "wall" is
// measured here around node-llama-cpp (includes its JS batching), "llama" is llama.cpp's own
// llama_perf_context counters (decode time only). Best of --reps runs. Also prints memory: the
// model's tensor bytes, the context state (KV cache) bytes and the process RSS.

import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dispose, greedy, loadModel, perfTimings, tokenize } from './llama.mjs';

const MODELS = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'models');

function parseArgs(argv) {
  const opts = { threads: [1, 2], n: 128, reps: 3, models: /** @type {string[]} */ ([]) };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--threads') opts.threads = argv[++i].split(',').map(Number);
    else if (a === '--n') opts.n = Number(argv[++i]);
    else if (a === '--reps') opts.reps = Number(argv[++i]);
    else opts.models.push(resolve(a));
  }
  if (!opts.models.length) opts.models = [resolve(MODELS, 'stories260K.gguf'), resolve(MODELS, 'tiny-random', 'tiny-llama-s5.gguf')];
  return opts;
}

/** A prompt of exactly n tokens (BOS as the model wants, then text repeated), for pp. */
function longPrompt(mc, n) {
  const ids = tokenize(mc, 'Once upon a time, there was a little girl named Lily. She loved to play outside.');
  const body = ids.slice(ids[0] === mc.model.tokens.bos ? 1 : 0);
  while (ids.length < n) ids.push(...body);
  return ids.slice(0, n);
}

const mib = (b) => (b / 2 ** 20).toFixed(2);
const rate = (tokens, ms) => (ms > 0 ? (1000 * tokens) / ms : NaN);

async function run(path, threads, n, reps) {
  const rss0 = process.memoryUsage().rss;
  const mc = await loadModel(path, { threads, contextSize: 2 * n + 16, batchSize: n });
  const rssLoaded = process.memoryUsage().rss;
  const short = tokenize(mc, 'Once upon a time');
  const pp = longPrompt(mc, n);
  let best = { ppWall: 0, ppLlama: 0, tgWall: 0, tgLlama: 0 };
  let tokens = /** @type {number[]} */ ([]);
  await greedy(mc, short, 8); // warm-up
  for (let r = 0; r < reps; r++) {
    await perfTimings(mc);
    const a = await greedy(mc, pp, 1);
    const pa = await perfTimings(mc);
    const b = await greedy(mc, short, n);
    const pb = await perfTimings(mc);
    tokens = b.tokens;
    best = {
      ppWall: Math.max(best.ppWall, rate(pp.length, a.timing.promptMs)),
      ppLlama: Math.max(best.ppLlama, rate(pa.prompt?.tokens ?? 0, pa.prompt?.ms ?? 0)),
      tgWall: Math.max(best.tgWall, rate(b.timing.genTokens, b.timing.genMs)),
      tgLlama: Math.max(best.tgLlama, rate(pb.eval?.tokens ?? 0, pb.eval?.ms ?? 0)),
    };
  }
  const mem = { model: mc.model.size, state: mc.context.stateSize, rssDelta: rssLoaded - rss0, rss: process.memoryUsage().rss };
  await dispose(mc);
  return { best, mem, tokens, loadMs: mc.loadMs };
}

const opts = parseArgs(process.argv.slice(2));
console.log(`model | threads | pp${opts.n} wall / llama (tok/s) | tg${opts.n} wall / llama (tok/s) | load ms | model MiB | state MiB | RSS MiB`);
for (const path of opts.models) {
  let reference;
  for (const t of opts.threads) {
    const { best, mem, tokens, loadMs } = await run(path, t, opts.n, opts.reps);
    reference ??= tokens;
    const same = tokens.every((id, i) => id === reference[i]) ? '' : '  (tokens differ from the first thread count!)';
    console.log(
      `${basename(path)} | ${t} | ${best.ppWall.toFixed(0)} / ${best.ppLlama.toFixed(0)} | ${best.tgWall.toFixed(0)} / ${best.tgLlama.toFixed(0)}`
      + ` | ${loadMs.toFixed(1)} | ${mib(mem.model)} | ${mib(mem.state)} | ${mib(mem.rss)} (+${mib(mem.rssDelta)} at load)${same}`,
    );
  }
}
