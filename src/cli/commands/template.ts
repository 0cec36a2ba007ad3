// `pantheon template MODEL [--messages FILE.json] [--system TEXT]`: the prompt exactly as the model
// would get it from a conversation, after the file's chat template (or the built-in fallback), with
// the notes that say why a fallback was used. The prompt goes to stdout unchanged; notes to stderr.

import { readFile } from 'node:fs/promises';
import { UsageError } from '../../shared/errors.js';
import { readGgufHeader } from '../../engine/gguf/file.js';
import { renderChat, templateInfoFromGguf, type ChatMessage } from '../../engine/chat/index.js';
import { optString, parseArgs } from '../args.js';
import type { Command } from '../command.js';

/** The conversation of a --messages file: a JSON array of {role, content} (or {"messages": […]}). */
async function readMessages(path: string): Promise<ChatMessage[]> {
  let v: unknown;
  try {
    v = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`--messages ${path}: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`);
  }
  const list = Array.isArray(v) ? v : (v as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(list)) throw new UsageError(`--messages ${path}: give a JSON array of {"role", "content"} messages`);
  return list as ChatMessage[];
}

export const templateCommand: Command = {
  name: 'template',
  usage: 'template MODEL [--messages FILE.json] [--system TEXT] [--no-generation-prompt]',
  summary: 'print the prompt the model gets for a conversation (default: one user message "Hello!"), after its chat template',
  async run(argv, io) {
    const args = parseArgs(argv, ['messages', 'system'], ['no-generation-prompt']);
    if (args.positionals.length !== 1) throw new UsageError('template takes one MODEL file');
    const file = optString(args, 'messages');
    const system = optString(args, 'system');
    const messages: ChatMessage[] = file ? await readMessages(file) : [{ role: 'user', content: 'Hello!' }];
    if (system !== undefined) messages.unshift({ role: 'system', content: system });
    const info = templateInfoFromGguf(await readGgufHeader(args.positionals[0]));
    const r = renderChat(info, messages, { addGenerationPrompt: !args.options.has('no-generation-prompt') });
    io.err(`template ${r.templateName === 'gguf' ? `from the file (${r.family})` : r.templateName}; stops at ${JSON.stringify(r.stopStrings)}`);
    for (const note of r.notes) io.err(`note: ${note}`);
    // The exact text: no newline added where the write is raw.
    if (io.write) io.write(r.text);
    else io.out(r.text);
    return 0;
  },
};
