// Fidelity against llama.cpp: the golden files record llama.cpp's greedy tokens and its first-step
// log-probabilities for each test model (bench/record-goldens.mjs). Pantheon must produce the same
// tokens, and log-probabilities within the rounding that separates ggml's own code paths.
//
// Two checks. The reference-machine double (reference-backend.ts) reproduces what llama.cpp computed
// on the machine that recorded the goldens, so it must match every token. Pantheon's own backends
// keep F16 activations in f32 everywhere (src/engine/quant/float.ts), whereas llama.cpp on that
// machine rounds them to f16 for some shapes; they must match every token except at a near-tie.

import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { compareTokens, fidelityBounds, logSoftmax, maxAbsDiff, readGolden, readLogprobs } from './golden.js';
import { greedyTokens } from './greedy.js';
import { ReferenceCpuBackend } from './reference-backend.js';

const MODELS: [name: string, file: string][] = [
  ['stories260K', 'stories260K.gguf'],
  ['llama-2-tiny-random', 'llama-2-tiny-random.gguf'],
  ...['llama', 'qwen2', 'qwen3', 'phi3', 'phi2', 'gemma'].map((a): [string, string] => [`tiny-${a}-s5`, `tiny-random/tiny-${a}-s5.gguf`]),
  ...['gemma2', 'gemma3', 'olmo2', 'smollm3', 'granite', 'mistral3'].map((a): [string, string] => [`tiny-${a}-s1`, `tiny-random/tiny-${a}-s1.gguf`]),
  ['tiny-qwen3moe-s1', 'tiny-random/tiny-qwen3moe-s1.gguf'],
  ['tiny-gpt-oss-s1', 'tiny-random/tiny-gpt-oss-s1.gguf'],
  ['tiny-gpt-oss-mxfp4-s1', 'tiny-random/tiny-gpt-oss-mxfp4-s1.gguf'],
  ['tiny-llama4-s1', 'tiny-random/tiny-llama4-s1.gguf'],
  ['tiny-qwen35-s1', 'tiny-random/tiny-qwen35-s1.gguf'],
  ['tiny-qwen35moe-s1', 'tiny-random/tiny-qwen35moe-s1.gguf'],
];

/** Models also run on the worker pool (2 threads): the MoE ones, whose experts the pool splits as any matrix. */
const POOL = new Set(['tiny-qwen3moe-s1', 'tiny-gpt-oss-s1', 'tiny-gpt-oss-mxfp4-s1', 'tiny-llama4-s1', 'tiny-qwen35moe-s1']);

const available = MODELS.filter(([name, file]) => HAVE_SHARED && existsSync(sharedModel(file)) && readGolden(name) !== null);


/** Log-softmax of the logits after the prompt, from a fresh cache. */
function firstStep(lm: LoadedModel, prompt: number[]): Float64Array {
  return logSoftmax(forward(lm.model, createRunState(lm.model, 512), prompt, 0));
}

/**
 * Bounds above those rules (golden.ts fidelityBounds), measured (first step; nearTie: how far llama.cpp's top-1 may lead
 * where the production backends' greedy token differs). tiny-qwen35-s1 (no AMX): its gated linear-attention
 * output is RMS-normalised per head of 16 (deltanet.ts), which turns a few ulps into whole f16
 * roundings of the next matmul's input; llama.cpp's own two attention paths part at step 2 of the
 * first prompt. The double is off by 7.8e-3 | 1.5e-4 | 1.1e-2 (1.9 and 2.2 times the spread) with
 * all 96 tokens equal; the production backends, with x in f32 where llama.cpp rounds it,
 * 1.3e-2 | 8.5e-2 | 1.8e-2, their tokens equal up to a near-tie (1.1e-3 at step 2 of the first).
 * tiny-qwen35moe-s1 (no AMX): the double within the rules (3.5e-3 | 2.2e-3 | 9.2e-5, 96/96); the
 * production backends 1.8e-2 | 1.9e-2 | 2.7e-2, tokens 32/32, 14/32 and 22/32, where llama.cpp's
 * top-1 leads by 4.4e-3 and 5.4e-3 (its own spread at the first step: 3.9e-3 and 4.1e-3).
 */
const MEASURED: Record<string, { reference: number; backend: number; nearTie: number }> = {
  'tiny-qwen35-s1': { reference: 1.5e-2, backend: 0.1, nearTie: 0 },
  'tiny-qwen35moe-s1': { reference: 0, backend: 3e-2, nearTie: 6e-3 },
};

const report: string[] = [];
afterAll(() => {
  if (report.length) console.log(['max |logprob - llama.cpp| at the first generated position; greedy tokens equal to llama.cpp\'s', ...report].join('\n'));
});

describe.skipIf(available.length === 0)('the reference-machine double: every greedy token identical to llama.cpp', () => {
  // llama.cpp on the recording machine rounds x to f16 for some F16 weights and not for others
  // (reference-backend.ts). The double copies that rule, so it must agree to float rounding.
  it.each(available)('%s', async (name, file) => {
    const g = readGolden(name)!;
    const lm = await LoadedModel.load(sharedModel(file), { contextSize: 512, backend: new ReferenceCpuBackend({ amx: g.recordedOn?.amx ?? true }) });
    try {
      const session = new Session(lm);
      const diffs: string[] = [];
      for (const c of g.cases) {
        // the prompt is tokenized as llama.cpp's CLI does (BOS as the metadata says, specials parsed)
        expect(lm.tokenizer.encode(c.prompt, { addSpecial: true, parseSpecial: true })).toEqual(c.promptTokens);
        const ref = readLogprobs(c.firstLogprobs);
        expect(ref.length).toBe(lm.hparams.nVocab);
        const d = maxAbsDiff(firstStep(lm, c.promptTokens), ref);
        diffs.push(d.toExponential(1));
        expect(d).toBeLessThan(Math.max(fidelityBounds(g, c).reference, MEASURED[name]?.reference ?? 0));
        const tokens = await greedyTokens(session, c.promptTokens, c.n);
        // The double follows the AMX machine's arithmetic exactly; elsewhere (recordedOn) only its
        // F16 rounding, so there it may part from llama.cpp at a near-tie.
        if (g.recordedOn?.amx === false) expect(compareTokens(tokens, c).behind, `${name} "${c.prompt}"`).toBeLessThan(fidelityBounds(g, c).nearTie);
        else expect(tokens).toEqual(c.tokens);
      }
      report.push(`  ${name.padEnd(20)} ${'reference'.padEnd(9)} ${diffs.join(' | ')}`);
    } finally {
      lm.dispose();
    }
  });
});

/**
 * Max |logprob − llama.cpp| at the first step on Pantheon's backends (scalar, wasm; the pool gives
 * wasm's bits, tests/model/pool-forward.test.ts), per model: about 1.3 times the largest over its
 * prompts and both backends, as measured under Node 20 (plain build) and Node 24 (relaxed build),
 * which agree to two digits (issue 24), so that a small numeric bug in a kernel fails here (npm run
 * test:mutations). Measured: stories260K 5.6e-6, llama-2-tiny-random 7.1e-5, tiny-llama-s5 6.6e-6,
 * where llama.cpp keeps activations in f32; where it rounds them to f16 for some F16 matmuls (above)
 * 1.6e-3 (tiny-qwen2-s5), 1.5e-3 (tiny-qwen3-s5), 1.7e-3 (tiny-phi3-s5), 1.8e-3 (tiny-phi2-s5),
 * 8.7e-3 (tiny-gemma-s5). A model not listed gets fidelityBounds (golden.ts) until its own is measured.
 */
const FIRST_STEP: Record<string, number> = {
  stories260K: 8e-6,
  'llama-2-tiny-random': 9.5e-5,
  'tiny-llama-s5': 9e-6,
  'tiny-qwen2-s5': 2.1e-3,
  'tiny-qwen3-s5': 2e-3,
  'tiny-phi3-s5': 2.2e-3,
  'tiny-phi2-s5': 2.4e-3,
  'tiny-gemma-s5': 1.15e-2,
};

describe.skipIf(available.length === 0)('Pantheon\'s backends: llama.cpp\'s greedy tokens up to a near-tie', () => {
  it.each(available.flatMap(([name, file]) => (POOL.has(name) ? (['scalar', 'wasm', 'pool'] as const) : (['scalar', 'wasm'] as const)).map((b): [string, string, 'scalar' | 'wasm' | 'pool'] => [name, file, b])))('%s (%s) on %s', async (name, file, backend) => {
    const g = readGolden(name)!;
    const lm = await LoadedModel.load(sharedModel(file), { contextSize: 512, backend, threads: backend === 'pool' ? 2 : 1 });
    try {
      const session = new Session(lm);
      const parts: string[] = [];
      for (const c of g.cases) {
        const d = maxAbsDiff(firstStep(lm, c.promptTokens), readLogprobs(c.firstLogprobs));
        expect(d).toBeLessThan(FIRST_STEP[name] ?? Math.max(fidelityBounds(g, c).production, MEASURED[name]?.backend ?? 0));
        // Generating on the scalar backend takes seconds per case; its kernels equal the wasm ones
        // to float rounding (tests/wasm), so it generates only for the smallest model.
        if (backend === 'scalar' && name !== 'stories260K') {
          parts.push(d.toExponential(1));
          continue;
        }
        const agree = compareTokens(await greedyTokens(session, c.promptTokens, c.n), c);
        parts.push(`${d.toExponential(1)} ${agree.same}/${c.n}${agree.same < c.n ? ` (behind ${agree.behind.toExponential(1)})` : ''}`);
        // Every token agrees, or the first that does not was within NEAR_TIE of llama.cpp's choice.
        expect(agree.behind, `${name} "${c.prompt}": step ${agree.same} differs from llama.cpp`).toBeLessThan(Math.max(fidelityBounds(g, c).nearTie, MEASURED[name]?.nearTie ?? 0));
      }
      report.push(`  ${name.padEnd(20)} ${backend.padEnd(9)} ${parts.join(' | ')}`);
    } finally {
      lm.dispose();
    }
  });
});
