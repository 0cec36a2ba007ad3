// The `pantheon` command line: the same engine as the app, from a terminal.
// Exit status: 0 ok, 1 bad input (one line on stderr), 2 usage error.

import { GgufError, PantheonError, UsageError } from '../shared/errors.js';
import type { CliIo } from './command.js';
import { commands } from './commands/index.js';

function usage(): string {
  const lines = ['usage: pantheon COMMAND [ARGS]', '', 'commands:'];
  for (const c of commands) lines.push(`  ${c.usage}`, `      ${c.summary}`);
  return lines.join('\n');
}

const defaultIo: CliIo = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
  write: (t) => process.stdout.write(t),
  isTty: Boolean(process.stdout.isTTY),
  status: process.stderr.isTTY ? (line) => process.stderr.write(`\r${line}\x1b[K`) : undefined,
};

export async function main(argv: string[], io: CliIo = defaultIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    io.out(usage());
    return name ? 0 : 2;
  }
  const cmd = commands.find((c) => c.name === name);
  if (!cmd) {
    io.err(`error: unknown command "${name}"; run "pantheon help" for the list`);
    return 2;
  }
  // `pantheon COMMAND --help` (or -h, before a `--`): that command's usage, exit 0.
  const end = rest.indexOf('--');
  if ((end < 0 ? rest : rest.slice(0, end)).some((a) => a === '--help' || a === '-h')) {
    io.out(`usage: pantheon ${cmd.usage}\n\n${cmd.summary}`);
    return 0;
  }
  try {
    return await cmd.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`error: ${err.message}\nusage: pantheon ${cmd.usage}`);
      return 2;
    }
    const file = rest.find((a) => !a.startsWith('-'));
    const msg = err instanceof PantheonError ? err.message : err instanceof Error ? `internal error: ${err.message}` : String(err);
    const about = err instanceof GgufError ? (err.file ?? file) : undefined;
    io.err(`error: ${about ? `${about}: ` : ''}${msg.split('\n')[0]}`);
    return 1;
  }
}
