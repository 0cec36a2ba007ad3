// gpt-oss (llama.cpp LLM_ARCH_OPENAI_MOE, src/models/openai-moe.cpp): the pieces (hyperparameters:
// per-layer window, YaRN; swiglu_oai by hand), and Pantheon's own gpt-oss-v2
// (bench/make-gpt-oss-models.ts: 3 layers with the window on 2 of every 3, 8 heads over 2 KV heads,
// MXFP4 experts, 6 experts / 3 used), rebuilt here byte for byte (the sha256 of the file llama.cpp
// ran), against llama.cpp's greedy run of it. ../shared's tiny-gpt-oss-s1 and
// tiny-gpt-oss-mxfp4-s1 are in tests/model/fidelity.test.ts.
//
// The golden was recorded on a CPU without AMX, where llama.cpp rounds the activation to f16
// before every F16 weight. The reference double does the same and must give every greedy token
// and the first step within 1.5 times llama.cpp's own spread between its attention paths
// (flashAttentionOff). The production backends keep it in f32 (src/engine/quant/float.ts): the
// first step within twice that spread; where a token differs, llama.cpp's pick leads by less than
// 1.5 times it (measured: 8.4e-3 at step 17 and 4.9e-2 at step 9, spreads 4.0e-2 and 3.7e-2), or
// the difference comes no earlier than where llama.cpp's own two attention paths part
// (tiny-gpt-oss-mxfp4-s1.long: at step 20, llama.cpp's paths at step 17).

import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GPT_OSS_MODELS, writeGptOssModel } from '../../bench/make-gpt-oss-models.js';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { readGgufHeaderSync } from '../../src/engine/gguf/file.js';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { modelHparams } from '../../src/engine/model/hparams.js';
import { swigluOai } from '../../src/engine/model/swiglu-oai.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { compareTokens, logSoftmax, maxAbsDiff, readGolden, readLogprobs, type GoldenCase } from './golden.js';
import { greedyTokens } from './greedy.js';
import { ReferenceCpuBackend } from './reference-backend.js';

const dir = mkdtempSync(join(tmpdir(), 'pantheon-gpt-oss-'));
const report: string[] = [];
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  if (report.length) console.log(['gpt-oss: max |logprob - llama.cpp| at the first step; greedy tokens equal to llama.cpp\'s', ...report].join('\n'));
});

const TINY = ['tiny-gpt-oss-s1', 'tiny-gpt-oss-mxfp4-s1'];
/** The model file of a golden (<model> or <model>.<tag>): ../shared's, or Pantheon's own rebuilt into dir. */
function modelPath(golden: string): string {
  const name = golden.replace(/\.long$/, '');
  if (TINY.includes(name)) return sharedModel(`tiny-random/${name}.gguf`);
  const path = join(dir, `${name}.gguf`);
  if (!existsSync(path)) writeGptOssModel(name, path);
  return path;
}
// The tiny files' three prompts are run in fidelity.test.ts; here their long prompt (60 tokens:
// past the window of 8), and the generated model, which needs only ../shared's vocabulary
// (stories260K), with the three prompts and a long one (131 tokens: the tiled f32 attention with
// sinks and the window in one batch). Goldens named <model> or <model>.long (--tag=long).
const MODELS = [...Object.keys(GPT_OSS_MODELS).flatMap((n) => [n, `${n}.long`]), 'tiny-gpt-oss-mxfp4-s1.long']
  .filter((g) => HAVE_SHARED && existsSync(sharedModel('stories260K.gguf')) && readGolden(g) !== null && (!g.startsWith('tiny-') || existsSync(modelPath(g))));
const spread = (c: GoldenCase) => c.flashAttentionOff?.firstStepMaxAbsDiff ?? 0;
const NEAR_TIE = 2e-3;

describe('gpt-oss pieces', () => {
  it('swiglu_oai: min(g, 7)·σ(1.702·min(g, 7)) · (clamp(u, −7, 7) + 1), in f32', () => {
    const g = new Float32Array([0, 1, -2, 9, 3]);
    const u = new Float32Array([0.5, -8, 2, 10, -1]);
    const out = new Float32Array(5);
    swigluOai(out, g, u, 5);
    const f = Math.fround;
    const want = [0, 1, -2, 7, 3].map((x, i) => f(f(x / f(1 + f(Math.exp(f(f(1.702) * -x))))) * f(Math.max(-7, Math.min(7, u[i])) + 1)));
    expect(Array.from(out)).toEqual(want);
    expect(out[1]).toBeLessThan(0); // up clamped to −7: (−7 + 1)·silu-ish(1) < 0
  });

  it.skipIf(!HAVE_SHARED)('hyperparameters: the window on even layers (pattern 2), or on l % 3 < 2; YaRN × 32 over 4096', () => {
    const hp = modelHparams(readGgufHeaderSync(sharedModel('tiny-random/tiny-gpt-oss-s1.gguf')));
    expect(hp.layerWindow).toEqual([8, 0]);
    expect(hp.rope).toMatchObject({ freqBase: 150000, freqScale: 1 / 32, extFactor: 1, betaFast: 32, betaSlow: 1, nCtxOrig: 4096 });
    expect(hp.kqScale).toBe(Math.fround(1 / Math.sqrt(32)));
    const v2 = modelHparams(readGgufHeaderSync(modelPath('gpt-oss-v2')));
    expect(v2.layerWindow).toEqual([4, 4, 0]);
    expect(v2).toMatchObject({ nHead: 8, nHeadKv: 2, headDimK: 16, nEmbd: 64 });
  });
});


type Kind = 'reference' | 'wasm' | 'pool';

describe.skipIf(MODELS.length === 0)('gpt-oss against llama.cpp: every greedy token, first-step log-probabilities', () => {
  it.each(MODELS.filter((n) => !n.startsWith('tiny-')))('%s is rebuilt byte for byte (the file llama.cpp ran)', (name) => {
    expect(createHash('sha256').update(readFileSync(modelPath(name))).digest('hex')).toBe(readGolden(name)!.sha256);
  });

  it.each(MODELS.flatMap((n) => (['reference', 'wasm', 'pool'] as Kind[]).map((b): [string, Kind] => [n, b])))('%s on %s', async (name, kind) => {
    const g = readGolden(name)!;
    const backend = kind === 'reference' ? new ReferenceCpuBackend({ amx: g.recordedOn?.amx !== false }) : kind === 'pool' ? new PoolBackend({ simd: 'simd', threads: 2 }) : 'wasm';
    const lm = await LoadedModel.load(modelPath(name), { contextSize: 512, backend });
    try {
      const session = new Session(lm);
      const parts: string[] = [];
      for (const c of g.cases) {
        expect(lm.tokenizer.encode(c.prompt, { addSpecial: true, parseSpecial: true })).toEqual(c.promptTokens);
        const d = maxAbsDiff(logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0)), readLogprobs(c.firstLogprobs));
        const tokens = await greedyTokens(session, c.promptTokens, c.n);
        const agree = compareTokens(tokens, c);
        parts.push(`${d.toExponential(1)} ${agree.same}/${c.n}${agree.same < c.n ? ` (behind ${agree.behind.toExponential(1)})` : ''}`);
        const amx = g.recordedOn?.amx !== false;
        if (kind === 'reference') {
          expect(d, `${name} "${c.prompt}": first-step log-probabilities`).toBeLessThan(amx ? 1e-3 : Math.max(1e-3, 1.5 * spread(c)));
          expect(tokens, `${name} "${c.prompt}"`).toEqual(c.tokens);
        } else {
          expect(d, `${name} "${c.prompt}": first-step log-probabilities`).toBeLessThan(amx ? 2e-2 : Math.max(2e-2, 2 * spread(c)));
          // a token differs only at a near-tie within llama.cpp's own spread, or no earlier than
          // where llama.cpp's two attention paths part (flashAttentionOff.divergesAt)
          const parted = c.flashAttentionOff?.divergesAt ?? null;
          if (amx || parted === null || agree.same < parted) {
            expect(agree.behind, `${name} "${c.prompt}": step ${agree.same} differs from llama.cpp`).toBeLessThan(amx ? NEAR_TIE : Math.max(NEAR_TIE, 1.5 * spread(c)));
          }
        }
      }
      report.push(`  ${name.padEnd(22)} ${kind.padEnd(9)} ${parts.join(' | ')}`);
    } finally {
      lm.dispose();
    }
  }, 120_000);
});
