// `pantheon tokenize`: ids with their vocab pieces, as text or JSON.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { HAVE_VOCABS, idsOf, loadVectors, vocabPath } from './vectors.js';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; }, isTty: false });
  return { code, out, err };
}

describe.skipIf(!HAVE_VOCABS)('pantheon tokenize', () => {
  it('prints one id<TAB>"piece" line per token', async () => {
    const r = await run(['tokenize', vocabPath('llama-spm'), 'Hello world']);
    expect(r.code).toBe(0);
    const ids = idsOf(loadVectors('llama-spm'), 'Hello world');
    expect(r.out.trim().split('\n')).toEqual([`${ids[0]}\t"▁Hello"`, `${ids[1]}\t"▁world"`]);
  });

  it('--json --add-special --parse-special', async () => {
    const r = await run(['tokenize', vocabPath('llama-bpe'), '<|eot_id|>Hello', '--json', '--add-special', '--parse-special']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      tokens: [128000, 128009, ...idsOf(loadVectors('llama-bpe'), 'Hello')],
      pieces: ['<|begin_of_text|>', '<|eot_id|>', 'Hello'],
    });
  });

  it('fails cleanly on an unsupported tokenizer and on bad usage', async () => {
    const bert = await run(['tokenize', vocabPath('bert-bge'), 'x']);
    expect(bert.code).toBe(1);
    expect(bert.err).toMatch(/not supported/);
    expect((await run(['tokenize', vocabPath('gpt-2')])).code).toBe(2);
  });
});
