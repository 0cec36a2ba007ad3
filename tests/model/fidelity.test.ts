// Fidelity against llama.cpp: the golden files record llama.cpp's greedy tokens and its first-step
// log-probabilities for each test model (bench/record-goldens.mjs). Pantheon must produce the same
// tokens, and log-probabilities within the rounding that separates ggml's own code paths.

import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ScalarBackend } from '../../src/engine/backend/scalar.js';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../../src/engine/sample/index.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { logSoftmax, maxAbsDiff, readGolden, readLogprobs } from './golden.js';
import { ReferenceCpuBackend } from './reference-backend.js';

const MODELS: [name: string, file: string][] = [
  ['stories260K', 'stories260K.gguf'],
  ['llama-2-tiny-random', 'llama-2-tiny-random.gguf'],
  ...['llama', 'qwen2', 'qwen3', 'phi3', 'phi2', 'gemma'].map((a): [string, string] => [`tiny-${a}-s5`, `tiny-random/tiny-${a}-s5.gguf`]),
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
  if (report.length) console.log(['max |logprob - llama.cpp| at the first generated position', ...report].join('\n'));
});

describe.skipIf(available.length === 0)('greedy tokens identical to llama.cpp', () => {
  it.each(available)('%s', async (name, file) => {
    const g = readGolden(name)!;
    // The reference-machine double: the same numbers as the CPU the goldens were recorded on.
    const lm = await LoadedModel.load(sharedModel(file), { contextSize: 512, backend: new ReferenceCpuBackend() });
    const product = await LoadedModel.load(sharedModel(file), { contextSize: 512, backend: new ScalarBackend() });
    try {
      const session = new Session(lm);
      const diffs: string[] = [];
      for (const [i, c] of g.cases.entries()) {
        // the prompt is tokenized as llama.cpp's CLI does (BOS as the metadata says, specials parsed)
        expect(lm.tokenizer.encode(c.prompt, { addSpecial: true, parseSpecial: true })).toEqual(c.promptTokens);
        const ref = readLogprobs(c.firstLogprobs);
        expect(ref.length).toBe(lm.hparams.nVocab);
        const dRef = maxAbsDiff(firstStep(lm, c.promptTokens), ref);
        // Pantheon's own backend rounds every F16 activation (ggml's generic path): a little further.
        const dScalar = maxAbsDiff(firstStep(product, c.promptTokens), ref);
        diffs.push(`case ${i}: ${dRef.toExponential(1)} (scalar backend ${dScalar.toExponential(1)})`);
        expect(dRef).toBeLessThan(1e-3);
        expect(dScalar).toBeLessThan(2e-2);
        expect(await generateTokens(session, c.promptTokens, c.n)).toEqual(c.tokens);
      }
      report.push(`  ${name.padEnd(20)} ${diffs.join('; ')}`);
    } finally {
      lm.dispose();
      product.dispose();
    }
  });

  it.skipIf(!available.some(([n]) => n === 'stories260K')).each(['scalar', 'wasm'] as const)('stories260K: 64 tokens identical on the %s backend too', async (backend) => {
    const g = readGolden('stories260K')!;
    const lm = await LoadedModel.load(sharedModel('stories260K.gguf'), { contextSize: 512, backend });
    try {
      const c = g.cases[0];
      expect(c.n).toBe(64);
      expect(await generateTokens(new Session(lm), c.promptTokens, c.n)).toEqual(c.tokens);
    } finally {
      lm.dispose();
    }
  });
});
