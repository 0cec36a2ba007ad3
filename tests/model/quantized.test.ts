// Pantheon-quantised models against llama.cpp. Each golden file <model>.<TYPE>.json was recorded by
// llama.cpp from a file that Pantheon's quantiser wrote (so llama.cpp loads and runs those files):
//
//   npm run -s pantheon -- quantize <model>.gguf bench/models/quantized/<model>.<TYPE>.gguf --type <TYPE>
//   node bench/record-goldens.mjs --logprob-cases=1 bench/models/quantized/*.gguf
//
// Quantisation is deterministic (ggml's reference quantisers, byte for byte), so the test quantises
// the source model again into a temp dir and requires the same sha256 as the file llama.cpp ran.
// Then Pantheon (the wasm backend) generates greedily from the first prompt: the first 16 tokens
// must be llama.cpp's, and the first-step log-probabilities close to llama.cpp's.

import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quantizeTiny256, writeTiny256 } from '../../bench/make-tiny256.js';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { readImatrix } from '../../src/engine/quant/imatrix.js';
import { quantizeModelFile } from '../../src/engine/quant/model.js';
import { fileTypeByName } from '../../src/engine/quant/recipe.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { compareTokens, GOLDEN_DIR, logSoftmax, maxAbsDiff, readGolden, readLogprobs } from './golden.js';
import { greedyTokens } from './greedy.js';

const SOURCES: Record<string, string> = {
  stories260K: 'stories260K.gguf',
  ...Object.fromEntries(['llama', 'qwen2', 'qwen3', 'phi3', 'phi2', 'gemma'].map((a) => [`tiny-${a}-s5`, `tiny-random/tiny-${a}-s5.gguf`])),
  ...Object.fromEntries(['gemma2', 'gemma3', 'olmo2', 'smollm3', 'granite', 'mistral3'].map((a) => [`tiny-${a}-s1`, `tiny-random/tiny-${a}-s1.gguf`])),
  // MoE: the quantiser takes 3-D expert tensors row by row (the router stays F32)
  ...Object.fromEntries(['qwen3moe', 'llama4'].map((a) => [`tiny-${a}-s1`, `tiny-random/tiny-${a}-s1.gguf`])),
  'tiny-qwen35-s1': 'tiny-random/tiny-qwen35-s1.gguf',
};

/** [golden name, source file, file type] for every recorded variant whose source model is here. */
const VARIANTS: [string, string, string][] = (existsSync(GOLDEN_DIR) ? readdirSync(GOLDEN_DIR) : [])
  .map((f) => /^(.+)\.(Q4_0|Q8_0|Q4_K_M|Q6_K)\.json$/.exec(f))
  .filter((m): m is RegExpExecArray => m !== null && SOURCES[m[1]] !== undefined)
  .map((m): [string, string, string] => [`${m[1]}.${m[2]}`, SOURCES[m[1]], m[2]])
  .filter(([, file]) => HAVE_SHARED && existsSync(sharedModel(file)));

/** Tokens that must equal llama.cpp's, from the first generated one (issue 4: at least 16). */
const MUST_MATCH = 16;

/**
 * Max |logprob - llama.cpp| at the first generated position, per source model: about 1.3 times the
 * largest over its variants as measured (issue 24; the same under Node 20's plain build and Node
 * 24's relaxed one, to two digits), so that a small numeric bug in a kernel fails here
 * (npm run test:mutations). Measured: tiny-gemma-s5 1.0e-5, tiny-llama-s5 1.0e-5, tiny-phi2-s5
 * 1.1e-5, tiny-phi3-s5 5.7e-6, tiny-qwen2-s5 1.2e-5, tiny-qwen3-s5 8.1e-6; tiny256's Q2_K, Q4_K_M,
 * Q4_K_S and Q6_K 7.4e-5. The stories260K variants keep ffn_down in F16 (rows of 172 fit no block),
 * and llama.cpp rounds that matmul's input to f16 (172 % 16 != 0, so no AMX; quant/float.ts) where
 * Pantheon does not: 0.19, on tokens with ln p below -17. Rounding it too brings Q4_0 and Q4_K_M to
 * 2e-6; Q8_0 and Q6_K (all Q8_0 here) keep 7e-2 from a difference not yet traced. A model not
 * listed gets DEFAULT_FIRST_STEP until its own is measured.
 */
const FIRST_STEP: Record<string, number> = {
  stories260K: 0.25,
  'tiny-gemma-s5': 1.3e-5,
  'tiny-llama-s5': 1.3e-5,
  'tiny-phi2-s5': 1.5e-5,
  'tiny-phi3-s5': 7.5e-6,
  'tiny-qwen2-s5': 1.6e-5,
  'tiny-qwen3-s5': 1.1e-5,
  tiny256: 1e-4,
};
const DEFAULT_FIRST_STEP = 1e-3;
/** The bound for a golden name <model>.<TYPE>. */
const firstStep = (name: string) => FIRST_STEP[name.slice(0, name.lastIndexOf('.'))] ?? DEFAULT_FIRST_STEP;
/**
 * tiny256 variants whose 5-token prompt is chaotic, so only llama.cpp's own spread bounds them.
 * Q5_K_M and Q3_K_M differ from llama.cpp by 8.9e-2 and 1.1e-1 at the first step (top 10) and
 * leave its tokens at steps 4 and 27. Neither engine is wrong (issue 4 §5; bench/dequantize-gguf.ts):
 * - Every Q5_K and Q3_K matmul of both files, scalar and wasm, n = 1 and 5, equals the float64 dot
 *   of the dequantised weights with the dequantised Q8_K activation to 1e-6 of the output rms.
 * - With BOS alone (one position, so attention is V itself) Pantheon and llama.cpp agree to 1e-4
 *   on both files: the tiny256.*.bos goldens below.
 * - With the prompt, Pantheon's scalar and wasm backends differ from EACH OTHER by 0.34 (Q5_K_M) and
 *   0.38 (Q3_K_M): they first differ by one f16 half-ulp in the attention output (wasm sums in
 *   another order), and each Q8_K activation quantisation turns a perturbation e into rounding flips
 *   of a whole step d (amax/127), about sqrt(e·d), so four matmuls later it is 0.1 or more. In
 *   Q4_K_M no flip happens at attn_output and the two backends agree to 6e-6: luck, not a property.
 * - llama.cpp is as sensitive: its flash-attention-off run differs from its own golden by 0.46 to
 *   0.70 at the first step on every tiny256 variant (flashAttentionOff in the golden files), and
 *   its CPU variant matters: node-llama-cpp loads libggml-cpu-sapphirerapids.so here, whose AMX
 *   Q5_K kernels (ggml-cpu/amx/mmq.cpp tinygemm_kernel_vnni / acc_C for block_q5_K) sum floats in
 *   another order; without that variant (the icelake/AVX-512 one), llama.cpp's Q5_K_M run agrees
 *   with Pantheon's wasm to 5e-5 and changes its own tokens from step 4 on.
 * - A file with every tensor dequantised to F32 (bench/dequantize-gguf.ts) cannot decide: its first
 *   step is 0.6 away (rms 0.14) from every quantised run of both engines, Q4_K_M included; that is
 *   the Q8_K activation noise itself.
 * So for these the first step must only stay within llama.cpp's own spread, and tokens are not compared.
 */
const TINY256_CHAOTIC = new Set(['Q5_K_M', 'Q3_K_M']);
// The 2026 tiny models' Q8_0 variants (goldens recorded without AMX, Golden.recordedOn): llama.cpp's
// own flash-attention-off run is 0.16 to 0.52 away from its golden at the first step (and leaves its
// tokens on most prompts), so there the first step is bounded by that spread. Measured: gemma3,
// granite, mistral3, smollm3, llama4 1e-4 or less; gemma2 0.11, olmo2 0.10, qwen3moe 8.1e-2 (Q8
// rounding flips; qwen3moe's spread 0.37), with all 32 tokens equal on every one.
/** tiny256 with BOS alone, scalar and wasm: measured 1.0e-4 (Q3_K_M), 8.1e-5 (Q5_K_M). */
const TINY256_BOS_FIRST_STEP = 1.3e-4;

// Why exactly MUST_MATCH and no allowance: with quantised activations an element within float
// rounding of a Q8 rounding boundary rounds the other way when an engine sums in another order, and
// on these random-weight models one such flip moves the log-probabilities by 1e-2 to 8e-2 at that
// step, enough to change a near-tie. With earlier wasm kernels that cost tiny-llama-s5.Q4_K_M its
// tokens from step 13 (its 64-wide tensors fall back to Q5_0/Q8_0) and tiny-qwen2-s5.Q4_0 from step
// 21, where the scalar backend got 32/32, and the test allowed a divergence within 0.1 of llama.cpp's
// choice. The legacy kernels now reproduce ggml's generic float order bit for bit
// (tests/wasm/bitexact-legacy.test.ts). Now every variant gives llama.cpp's first 16 tokens or more: 32/32 (stories260K 64/64)
// but tiny-qwen3-s5.Q4_0, 18/32 on every backend, where llama.cpp's own top two are 1.8e-2 apart.

const tmp = mkdtempSync(join(tmpdir(), 'pantheon-quantized-'));
const report: string[] = [];
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  if (report.length) console.log(['Pantheon-quantised models (wasm): max |logprob - llama.cpp| at the first generated position; greedy tokens equal', ...report].join('\n'));
});

// tiny256 (bench/make-tiny256.ts): 256 wide, so its variants hold real K-quant blocks (Q4_K, Q5_K,
// Q6_K, …) that the 64-wide models never reach. The F16 file is rebuilt from its seed here; Q4_K_M
// (Q4_K and Q6_K blocks) runs by default, the other recorded variants with PANTHEON_SLOW_TESTS=1
// (each takes 20-30 s here, most of it quantising the 32000×256 embedding; CI sets it); without it
// they are skipped, and counted as skipped.
const SLOW = process.env.PANTHEON_SLOW_TESTS === '1';
/**
 * tiny256 variants that llama.cpp's own quantiser made (bench/llama-quantize.mjs, with its made-up
 * importance matrix), in i-quant file types (Pantheon's own IQ2_M and IQ1_M are tested at the end): their tensors are IQ2_S,
 * IQ3_XXS, IQ3_S with Q4_K/Q5_K/Q6_K. Tested below from bench/models/quantized/, when the file is there.
 */
const LLAMA_QUANTISED = new Set(['IQ3_XXS', 'IQ3_S', 'IQ3_M', 'IQ2_M']);
const TINY256: string[] = (existsSync(GOLDEN_DIR) ? readdirSync(GOLDEN_DIR) : [])
  .map((f) => /^tiny256\.(\w+)\.json$/.exec(f)?.[1])
  .filter((t): t is string => t !== undefined && !LLAMA_QUANTISED.has(t))
  .filter(() => HAVE_SHARED);

/** BOS-only goldens (tiny256.<T>.bos.json): Q5_K_M by default, the others with PANTHEON_SLOW_TESTS=1. */
const TINY256_BOS: string[] = (existsSync(GOLDEN_DIR) ? readdirSync(GOLDEN_DIR) : [])
  .map((f) => /^tiny256\.(\w+)\.bos\.json$/.exec(f)?.[1])
  .filter((t): t is string => t !== undefined)
  .filter(() => HAVE_SHARED);

// Quantising the 32000×256 embedding to K-quants dominates (20-45 s alone; over 100 s when the 2
// cores are shared with other work): the timeout guards against hangs, not speed.
const TINY256_TIMEOUT = 240_000;

describe.skipIf(TINY256.length + TINY256_BOS.length === 0)('tiny256 K-quant variants: llama.cpp\'s greedy tokens', () => {
  let f16 = '';
  beforeAll(() => {
    f16 = join(tmp, 'tiny256.gguf');
    writeTiny256(f16);
  }, TINY256_TIMEOUT);

  for (const type of TINY256) it.skipIf(!SLOW && type !== 'Q4_K_M')(`tiny256.${type}`, async () => {
    const name = `tiny256.${type}`;
    const g = readGolden(name)!;
    const path = join(tmp, `${name}.gguf`);
    quantizeTiny256(f16, path, type);
    expect(createHash('sha256').update(readFileSync(path)).digest('hex'), 'the re-quantised file differs from the one llama.cpp ran').toBe(g.sha256);
    const c = g.cases[0];
    const lm = await LoadedModel.load(path, { contextSize: 512, backend: 'wasm' });
    try {
      const lp = logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0));
      // Over llama.cpp's top 10 (the .f32 of every id is kept for Q4_K_M and Q6_K only).
      const d = Math.max(...c.topLogits[0].map((t) => Math.abs(lp[t.id] - t.logprob)));
      const out = await greedyTokens(new Session(lm), c.promptTokens, c.n);
      const agree = compareTokens(out, c);
      report.push(`  ${name.padEnd(22)} ${d.toExponential(1)}  ${agree.same}/${c.n}${agree.same < c.n ? ` (behind llama.cpp's choice by ${agree.behind.toExponential(1)})` : ''}`);
      if (TINY256_CHAOTIC.has(type)) {
        expect(d).toBeLessThan(c.flashAttentionOff!.firstStepMaxAbsDiff);
        return;
      }
      expect(d).toBeLessThan(g.recordedOn?.amx === false ? Math.max(DEFAULT_FIRST_STEP, c.flashAttentionOff!.firstStepMaxAbsDiff) : firstStep(name));
      expect(agree.same, `${name}: token ${agree.same} differs from llama.cpp's`).toBeGreaterThanOrEqual(Math.min(MUST_MATCH, c.n));
    } finally {
      lm.dispose();
    }
  }, TINY256_TIMEOUT);

  // BOS alone: one position, so attention returns V and no half-ulp difference is amplified; here
  // Pantheon must match llama.cpp over the whole vocabulary, on both backends.
  // Recorded with: node bench/record-goldens.mjs --logprob-cases=1 --prompt= --tag=bos tiny256.<T>.gguf
  for (const type of TINY256_BOS) it.skipIf(!SLOW && type !== 'Q5_K_M')(`tiny256.${type}, BOS alone: first step within ${TINY256_BOS_FIRST_STEP} of llama.cpp, scalar and wasm`, async () => {
    const g = readGolden(`tiny256.${type}.bos`)!;
    const path = join(tmp, `tiny256.${type}.gguf`);
    if (!existsSync(path)) quantizeTiny256(f16, path, type);
    expect(createHash('sha256').update(readFileSync(path)).digest('hex'), 'the re-quantised file differs from the one llama.cpp ran').toBe(g.sha256);
    const c = g.cases[0];
    expect(c.promptTokens).toEqual([g.vocab.bos]);
    const ref = readLogprobs(c.firstLogprobs);
    const parts: string[] = [];
    for (const backend of ['scalar', 'wasm'] as const) {
      const lm = await LoadedModel.load(path, { contextSize: 512, backend });
      try {
        const d = maxAbsDiff(logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0)), ref);
        parts.push(`${backend} ${d.toExponential(1)}`);
        expect(d, backend).toBeLessThan(TINY256_BOS_FIRST_STEP);
      } finally {
        lm.dispose();
      }
    }
    report.push(`  ${`tiny256.${type}.bos`.padEnd(22)} ${parts.join(', ')}`);
  }, TINY256_TIMEOUT);
});

describe.skipIf(VARIANTS.length === 0)('Pantheon-quantised models: llama.cpp\'s greedy tokens', () => {
  it.each(VARIANTS)('%s', async (name, file, type) => {
    const g = readGolden(name)!;
    const path = join(tmp, `${name}.gguf`);
    quantizeModelFile(sharedModel(file), path, fileTypeByName(type)!);
    expect(createHash('sha256').update(readFileSync(path)).digest('hex'), 'the re-quantised file differs from the one llama.cpp ran').toBe(g.sha256);

    const c = g.cases[0];
    const lm = await LoadedModel.load(path, { contextSize: 512, backend: 'wasm' });
    try {
      expect(lm.tokenizer.encode(c.prompt, { addSpecial: true, parseSpecial: true })).toEqual(c.promptTokens);
      const d = maxAbsDiff(logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0)), readLogprobs(c.firstLogprobs));
      const out = await greedyTokens(new Session(lm), c.promptTokens, c.n);
      const agree = compareTokens(out, c);
      report.push(`  ${name.padEnd(22)} ${d.toExponential(1)}  ${agree.same}/${c.n}${agree.same < c.n ? ` (behind llama.cpp's choice by ${agree.behind.toExponential(1)})` : ''}`);
      expect(d).toBeLessThan(g.recordedOn?.amx === false ? Math.max(DEFAULT_FIRST_STEP, c.flashAttentionOff!.firstStepMaxAbsDiff) : firstStep(name));
      expect(agree.same, `${name}: token ${agree.same} differs from llama.cpp's`).toBeGreaterThanOrEqual(Math.min(MUST_MATCH, c.n));
    } finally {
      lm.dispose();
    }
  });
});

// The i-quant variants of tiny256, quantised by llama.cpp: made with bench/make-tiny256-iq.ts
// (llama.cpp's quantiser through bench/llama-quantize.mjs, with a made-up importance matrix) and
// recorded like the others. The file must be the one llama.cpp ran (sha256); it is not committed
// (6-8 MB each), so without it the case is skipped. (Pantheon quantises to these types byte for byte
// as ggml does; its files carry quantize.imatrix.* keys, so they are tested from their own goldens below.)
// The scalar backend (ggml's generic order) must give llama.cpp's tokens; wasm and pool too, but for
// IQ3_M (IQ3_S and Q4_K layers), whose first prompt is chaotic: scalar 32/32 on all three prompts,
// wasm and pool 12/32 on the first (llama.cpp's token then 7.4e-2 behind their own; llama.cpp's own
// flash-attention-off run leaves its tokens at step 13) and 32/32 on the other two. There wasm and
// pool must only match the first step. Measured first steps: 6.1e-5 to 6.7e-5 on every backend.
const IQ_DIR = join(import.meta.dirname, '..', '..', 'bench', 'models', 'quantized');
const TINY256_IQ: string[] = (existsSync(GOLDEN_DIR) ? readdirSync(GOLDEN_DIR) : [])
  .map((f) => /^tiny256\.(\w+)\.json$/.exec(f)?.[1])
  .filter((t): t is string => t !== undefined && LLAMA_QUANTISED.has(t));
const TINY256_IQ_CHAOTIC = new Set(['IQ3_M']);

describe.skipIf(TINY256_IQ.length === 0)('tiny256 i-quant variants quantised by llama.cpp: llama.cpp\'s greedy tokens', () => {
  for (const type of TINY256_IQ) {
    const path = join(IQ_DIR, `tiny256.${type}.gguf`);
    it.skipIf(!existsSync(path))(`tiny256.${type} (wasm, pool; scalar when slow)`, async () => {
      const name = `tiny256.${type}`;
      const g = readGolden(name)!;
      expect(createHash('sha256').update(readFileSync(path)).digest('hex'), 'not the file llama.cpp ran').toBe(g.sha256);
      const c = g.cases[0];
      // the scalar backend takes 5-8 s a file here: with PANTHEON_SLOW_TESTS=1
      for (const backend of SLOW ? (['scalar', 'wasm', 'pool'] as const) : (['wasm', 'pool'] as const)) {
        const lm = await LoadedModel.load(path, { contextSize: 512, backend });
        try {
          const d = maxAbsDiff(logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0)), readLogprobs(c.firstLogprobs));
          const out = await greedyTokens(new Session(lm), c.promptTokens, c.n);
          const agree = compareTokens(out, c);
          report.push(`  ${`${name} ${backend}`.padEnd(22)} ${d.toExponential(1)}  ${agree.same}/${c.n}${agree.same < c.n ? ` (behind llama.cpp's choice by ${agree.behind.toExponential(1)})` : ''}`);
          expect(d, backend).toBeLessThan(firstStep(name));
          if (backend !== 'scalar' && TINY256_IQ_CHAOTIC.has(type)) continue;
          expect(agree.same, `${name} ${backend}: token ${agree.same} differs from llama.cpp's`).toBeGreaterThanOrEqual(Math.min(MUST_MATCH, c.n));
        } finally {
          lm.dispose();
        }
      }
    }, TINY256_TIMEOUT);
  }
});

// tiny256 quantised by Pantheon to IQ2_M (IQ2_S, IQ3_S, Q5_K) and IQ1_M (IQ1_M, IQ2_XXS, Q2_K, Q5_K)
// with llama.cpp's importance matrix of it (tests/golden/llama.cpp/imatrix/tiny256.imatrix, as
// `pantheon quantize --imatrix` takes it), then run by llama.cpp for the goldens
// tiny256.<TYPE>.pantheon.json:
//   npm run -s pantheon -- quantize tiny256.gguf DIR/tiny256.<TYPE>.gguf --type <TYPE> --imatrix tests/golden/llama.cpp/imatrix/tiny256.imatrix
//   node bench/record-goldens.mjs --logprob-cases=1 --tag=pantheon DIR/tiny256.<TYPE>.gguf
// The test quantises again (the sha256 must be the file llama.cpp ran) and generates greedily on the
// wasm backend (and scalar when slow): the first step within PANTHEON_IQ_FIRST_STEP of llama.cpp
// (measured 4.8e-5 to 6.6e-5, scalar and wasm, where llama.cpp's own flash-attention-off run is
// 0.42 to 0.82 away), and llama.cpp's first 16 tokens, or as many as llama.cpp's flash-attention-off
// run keeps on a prompt where it leaves them sooner (IQ1_M: at step 14 on "Once upon a time", 3 on
// "Hello, my name is"). Measured: IQ2_M 32/32 on all three prompts, scalar and wasm; IQ1_M scalar
// 28, 32, 32 and wasm 14, 25, 32 (llama.cpp's token then 1.2e-2 and 1.8e-2 behind).
// IQ2_M by default, IQ1_M with PANTHEON_SLOW_TESTS=1 (each quantisation takes 20-40 s here).
const PANTHEON_IQ = ['IQ2_M', 'IQ1_M'].filter((t) => readGolden(`tiny256.${t}.pantheon`) !== null);
const IMATRIX_REL = 'tests/golden/llama.cpp/imatrix/tiny256.imatrix';
const PANTHEON_IQ_FIRST_STEP = 1e-4;

describe.skipIf(PANTHEON_IQ.length === 0)("tiny256 i-quant variants quantised by Pantheon with an importance matrix: llama.cpp's greedy tokens", () => {
  let f16 = '';
  beforeAll(() => {
    f16 = join(tmp, 'tiny256-iq.gguf');
    writeTiny256(f16);
  }, TINY256_TIMEOUT);
  for (const type of PANTHEON_IQ) it.skipIf(!SLOW && type !== 'IQ2_M')(`tiny256.${type}.pantheon`, async () => {
    const name = `tiny256.${type}.pantheon`;
    const g = readGolden(name)!;
    const path = join(tmp, `tiny256.${type}.pantheon.gguf`);
    const imatrix = readImatrix(join(import.meta.dirname, '..', '..', IMATRIX_REL));
    quantizeModelFile(f16, path, fileTypeByName(type)!, undefined, { imatrix, path: IMATRIX_REL });
    expect(createHash('sha256').update(readFileSync(path)).digest('hex'), 'the re-quantised file differs from the one llama.cpp ran').toBe(g.sha256);
    for (const backend of SLOW ? (['scalar', 'wasm'] as const) : (['wasm'] as const)) {
      const lm = await LoadedModel.load(path, { contextSize: 512, backend });
      try {
        for (const c of g.cases) {
          const out = await greedyTokens(new Session(lm), c.promptTokens, c.n);
          const agree = compareTokens(out, c);
          let first = '';
          if (c.firstLogprobs) {
            const d = maxAbsDiff(logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0)), readLogprobs(c.firstLogprobs));
            first = d.toExponential(1);
            expect(d, backend).toBeLessThan(PANTHEON_IQ_FIRST_STEP);
          }
          report.push(`  ${`${name} ${backend}`.padEnd(30)} ${first.padEnd(8)} ${agree.same}/${c.n}${agree.same < c.n ? ` (behind llama.cpp's choice by ${agree.behind.toExponential(1)})` : ''}`);
          const own = c.flashAttentionOff!.divergesAt ?? c.n;
          expect(agree.same, `${name} ${backend} "${c.prompt}": token ${agree.same} differs from llama.cpp's`).toBeGreaterThanOrEqual(Math.min(MUST_MATCH, c.n, own));
        }
      } finally {
        lm.dispose();
      }
    }
  }, TINY256_TIMEOUT);
});
