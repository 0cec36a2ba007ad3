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
import { DEFAULT_SAMPLING, type SamplingParams } from '../../src/engine/sample/index.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { backendBound, compareTokens, logSoftmax, maxAbsDiff, readGolden, readLogprobs, referenceBound } from './golden.js';
import { ReferenceCpuBackend } from './reference-backend.js';

const MODELS: [name: string, file: string][] = [
  ['stories260K', 'stories260K.gguf'],
  ['llama-2-tiny-random', 'llama-2-tiny-random.gguf'],
  ...['llama', 'qwen2', 'qwen3', 'phi3', 'phi2', 'gemma'].map((a): [string, string] => [`tiny-${a}-s5`, `tiny-random/tiny-${a}-s5.gguf`]),
  ['tiny-qwen35-s1', 'tiny-random/tiny-qwen35-s1.gguf'],
];

const available = MODELS.filter(([name, file]) => HAVE_SHARED && existsSync(sharedModel(file)) && readGolden(name) !== null);

function greedy(n: number): SamplingParams {
  return { ...DEFAULT_SAMPLING, temperature: 0, maxTokens: n, seed: 1 };
}

async function generateTokens(session: Session, prompt: number[], n: number): Promise<number[]> {
  const out: number[] = [];
  session.reset();
  for await (const ev of session.generate(prompt, greedy(n), undefined, { stopAtEog: false })) if (ev.kind === 'token') out.push(ev.id);
  return out;
}

/** Log-softmax of the logits after the prompt, from a fresh cache. */
function firstStep(lm: LoadedModel, prompt: number[]): Float64Array {
  return logSoftmax(forward(lm.model, createRunState(lm.model, 512), prompt, 0));
}

const report: string[] = [];
afterAll(() => {
  if (report.length) console.log(['max |logprob - llama.cpp| at the first generated position; greedy tokens equal to llama.cpp\'s', ...report].join('\n'));
});

describe.skipIf(available.length === 0)('the reference-machine double: every greedy token identical to llama.cpp', () => {
  // llama.cpp on the recording machine rounds x to f16 for some F16 weights and not for others
  // (reference-backend.ts). The double copies that rule, so it must agree to float rounding.
  it.each(available)('%s', async (name, file) => {
    const g = readGolden(name)!;
    const lm = await LoadedModel.load(sharedModel(file), { contextSize: 512, backend: new ReferenceCpuBackend(g.cpu?.amx ?? true) });
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
        expect(d).toBeLessThan(referenceBound(g, c));
        expect(await generateTokens(session, c.promptTokens, c.n)).toEqual(c.tokens);
      }
      report.push(`  ${name.padEnd(20)} ${'reference'.padEnd(9)} ${diffs.join(' | ')}`);
    } finally {
      lm.dispose();
    }
  });
});

/**
 * How far below llama.cpp's top-1 log-probability Pantheon's greedy pick may be where it differs:
 * about twice the first-step error of the production backends on the F16 models (≤ 1e-3 where
 * llama.cpp keeps x in f32, more where it rounds x to f16) and below llama.cpp's own spread between
 * its two attention paths (flashAttentionOff in the golden files, up to 6e-3).
 */
const NEAR_TIE = 2e-3;

describe.skipIf(available.length === 0)('Pantheon\'s backends: llama.cpp\'s greedy tokens up to a near-tie', () => {
  it.each(available.flatMap(([name, file]) => (['scalar', 'wasm'] as const).map((b): [string, string, 'scalar' | 'wasm'] => [name, file, b])))('%s on %s', async (name, file, backend) => {
    const g = readGolden(name)!;
    const lm = await LoadedModel.load(sharedModel(file), { contextSize: 512, backend });
    try {
      const session = new Session(lm);
      const parts: string[] = [];
      for (const c of g.cases) {
        const d = maxAbsDiff(firstStep(lm, c.promptTokens), readLogprobs(c.firstLogprobs));
        expect(d).toBeLessThan(backendBound(g));
        // Generating on the scalar backend takes seconds per case; its kernels equal the wasm ones
        // to float rounding (tests/wasm), so it generates only for the smallest model.
        if (backend === 'scalar' && name !== 'stories260K') {
          parts.push(d.toExponential(1));
          continue;
        }
        const agree = compareTokens(await generateTokens(session, c.promptTokens, c.n), c);
        parts.push(`${d.toExponential(1)} ${agree.same}/${c.n}${agree.same < c.n ? ` (behind ${agree.behind.toExponential(1)})` : ''}`);
        // Every token agrees, or the first that does not was within NEAR_TIE of llama.cpp's choice.
        expect(agree.behind, `${name} "${c.prompt}": step ${agree.same} differs from llama.cpp`).toBeLessThan(NEAR_TIE);
      }
      report.push(`  ${name.padEnd(20)} ${backend.padEnd(9)} ${parts.join(' | ')}`);
    } finally {
      lm.dispose();
    }
  });
});
