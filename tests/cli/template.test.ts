// `pantheon template` and `pantheon COMMAND --help`.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/command.js';
import { commands } from '../../src/cli/commands/index.js';
import { GgufType } from '../../src/engine/gguf/types.js';
import { kv, writeGguf } from '../../src/engine/gguf/writer.js';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string; raw: string }> {
  let out = '';
  let err = '';
  let raw = '';
  const io: CliIo = { out: (t) => { out += `${t}\n`; }, err: (t) => { err += `${t}\n`; }, write: (t) => { raw += t; }, isTty: false };
  const code = await main(argv, io);
  return { code, out, err, raw };
}

const dir = mkdtempSync(join(tmpdir(), 'pn-template-'));

/** A header-only GGUF with a ChatML vocabulary and `template` as tokenizer.chat_template. */
function model(name: string, template: string | null): string {
  const f = join(dir, `${name}.gguf`);
  const kvs = [
    kv.str('general.architecture', 'qwen2'),
    kv.str('general.name', name),
    kv.arr('tokenizer.ggml.tokens', GgufType.STRING, ['<|endoftext|>', '<|im_start|>', '<|im_end|>', 'a']),
    kv.u32('tokenizer.ggml.eos_token_id', 2),
  ];
  if (template !== null) kvs.push(kv.str('tokenizer.chat_template', template));
  writeFileSync(f, writeGguf(kvs, []));
  return f;
}

const ownTemplate = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}";

describe('pantheon template', () => {
  it('prints the prompt from the file\'s template, byte for byte', async () => {
    const msgs = join(dir, 'msgs.json');
    writeFileSync(msgs, JSON.stringify([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello.' }, { role: 'user', content: 'Bye' }]));
    const r = await run(['template', model('own', ownTemplate), '--messages', msgs, '--system', 'Be brief.']);
    expect(r.code).toBe(0);
    expect(r.raw).toBe('[system] Be brief.\n[user] Hi\n[assistant] Hello.\n[user] Bye\n[assistant] ');
    expect(r.err).toMatch(/^template from the file \(chatml\)/);
  });

  it('a hostile template: the built-in ChatML prompt and the notice', async () => {
    const r = await run(['template', model('hostile', '{% for i in range(100000000) %}x{% endfor %}')]);
    expect(r.code).toBe(0);
    expect(r.raw).toBe('<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n');
    expect(r.err).toMatch(/note: The file's chat template was too big \(range\(\) of 100000000 items, at most 10000\); using ChatML\./);
  });

  it('a bad --messages file is a usage error', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"messages": 3}');
    const r = await run(['template', model('plain', null), '--messages', bad]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^error: --messages .*bad\.json: give a JSON array/);
  });
});

describe('pantheon COMMAND --help', () => {
  it.each(commands.map((c) => c.name))('%s --help and -h print its usage and exit 0', async (name) => {
    for (const flag of ['--help', '-h']) {
      const r = await run([name, flag]);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(new RegExp(`^usage: pantheon ${name} `));
      expect(r.err).toBe('');
    }
  });

  it('after --, -h is an argument', async () => {
    const r = await run(['tokenize', '--', '-h']);
    expect(r.code).toBe(2);
  });
});
