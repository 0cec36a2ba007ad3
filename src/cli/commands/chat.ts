// `pantheon chat MODEL`: an interactive chat in the terminal with the model's own chat template.
// /exit leaves, /reset starts a new conversation, Ctrl+C stops a reply (at the prompt: leaves).
// A reasoning model's thinking is printed before its answer, dimmed on a terminal, and kept out of
// the next turn's prompt as the model's template says.

import { createInterface } from 'node:readline';
import { ContextFullError, UsageError } from '../../shared/errors.js';
import { renderChat, type ChatMessage } from '../../engine/chat/index.js';
import { Session } from '../../engine/session.js';
import { optString, parseArgs } from '../args.js';
import type { Command } from '../command.js';
import { GRAMMAR_OPTIONS, grammarOption } from '../grammar-option.js';
import { MODEL_OPTIONS, SAMPLING_OPTIONS, loadModel, samplingOptions, statsLine } from './run.js';

const DIM = '\x1b[2m';
const UNDIM = '\x1b[22m';

/**
 * Prints a reply as it streams: its reasoning (dimmed when `tty`, plain text otherwise), a blank
 * line, then its answer; `end` closes the reply with a newline (and the dimming, if still open).
 */
export function replyPrinter(write: (text: string) => void, tty: boolean): { token(reasoning: string, answer: string): void; end(): void } {
  let thinking = false;
  return {
    token(reasoning, answer) {
      if (reasoning) {
        if (!thinking && tty) write(DIM);
        thinking = true;
        write(reasoning);
      }
      if (answer) {
        if (thinking) write(`${tty ? UNDIM : ''}\n\n`);
        thinking = false;
        write(answer);
      }
    },
    end() {
      if (thinking && tty) write(UNDIM);
      thinking = false;
      write('\n');
    },
  };
}

export const chatCommand: Command = {
  name: 'chat',
  usage: 'chat MODEL [--system TEXT] [-n N] [--temp T] [--top-k K] [--top-p P] [--seed S] [--threads N] [--ctx N] [--backend scalar|wasm|pool|webgpu] [--gpu-layers N|auto|all] [--show-prompt] [--json-schema FILE | --grammar FILE]',
  summary: 'chat with the model in the terminal (its chat template; /exit, /reset; Ctrl+C stops a reply)',
  async run(argv, io) {
    const args = parseArgs(argv, ['system', ...MODEL_OPTIONS, ...SAMPLING_OPTIONS, ...GRAMMAR_OPTIONS], ['show-prompt']);
    if (args.positionals.length !== 1) throw new UsageError('chat takes one MODEL file');
    const sampling = samplingOptions(args, -1);
    const system = optString(args, 'system');
    const showPrompt = args.options.has('show-prompt');
    const grammar = grammarOption(args);
    const write = io.write ?? ((t: string) => io.out(t));

    const model = await loadModel(args.positionals[0], args, io);
    const session = new Session(model);
    const fresh = (): ChatMessage[] => (system ? [{ role: 'system', content: system }] : []);
    let messages = fresh();

    // Say which template is used (and why, when it is a fallback) before the first turn.
    const probe = renderChat(model.templateInfo, [...fresh(), { role: 'user', content: '' }]);
    io.err(`${model.summary.name ?? args.positionals[0]} (${model.summary.architecture}, ${model.summary.quantization}), context ${model.contextSize}, template ${probe.templateName === 'gguf' ? `from the file (${probe.family})` : probe.templateName}`);
    for (const note of probe.notes) io.err(`note: ${note}`);
    io.err('/exit to leave, /reset for a new conversation, Ctrl+C to stop a reply');

    // Lines are queued as they arrive, so piped input is not lost while a reply is generated.
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: io.isTty });
    rl.setPrompt('> ');
    const lines: string[] = [];
    let wake: (() => void) | null = null;
    let replying: AbortController | null = null;
    let closed = false;
    rl.on('line', (l) => {
      lines.push(l);
      wake?.();
    });
    rl.on('close', () => {
      closed = true;
      wake?.();
    });
    rl.on('SIGINT', () => {
      if (replying) replying.abort();
      else rl.close();
    });
    const ask = async (): Promise<string | null> => {
      if (io.isTty && lines.length === 0) rl.prompt();
      while (lines.length === 0 && !closed) await new Promise<void>((resolve) => { wake = resolve; });
      wake = null;
      return lines.shift() ?? null;
    };

    try {
      for (;;) {
        const line = await ask();
        if (line === null) break;
        const text = line.trim();
        if (text === '') continue;
        if (text === '/exit' || text === '/quit') break;
        if (text === '/reset') {
          messages = fresh();
          session.reset();
          io.err('(new conversation)');
          continue;
        }
        messages.push({ role: 'user', content: line });
        let reply = '';
        let reasoning = '';
        const printer = replyPrinter(write, io.isTty);
        replying = new AbortController();
        try {
          for await (const ev of session.chat(messages, sampling, replying.signal, { grammar })) {
            if (ev.kind === 'prompt' && showPrompt) io.err(`--- prompt (${ev.tokens.length} tokens) ---\n${ev.text}\n---`);
            else if (ev.kind === 'token') {
              reply += ev.text;
              reasoning += ev.reasoning;
              printer.token(ev.reasoning, ev.text);
            } else if (ev.kind === 'done') {
              printer.end();
              const { stopReason, reasoningTokens = 0, reasoningMs = 0 } = ev.stats;
              if (stopReason === 'context') io.err('(the context is full: /reset to start a new conversation)');
              if (reasoningTokens > 0) io.err(`[thought for ${(reasoningMs / 1000).toFixed(1)} s, ${reasoningTokens} tokens]`);
              io.err(statsLine(stopReason, ev.stats));
            }
          }
        } catch (err) {
          if (!(err instanceof ContextFullError)) throw err;
          io.err(`${err.message} Type /reset.`);
          messages.pop();
          continue;
        } finally {
          replying = null;
        }
        // The answer is the reply's content; the template decides whether its reasoning is shown again.
        messages.push(reasoning ? { role: 'assistant', content: reply, reasoning } : { role: 'assistant', content: reply });
      }
    } finally {
      rl.close();
      model.dispose();
    }
    return 0;
  },
};
