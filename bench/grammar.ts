// Benchmark: how much a JSON-schema grammar slows decoding (issue 20: a constrained reply must
// decode at >= 0.8x the speed of the same reply without one). Not a test: prints timings.
//
// 1. End to end (Session.generate), the same number of tokens with and without the grammar, the two
//    alternating round by round (the machine is shared); wall time per token from the first token
//    to the last, which includes sampling and the grammar (tokensPerS counts the forward pass only).
//    On tiny models nearly every drawn token is rejected, so this is the worst case: a full mask
//    and a second draw per token.
// 2. A cooperative model (it writes the JSON itself, so the first try passes): the grammar's cost
//    per token of a JSON reply under a real 128k vocabulary (llama 3's BPE), first-try check +
//    advance, and the full mask (fresh, and cached) for comparison.
// 3. Worst case on the 128k vocabulary: random logits (the draw is almost always rejected), the
//    grammar's extra sampling time per token (second draws by checking the likeliest tokens, the
//    whole mask when needed) against the plain sampler's.
// Usage: node bin/run-ts.mjs bench/grammar.ts [rounds]
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { compileGrammar, ConstrainedSampler, grammarVocab, GrammarMatcher, jsonSchemaToGbnf } from '../src/engine/grammar/index.js';
import { readGgufHeader } from '../src/engine/gguf/file.js';
import { createRng, DEFAULT_SAMPLING, Sampler, sharedWasmPasses, type SamplingParams } from '../src/engine/sample/index.js';
import { LoadedModel, Session } from '../src/engine/session.js';
import { tokenizerFromGguf } from '../src/engine/tokenizer/index.js';

const rounds = Number(process.argv[2] ?? 3);
const ROOT = join(import.meta.dirname, '..');
const SHARED = join(ROOT, '..', 'shared', 'models');

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 20 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    tags: { type: 'array', items: { type: 'string', maxLength: 8 }, maxItems: 4 },
    pet: { enum: ['cat', 'dog', 'none'] },
  },
  required: ['name', 'age', 'tags', 'pet'],
};
const GBNF = jsonSchemaToGbnf(SCHEMA);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function msPerToken(model: LoadedModel, sampling: SamplingParams, grammar: string | undefined): Promise<{ ms: number; n: number }> {
  const s = new Session(model);
  let first = 0, last = 0, n = 0;
  for await (const ev of s.generate(model.tokenizer.encode('Once upon a time', { addSpecial: true }), sampling, undefined, { grammar, stopAtEog: false })) {
    if (ev.kind !== 'token') continue;
    last = performance.now();
    if (n++ === 0) first = last;
  }
  return { ms: (last - first) / Math.max(1, n - 1), n };
}

console.log('1. end to end, worst case (tiny models: nearly every draw is rejected)');
for (const path of [join(ROOT, 'resources/models/stories260K.gguf'), join(SHARED, 'tiny-random/tiny-qwen3-s5.gguf')]) {
  if (!existsSync(path)) continue;
  const model = await LoadedModel.load(path, { contextSize: 512 });
  for (const temperature of [0, 1]) {
    const sampling: SamplingParams = { ...DEFAULT_SAMPLING, temperature, seed: 11, maxTokens: 120 };
    await msPerToken(model, sampling, GBNF); // warm up: the vocabulary trie, the automaton
    const withG: number[] = [], without: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const g = await msPerToken(model, sampling, GBNF);
      withG.push(g.ms);
      without.push((await msPerToken(model, { ...sampling, maxTokens: g.n }, undefined)).ms);
    }
    const a = median(withG), b = median(without);
    console.log(`  ${path.split('/').pop()} (vocab ${model.tokenizer.vocabSize}) temp ${temperature}: ${a.toFixed(2)} ms/token with the grammar, ${b.toFixed(2)} without → speed ratio ${(b / a).toFixed(2)}x`);
  }
  model.dispose();
}

console.log('2. cooperative model, llama 3 BPE vocabulary (128k): grammar cost per token of a JSON reply');
const vocabFile = join(SHARED, 'llama.cpp-vocab/ggml-vocab-llama-bpe.gguf');
if (existsSync(vocabFile)) {
  const tok = tokenizerFromGguf(await readGgufHeader(vocabFile));
  const vocab = grammarVocab(tok);
  let t = performance.now();
  new GrammarMatcher(compileGrammar(GBNF), vocab);
  console.log(`  vocabulary trie: ${(performance.now() - t).toFixed(0)} ms once per model`);
  const reply = '{ "name": "Ada Lovelace", "age": 36, "tags": ["math", "poet", "engine"], "pet": "cat" }';
  const ids = tok.encode(reply);
  const check: number[] = [], fresh: number[] = [], cached: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const g = compileGrammar(GBNF + `# round ${r}\n`); // a new automaton each round (nothing cached)
    const m1 = new GrammarMatcher(g, vocab);
    t = performance.now();
    for (const id of ids) {
      if (!m1.allows(id)) throw new Error(`the reply's token ${id} is rejected`);
      m1.accept(id);
    }
    check.push((performance.now() - t) / ids.length);
    const m2 = new GrammarMatcher(g, vocab);
    let f = 0, c = 0;
    for (const id of ids) {
      t = performance.now();
      m2.mask();
      f += performance.now() - t;
      t = performance.now();
      m2.mask();
      c += performance.now() - t;
      m2.accept(id);
    }
    fresh.push(f / ids.length);
    cached.push(c / ids.length);
  }
  console.log(`  ${ids.length} tokens: first-try check + advance ${(median(check) * 1000).toFixed(0)} µs/token; full mask ${median(fresh).toFixed(2)} ms/token fresh, ${(median(cached) * 1000).toFixed(0)} µs cached`);
  for (const decodeMs of [20, 50, 100]) {
    console.log(`  a model decoding at ${decodeMs} ms/token: ${(decodeMs / (decodeMs + median(check))).toFixed(3)}x when the first try passes, ${(decodeMs / (decodeMs + median(fresh))).toFixed(3)}x if every token needed a fresh mask`);
  }
}

console.log('3. worst case on the llama 3 vocabulary (128k): random logits, every draw rejected');
if (existsSync(vocabFile)) {
  const tok = tokenizerFromGguf(await readGgufHeader(vocabFile));
  const vocab = grammarVocab(tok);
  const steps = 60;
  const rng = createRng(1);
  const logits = Array.from({ length: steps }, () => Float32Array.from({ length: tok.vocabSize }, () => (rng() - 0.5) * 16));
  for (const [name, p] of [['greedy', { ...DEFAULT_SAMPLING, temperature: 0 }], ['top-k 40, temperature 1', { ...DEFAULT_SAMPLING, temperature: 1, seed: 2 }]] as const) {
    const extra: number[] = [];
    let masks = 0, redrawn = 0;
    for (let r = 0; r < rounds; r++) {
      const plain = new Sampler(p, sharedWasmPasses() ?? undefined);
      let t = performance.now();
      for (const l of logits) plain.sample(l, []);
      const a = performance.now() - t;
      const cs = new ConstrainedSampler(new Sampler(p, sharedWasmPasses() ?? undefined), new GrammarMatcher(compileGrammar(GBNF), vocab));
      t = performance.now();
      let n = 0;
      for (const l of logits) {
        if (cs.matcher.complete) break;
        cs.sample(l, [], null);
        n++;
      }
      extra.push((performance.now() - t) / n - a / steps);
      masks = cs.masks;
      redrawn = cs.redrawn;
    }
    console.log(`  ${name}: +${median(extra).toFixed(2)} ms/token over the plain sampler (last round: ${redrawn} second draws, ${masks} of them with the whole mask)`);
  }
}
