// Greedy generation as the golden files record it (bench/record-goldens.mjs): temperature 0, a
// fixed seed, end-of-generation tokens fed back like any other.

import { DEFAULT_SAMPLING } from '../../src/engine/sample/index.js';
import type { Session } from '../../src/engine/session.js';

/** The session's n greedy tokens after `prompt`, from an empty cache. */
export async function greedyTokens(session: Session, prompt: number[], n: number): Promise<number[]> {
  const out: number[] = [];
  session.reset();
  const params = { ...DEFAULT_SAMPLING, temperature: 0, maxTokens: n, seed: 1 };
  for await (const ev of session.generate(prompt, params, undefined, { stopAtEog: false })) if (ev.kind === 'token') out.push(ev.id);
  return out;
}
