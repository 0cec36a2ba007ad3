#!/usr/bin/env node
// Record llama.cpp's greedy output for the test models, as golden files for Pantheon's engine.
//
//   node bench/record-goldens.mjs              # the default model list below
//   node bench/record-goldens.mjs a.gguf ...   # these files only (e.g. quantised variants)
//   --logprob-cases=N                          # write .f32 files for the first N cases only
//   --prompt=TEXT --tag=T                      # one case, TEXT (may be empty: BOS alone), 32 tokens,
//                                              # written as <model-basename>.<T>.json
// Files named rope-*.gguf or ffn-*.gguf (bench/make-rope-models.ts) get one long prompt (ROPE_CASES).
//
// Writes tests/golden/llama.cpp/<model-basename>.json and, per case, <model-basename>.<case>.f32:
// the log-softmax of the logits at the first generated position, little-endian float32, one per
// token id (see llama.mjs for why log-probabilities rather than raw logits). Nothing here depends on
// time or thread timing, so re-recording with the same llama.cpp gives the same bytes.

import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LLAMA_CPP_LABEL, detokenize, dispose, greedy, loadModel, specialTokens, tokenize } from './llama.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MODELS = resolve(ROOT, '..', 'shared', 'models');
const OUT = join(ROOT, 'tests', 'golden', 'llama.cpp');

const PROMPTS = ['Once upon a time', 'The capital of France is', 'Hello, my name is'];
const N_TOKENS = 32;
// stories260K only knows children's stories: one prompt, a longer continuation.
const STORIES_CASES = [{ prompt: 'Once upon a time', n: 64 }];
// RoPE-scaling models (bench/make-rope-models.ts, files rope-*.gguf and ffn-*.gguf): one prompt long enough that
// positions pass their small original context lengths, 32 tokens.
const ROPE_CASES = [{
  prompt: 'Once upon a time, in a small village at the edge of a great forest, there lived an old clockmaker who repaired the clocks of everyone in the valley. Every morning he opened his shop, wound the tall clock by the door, and waited for the first visitor of the day.',
  n: N_TOKENS,
}];
const TOP_K = 10;
// Settings of the reference run (written into each golden file).
const SETTINGS = { threads: 1, contextSize: 512, batchSize: 512, flashAttention: 'auto' };

function defaultModels() {
  const tiny = join(MODELS, 'tiny-random');
  return [
    join(MODELS, 'stories260K.gguf'),
    join(MODELS, 'llama-2-tiny-random.gguf'),
    ...readdirSync(tiny).filter((f) => f.endsWith('.gguf')).sort().map((f) => join(tiny, f)),
  ];
}

/** Which prompts a model gets: the stories models (any quantisation) get the one story prompt. */
function casesFor(path) {
  if (PROMPT !== undefined) return [{ prompt: PROMPT, n: N_TOKENS }];
  if (/stories/i.test(basename(path))) return STORIES_CASES;
  if (/^(rope|ffn)-/.test(basename(path))) return ROPE_CASES;
  return PROMPTS.map((prompt) => ({ prompt, n: N_TOKENS }));
}

/**
 * The recording CPU, and whether it has AMX: llama.cpp multiplies some F16 weights on AMX with x in
 * f32 and rounds x to f16 elsewhere (tests/model/reference-backend.ts), so its logits depend on it.
 */
function recordedOn() {
  const info = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const flags = /^flags\s*:(.*)$/m.exec(info)?.[1].split(/\s+/) ?? [];
  return { cpu: cpus()[0]?.model ?? 'unknown', amx: flags.includes('amx_tile') };
}

function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Token count of the vocabulary, as llama.cpp read it from the file. */
function vocabSize(mc) {
  const tokens = mc.model.fileInfo.metadata?.tokenizer?.ggml?.tokens;
  if (!Array.isArray(tokens)) throw new Error('tokenizer.ggml.tokens not readable through node-llama-cpp');
  return tokens.length;
}

async function record(path) {
  const name = basename(path).replace(/\.gguf$/i, '') + (TAG ? `.${TAG}` : '');
  const mc = await loadModel(path, SETTINGS);
  try {
    const nVocab = vocabSize(mc);
    const sp = specialTokens(mc);
    // the three standard prompts, and the long one of the RoPE models
    const tokenizerPrompts = /^(rope|ffn)-/.test(basename(path)) && PROMPT === undefined ? [...PROMPTS, ...ROPE_CASES.map((c) => c.prompt)] : PROMPTS;
    const tokenizer = tokenizerPrompts.map((prompt) => ({
      prompt,
      withBos: tokenize(mc, prompt, { addSpecial: true }),
      withoutBos: tokenize(mc, prompt, { addSpecial: false }),
    }));
    const cases = [];
    const blobs = [];
    for (const [i, c] of casesFor(path).entries()) {
      const promptTokens = tokenize(mc, c.prompt);
      const r = await greedy(mc, promptTokens, c.n, { logprobs: 'full', topK: TOP_K });
      if (r.tokens.length !== c.n) throw new Error(`${name}: generated ${r.tokens.length} tokens, expected ${c.n}`);
      const first = /** @type {Float32Array} */ (r.firstLogprobs);
      if (first.length !== nVocab || first.some(Number.isNaN)) {
        throw new Error(`${name}: first-step distribution covers ${first.length} ids, vocabulary has ${nVocab}`);
      }
      const f32 = i < LOGPROB_CASES ? `${name}.${i}.f32` : null;
      blobs.push([f32, first]);
      cases.push({
        prompt: c.prompt,
        n: c.n,
        promptTokens,
        tokens: r.tokens,
        eogAt: r.eogAt,
        text: detokenize(mc, r.tokens),
        firstLogprobs: f32,
        topLogits: r.top,
      });
    }
    // The same cases without flash attention: llama.cpp's own spread between its two attention
    // paths (the CPU flash-attention kernel accumulates V in F16), a floor for any tolerance.
    const noFa = await loadModel(path, { ...SETTINGS, flashAttention: false });
    try {
      for (const [i, c] of cases.entries()) {
        const r = await greedy(noFa, c.promptTokens, c.n, { logprobs: 'full', topK: 1 });
        const a = blobs[i][1];
        const b = /** @type {Float32Array} */ (r.firstLogprobs);
        let maxDiff = 0;
        for (let id = 0; id < a.length; id++) if (Number.isFinite(a[id])) maxDiff = Math.max(maxDiff, Math.abs(a[id] - b[id]));
        const diverge = r.tokens.findIndex((t, k) => t !== c.tokens[k]);
        c.flashAttentionOff = { tokens: r.tokens, divergesAt: diverge < 0 ? null : diverge, firstStepMaxAbsDiff: maxDiff };
      }
    } finally {
      await dispose(noFa);
    }
    const golden = {
      model: basename(path),
      sha256: sha256(path),
      llamaCpp: LLAMA_CPP_LABEL,
      recordedOn: recordedOn(),
      settings: {
        ...SETTINGS,
        sampler: 'greedy (temperature 0, no penalties); EOG tokens are fed back, not a stop',
        flashAttentionOff: 'per case: the same run with flashAttention false (tokens, first step where they diverge, max |logprob diff| at step 0)',
      },
      logits: 'logprob = ln softmax(logits) from llama.cpp float32 probabilities; -Infinity in .f32 where p underflowed',
      vocab: { size: nVocab, type: mc.model.vocabularyType, ...sp },
      tokenizer,
      cases,
    };
    mkdirSync(OUT, { recursive: true });
    writeFileSync(join(OUT, `${name}.json`), formatJson(golden));
    for (const [file, v] of blobs) if (file) writeFileSync(join(OUT, file), littleEndian(v));
    return { name, cases: cases.length, nVocab, first: cases[0]?.text };
  } finally {
    await dispose(mc);
  }
}

/** JSON with one line per number array and per {id, logprob} pair, so diffs stay readable. */
function formatJson(value) {
  return JSON.stringify(value, (_k, v) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toFixed(7)) : v), 1)
    .replace(/\[\s+(-?[\d.e+-]+(?:,\s+-?[\d.e+-]+)*)\s+\]/g, (_m, list) => `[${list.split(/,\s+/).join(', ')}]`)
    .replace(/\{\s+"id": (\d+),\s+"logprob": (\S+)\s+\}/g, '{"id": $1, "logprob": $2}')
    + '\n';
}

/** Float32Array -> little-endian bytes, whatever the host order. */
function littleEndian(v) {
  const buf = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i], i * 4);
  return buf;
}

const args = process.argv.slice(2);
const LOGPROB_CASES = Number(args.find((a) => a.startsWith('--logprob-cases='))?.split('=')[1] ?? Infinity);
const PROMPT = args.find((a) => a.startsWith('--prompt='))?.slice('--prompt='.length);
const TAG = args.find((a) => a.startsWith('--tag='))?.slice('--tag='.length);
const files = args.filter((a) => !a.startsWith('--'));
const paths = files.length ? files.map((p) => resolve(p)) : defaultModels();
let failed = 0;
for (const path of paths) {
  try {
    const r = await record(path);
    console.log(`${r.name}: ${r.cases} case(s), vocab ${r.nVocab}: ${JSON.stringify(r.first?.slice(0, 60))}`);
  } catch (err) {
    failed++;
    console.error(`${basename(path)}: not recorded: ${err instanceof Error ? err.message : String(err)}`);
  }
}
process.exitCode = failed ? 1 : 0;
