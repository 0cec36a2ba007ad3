// Reading llama.cpp's golden files (bench/record-goldens.mjs, format in bench/README.md).

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers.js';

export const GOLDEN_DIR = join(ROOT, 'tests', 'golden', 'llama.cpp');

export interface GoldenCase {
  prompt: string;
  n: number;
  promptTokens: number[];
  tokens: number[];
  eogAt: number | null;
  text: string;
  /** The .f32 file, or null where it was not kept (record-goldens.mjs --logprob-cases). */
  firstLogprobs: string | null;
  topLogits: { id: number; logprob: number }[][];
  flashAttentionOff?: { tokens: number[]; divergesAt: number | null; firstStepMaxAbsDiff: number };
}

export interface Golden {
  model: string;
  sha256: string;
  /** "node-llama-cpp X.Y.Z", the recorder. */
  llamaCpp: string;
  /** The recording CPU (absent in files recorded before the field: an AMX Xeon, bench/README.md). */
  recordedOn?: { cpu: string; amx: boolean };
  vocab: { size: number; bos: number | null; eos: number | null; addBos: boolean; addEos: boolean };
  /** llama.cpp's tokens for each standard prompt, with and without BOS. */
  tokenizer: { prompt: string; withBos: number[]; withoutBos: number[] }[];
  cases: GoldenCase[];
}

/** The golden file `<name>.json` (name: the model's base name, plus .<tag> for a tagged file), or null when it has not been recorded. */
export function readGolden(name: string): Golden | null {
  const p = join(GOLDEN_DIR, `${name}.json`);
  return existsSync(p) ? (JSON.parse(readFileSync(p, 'utf8')) as Golden) : null;
}

/** The first-step log-probabilities of a case (little-endian float32 per token id). */
export function readLogprobs(file: string | null): Float32Array {
  if (file === null) throw new Error('this golden case has no first-step log-probabilities (recorded with --logprob-cases)');
  const b = readFileSync(join(GOLDEN_DIR, file));
  const out = new Float32Array(b.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(i * 4);
  return out;
}

/** log-softmax of logits, in double. */
export function logSoftmax(logits: Float32Array): Float64Array {
  let max = -Infinity;
  for (const v of logits) if (v > max) max = v;
  let sum = 0;
  for (const v of logits) sum += Math.exp(v - max);
  const lse = max + Math.log(sum);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] - lse;
  return out;
}

/** max |ours - ref| over the ids where llama.cpp's log-probability is finite. */
export function maxAbsDiff(ours: Float64Array, ref: Float32Array): number {
  let d = 0;
  for (let i = 0; i < ref.length; i++) if (Number.isFinite(ref[i])) d = Math.max(d, Math.abs(ours[i] - ref[i]));
  return d;
}

/** Our greedy tokens against llama.cpp's: how many agree, and how close llama.cpp was where they part. */
export interface TokenAgreement {
  /** Length of the common prefix (= c.n when every token agrees). */
  same: number;
  /**
   * At the first difference: llama.cpp's top-1 log-probability minus its log-probability of our
   * token (Infinity when ours is not in its recorded top 10, 0 when every token agrees).
   */
  behind: number;
}

export function compareTokens(ours: number[], c: GoldenCase): TokenAgreement {
  let same = 0;
  while (same < c.n && ours[same] === c.tokens[same]) same++;
  if (same === c.n) return { same, behind: 0 };
  const top = c.topLogits[same];
  const mine = top.find((t) => t.id === ours[same]);
  return { same, behind: mine ? top[0].logprob - mine.logprob : Infinity };
}
