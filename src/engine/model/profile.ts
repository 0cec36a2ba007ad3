// Time per operation of the forward pass and the generation loop (`pantheon run --profile`).
//
// The clock is a chain of marks: mark(op) charges the time since the previous mark to `op`, so the
// ops add up to the wall time between begin() and the last mark, and nothing is lost between
// them. The forward pass and Session hold a `Profile | null` and call mark only when it is set, so
// a run without --profile pays one null check per op. Matrix products are synchronous (the pool
// backend waits for its workers), so their time includes waking the workers and gathering rows; a
// pool reports the calling thread's wait inside them (addWait), printed under the table.

export type Phase = 'prompt' | 'gen';

import type { ProfileView } from '../../shared/contract.js';

interface Cell {
  ms: number;
  calls: number;
}

export class Profile {
  private readonly cells: Record<Phase, Map<string, Cell>> = { prompt: new Map(), gen: new Map() };
  /** Of the products' time, what the calling thread spent waiting for pool workers (addWait). */
  private readonly waits: Record<Phase, number> = { prompt: 0, gen: 0 };
  private t = 0;
  /** Milliseconds per layer and phase (forward.ts says which layer its ops belong to). */
  private readonly layers: Record<Phase, Map<number, number>> = { prompt: new Map(), gen: new Map() };
  /** The layer mark() also charges (-1: none: embedding, output, sampling). */
  layer = -1;
  /** Which column mark() charges. */
  phase: Phase = 'prompt';
  /** Tokens evaluated per phase (prompt tokens, generated tokens), for the per-token column. */
  readonly tokens: Record<Phase, number> = { prompt: 0, gen: 0 };

  /** Start the clock (time before this is not charged to any op). */
  begin(): void {
    this.t = performance.now();
  }

  /** Charge the time since the last mark (or begin) to `op`. */
  mark(op: string): void {
    const now = performance.now();
    const c0 = this.t;
    const m = this.cells[this.phase];
    const c = m.get(op);
    if (c) {
      c.ms += now - this.t;
      c.calls++;
    } else {
      m.set(op, { ms: now - this.t, calls: 1 });
    }
    if (this.layer >= 0) {
      const lm = this.layers[this.phase];
      lm.set(this.layer, (lm.get(this.layer) ?? 0) + (now - c0));
    }
    this.t = now;
  }

  /** A pool backend's wait for its workers (MatBackend.waitMeter), inside the current op. */
  addWait(ms: number): void {
    this.waits[this.phase] += ms;
  }

  /** Milliseconds the calling thread waited for pool workers in `phase`. */
  waited(phase: Phase): number {
    return this.waits[phase];
  }

  /** Milliseconds charged to `op` in `phase` (0 when never marked). */
  ms(op: string, phase: Phase): number {
    return this.cells[phase].get(op)?.ms ?? 0;
  }

  /** The counters as data (the app's Profile panel): per op and per layer, prompt and generation. */
  view(): ProfileView {
    const ops = new Set([...this.cells.prompt.keys(), ...this.cells.gen.keys()]);
    const layers = new Set([...this.layers.prompt.keys(), ...this.layers.gen.keys()]);
    return {
      ops: [...ops].map((op) => ({ op, promptMs: this.ms(op, 'prompt'), genMs: this.ms(op, 'gen'), genCalls: this.cells.gen.get(op)?.calls ?? 0 }))
        .sort((a, b) => b.promptMs + b.genMs - (a.promptMs + a.genMs)),
      layers: [...layers].sort((a, b) => a - b).map((layer) => ({ layer, promptMs: this.layers.prompt.get(layer) ?? 0, genMs: this.layers.gen.get(layer) ?? 0 })),
      tokens: { ...this.tokens },
    };
  }

  /** Total milliseconds charged in `phase`. */
  total(phase: Phase): number {
    let s = 0;
    for (const c of this.cells[phase].values()) s += c.ms;
    return s;
  }

  /**
   * The table: one row per op, slowest first (by prompt + generation time), with milliseconds and
   * share of each phase, and milliseconds per generated token.
   */
  table(): string {
    const ops = new Set([...this.cells.prompt.keys(), ...this.cells.gen.keys()]);
    const rows = [...ops].sort((a, b) => this.ms(b, 'prompt') + this.ms(b, 'gen') - (this.ms(a, 'prompt') + this.ms(a, 'gen')));
    const tp = this.total('prompt');
    const tg = this.total('gen');
    const nGen = this.tokens.gen;
    const pct = (x: number, t: number) => (t > 0 ? `${((100 * x) / t).toFixed(1)}%` : '-');
    const head = ['op', 'prompt ms', '%', 'gen ms', '%', 'gen ms/token', 'gen calls/token'];
    const body = rows.map((op) => {
      const p = this.ms(op, 'prompt');
      const g = this.ms(op, 'gen');
      const calls = this.cells.gen.get(op)?.calls ?? 0;
      return [op, p.toFixed(1), pct(p, tp), g.toFixed(1), pct(g, tg), nGen ? (g / nGen).toFixed(3) : '-', nGen ? (calls / nGen).toFixed(1) : '-'];
    });
    body.push([
      'total', tp.toFixed(1), '', tg.toFixed(1), '', nGen ? (tg / nGen).toFixed(3) : '-', '',
    ]);
    const tail = `prompt: ${this.tokens.prompt} tokens${tp > 0 ? `, ${((this.tokens.prompt * 1000) / tp).toFixed(1)} tok/s` : ''}; generation: ${nGen} tokens${tg > 0 ? `, ${((nGen * 1000) / tg).toFixed(1)} tok/s` : ''}`;
    const wp = this.waits.prompt, wg = this.waits.gen;
    const waits = wp + wg > 0 ? `\nof the products' time, the calling thread waited for its workers: ${wp.toFixed(1)} ms (prompt, ${pct(wp, tp)}), ${wg.toFixed(1)} ms (generation, ${pct(wg, tg)}${nGen ? `, ${(wg / nGen).toFixed(3)} ms/token` : ''})` : '';
    const all = [head, ...body];
    const width = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
    const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(width[i]) : c.padStart(width[i]))).join('  ');
    const layers = this.view().layers;
    const perLayer = layers.length
      ? `\nper layer (prompt ms / gen ms): ${layers.map((l) => `${l.layer}: ${l.promptMs.toFixed(1)}/${l.genMs.toFixed(1)}`).join(', ')}`
      : '';
    return [line(head), width.map((w) => '-'.repeat(w)).join('  '), ...body.map(line), tail + waits + perLayer].join('\n');
  }
}
