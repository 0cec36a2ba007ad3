// Embeddings (src/engine/embed.ts) against llama.cpp: the golden keeps llama.cpp's hidden state
// after the output norm at every position of two texts (bench/record-embeddings.mjs). Mean pooling
// must equal the normalised mean of those rows, last-token pooling the normalised last row.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embed, filePooling } from '../../src/engine/embed.js';
import { LoadedModel } from '../../src/engine/session.js';
import { ROOT } from '../helpers.js';
import { GOLDEN_DIR } from './golden.js';

interface EmbeddingGolden {
  cases: { text: string; tokens: number[]; rows: number[][] }[];
}
const golden = JSON.parse(readFileSync(join(GOLDEN_DIR, 'stories260K.embeddings.json'), 'utf8')) as EmbeddingGolden;

function normalised(v: ArrayLike<number>): number[] {
  const n = Math.hypot(...Array.from(v));
  return Array.from(v, (x) => x / n);
}

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => Math.max(...Array.from(a, (x, i) => Math.abs(x - b[i])));

let lm: LoadedModel;
beforeAll(async () => {
  lm = await LoadedModel.load(join(ROOT, 'resources/models/stories260K.gguf'), { contextSize: 128 });
});
afterAll(() => lm?.dispose());

describe('embed: llama.cpp\'s hidden states, pooled and normalised', () => {
  it.each(golden.cases.map((c) => [c.text, c] as const))('%s', (_text, c) => {
    expect(lm.tokenizer.encode(c.text, { addSpecial: true })).toEqual(c.tokens);
    expect(filePooling(lm)).toBe('mean'); // (a language model: no pooling key)
    const dim = lm.hparams.nEmbd;
    const mean = new Array<number>(dim).fill(0);
    for (const r of c.rows) for (let j = 0; j < dim; j++) mean[j] += r[j] / c.rows.length;
    const ours = embed(lm, c.tokens);
    expect(Math.hypot(...ours)).toBeCloseTo(1, 6);
    expect(maxDiff(ours, normalised(mean))).toBeLessThan(1e-4);
    expect(maxDiff(embed(lm, c.tokens, 'last'), normalised(c.rows[c.rows.length - 1]))).toBeLessThan(1e-4);
    expect(maxDiff(embed(lm, c.tokens, 'cls'), normalised(c.rows[0]))).toBeLessThan(1e-4);
  });
});
