// The GPU benchmark in one command (bench/gpu.sh installs what it needs, then runs this): Pantheon's
// WebGPU backend against llama.cpp's prebuilt Vulkan and CUDA builds (node-llama-cpp, every layer
// on the GPU), on the 8B-shaped models of bench/make-models.ts (random weights), then one table.
//
//   node bin/run-ts.mjs bench/gpu.ts [--types Q4_K_M,Q8_0] [--runs 3] [--prompt 512] [--gen 128]
//                                    [--gpu-bandwidth GBPS] [--shape llama31-8b-4l]
//                                    [--model FILE.gguf …] [--allow-software]
//
// --model: these files instead of building the shape's; --allow-software: take Mesa's llvmpipe (the
// CPU) when there is no GPU, to try this script on a machine without one (the numbers mean nothing).
// Each row is bench/compare.ts's median over --runs fresh processes. "ceiling" is generated tokens/s
// × the bytes of weights a token reads / the GPU's memory bandwidth (--gpu-bandwidth, from the GPU's
// data sheet: e.g. 1008 GB/s for an RTX 4090), the issue's "≥ 60% of the bandwidth ceiling" target.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readGgufHeaderSync } from '../src/engine/gguf/file.js';
import { weightBytesPerToken, type BenchReport } from './compare.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
const RUN_TS = join(ROOT, 'bin', 'run-ts.mjs');

interface Options {
  types: string[];
  runs: number;
  prompt: number;
  gen: number;
  bandwidth: number | null;
  shape: string;
  models: string[];
  allowSoftware: boolean;
}

const USAGE = 'usage: node bin/run-ts.mjs bench/gpu.ts [--types Q4_K_M,Q8_0] [--runs 3] [--prompt 512] [--gen 128] [--gpu-bandwidth GBPS] [--shape llama31-8b-4l] [--model FILE.gguf …] [--allow-software]';

function options(argv: string[]): Options {
  const o: Options = { types: ['Q4_K_M', 'Q8_0'], runs: 3, prompt: 512, gen: 128, bandwidth: null, shape: 'llama31-8b-4l', models: [], allowSoftware: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--allow-software') {
      o.allowSoftware = true;
      continue;
    }
    const v = argv[++i];
    const num = () => {
      const n = Number(v);
      if (!(n > 0)) throw new Error(`${a} takes a positive number, not "${v ?? ''}"`);
      return n;
    };
    if (a === '--types') o.types = (v ?? '').split(',').filter(Boolean);
    else if (a === '--runs') o.runs = num();
    else if (a === '--prompt') o.prompt = num();
    else if (a === '--gen') o.gen = num();
    else if (a === '--gpu-bandwidth') o.bandwidth = num() * 1e9;
    else if (a === '--shape') o.shape = v ?? '';
    else if (a === '--model' && v) o.models.push(resolve(v));
    else throw new Error(`unknown argument ${a}; ${USAGE}`);
  }
  return o;
}

function run(args: string[], opts: { capture?: boolean } = {}): { ok: boolean; out: string } {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', stdio: opts.capture ? ['ignore', 'pipe', 'inherit'] : 'inherit', maxBuffer: 64 << 20 });
  return { ok: r.status === 0, out: r.stdout ?? '' };
}

interface Row {
  model: string;
  engine: string;
  pp: number | null;
  tg: number | null;
  bytesPerToken: number;
  error?: string;
}

function bench(model: string, o: Options, extra: string[]): BenchReport | null {
  const r = run([RUN_TS, join(HERE, 'compare.ts'), model, '--runs', String(o.runs), '--prompt', String(o.prompt), '--gen', String(o.gen), '--no-bandwidth', '--json', ...extra], { capture: true });
  try {
    return JSON.parse(r.out) as BenchReport;
  } catch {
    return null;
  }
}

const fmt = (v: number | null, d = 1) => (v === null ? '—' : v.toFixed(d));

function main(): number {
  let o: Options;
  try {
    o = options(process.argv.slice(2));
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const adapter = run([RUN_TS, join(HERE, 'gpu-adapter.ts'), ...(o.allowSoftware ? ['--allow-software'] : [])], { capture: true });
  if (!adapter.ok) return 1;
  const info = JSON.parse(adapter.out) as { name: string; limits: Record<string, number> };
  console.log(`GPU: ${info.name} (maxStorageBufferBindingSize ${(info.limits.maxStorageBufferBindingSize / 2 ** 20).toFixed(0)} MiB)`);
  if (!o.models.length && !run([RUN_TS, join(HERE, 'make-models.ts'), '--only', o.shape, '--types', o.types.join(','), '--random-blocks']).ok) return 1;
  const models = o.models.length ? o.models : o.types.map((type) => join(HERE, 'models', `${o.shape}-${type}.gguf`));
  const cuda = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' }).status === 0;
  const rows: Row[] = [];
  for (const model of models) {
    if (!existsSync(model)) {
      console.error(`${model} does not exist${o.models.length ? '' : '; see the make-models output above'}`);
      return 1;
    }
    const bytesPerToken = weightBytesPerToken(readGgufHeaderSync(model));
    const name = basename(model, '.gguf');
    const configs: [string, string[]][] = [
      ['Pantheon webgpu', ['--engines', 'pantheon', '--backend', 'webgpu']],
      ['llama.cpp vulkan', ['--engines', 'llama.cpp', '--llama-gpu', 'vulkan']],
      ...(cuda ? [['llama.cpp cuda', ['--engines', 'llama.cpp', '--llama-gpu', 'cuda']] as [string, string[]]] : []),
    ];
    for (const [engine, extra] of configs) {
      console.error(`== ${name}: ${engine}`);
      const rep = bench(model, o, extra);
      const e = rep?.engines[engine.startsWith('Pantheon') ? 'pantheon' : 'llama.cpp'];
      const err = !rep ? 'no report' : e?.errors.length ? e.errors[0] : undefined;
      rows.push({ model: name, engine, pp: e?.median.promptTokensPerS ?? null, tg: e?.median.genTokensPerS ?? null, bytesPerToken, error: err });
    }
  }
  console.log(`\n${info.name}; prompt ${o.prompt} tokens, generate ${o.gen}, median of ${o.runs} run(s)${o.bandwidth ? `; memory bandwidth ${(o.bandwidth / 1e9).toFixed(0)} GB/s` : ''}`);
  const head = ['model', 'engine', 'prompt tok/s', 'gen tok/s', 'pp / vulkan', 'tg / vulkan', 'ceiling'];
  const table = [head];
  for (const r of rows) {
    const vk = rows.find((x) => x.model === r.model && x.engine === 'llama.cpp vulkan');
    const ratio = (a: number | null, b: number | null | undefined) => (a !== null && b ? `${(a / b).toFixed(2)}×` : '—');
    const ceiling = o.bandwidth && r.tg !== null ? `${((100 * r.tg * r.bytesPerToken) / o.bandwidth).toFixed(0)}%` : '—';
    table.push([r.model, r.engine, fmt(r.pp), fmt(r.tg), ratio(r.pp, vk?.pp), ratio(r.tg, vk?.tg), r.error ? `failed: ${r.error}` : ceiling]);
  }
  const w = head.map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const [k, row] of table.entries()) {
    console.log(row.map((c, i) => (i < 2 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  '));
    if (k === 0) console.log(w.map((n) => '-'.repeat(n)).join('  '));
  }
  console.log('\nTargets (issue 21): decode ≥ 0.8× llama.cpp vulkan and ≥ 60% of the ceiling; prompt ≥ 0.5× vulkan. Put this table in docs/performance.md with the GPU and its bandwidth.');
  return 0;
}

process.exitCode = main();
