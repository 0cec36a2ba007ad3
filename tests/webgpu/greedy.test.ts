// Whole models on the WebGPU backend: greedy tokens equal the CPU backend's and llama.cpp's golden
// tokens (tests/golden/llama.cpp, recorded by node-llama-cpp), on stories260K (F32, and quantised by
// Pantheon to Q4_0), tiny-llama-s5 (F16) and, with PANTHEON_SLOW_TESTS=1 (CI), tiny-qwen3-s5 with
// the Q4_K_M recipe (Q5_0 and Q8_0: its rows are too short for K-quants); quantised files are the
// bytes llama.cpp ran, by sha256. The first step's log-probabilities must equal those of a double
// with the GPU's arithmetic (dequantised-backend.ts: x never quantised) within 1e-4; their distance
// from llama.cpp's is printed beside the CPU's (the CPU rounds x as llama.cpp's CPU does).
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { WebGpuBackend } from '../../src/engine/backend/webgpu/backend.js';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { quantizeModelFile } from '../../src/engine/quant/model.js';
import { fileTypeByName } from '../../src/engine/quant/recipe.js';
import type { MatBackend } from '../../src/engine/backend/types.js';
import { LoadedModel, Session, type BackendKind } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { compareTokens, logSoftmax, maxAbsDiff, readGolden, readLogprobs } from '../model/golden.js';
import { greedyTokens } from '../model/greedy.js';
import { DequantisedBackend } from './dequantised-backend.js';

/** [golden name, source model, Pantheon quantisation of it or null]. */
const CASES: [string, string, string | null][] = [
  ['stories260K', 'stories260K.gguf', null],
  ['stories260K.Q4_0', 'stories260K.gguf', 'Q4_0'],
  ['tiny-llama-s5', 'tiny-random/tiny-llama-s5.gguf', null],
  // 152k rows of output, 0.4 s a token on llvmpipe: with the slow tests (CI) only
  ...(process.env.PANTHEON_SLOW_TESTS === '1' ? [['tiny-qwen3-s5.Q4_K_M', 'tiny-random/tiny-qwen3-s5.gguf', 'Q4_K_M'] as [string, string, string]] : []),
];
/** Tokens per case (llvmpipe runs ~25 tokens/s on these): at least the 16 the CPU tests require of llama.cpp. */
const N = 16;

const probe = HAVE_SHARED ? WebGpuBackend.create({ fallback: 'allow' }) : null;
const adapter = probe?.name ?? 'no adapter';
probe?.dispose();
if (HAVE_SHARED && !probe) console.warn('tests/webgpu: SKIPPED, no WebGPU adapter here (Mesa llvmpipe through OpenGL ES needs libegl-mesa0 libgles2 libgl1-mesa-dri, see .ci/run)');

const tmp = mkdtempSync(join(tmpdir(), 'pantheon-webgpu-'));
const report: string[] = [];
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  if (report.length) console.log(`greedy tokens on ${adapter} (tokens as the CPU, as llama.cpp; first-step max |Δ logprob|):\n${report.join('\n')}`);
});

/** The first step's log-probabilities and, unless `n` is 0, n greedy tokens. */
async function run(path: string, backend: BackendKind | MatBackend, prompt: number[], n = N): Promise<{ tokens: number[]; lp: Float64Array; name: string }> {
  const lm = await LoadedModel.load(path, { contextSize: 128, backend });
  try {
    const lp = logSoftmax(forward(lm.model, createRunState(lm.model, 128), prompt, 0));
    return { tokens: n ? await greedyTokens(new Session(lm), prompt, n) : [], lp, name: lm.backendName };
  } finally {
    lm.dispose();
  }
}

describe.skipIf(!probe)(`greedy tokens with --backend webgpu (${adapter})`, () => {
  for (const [name, source, quant] of CASES) {
    const g = readGolden(name);
    it.skipIf(!g || !existsSync(sharedModel(source)))(name, async () => {
      let path = sharedModel(source);
      if (quant) {
        path = join(tmp, `${name}.gguf`);
        quantizeModelFile(sharedModel(source), path, fileTypeByName(quant)!);
        expect(createHash('sha256').update(readFileSync(path)).digest('hex'), 'the re-quantised file differs from the one llama.cpp ran').toBe(g!.sha256);
      }
      const c = g!.cases[0];
      const ref = readLogprobs(c.firstLogprobs);
      const gpu = await run(path, 'webgpu', c.promptTokens);
      expect(gpu.name).toMatch(/^webgpu \(/);
      const cpu = await run(path, 'wasm', c.promptTokens).catch(() => run(path, 'scalar', c.promptTokens));
      const double = await run(path, new DequantisedBackend(), c.promptTokens, 0);
      const agree = compareTokens(gpu.tokens, c);
      let same = 0;
      while (same < N && gpu.tokens[same] === cpu.tokens[same]) same++;
      const toDouble = gpu.lp.reduce((m, v, i) => Math.max(m, Math.abs(v - double.lp[i])), 0);
      report.push(`  ${name.padEnd(22)} ${same}/${N} as ${cpu.name}, ${agree.same}/${Math.min(N, c.n)} as llama.cpp; first step vs llama.cpp ${maxAbsDiff(gpu.lp, ref).toExponential(1)} (${cpu.name} ${maxAbsDiff(cpu.lp, ref).toExponential(1)}), vs the f32 double ${toDouble.toExponential(1)}`);
      expect(gpu.tokens, `${name}: webgpu vs ${cpu.name}`).toEqual(cpu.tokens);
      expect(agree.same, `${name}: token ${agree.same} differs from llama.cpp's`).toBeGreaterThanOrEqual(Math.min(16, c.n));
      expect(toDouble).toBeLessThan(1e-4);
    }, 120_000);
  }

  const story = readGolden('stories260K');
  it.skipIf(!story)('`pantheon run --backend webgpu --json` names the backend and prints llama.cpp\'s tokens', async () => {
    const out: string[] = [];
    const code = await main(['run', sharedModel('stories260K.gguf'), '-p', 'Once upon a time', '-n', '16', '--temp', '0', '--json', '--ctx', '64', '--backend', 'webgpu'], { out: (t) => out.push(t), err: () => {}, isTty: false });
    expect(code).toBe(0);
    const r = JSON.parse(out.join('')) as { backend: string; tokens: number[] };
    // every block on llvmpipe (auto there means all: docs/webgpu.md "GPU offload"), and so the whole token there
    expect(r.backend).toBe(`${adapter} 5/5 layers, whole token on GPU`);
    expect(r.tokens).toEqual(story!.cases[0].tokens.slice(0, 16));
  });
});
