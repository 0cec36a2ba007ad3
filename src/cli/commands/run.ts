// `pantheon run MODEL -p TEXT [-n N] [--temp T] …`: generate a continuation of a raw prompt (no
// chat template) and stream it to stdout; --json prints one object at the end instead.

import { UsageError } from '../../shared/errors.js';
import { MAX_CONTEXT, MAX_THREADS } from '../../shared/validate.js';
import { parseGpuLayers } from '../../engine/backend/offload-plan.js';
import { LoadedModel, Session, type BackendKind, type GenerationStats, type LoadOptions } from '../../engine/session.js';
import { Profile } from '../../engine/model/profile.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../../engine/sample/index.js';
import { MAX_TOP_LOGPROBS, type StepLogprobs } from '../../engine/sample/logprobs.js';
import { optNumber, optString, parseArgs, type ParsedArgs } from '../args.js';
import type { CliIo, Command } from '../command.js';
import { GRAMMAR_OPTIONS, grammarOption } from '../grammar-option.js';
import { loadProgress } from '../progress.js';

/**
 * The model at `path` loaded with the command's options, a progress line on stderr while it loads
 * when stderr is a terminal (run, chat, serve).
 */
export async function loadModel(path: string, args: ParsedArgs, io: CliIo): Promise<LoadedModel> {
  const progress = loadProgress(io);
  let model: LoadedModel;
  try {
    model = await LoadedModel.load(path, { ...loadOptions(args), onProgress: progress.onProgress });
  } finally {
    progress.done();
  }
  if (model.backendNotice) io.err(`note: ${model.backendNotice}`);
  return model;
}

/** Options shared by `run` and `chat`. */
export const MODEL_OPTIONS = ['threads', 'ctx', 'backend', 'gpu-layers'];
export const SAMPLING_OPTIONS = ['temp', 'top-k', 'top-p', 'min-p', 'repeat-penalty', 'seed', 'n'];

const BACKENDS: readonly BackendKind[] = ['scalar', 'wasm', 'pool', 'webgpu'];

/** --backend and --gpu-layers (which implies webgpu when --backend is not given; with another backend it is a UsageError). */
export function loadOptions(args: ParsedArgs): LoadOptions {
  const layers = optString(args, 'gpu-layers');
  const backend = optString(args, 'backend') ?? (layers !== undefined ? 'webgpu' : undefined);
  if (backend !== undefined && !BACKENDS.includes(backend as BackendKind)) {
    throw new UsageError(`--backend must be one of ${BACKENDS.join(', ')} (not "${backend}")`);
  }
  if (layers !== undefined && backend !== 'webgpu') throw new UsageError(`--gpu-layers is for --backend webgpu, not ${backend}`);
  return {
    threads: optNumber(args, 'threads', 1, { int: true, min: 1, max: MAX_THREADS }),
    contextSize: args.options.has('ctx') ? optNumber(args, 'ctx', 0, { int: true, min: 1, max: MAX_CONTEXT }) : undefined,
    backend: backend as BackendKind | undefined,
    ...(layers !== undefined ? { gpuLayers: parseGpuLayers(layers) } : {}),
  };
}

export function samplingOptions(args: ParsedArgs, maxTokensDefault: number): SamplingParams {
  return {
    ...DEFAULT_SAMPLING,
    temperature: optNumber(args, 'temp', DEFAULT_SAMPLING.temperature, { min: 0 }),
    topK: optNumber(args, 'top-k', DEFAULT_SAMPLING.topK, { int: true }),
    topP: optNumber(args, 'top-p', DEFAULT_SAMPLING.topP, { min: 0, max: 1 }),
    minP: optNumber(args, 'min-p', DEFAULT_SAMPLING.minP, { min: 0, max: 1 }),
    repeatPenalty: optNumber(args, 'repeat-penalty', DEFAULT_SAMPLING.repeatPenalty, { min: 0 }),
    seed: optNumber(args, 'seed', -1, { int: true, min: -1, max: 0xffffffff }),
    maxTokens: optNumber(args, 'n', maxTokensDefault, { int: true, min: -1 }),
    stop: [],
  };
}

/** One stderr line about a finished generation. */
export function statsLine(reason: string, s: Pick<GenerationStats, 'generatedTokens' | 'tokensPerS' | 'promptTokens' | 'promptTokensPerS' | 'ttftMs'>): string {
  return `[${s.generatedTokens} tokens (${reason}), ${s.tokensPerS.toFixed(1)} tok/s; prompt ${s.promptTokens} tokens, ${s.promptTokensPerS.toFixed(1)} tok/s; first token ${s.ttftMs.toFixed(0)} ms]`;
}

/** Abort `ac` on Ctrl+C while `fn` runs (a second Ctrl+C falls through to Node's default). */
export async function withSigint<T>(ac: AbortController, fn: () => Promise<T>): Promise<T> {
  const onSigint = () => ac.abort();
  process.once('SIGINT', onSigint);
  try {
    return await fn();
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}

/** Raw text out (no newline added), or collected and printed once when the io cannot stream. */
function writer(io: CliIo): { write: (t: string) => void; end: () => void } {
  if (io.write) return { write: io.write, end: () => io.write!('\n') };
  let buf = '';
  return { write: (t) => { buf += t; }, end: () => io.out(buf) };
}

export const runCommand: Command = {
  name: 'run',
  usage: 'run MODEL -p TEXT [-n N] [--temp T] [--top-k K] [--top-p P] [--seed S] [--threads N] [--ctx N] [--json] [--top-logprobs K] [--stop-at-eos] [--backend scalar|wasm|pool|webgpu] [--gpu-layers N|auto|all] [--profile] [--json-schema FILE | --grammar FILE]',
  summary: 'continue a prompt with the model (no chat template); --temp 0 is greedy',
  async run(argv, io) {
    const args = parseArgs(argv, ['p', 'prompt', 'top-logprobs', ...MODEL_OPTIONS, ...SAMPLING_OPTIONS, ...GRAMMAR_OPTIONS], ['json', 'stop-at-eos', 'profile']);
    if (args.positionals.length !== 1) throw new UsageError('run takes one MODEL file');
    const prompt = optString(args, 'p') ?? optString(args, 'prompt');
    if (prompt === undefined) throw new UsageError('give the prompt with -p TEXT');
    const sampling = samplingOptions(args, 128);
    const json = args.options.has('json');
    // --top-logprobs K (with --json): each token's log-probability and the K best, per step
    const topLogprobs = args.options.has('top-logprobs') ? optNumber(args, 'top-logprobs', 0, { int: true, min: 0, max: MAX_TOP_LOGPROBS }) : undefined;
    if (topLogprobs !== undefined && !json) throw new UsageError('--top-logprobs needs --json (the log-probabilities are printed in the JSON object)');
    const grammar = grammarOption(args);
    // Greedy runs a fixed length unless asked to stop at end-of-generation (to compare engines).
    const stopAtEog = sampling.temperature > 0 || args.options.has('stop-at-eos');

    const model = await loadModel(args.positionals[0], args, io);
    try {
      // --profile: time per op, printed to stderr after the run
      const profile = args.options.has('profile') ? new Profile() : null;
      const session = new Session(model, profile);
      const promptTokens = model.tokenizer.encode(prompt, { addSpecial: true, parseSpecial: true });
      const out = writer(io);
      const tokens: number[] = [];
      const logprobs: StepLogprobs[] = [];
      let text = '';
      let result: { reason: string; stats: GenerationStats } | null = null;
      const ac = new AbortController();
      await withSigint(ac, async () => {
        for await (const ev of session.generate(promptTokens, sampling, ac.signal, { stopAtEog, topLogprobs, grammar })) {
          if (ev.kind === 'prompt' && !json) out.write(prompt);
          else if (ev.kind === 'token') {
            tokens.push(ev.id);
            if (ev.logprobs) logprobs.push(ev.logprobs);
            text += ev.text;
            if (!json && ev.text) out.write(ev.text);
          } else if (ev.kind === 'done') result = { reason: ev.reason, stats: ev.stats };
        }
      });
      const r = result as { reason: string; stats: GenerationStats } | null;
      if (json) {
        io.out(JSON.stringify({
          backend: model.backendName,
          ...(model.gpu ? { gpu_layers: model.gpu.layers } : {}),
          load_ms: Number(model.loadMs.toFixed(1)),
          prompt_tokens: promptTokens,
          tokens,
          text,
          ttft_ms: r ? Number(r.stats.ttftMs.toFixed(2)) : 0,
          tokens_per_s: r ? Number(r.stats.tokensPerS.toFixed(2)) : 0,
          stop_reason: r?.reason ?? null,
          ...(topLogprobs === undefined ? {} : { logprobs }),
        }));
      } else {
        out.end();
        if (r) io.err(statsLine(r.reason, r.stats));
      }
      if (profile) io.err(`profile (${model.backendName}, ${model.model.backend.threads} thread${model.model.backend.threads > 1 ? 's' : ''}):\n${profile.table()}`);
      return 0;
    } finally {
      model.dispose();
    }
  },
};
