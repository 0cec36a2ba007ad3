// Sampling parameters and llama.cpp's defaults (common/common.h struct common_params_sampling).

import { UsageError } from '../../shared/errors.js';

export interface SamplingParams {
  /** <= 0: greedy (argmax). llama.cpp default 0.8. */
  temperature: number;
  /** Keep the k most likely tokens; <= 0 disables. Default 40. */
  topK: number;
  /** Keep the smallest set whose probability reaches p; 1 disables. Default 0.95. */
  topP: number;
  /** Drop tokens whose probability is below minP × the top probability; 0 disables. Default 0.05. */
  minP: number;
  /** Divide positive / multiply negative logits of recent tokens; 1 disables. Default 1. */
  repeatPenalty: number;
  /** Subtracted once from every recent token's logit; 0 disables. */
  presencePenalty: number;
  /** Subtracted per occurrence in the window; 0 disables. */
  frequencyPenalty: number;
  /** How many recent tokens the penalties look at; 0 disables, -1 means the whole history. Default 64. */
  penaltyLastN: number;
  /** RNG seed (uint32); -1 picks a random one (llama.cpp LLAMA_DEFAULT_SEED). */
  seed: number;
  /** Most tokens to generate; -1 = until end of turn or a full context (llama.cpp n_predict). */
  maxTokens: number;
  /** Extra stop strings, on top of the chat template's end-of-turn markers. */
  stop: string[];
}

export const DEFAULT_SAMPLING: Readonly<SamplingParams> = Object.freeze({
  temperature: 0.8,
  topK: 40,
  topP: 0.95,
  minP: 0.05,
  repeatPenalty: 1.0,
  presencePenalty: 0.0,
  frequencyPenalty: 0.0,
  penaltyLastN: 64,
  seed: -1,
  maxTokens: -1,
  stop: [] as string[],
});

/** Throws UsageError naming the first parameter out of range. */
export function validateSampling(p: SamplingParams): void {
  const bad = (name: string, want: string, v: unknown): never => {
    throw new UsageError(`Sampling parameter ${name} is ${String(v)}; it must be ${want}.`);
  };
  const finite = (name: keyof SamplingParams): number => {
    const v = p[name];
    if (typeof v !== 'number' || !Number.isFinite(v)) bad(name, 'a finite number', v);
    return v as number;
  };
  finite('temperature');
  if (!Number.isInteger(finite('topK'))) bad('topK', 'an integer (0 or less disables it)', p.topK);
  if (finite('topP') < 0 || p.topP > 1) bad('topP', 'between 0 and 1 (1 disables it)', p.topP);
  if (finite('minP') < 0 || p.minP > 1) bad('minP', 'between 0 and 1 (0 disables it)', p.minP);
  if (finite('repeatPenalty') <= 0) bad('repeatPenalty', 'greater than 0 (1 disables it)', p.repeatPenalty);
  finite('presencePenalty');
  finite('frequencyPenalty');
  if (!Number.isInteger(finite('penaltyLastN')) || p.penaltyLastN < -1) bad('penaltyLastN', 'an integer >= -1', p.penaltyLastN);
  if (!Number.isInteger(finite('seed')) || p.seed < -1 || p.seed > 0xffffffff) bad('seed', 'an integer from 0 to 4294967295, or -1 for random', p.seed);
  if (!Number.isInteger(finite('maxTokens')) || p.maxTokens < -1) bad('maxTokens', 'an integer >= -1', p.maxTokens);
  if (!Array.isArray(p.stop) || p.stop.some((s) => typeof s !== 'string')) bad('stop', 'a list of strings', p.stop);
}
