// Qwen3.5 hybrids (gated DeltaNet + gated attention, deltanet.ts): Pantheon's own random variants
// against llama.cpp (bench/make-qwen35-models.ts, rebuilt here and checked by sha256 against the file
// llama.cpp ran), and a session's recurrent state across turns, regenerates, divergent prompts and a
// cancel: each must give the tokens of a fresh run.

import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QWEN35_MODELS, writeQwen35Model } from '../../bench/make-qwen35-models.js';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { Profile } from '../../src/engine/model/profile.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../../src/engine/sample/index.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { backendBound, compareTokens, logSoftmax, maxAbsDiff, readGolden, readLogprobs, referenceBound } from './golden.js';
import { ReferenceCpuBackend } from './reference-backend.js';

const greedy = (n: number): SamplingParams => ({ ...DEFAULT_SAMPLING, temperature: 0, maxTokens: n, seed: 1 });
/** As fidelity.test.ts: Pantheon's pick may be this far below llama.cpp's where they differ. */
const NEAR_TIE = 2e-3;

async function tokens(s: Session, prompt: number[], n: number, signal?: AbortSignal, onToken?: (count: number) => void): Promise<number[]> {
  const out: number[] = [];
  for await (const ev of s.generate(prompt, greedy(n), signal, { stopAtEog: false })) {
    if (ev.kind === 'token') {
      out.push(ev.id);
      onToken?.(out.length);
    }
  }
  return out;
}

const tmp = mkdtempSync(join(tmpdir(), 'pantheon-qwen35-'));
const report: string[] = [];
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  if (report.length) console.log(['qwen35 variants: max |logprob - llama.cpp| at the first step, greedy tokens equal', ...report].join('\n'));
});

const VARIANTS = Object.keys(QWEN35_MODELS).filter((n) => HAVE_SHARED && readGolden(n) !== null);

describe.skipIf(VARIANTS.length === 0)('qwen35 variants: llama.cpp\'s greedy tokens', () => {
  it.each(VARIANTS)('%s', async (name) => {
    const g = readGolden(name)!;
    const path = join(tmp, `${name}.gguf`);
    writeQwen35Model(name, path);
    expect(createHash('sha256').update(readFileSync(path)).digest('hex'), 'the rebuilt file differs from the one llama.cpp ran').toBe(g.sha256);
    const parts: string[] = [];
    for (const backend of ['reference', 'wasm', 'pool'] as const) {
      const lm = await LoadedModel.load(path, { contextSize: 512, backend: backend === 'reference' ? new ReferenceCpuBackend(g.cpu?.amx ?? true) : backend, threads: 2 });
      try {
        const session = new Session(lm);
        const ds: string[] = [];
        for (const c of g.cases) {
          expect(lm.tokenizer.encode(c.prompt, { addSpecial: true, parseSpecial: true })).toEqual(c.promptTokens);
          const d = maxAbsDiff(logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0)), readLogprobs(c.firstLogprobs));
          expect(d, `${backend} "${c.prompt}"`).toBeLessThan(backend === 'reference' ? referenceBound(g, c) : backendBound(g));
          session.reset();
          const agree = compareTokens(await tokens(session, c.promptTokens, c.n), c);
          if (backend === 'reference') expect(agree.same, `"${c.prompt}"`).toBe(c.n);
          else expect(agree.behind, `${backend} "${c.prompt}": step ${agree.same} differs from llama.cpp`).toBeLessThan(NEAR_TIE);
          ds.push(`${d.toExponential(1)} ${agree.same}/${c.n}`);
        }
        parts.push(`${backend} ${ds.join(' | ')}`);
      } finally {
        lm.dispose();
      }
    }
    report.push(`  ${name.padEnd(12)} ${parts.join('  ')}`);
  }, 120_000);
});

const SHARED_FILE = sharedModel('tiny-random/tiny-qwen35-s1.gguf');

describe.skipIf(!HAVE_SHARED || !existsSync(SHARED_FILE))('a session with recurrent state (tiny-qwen35-s1)', () => {
  let lm: LoadedModel;
  const P = [7454, 2402, 257, 640]; // "Once upon a time"
  beforeAll(async () => {
    lm = await LoadedModel.load(SHARED_FILE, { contextSize: 256, backend: 'wasm' });
  });
  afterAll(() => lm?.dispose());
  const fresh = (prompt: number[], n: number) => tokens(new Session(lm), prompt, n);

  it('a second turn continues the live state and gives a fresh run\'s tokens', async () => {
    const profile = new Profile();
    const s = new Session(lm, profile);
    const first = await tokens(s, P, 12);
    expect(s.used).toBe(P.length + 11);
    const turn2 = [...P, ...first, 464, 3139, 286];
    expect(await tokens(s, turn2, 12)).toEqual(await fresh(turn2, 12));
    expect(profile.tokens.prompt).toBe(P.length + 4); // the last reply token and the 3 new ones
  });

  it('a regenerate (the same prompt again) restores the state before its last token', async () => {
    const profile = new Profile();
    const s = new Session(lm, profile);
    const a = await tokens(s, P, 10);
    expect(profile.tokens.prompt).toBe(P.length);
    expect(await tokens(s, P, 10)).toEqual(a);
    expect(profile.tokens.prompt).toBe(P.length + 1); // only the last prompt token again
    expect(a).toEqual(await fresh(P, 10));
  });

  it('a prompt that leaves the cached tokens midway, or goes back a turn, gives a fresh run\'s tokens', async () => {
    const s = new Session(lm);
    const first = await tokens(s, P, 8);
    const turn2 = [...P, ...first, 15496, 11];
    const second = await tokens(s, turn2, 8);
    // an edit inside the first reply: the newest snapshot at or before the divergence (turn 1's) serves
    const edited = [...P, ...first.slice(0, 3), 318, 616];
    expect(await tokens(s, edited, 8)).toEqual(await fresh(edited, 8));
    // back to turn 2, then turn 1 again (its snapshot survived), then a prompt sharing nothing
    expect(await tokens(s, turn2, 8)).toEqual(second);
    expect(await tokens(s, P, 8)).toEqual(first);
    expect(await tokens(s, [464, 3139], 8)).toEqual(await fresh([464, 3139], 8));
  });

  it('a cancelled reply leaves a state the next prompt continues from', async () => {
    const s = new Session(lm);
    const ac = new AbortController();
    const part = await tokens(s, P, 20, ac.signal, (k) => k === 4 && ac.abort());
    expect(part).toHaveLength(4);
    const next = [...P, ...part, 11];
    expect(await tokens(s, next, 8)).toEqual(await fresh(next, 8));
  });

  it('the forward pass refuses a batch the recurrent state has not reached', () => {
    const st = createRunState(lm.model, 64);
    forward(lm.model, st, P, 0);
    expect(() => forward(lm.model, st, [11], P.length + 1)).toThrow(RangeError);
    expect(() => forward(lm.model, st, [11], P.length)).not.toThrow();
  });
});
