// Sampling parameters and llama.cpp's defaults (common/common.h struct common_params_sampling).

import { UsageError } from '../../shared/errors.js';

/** The sampling parameters are part of the contract (the UI edits them); defaults are llama.cpp's. */
export type { SamplingSettings as SamplingParams } from '../../shared/contract.js';
export { DEFAULT_SAMPLING } from '../../shared/contract.js';
import type { SamplingSettings as SamplingParams } from '../../shared/contract.js';

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
