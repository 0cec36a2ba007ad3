// Grammar-constrained generation end to end: on the demo model (stories260K, SPM vocabulary of 512)
// and a tiny random model with a GPT-2 BPE vocabulary, at temperature 0 and 1, every output of a
// JSON schema parses and satisfies the schema (checked by validate.ts, which reads the schema, not
// the grammar), and a GBNF grammar's outputs match a hand-written regular expression.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_OBJECT_GBNF, jsonSchemaToGbnf } from '../../src/engine/grammar/index.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../../src/engine/sample/index.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { ROOT, sharedModel } from '../helpers.js';
import { validate } from './validate.js';

const MODELS = [join(ROOT, 'resources/models/stories260K.gguf'), sharedModel('tiny-random/tiny-qwen3-s5.gguf')].filter((p) => existsSync(p));

const SCHEMAS: Record<string, Record<string, unknown>> = {
  person: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 12 },
      age: { type: 'integer', minimum: 0, maximum: 120 },
      pet: { enum: ['cat', 'dog', null] },
      tags: { type: 'array', items: { type: 'string', maxLength: 5 }, minItems: 1, maxItems: 3 },
    },
    required: ['name', 'age', 'tags'],
  },
  refs: {
    $defs: { point: { type: 'object', properties: { x: { type: 'integer', minimum: -9, maximum: 9 }, y: { type: 'boolean' } }, required: ['x', 'y'] } },
    type: 'object',
    properties: { kind: { const: 'poly' }, points: { type: 'array', items: { $ref: '#/$defs/point' }, minItems: 2, maxItems: 3 }, label: { anyOf: [{ type: 'null' }, { type: 'string', maxLength: 4 }] } },
    required: ['kind', 'points', 'label'],
  },
};

const sampling = (temperature: number, seed: number, maxTokens = 200): SamplingParams => ({ ...DEFAULT_SAMPLING, temperature, seed, maxTokens });

async function run(model: LoadedModel, gbnf: string, s: SamplingParams, prompt = 'Once upon a time'): Promise<{ text: string; reason: string }> {
  const session = new Session(model);
  let text = '';
  let reason = '';
  for await (const ev of session.generate(model.tokenizer.encode(prompt, { addSpecial: true }), s, undefined, { grammar: gbnf })) {
    if (ev.kind === 'token') text += ev.text;
    else if (ev.kind === 'done') reason = ev.reason;
  }
  return { text, reason };
}

describe.each(MODELS)('constrained generation on %s', (path) => {
  let model: LoadedModel;
  beforeAll(async () => {
    model = await LoadedModel.load(path, { contextSize: 512 });
  });
  afterAll(() => model?.dispose());

  // the demo model is fast: both temperatures, both schemas; the (slower) 50k-vocabulary random
  // model: one schema at temperature 1 (its greedy and $ref paths are the demo model's too)
  const demo = path.endsWith('stories260K.gguf');
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    const cases = demo ? [[0, 1], [1, 7]] : name === 'person' ? [[1, 7]] : [];
    if (cases.length > 0) it.each(cases)(`schema ${name}: temperature %d seed %d → parses and validates`, async (temp, seed) => {
      const { text, reason } = await run(model, jsonSchemaToGbnf(schema), sampling(temp, seed));
      expect(reason).toBe('eos'); // bounded schema: the grammar completes well within 200 tokens
      const value = JSON.parse(text) as unknown;
      expect(validate(value, schema), text).toBeNull();
    });
  }

  it('json_object at temperature 1: an object, or (cut at max tokens) a prefix of one', async () => {
    for (const seed of [3, 4]) {
      const { text, reason } = await run(model, JSON_OBJECT_GBNF, sampling(1, seed, demo ? 40 : 8));
      expect(text.trimStart().startsWith('{')).toBe(true);
      if (reason === 'eos') expect(typeof JSON.parse(text)).toBe('object');
      else expect(reason).toBe('length');
    }
  });

  it('a GBNF grammar: outputs match the same language written as a regular expression', async () => {
    const gbnf = 'root ::= "Answer: " ("yes" | "no") (", " [0-9]{1,3})? "."\n';
    for (const [t, seed] of demo ? [[0, 1], [1, 2]] : [[1, 2]]) {
      const { text, reason } = await run(model, gbnf, sampling(t, seed));
      expect(text).toMatch(/^Answer: (yes|no)(, [0-9]{1,3})?\.$/);
      expect(reason).toBe('eos');
    }
  });
});
