// One Pantheon benchmark run in a fresh process (started by bench/compare.ts):
//
//   node bin/run-ts.mjs bench/child-pantheon.ts '{"model": PATH, "threads": 2, "contextSize": 512,
//                                                 "prompt": [ids...], "gen": 64, "warmup": true, "backend": "wasm"}'
//   ("backend": "webgpu", "gpuLayers": 12 | "all" | "auto": GPU offload)
//
// Prints one JSON line on stdout (the last line), the same fields as bench/child-llama.mjs. Times are
// wall clock around the engine's facade (src/engine/session.ts); its own stats come along as `stats`.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SAMPLING } from '../src/engine/sample/params.js';

interface ChildArgs {
  model: string;
  threads?: number;
  contextSize?: number;
  batchSize?: number;
  prompt: number[];
  gen?: number;
  warmup?: boolean;
  backend?: string;
  /** --gpu-layers as given (a number, "all", "auto"), with backend webgpu. */
  gpuLayers?: number | string;
}

// The facade's planned API (the engine issue): only what this script calls.
interface DoneStats { promptTokens: number; generatedTokens: number; ttftMs: number; tokensPerS: number; promptTokensPerS: number }
interface EngineEvent { kind: string; id?: number; reason?: string; stats?: DoneStats }
interface LoadedModelLike { dispose?(): void; backendName?: string; loadMs?: number }
interface SessionModule {
  LoadedModel: { load(path: string, opts: Record<string, unknown>): Promise<LoadedModelLike> };
  Session: new (model: LoadedModelLike) => {
    generate(promptTokens: number[], sampling: Record<string, unknown>, signal?: AbortSignal, opts?: { stopAtEog?: boolean }): AsyncIterable<EngineEvent>;
  };
}

const SESSION_TS = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'engine', 'session.ts');

function peakRssBytes(): number {
  try {
    const m = /VmHWM:\s*(\d+)\s*kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(3);
}

const args = JSON.parse(process.argv[2] ?? '{}') as ChildArgs;
if (!args.model || !Array.isArray(args.prompt)) fail('usage: child-pantheon.ts \'{"model": "file.gguf", "prompt": [ids], ...}\'');
if (!existsSync(SESSION_TS)) fail("Pantheon's generation facade is not there yet (src/engine/session.ts: LoadedModel.load, Session.generate)");

const mod = (await import('../src/engine/session.js' as string)) as Partial<SessionModule>;
if (typeof mod.LoadedModel?.load !== 'function' || typeof mod.Session !== 'function') {
  fail('src/engine/session.ts does not export LoadedModel.load and Session yet');
}
const { LoadedModel, Session } = mod as SessionModule;

const gen = args.gen ?? 64;
// Greedy, exactly `gen` tokens: an end-of-generation token must not stop the run (llama.cpp's side
// feeds it back too), hence stopAtEog: false; the result says if generation stopped early anyway.
const sampling = { ...DEFAULT_SAMPLING, temperature: 0, seed: 0, maxTokens: gen };

const t0 = performance.now();
const model = await LoadedModel.load(args.model, {
  contextSize: args.contextSize ?? 512,
  batchSize: args.batchSize,
  threads: args.threads ?? 1,
  backend: args.backend,
  ...(args.gpuLayers !== undefined ? { gpuLayers: args.gpuLayers } : {}),
});
// the engine's own load_ms (`pantheon run --json`) when it has one, else the wall time around load
const loadMs = model.loadMs ?? performance.now() - t0;

async function run(prompt: number[], n: number) {
  const session = new Session(model);
  const tokens: number[] = [];
  let stats: DoneStats | undefined;
  let reason: string | undefined;
  const tStart = performance.now();
  let tFirst = 0;
  for await (const ev of session.generate(prompt, { ...sampling, maxTokens: n }, undefined, { stopAtEog: false })) {
    if (ev.kind === 'token' && typeof ev.id === 'number') {
      if (tokens.length === 0) tFirst = performance.now();
      tokens.push(ev.id);
    } else if (ev.kind === 'done') {
      stats = ev.stats;
      reason = ev.reason;
    }
  }
  const tEnd = performance.now();
  // prompt time includes sampling the first token; gen time is the remaining n-1 tokens (as llama.mjs greedy)
  return { tokens, stats, reason, promptMs: tFirst - tStart, genMs: tEnd - tFirst };
}

if (args.warmup) await run(args.prompt.slice(0, 8), 2);
const r = await run(args.prompt, gen);
const result = {
  engine: 'pantheon',
  settings: {
    threads: args.threads ?? 1,
    contextSize: args.contextSize ?? 512,
    batchSize: args.batchSize ?? null,
    backend: model.backendName ?? args.backend ?? null,
    node: process.version,
  },
  loadMs,
  promptTokens: args.prompt.length,
  ttftMs: r.promptMs,
  promptTokensPerS: (1000 * args.prompt.length) / r.promptMs,
  generatedTokens: r.tokens.length,
  genTokensPerS: r.tokens.length > 1 ? (1000 * (r.tokens.length - 1)) / r.genMs : null,
  peakRssBytes: peakRssBytes(),
  tokens: r.tokens,
  stoppedEarly: r.tokens.length < gen ? `stopped after ${r.tokens.length} of ${gen} tokens (${r.reason ?? 'no reason given'})` : null,
  stats: r.stats ?? null,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
model.dispose?.();
