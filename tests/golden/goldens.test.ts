// The llama.cpp golden files (recorded by bench/record-goldens.mjs) are well-formed and belong to
// the model files they name. Reads only the JSON/.f32 files and the GGUF headers, never llama.cpp.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readGgufHeaderSync } from '../../src/engine/gguf/file.js';
import { getArray, getBool, getNumber, getString } from '../../src/engine/gguf/keys.js';
import type { GgufHeader } from '../../src/engine/gguf/types.js';
import { MODELS, ROOT } from '../helpers.js';
import { GOLDEN_DIR, readGolden, readLogprobs } from '../model/golden.js';

const PROMPTS = ['Once upon a time', 'The capital of France is', 'Hello, my name is'];
const TOP_K = 10;
// Where record-goldens.mjs finds its models (the shared ones, and local quantised variants).
const MODEL_DIRS = [MODELS, join(MODELS, 'tiny-random'), join(ROOT, 'bench', 'models'), join(ROOT, 'bench', 'models', 'quantized'), join(ROOT, 'bench', 'models', 'rope')];

// (the hidden states of bench/record-embeddings.mjs are another kind of file: tests/model/embed.test.ts)
const files = existsSync(GOLDEN_DIR) ? readdirSync(GOLDEN_DIR).filter((f) => f.endsWith('.json') && !f.endsWith('.embeddings.json')).sort() : [];

function findModel(name: string): string | undefined {
  return MODEL_DIRS.map((d) => join(d, name)).find((p) => existsSync(p));
}

/**
 * Whether llama.cpp puts BOS in front of a raw prompt: the file's tokenizer.ggml.add_bos_token if
 * present, else the tokenizer's default (llama-vocab.cpp: SentencePiece "llama" adds BOS, the
 * GPT-2 byte-level BPE does not).
 */
function addsBos(h: GgufHeader): boolean {
  return getBool(h, 'tokenizer.ggml.add_bos_token') ?? getString(h, 'tokenizer.ggml.model') === 'llama';
}

describe('llama.cpp golden files', () => {
  it('exist for the default model list and stay small', () => {
    const names = files.map((f) => f.replace(/\.json$/, ''));
    expect(names).toEqual(expect.arrayContaining(['stories260K', 'llama-2-tiny-random', 'tiny-llama-s5', 'tiny-qwen2-s5']));
    const bytes = readdirSync(GOLDEN_DIR).reduce((s, f) => s + statSync(join(GOLDEN_DIR, f)).size, 0);
    // ~3.6 MiB for the models, ~5.2 MiB for their quantised variants, ~3.2 MiB for the MoE ones
    // (qwen3moe, qwen2moe, olmoe, llama4, gpt-oss: 0.9 MiB of it), ~14 MiB for the other 2026
    // architectures and the variants made in bench/ (each case's .f32 is 4 bytes a vocabulary
    // entry: 0.2 MiB for the 50257-token ones); 25.4 MiB in all
    expect(bytes).toBeLessThan(32 * 2 ** 20);
  });

  for (const file of files) {
    describe(file, () => {
      const g = readGolden(file.replace(/\.json$/, ''))!;
      const modelPath = findModel(g.model);
      const stories = /stories/i.test(g.model);
      // A variant written by Pantheon's quantiser (tests/model/quantized.test.ts): <model>.<TYPE>.gguf.
      const quantised = /\.(I?Q\d\w*)\.gguf$/.test(g.model);
      // A file recorded with --tag=T (e.g. <model>.bos.json: one case, the prompt given by --prompt).
      const tag = file.slice(g.model.replace(/\.gguf$/, '').length + 1).replace(/\.?json$/, '') || null;
      // --tag=pantheon: the standard prompts on a file of the same name that Pantheon's quantiser made
      // (tests/model/quantized.test.ts), kept apart from llama.cpp's own file's golden
      const oneCase = tag !== null && tag !== 'pantheon';
      // tiny256 (bench/make-tiny256.ts) is chaotic (random weights amplify float-order differences): llama.cpp's own two
      // attention paths differ by up to 0.7 at the first step there (tests/model/quantized.test.ts).
      const chaotic = g.model.startsWith('tiny256.');
      // Mixture-of-experts models: a top-k choice that flips between the two attention paths moves
      // the output as a quantised activation does (measured 0.06 to 0.20: tiny-qwen3moe-s1,
      // gpt-oss-v2, tiny-gpt-oss-mxfp4-s1, whose MXFP4 experts also take Q8_0 activations).
      const experts = /moe|gpt-oss|llama4/i.test(g.model);
      // The RoPE test models (bench/make-rope-models.ts): one long prompt of 32 tokens, tokenized after the three standard ones.
      const rope = /^(rope|ffn)-/.test(g.model) && !tag;

      it('has the prompts and lengths record-goldens.mjs promises', () => {
        expect(file).toBe(`${g.model.replace(/\.gguf$/, '')}${tag ? `.${tag}` : ''}.json`);
        expect(g.llamaCpp).toMatch(/^node-llama-cpp \d+\.\d+\.\d+$/);
        if (oneCase) expect(g.cases).toHaveLength(1);
        else if (rope) expect(g.cases.map((c) => c.n)).toEqual([32]);
        else expect(g.cases.map((c) => [c.prompt, c.n])).toEqual(stories ? [['Once upon a time', 64]] : PROMPTS.map((p) => [p, 32]));
        // the RoPE models' long prompt, and a --prompt's own text (a tagged golden's one case) unless empty
        expect(g.tokenizer.map((t) => t.prompt)).toEqual(rope || (oneCase && g.cases[0].prompt !== '') ? [...PROMPTS, g.cases[0].prompt] : PROMPTS);
      });

      it('prompt tokens carry BOS exactly when the model adds it', () => {
        for (const t of g.tokenizer) {
          if (g.vocab.bos !== null) expect(t.withBos).toEqual([g.vocab.bos, ...t.withoutBos]);
          expect(t.withoutBos[0]).not.toBe(g.vocab.bos);
        }
        for (const c of g.cases) {
          const t = c.prompt === '' ? { withBos: [g.vocab.bos!], withoutBos: [] } : g.tokenizer.find((x) => x.prompt === c.prompt)!;
          expect(c.promptTokens).toEqual(g.vocab.addBos ? t.withBos : t.withoutBos);
          expect(c.promptTokens[0] === g.vocab.bos).toBe(g.vocab.addBos);
        }
      });

      it('each case has n greedy tokens, each the top of its step', () => {
        for (const c of g.cases) {
          expect(c.tokens).toHaveLength(c.n);
          expect(c.topLogits).toHaveLength(c.n);
          expect(typeof c.text).toBe('string');
          if (c.eogAt !== null) expect(c.tokens[c.eogAt]).toBeDefined();
          for (const [step, top] of c.topLogits.entries()) {
            expect(top).toHaveLength(Math.min(TOP_K, g.vocab.size));
            for (let i = 1; i < top.length; i++) expect(top[i].logprob).toBeLessThanOrEqual(top[i - 1].logprob);
            expect(top[0].logprob).toBeLessThanOrEqual(0);
            // greedy: the chosen token has the highest log-probability (ties allowed)
            const chosen = top.find((e) => e.id === c.tokens[step]);
            expect(chosen?.logprob, `${c.prompt} step ${step}`).toBe(top[0].logprob);
          }
          for (const id of [...c.promptTokens, ...c.tokens]) expect(id >= 0 && id < g.vocab.size).toBe(true);
        }
      });

      it('the flash-attention-off run is consistent with the main one', () => {
        for (const c of g.cases) {
          const off = c.flashAttentionOff!;
          expect(off.tokens).toHaveLength(c.n);
          const k = off.tokens.findIndex((t, i) => t !== c.tokens[i]);
          expect(off.divergesAt).toBe(k < 0 ? null : k);
          // two llama.cpp attention paths agree to F16 rounding, not exactly; with quantised
          // activations a rounding flip in one q8 block moves these random-weight models further
          // (0.05 to 0.37 measured on the quantised variants of the AMX machine; on the 2026 tiny
          // models, recorded without AMX, up to 0.52 (tiny-gemma2-s1.Q8_0) and 1.04 (tiny-qwen3moe-s1.Q8_0))
          expect(off.firstStepMaxAbsDiff).toBeGreaterThanOrEqual(0);
          expect(off.firstStepMaxAbsDiff).toBeLessThan(chaotic ? 1 : quantised || experts ? (g.recordedOn?.amx === false ? 1.2 : 0.5) : 0.05);
        }
      });

      it('the first-step .f32 file is a log-softmax over the vocabulary that agrees with the JSON', () => {
        for (const [i, c] of g.cases.entries()) {
          // Quantised variants keep case 0 only (--logprob-cases=1), the tiny256 ones only for Q4_K_M/Q6_K.
          if (quantised && c.firstLogprobs === null && (i > 0 || chaotic)) continue;
          expect(c.firstLogprobs).toBe(`${file.replace(/\.json$/, '')}.${i}.f32`);
          const v = readLogprobs(c.firstLogprobs);
          expect(v.length).toBe(g.vocab.size);
          let sum = 0;
          let argmax = 0;
          let bad = -1;
          for (let id = 0; id < v.length; id++) {
            if (!(v[id] <= 0)) bad = id; // also catches NaN
            sum += Math.exp(v[id]);
            if (v[id] > v[argmax]) argmax = id;
          }
          expect(bad, 'first id whose log-probability is positive or NaN').toBe(-1);
          // float32 log-probabilities over up to 150k tokens: the sum of their exps is 1 to ~1e-4
          expect(Math.abs(sum - 1)).toBeLessThan(2e-4);
          expect(v[argmax]).toBe(v[c.tokens[0]]);
          for (const e of c.topLogits[0]) expect(Math.abs(v[e.id] - e.logprob)).toBeLessThan(1e-6);
        }
      });

      it.skipIf(!modelPath)('matches its model file (sha256, vocabulary, BOS rule)', () => {
        const path = modelPath!;
        expect(createHash('sha256').update(readFileSync(path)).digest('hex')).toBe(g.sha256);
        const h = readGgufHeaderSync(path);
        expect(getArray(h, 'tokenizer.ggml.tokens')?.length).toBe(g.vocab.size);
        expect(getNumber(h, 'tokenizer.ggml.bos_token_id') ?? null).toBe(g.vocab.bos);
        expect(getNumber(h, 'tokenizer.ggml.eos_token_id') ?? null).toBe(g.vocab.eos);
        expect(g.vocab.addBos).toBe(addsBos(h));
      });
    });
  }
});
