// Every CLI command, in the order `pantheon help` lists them. Add a command by adding its file here.

import type { Command } from '../command.js';
import { inspectCommand } from './inspect.js';
import { tensorsCommand } from './tensors.js';

export const commands: Command[] = [
  inspectCommand,
  tensorsCommand,
];
