// Sampling parameters and llama.cpp's defaults (common/common.h struct common_params_sampling).

import { samplingSettings } from '../../shared/requests.js';

/** The sampling parameters are part of the contract (the UI edits them); defaults are llama.cpp's. */
export type { SamplingSettings as SamplingParams } from '../../shared/contract.js';
export { DEFAULT_SAMPLING } from '../../shared/contract.js';
import type { SamplingSettings as SamplingParams } from '../../shared/contract.js';

/**
 * Throws UsageError naming the first parameter out of range: the contract's rule for each field
 * (shared/requests.ts samplingSettings), the same wherever the parameters come from.
 */
export function validateSampling(p: SamplingParams): void {
  samplingSettings(p);
}
