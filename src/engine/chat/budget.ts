// Limits on rendering a model file's chat template. The template is untrusted input: a
// `{% for i in range(100000000) %}` or two nested loops would otherwise run for minutes and take
// gigabytes inside the engine process, and Stop could not interrupt it (rendering is synchronous).
//
// @huggingface/jinja's Interpreter evaluates every node through its public `evaluate` method, so
// one wrap of that method (installed once, below) checks the deadline at every step of a render
// (a step can be costly: one `range` call or a loop with an empty body), and every string a node evaluates to is counted against a cap on the text
// produced (a crude memory bound: nested blocks count their text once per level, so the cap is well
// above any real prompt). The render's `range` global is replaced (when the Program node is
// evaluated) by one that refuses huge lists, since the library's builds the whole array in one call. Outside `withTemplateBudget` the wrap only
// checks a null. Not counted: a loop's iterations that evaluate no node (an empty body), so such a
// loop over a long string can pass the deadline by its own length.

import { Environment, Interpreter } from '@huggingface/jinja';

export interface TemplateLimits {
  /** Wall-clock limit of one render, in ms. */
  deadlineMs: number;
  /** Characters of text all nodes together may produce (see the top). */
  maxChars: number;
  /** Longest list `range()` may make. */
  maxRange: number;
}

export const TEMPLATE_LIMITS: TemplateLimits = { deadlineMs: 2000, maxChars: 64 * 1024 * 1024, maxRange: 10_000 };

/** Thrown when a render passes a limit; `kind` says which, for the notice. */
export class TemplateLimitError extends Error {
  override name = 'TemplateLimitError';
  constructor(readonly kind: 'time' | 'size', message: string) {
    super(message);
  }
}

interface Budget {
  limits: TemplateLimits;
  end: number;
  steps: number;
  chars: number;
  /** The capped range() as a runtime value, put in the render's global scope. */
  range: unknown;
}

let active: Budget | null = null;

// One wrap of Interpreter.prototype.evaluate, for every render in this process.
const proto = Interpreter.prototype as unknown as { evaluate(this: Interpreter, s: unknown, env: unknown): { type: string; value: unknown } };
const evaluate = proto.evaluate;
proto.evaluate = function budgeted(s, env) {
  const b = active;
  if (b !== null && ++b.steps > 0 && Date.now() > b.end) {
    throw new TemplateLimitError('time', `over ${b.limits.deadlineMs / 1000} s`);
  }
  if (b !== null && (s as { type?: string } | undefined)?.type === 'Program') (env as Environment).variables.set('range', b.range as never);
  const v = evaluate.call(this, s, env);
  if (b !== null && v.type === 'StringValue') {
    b.chars += (v.value as string).length;
    if (b.chars > b.limits.maxChars) throw new TemplateLimitError('size', `over ${b.limits.maxChars >> 20} MB of text`);
  }
  return v;
};

/** range() as Python has it, refusing lists longer than the budget's maxRange. */
function cappedRange(maxRange: number) {
  return (start: number, stop?: number, step = 1): number[] => {
    if (stop === undefined) [start, stop] = [0, start];
    if (step === 0) throw new Error('range() step must not be zero');
    const n = Math.max(0, Math.ceil((stop - start) / step));
    if (!(n <= maxRange)) throw new TemplateLimitError('size', `range() of ${n} items, at most ${maxRange}`);
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) out[i] = start + i * step;
    return out;
  };
}

/** `fn` as a jinja runtime value (the library converts it when it is declared in a scope). */
function runtimeValue(fn: unknown): unknown {
  const scratch = new Environment();
  scratch.set('f', fn);
  return scratch.lookupVariable('f');
}

/** Run `render` (one synchronous template render) under `limits`. Throws TemplateLimitError past one. */
export function withTemplateBudget<T>(limits: TemplateLimits, render: () => T): T {
  const outer = active;
  active = { limits, end: Date.now() + limits.deadlineMs, steps: 0, chars: 0, range: runtimeValue(cappedRange(limits.maxRange)) };
  try {
    return render();
  } finally {
    active = outer;
  }
}
