// Every CLI command, in the order `pantheon help` lists them. Add a command by adding its file here.

import type { Command } from '../command.js';
import { diffCommand } from './diff.js';
import { dumpCommand } from './dump.js';
import { imatrixCommand } from './imatrix.js';
import { chatCommand } from './chat.js';
import { inspectCommand } from './inspect.js';
import { quantizeCommand } from './quantize.js';
import { runCommand } from './run.js';
import { serveCommand } from './serve.js';
import { statsCommand } from './stats.js';
import { templateCommand } from './template.js';
import { tensorsCommand } from './tensors.js';
import { tokenizeCommand } from './tokenize.js';

export const commands: Command[] = [
  inspectCommand,
  tensorsCommand,
  dumpCommand,
  statsCommand,
  diffCommand,
  quantizeCommand,
  imatrixCommand,
  tokenizeCommand,
  templateCommand,
  runCommand,
  chatCommand,
  serveCommand,
];
