// The part of a model file's header the library lists (architecture, name, size, quantisation),
// shared by the header worker (header-worker.ts) and the in-process fallback.

import type { ModelEntry } from '../../shared/contract.js';
import { readGgufHeader, summarize } from '../../engine/gguf/index.js';

export type EntrySummary = Pick<ModelEntry, 'architecture' | 'name' | 'parameters' | 'activeParameters' | 'quantization'>;

/** Read the header of `path` and summarise it. Throws GgufError for a bad file. */
export async function readEntrySummary(path: string): Promise<EntrySummary> {
  const s = summarize(await readGgufHeader(path));
  return { architecture: s.architecture, name: s.name, parameters: s.parameters, activeParameters: s.activeParameters, quantization: s.quantization };
}
