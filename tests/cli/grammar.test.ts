// `pantheon run --json-schema FILE` / `--grammar FILE` on the demo model: the text parses and
// matches the schema (validate.ts reads the schema), or matches the grammar's language written as a
// regular expression; bad files are one-line usage errors before the model loads.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/commands/run.js';
import type { CliIo } from '../../src/cli/command.js';
import { ROOT } from '../helpers.js';
import { validate } from '../grammar/validate.js';

const MODEL = join(ROOT, 'resources/models/stories260K.gguf');
const dir = mkdtempSync(join(tmpdir(), 'pantheon-grammar-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const io: CliIo = { out: (t) => (out += t), err: () => {}, isTty: false };
  const code = await runCommand.run(argv, io);
  return { code, out };
}

describe('pantheon run: structured output', () => {
  const schema = { type: 'object', properties: { who: { type: 'string', maxLength: 8 }, n: { type: 'integer', minimum: 0, maximum: 9 } }, required: ['who', 'n'] };
  const schemaFile = join(dir, 'schema.json');
  writeFileSync(schemaFile, JSON.stringify(schema));
  const gbnfFile = join(dir, 'yes-no.gbnf');
  writeFileSync(gbnfFile, 'root ::= ("yes" | "no") " " [a-z]{1,4}\n');

  it.each(['0', '1'])('--json-schema at --temp %s: the text parses and matches', async (temp) => {
    const { code, out } = await run([MODEL, '-p', 'Once upon a time', '--temp', temp, '--seed', '3', '-n', '200', '--json', '--json-schema', schemaFile]);
    expect(code).toBe(0);
    const r = JSON.parse(out) as { text: string; stop_reason: string };
    expect(validate(JSON.parse(r.text), schema), r.text).toBeNull();
    expect(r.stop_reason).toBe('eos');
  });

  it('--grammar: the text is in the language', async () => {
    const { out } = await run([MODEL, '-p', 'Once', '--temp', '1', '--seed', '4', '-n', '50', '--json', '--grammar', gbnfFile]);
    expect((JSON.parse(out) as { text: string }).text).toMatch(/^(yes|no) [a-z]{1,4}$/);
  });

  it('bad files: usage errors naming the problem', async () => {
    const bad = join(dir, 'bad.gbnf');
    writeFileSync(bad, 'root ::= "a" | undefined-rule\n');
    await expect(run([MODEL, '-p', 'x', '--grammar', bad])).rejects.toThrow(/Undefined rule identifier 'undefined-rule'/);
    await expect(run([MODEL, '-p', 'x', '--json-schema', join(dir, 'missing.json')])).rejects.toThrow(/cannot read --json-schema .*ENOENT/);
    writeFileSync(bad, '{"type": ');
    await expect(run([MODEL, '-p', 'x', '--json-schema', bad])).rejects.toThrow(/is not JSON/);
    await expect(run([MODEL, '-p', 'x', '--json-schema', schemaFile, '--grammar', gbnfFile])).rejects.toThrow(/not both/);
  });
});
