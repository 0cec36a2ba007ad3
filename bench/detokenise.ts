// The text of one generated token as session.ts makes it: the stream decoder's piece plus the
// decoded text of the five most likely tokens (the 'token' event's top). µs per token, best and
// median of 5 passes over 2000 tokens of the model's vocabulary.
//   node bin/run-ts.mjs bench/detokenise.ts MODEL.gguf
import { readGgufHeaderSync } from '../src/engine/gguf/file.js';
import { tokenizerFromGguf } from '../src/engine/tokenizer/index.js';

const tok = tokenizerFromGguf(readGgufHeaderSync(process.argv[2] ?? 'bench/models/qwen2-0.5b-Q8_0.gguf'));
const n = tok.vocabSize;
const ids = Array.from({ length: 2000 }, (_, i) => (i * 7919) % n);
const times: number[] = [];
let chars = 0;
// the first 64 tokens of a fresh process (code not yet optimised, as in a 64-token run), then warm passes
const first = (() => {
  const dec = tok.createStreamDecoder({ skipSpecial: true });
  const t0 = performance.now();
  for (let i = 0; i < 64; i++) {
    chars += dec.push(ids[i]).length;
    for (let j = 0; j < 5; j++) chars += tok.decode([ids[(i + j * 13) % 64]]).length;
  }
  return ((performance.now() - t0) * 1000) / 64;
})();
for (let pass = 0; pass < 5; pass++) {
  const dec = tok.createStreamDecoder({ skipSpecial: true });
  const t0 = performance.now();
  for (let i = 0; i < ids.length; i++) {
    chars += dec.push(ids[i]).length;
    for (let j = 0; j < 5; j++) chars += tok.decode([ids[(i + j * 13) % ids.length]]).length;
  }
  times.push(((performance.now() - t0) * 1000) / ids.length);
}
times.sort((a, b) => a - b);
console.log(`detokenise: first 64 tokens ${first.toFixed(2)} µs per token; warm ${times[0].toFixed(2)} / ${times[2].toFixed(2)} µs per token (best / median), ${chars} chars`);
