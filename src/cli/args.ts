// A tiny argument parser: positionals, --flag, --key value, --key=value, -k value.

import { UsageError } from '../shared/errors.js';

export interface ParsedArgs {
  positionals: string[];
  options: Map<string, string | true>;
}

/** `valued` lists the option names (without dashes) that take a value. */
export function parseArgs(argv: string[], valued: string[], flags: string[]): ParsedArgs {
  const positionals: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('-') && a.length > 1 && !/^-\d/.test(a)) {
      let name = a.replace(/^--?/, '');
      let value: string | undefined;
      const eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.slice(eq + 1);
        name = name.slice(0, eq);
      }
      if (valued.includes(name)) {
        if (value === undefined) {
          if (i + 1 >= argv.length) throw new UsageError(`option --${name} needs a value`);
          value = argv[++i];
        }
        options.set(name, value);
      } else if (flags.includes(name)) {
        if (value !== undefined) throw new UsageError(`option --${name} takes no value`);
        options.set(name, true);
      } else {
        throw new UsageError(`unknown option ${a}`);
      }
    } else {
      positionals.push(a);
    }
  }
  return { positionals, options };
}

export function optNumber(args: ParsedArgs, name: string, fallback: number, opts: { int?: boolean; min?: number; max?: number } = {}): number {
  const v = args.options.get(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (v === true || !Number.isFinite(n) || (opts.int && !Number.isInteger(n)) || (opts.min !== undefined && n < opts.min) || (opts.max !== undefined && n > opts.max)) {
    const range = opts.min !== undefined ? ` (at least ${opts.min}${opts.max !== undefined ? `, at most ${opts.max}` : ''})` : '';
    throw new UsageError(`option --${name} needs ${opts.int ? 'a whole number' : 'a number'}${range}, not "${String(v)}"`);
  }
  return n;
}

export function optString(args: ParsedArgs, name: string): string | undefined {
  const v = args.options.get(name);
  return typeof v === 'string' ? v : undefined;
}
