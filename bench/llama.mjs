// llama.cpp as the reference engine, through node-llama-cpp 3.21.1 (prebuilt CPU binary).
// Dev-only: nothing under src/ may import this. Used by record-goldens.mjs and speed.mjs.
//
// What llama.cpp exposes through node-llama-cpp, and what it does not:
//  - tokenize: the binding calls common_tokenize(vocab, text, add_special=false, parse_special).
//    llama.cpp's own CLI tokenizes a raw prompt with add_special=true, parse_special=true, which
//    prepends BOS when llama_vocab_get_add_bos() says so and appends EOS when
//    llama_vocab_get_add_eos() says so. tokenize() below adds those two by hand, from the same flags
//    (model.tokens.shouldPrependBosToken / shouldAppendEosToken).
//  - raw logits are not exposed. With temperature 0 the sampler chain is only llama.cpp's greedy
//    sampler, which does not change the logits, and the addon returns softmax(logits) over the whole
//    vocabulary as float32 (AddonContext.cpp SampleToken). ln(p) is then the log-softmax of the
//    logits: logit minus logsumexp, the same for any engine up to a constant shift per step.
//    Where p underflowed to 0 in float32 (logprob below about -103) ln(p) is -Infinity.

import { performance } from 'node:perf_hooks';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

export const LLAMA_CPP_LABEL = 'node-llama-cpp 3.21.1';

/** @type {Promise<import('node-llama-cpp').Llama> | undefined} */
let llamaPromise;
/** @type {string[] | null} lines of llama_perf_context_print while perfTimings() listens */
let perfSink = null;

/** llama.cpp's log: errors and warnings to stderr, perf lines to perfTimings(), the rest dropped. */
function logger(level, message) {
  if (perfSink && /llama_perf_context_print/.test(message)) perfSink.push(message.trim());
  else if (level === 'error' || level === 'fatal' || level === 'warn') process.stderr.write(`[llama.cpp] ${message.trim()}\n`);
}

/**
 * The llama.cpp runtime, never built from source or downloaded: CPU only, or with `gpu` one of
 * node-llama-cpp's prebuilt GPU binaries ('vulkan', 'cuda'; bench/gpu.sh). One per process.
 * @param {false | 'vulkan' | 'cuda'} [gpu]
 */
export function getReference(gpu = false) {
  llamaPromise ??= getLlama({
    gpu,
    build: 'never',
    progressLogs: false,
    // info level so that llama_perf_context_print reaches the logger; logger() filters
    logLevel: LlamaLogLevel.info,
    logger,
  });
  return llamaPromise;
}

/**
 * Load a GGUF file and make one context with one sequence.
 * @param {string} path
 * gpu: every layer on that GPU (getReference's binary), else the CPU only.
 * @param {{ threads?: number, contextSize?: number, batchSize?: number, flashAttention?: 'auto' | boolean, gpu?: false | 'vulkan' | 'cuda' }} [opts]
 */
export async function loadModel(path, opts = {}) {
  const { threads = 1, contextSize = 512, batchSize = 512, flashAttention = 'auto', gpu = false } = opts;
  const llama = await getReference(gpu);
  const t0 = performance.now();
  const model = await llama.loadModel({ modelPath: path, gpuLayers: gpu ? 'max' : 0 });
  const loadMs = performance.now() - t0;
  const context = await model.createContext({
    contextSize,
    batchSize,
    threads: { ideal: threads, min: threads },
    flashAttention,
    performanceTracking: true,
  });
  const sequence = context.getSequence();
  return {
    llama, model, context, sequence,
    settings: { threads, contextSize: context.contextSize, batchSize: context.batchSize, flashAttention, gpu: gpu ? llama.gpu : false },
    loadMs,
  };
}

/** @param {{ model: import('node-llama-cpp').LlamaModel, context: import('node-llama-cpp').LlamaContext }} mc */
export async function dispose(mc) {
  await mc.context.dispose();
  await mc.model.dispose();
}

/** BOS/EOS ids and whether llama.cpp adds them to a raw prompt (llama_vocab_get_add_bos/eos). */
export function specialTokens(mc) {
  const t = mc.model.tokens;
  return { bos: t.bos, eos: t.eos, addBos: t.shouldPrependBosToken, addEos: t.shouldAppendEosToken };
}

/**
 * Tokenize like llama.cpp's CLI does for a raw prompt (no chat template).
 * addSpecial 'auto' follows the model (add_bos/add_eos flags); true forces BOS (when the vocab has
 * one); false adds nothing. parseSpecial lets "<s>"-like text map to special tokens, as the CLI does.
 * @param {{ model: import('node-llama-cpp').LlamaModel }} mc
 * @param {string} text
 * @param {{ addSpecial?: 'auto' | boolean, parseSpecial?: boolean }} [opts]
 * @returns {number[]}
 */
export function tokenize(mc, text, opts = {}) {
  const { addSpecial = 'auto', parseSpecial = true } = opts;
  const ids = Array.from(mc.model.tokenize(text, parseSpecial));
  const sp = specialTokens(mc);
  const addBos = addSpecial === 'auto' ? sp.addBos : addSpecial;
  const addEos = addSpecial === 'auto' ? sp.addEos : false;
  if (addBos && sp.bos != null) ids.unshift(sp.bos);
  if (addEos && sp.eos != null) ids.push(sp.eos);
  return ids;
}

/** @param {{ model: import('node-llama-cpp').LlamaModel }} mc @param {number[]} ids */
export function detokenize(mc, ids, specialText = false) {
  return mc.model.detokenize(ids, specialText);
}

/**
 * Greedy generation of exactly n tokens (temperature 0, no repeat penalty, no top-k/p).
 * End-of-generation tokens do not stop it: they are fed back like any other token, so two engines
 * can be compared over a fixed length; eogAt says where llama.cpp's CLI would have stopped.
 *
 * logprobs: 'none' (fastest, for timing), 'top' (topK per step), or 'full' (also the whole
 * log-softmax vector of the first generated position, as a Float32Array indexed by token id).
 *
 * @param {{ model: import('node-llama-cpp').LlamaModel, sequence: import('node-llama-cpp').LlamaContextSequence }} mc
 * @param {number[]} promptTokens
 * @param {number} n
 * @param {{ logprobs?: 'none' | 'top' | 'full', topK?: number }} [opts]
 */
export async function greedy(mc, promptTokens, n, opts = {}) {
  const { logprobs = 'none', topK = 10 } = opts;
  await mc.sequence.clearHistory();
  const want = logprobs !== 'none';
  /** @type {number[]} */
  const tokens = [];
  /** @type {{ id: number, logprob: number }[][]} */
  const top = [];
  /** @type {Float32Array | undefined} */
  let firstLogprobs;
  let eogAt = -1;
  const t0 = performance.now();
  let tFirst = 0;
  const gen = mc.sequence.evaluateWithMetadata(promptTokens, { probabilities: want }, {
    temperature: 0,
    yieldEogToken: true,
  });
  for await (const step of gen) {
    if (tokens.length === 0) tFirst = performance.now();
    if (want) {
      const probs = /** @type {Map<number, number>} */ (step.probabilities);
      if (tokens.length === 0 && logprobs === 'full') firstLogprobs = fullLogprobs(probs);
      top.push(topLogprobs(probs, topK));
    }
    if (eogAt < 0 && mc.model.isEogToken(step.token)) eogAt = tokens.length;
    tokens.push(step.token);
    if (tokens.length >= n) break;
  }
  const tEnd = performance.now();
  return {
    tokens,
    eogAt: eogAt < 0 ? null : eogAt,
    top: want ? top : undefined,
    firstLogprobs,
    // prompt time includes sampling the first token; gen time is the remaining n-1 tokens
    timing: { promptMs: tFirst - t0, genMs: tEnd - tFirst, genTokens: tokens.length - 1 },
  };
}

/** @param {Map<number, number>} probs (token id -> probability) @param {number} k */
function topLogprobs(probs, k) {
  const rows = [];
  for (const [id, p] of probs) rows.push({ id, p });
  // highest first; equal probabilities by lower id, so the order does not depend on std::sort
  rows.sort((a, b) => b.p - a.p || a.id - b.id);
  return rows.slice(0, k).map(({ id, p }) => ({ id, logprob: Math.log(p) }));
}

/** @param {Map<number, number>} probs */
function fullLogprobs(probs) {
  let nVocab = 0;
  for (const id of probs.keys()) nVocab = Math.max(nVocab, id + 1);
  const out = new Float32Array(nVocab).fill(Number.NaN);
  for (const [id, p] of probs) out[id] = Math.log(p);
  return out;
}

/**
 * llama.cpp's own timings since the last call (llama_perf_context_print, then reset), parsed:
 * prompt eval and eval time in ms and token counts. Needs the context made by loadModel().
 * @param {{ context: import('node-llama-cpp').LlamaContext }} mc
 */
export async function perfTimings(mc) {
  const lines = (perfSink = []);
  try {
    await mc.context.printTimings();
  } finally {
    perfSink = null;
  }
  /** @type {Record<string, { ms: number, tokens: number }>} */
  const out = {};
  for (const line of lines) {
    const m = /(prompt eval|eval|sampling) time =\s*([\d.]+) ms \/\s*(\d+)/.exec(line);
    if (m) out[m[1] === 'prompt eval' ? 'prompt' : m[1]] = { ms: Number(m[2]), tokens: Number(m[3]) };
  }
  return out;
}
