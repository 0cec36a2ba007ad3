// The part of a model file's header the library lists (architecture, name, size, quantisation),
// shared by the header worker (header-worker.ts) and the in-process fallback.

import type { ModelEntry } from '../../shared/contract.js';
import { readGgufHeader, summarize, type GgufHeader } from '../../engine/gguf/index.js';
import { memoryModel, modelInfo } from '../../engine/model/load.js';

export type EntrySummary = Pick<ModelEntry, 'architecture' | 'name' | 'parameters' | 'activeParameters' | 'quantization' | 'memory'>;

/** The memory line of a model the engine can run, else null (its error shows when it is opened). */
function memoryOf(h: GgufHeader): ModelEntry['memory'] {
  try {
    return memoryModel(h, modelInfo(h).hp);
  } catch {
    return null;
  }
}

/** Read the header of `path` and summarise it. Throws GgufError for a bad file. */
export async function readEntrySummary(path: string): Promise<EntrySummary> {
  const h = await readGgufHeader(path);
  const s = summarize(h);
  return { architecture: s.architecture, name: s.name, parameters: s.parameters, activeParameters: s.activeParameters, quantization: s.quantization, memory: memoryOf(h) };
}
