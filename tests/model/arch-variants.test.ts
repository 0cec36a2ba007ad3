// The 2026 dense architectures on models of Pantheon's own making (bench/make-arch-models.ts: other
// sizes, layer counts, window patterns, GQA ratios, tied or untied output and multipliers than the
// shared tiny files), against llama.cpp's greedy runs of the same files. Each file is rebuilt here
// byte for byte (its sha256 is the one llama.cpp ran), so the test needs no model on disk.

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ARCH_MODELS, writeArchModel } from '../../bench/make-arch-models.js';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED } from '../helpers.js';
import { compareTokens, fidelityBounds, logSoftmax, maxAbsDiff, readGolden, readLogprobs } from './golden.js';
import { greedyTokens } from './greedy.js';
import { ReferenceCpuBackend } from './reference-backend.js';
import { quantizeModelFile } from '../../src/engine/quant/model.js';
import { fileTypeByName } from '../../src/engine/quant/recipe.js';

const dir = mkdtempSync(join(tmpdir(), 'pantheon-arch-'));
const report: string[] = [];
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  if (report.length) console.log(['architecture variants: max |logprob - llama.cpp| at step 0, greedy tokens equal to llama.cpp\'s', ...report].join('\n'));
});

const CASES = Object.keys(ARCH_MODELS).filter((n) => HAVE_SHARED && readGolden(n) !== null);

describe.skipIf(CASES.length === 0)('architecture variants made here: llama.cpp\'s greedy tokens', () => {
  it.each(CASES)('%s', async (name) => {
    const g = readGolden(name)!;
    const path = join(dir, `${name}.gguf`);
    writeArchModel(name, path);
    expect(createHash('sha256').update(readFileSync(path)).digest('hex'), 'the rebuilt file differs from the one llama.cpp ran').toBe(g.sha256);
    const parts: string[] = [];
    for (const backend of ['reference', 'wasm', 'pool'] as const) {
      const lm = await LoadedModel.load(path, {
        contextSize: 512,
        backend: backend === 'reference' ? new ReferenceCpuBackend({ amx: g.recordedOn?.amx ?? true }) : backend === 'pool' ? 'pool' : 'wasm',
        threads: backend === 'pool' ? 2 : undefined,
      });
      try {
        const session = new Session(lm);
        const cells: string[] = [];
        for (const c of g.cases) {
          expect(lm.tokenizer.encode(c.prompt, { addSpecial: true, parseSpecial: true })).toEqual(c.promptTokens);
          const bound = fidelityBounds(g, c);
          const d = maxAbsDiff(logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0)), readLogprobs(c.firstLogprobs));
          expect(d, `${backend} "${c.prompt}"`).toBeLessThan(backend === 'reference' ? bound.reference : bound.production);
          const out = await greedyTokens(session, c.promptTokens, c.n);
          const agree = compareTokens(out, c);
          expect(agree.behind, `${backend} "${c.prompt}": step ${agree.same} differs from llama.cpp`).toBeLessThan(bound.nearTie);
          cells.push(`${d.toExponential(1)} ${agree.same}/${c.n}`);
        }
        parts.push(`${backend} ${cells.join(', ')}`);
      } finally {
        lm.dispose();
      }
    }
    report.push(`  ${name.padEnd(18)} ${parts.join(' | ')}`);
  }, 120_000);
});

// The 256-wide variants (arch-*-k) quantised by Pantheon to Q4_K_M (real Q4_K and Q6_K blocks), as
// llama.cpp ran them (bench/models/arch/<name>.Q4_K_M.gguf, recorded with --logprob-cases=1): the
// re-quantised file must be byte-identical, its first step within llama.cpp's own spread (quantised
// activations flip roundings on these random models, as in quantized.test.ts) and its first 16
// greedy tokens llama.cpp's.
const K_CASES = Object.keys(ARCH_MODELS).filter((n) => HAVE_SHARED && readGolden(`${n}.Q4_K_M`) !== null);

describe.skipIf(K_CASES.length === 0)('architecture variants made here, Q4_K_M: llama.cpp\'s greedy tokens', () => {
  it.each(K_CASES)('%s.Q4_K_M', async (name) => {
    const g = readGolden(`${name}.Q4_K_M`)!;
    const src = join(dir, `${name}.gguf`);
    const path = join(dir, `${name}.Q4_K_M.gguf`);
    writeArchModel(name, src);
    quantizeModelFile(src, path, fileTypeByName('Q4_K_M')!);
    expect(createHash('sha256').update(readFileSync(path)).digest('hex'), 'the re-quantised file differs from the one llama.cpp ran').toBe(g.sha256);
    const c = g.cases[0];
    const lm = await LoadedModel.load(path, { contextSize: 512, backend: 'wasm' });
    try {
      const types = new Set(lm.header.tensors.map((t) => t.type));
      expect(types.has(12) && types.has(14), 'Q4_K and Q6_K blocks').toBe(true);
      const d = maxAbsDiff(logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0)), readLogprobs(c.firstLogprobs));
      expect(d).toBeLessThan(Math.max(1e-3, c.flashAttentionOff?.firstStepMaxAbsDiff ?? 0));
      const out = await greedyTokens(new Session(lm), c.promptTokens, c.n);
      const agree = compareTokens(out, c);
      expect(agree.same, `${name}.Q4_K_M: token ${agree.same} differs from llama.cpp's`).toBeGreaterThanOrEqual(Math.min(16, c.n));
      report.push(`  ${`${name}.Q4_K_M`.padEnd(18)} wasm ${d.toExponential(1)} ${agree.same}/${c.n}`);
    } finally {
      lm.dispose();
    }
  }, 120_000);
});
