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
import { parseGgufHeader } from '../../src/engine/gguf/parse.js';
import { GgufType, type GgufHeader } from '../../src/engine/gguf/types.js';
import { kv, writeGguf, type WriterKv } from '../../src/engine/gguf/writer.js';
import { imropeTextPairs } from '../../src/engine/model/deltanet.js';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { modelHparams } from '../../src/engine/model/hparams.js';
import { kvCacheBytes } from '../../src/engine/backend/types.js';
import { Profile } from '../../src/engine/model/profile.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../../src/engine/sample/index.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { ModelError } from '../../src/shared/errors.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { compareTokens, logSoftmax, maxAbsDiff, readGolden, readLogprobs, type GoldenCase } from './golden.js';
import { ReferenceCpuBackend } from './reference-backend.js';

const greedy = (n: number): SamplingParams => ({ ...DEFAULT_SAMPLING, temperature: 0, maxTokens: n, seed: 1 });
/** As fidelity.test.ts: Pantheon's pick may be this far below llama.cpp's where they differ. */
const NEAR_TIE = 2e-3;
/** llama.cpp's own first-step spread between its two attention paths (flashAttentionOff). */
const spread = (c: GoldenCase) => c.flashAttentionOff?.firstStepMaxAbsDiff ?? 0;
/**
 * First-step bounds (goldens recorded without AMX, as fidelity.test.ts). The double rounds x to f16
 * as llama.cpp did, yet an ulp of difference upstream (ggml's SIMD exp in SiLU, its sums' order)
 * still flips some of those roundings, and the per-head RMSNorm of the linear attention's output
 * amplifies them: on some prompts it is off by up to 2.3 times llama.cpp's own spread between its
 * two attention paths (qwen35moe-alt "Once upon a time": 3.5e-3 against 1.5e-3), on others by
 * 1e-5 or less, and its greedy tokens are llama.cpp's on every prompt. Bound: 3 times the spread.
 * Pantheon's backends keep x in f32: measured up to 4.1e-2 (qwen35-alt "The capital of France is").
 */
const referenceBound = (c: GoldenCase) => Math.max(1e-3, 3 * spread(c));
const BACKEND_BOUND = 5e-2;

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
      const lm = await LoadedModel.load(path, { contextSize: 512, backend: backend === 'reference' ? new ReferenceCpuBackend({ amx: g.recordedOn?.amx ?? true }) : backend, threads: 2 });
      try {
        const session = new Session(lm);
        const ds: string[] = [];
        for (const c of g.cases) {
          expect(lm.tokenizer.encode(c.prompt, { addSpecial: true, parseSpecial: true })).toEqual(c.promptTokens);
          const d = maxAbsDiff(logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0)), readLogprobs(c.firstLogprobs));
          expect(d, `${backend} "${c.prompt}"`).toBeLessThan(backend === 'reference' ? referenceBound(c) : BACKEND_BOUND);
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

// A prompt of 89 (94) tokens: llama.cpp's prompt batch takes its tiled attention, Pantheon's the f32 one.
const LONG: [string, string][] = (['tiny-qwen35-s1', 'tiny-qwen35moe-s1'] as const)
  .map((m): [string, string] => [`${m}.long`, sharedModel(`tiny-random/${m}.gguf`)])
  .filter(([name, file]) => HAVE_SHARED && existsSync(file) && readGolden(name) !== null);

describe.skipIf(LONG.length === 0)('qwen35 shared models, a long prompt: llama.cpp\'s greedy tokens', () => {
  it.each(LONG)('%s', async (name, file) => {
    const g = readGolden(name)!;
    const c = g.cases[0];
    const parts: string[] = [];
    for (const backend of ['reference', 'wasm'] as const) {
      const lm = await LoadedModel.load(file, { contextSize: 512, backend: backend === 'reference' ? new ReferenceCpuBackend({ amx: g.recordedOn?.amx ?? true }) : backend });
      try {
        expect(lm.tokenizer.encode(c.prompt, { addSpecial: true, parseSpecial: true })).toEqual(c.promptTokens);
        const d = maxAbsDiff(logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0)), readLogprobs(c.firstLogprobs));
        const agree = compareTokens(await tokens(new Session(lm), c.promptTokens, c.n), c);
        parts.push(`${backend} ${d.toExponential(1)} ${agree.same}/${c.n}${agree.same < c.n ? ` (behind ${agree.behind.toExponential(1)})` : ''}`);
        // tiny-qwen35-s1's production bound as in fidelity.test.ts (MEASURED): 0.1
        expect(d, backend).toBeLessThan(backend === 'reference' ? referenceBound(c) : 0.1);
        if (backend === 'reference') expect(agree.same).toBe(c.n);
        // x in f32 where llama.cpp rounds it to f16: tiny-qwen35-s1 leaves llama.cpp at step 16, where
        // its top-1 leads by 1.6e-2, and so does the double when it keeps x in f32 (same step, same gap)
        else expect(agree.same, `${backend}: step ${agree.same} differs from llama.cpp`).toBeGreaterThanOrEqual(16);
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

  it('a prompt of more than one batch: the snapshot is taken in its last batch', async () => {
    const big = await LoadedModel.load(SHARED_FILE, { contextSize: 1024, backend: 'wasm' });
    try {
      const long = Array.from({ length: 600 }, (_, i) => (i * 7919) % 50000);
      const profile = new Profile();
      const s = new Session(big, profile);
      const a = await tokens(s, long, 6);
      expect(await tokens(s, long, 6)).toEqual(a);
      expect(profile.tokens.prompt).toBe(601);
      expect(a).toEqual(await tokens(new Session(big), long, 6));
    } finally {
      big.dispose();
    }
  }, 60_000);

  it('keys and values are kept for the attention layer only (RunState cache, pool split)', async () => {
    const st = createRunState(lm.model, 64);
    expect(st.cache.k.map((k) => k.length)).toEqual([0, 0, 0, 64 * 2 * 32]);
    const pooled = await LoadedModel.load(SHARED_FILE, { contextSize: 64, backend: 'pool', threads: 2 });
    try {
      const split = createRunState(pooled.model, 64).split!;
      expect(split.cacheBytes).toBe(kvCacheBytes(1, 64, 2 * 32, 2 * 32));
    } finally {
      pooled.dispose();
    }
  });

  it('the forward pass refuses a batch the recurrent state has not reached', () => {
    const st = createRunState(lm.model, 64);
    forward(lm.model, st, P, 0);
    expect(() => forward(lm.model, st, [11], P.length + 1)).toThrow(RangeError);
    expect(() => forward(lm.model, st, [11], P.length)).not.toThrow();
  });
});

describe('qwen35 hyperparameters', () => {
  /** A header with the qwen35 keys (tensors do not matter to the hyperparameters). */
  function header(over: Record<string, WriterKv | null> = {}): GgufHeader {
    const a = 'qwen35';
    const base: Record<string, WriterKv> = {
      arch: kv.str('general.architecture', a),
      embd: kv.u32(`${a}.embedding_length`, 64),
      layers: kv.u32(`${a}.block_count`, 4),
      heads: kv.u32(`${a}.attention.head_count`, 4),
      conv: kv.u32(`${a}.ssm.conv_kernel`, 4),
      state: kv.u32(`${a}.ssm.state_size`, 16),
      group: kv.u32(`${a}.ssm.group_count`, 2),
      rank: kv.u32(`${a}.ssm.time_step_rank`, 4),
      inner: kv.u32(`${a}.ssm.inner_size`, 64),
    };
    const kvs = Object.entries({ ...base, ...over }).flatMap(([, v]) => (v ? [v] : []));
    return parseGgufHeader(writeGguf(kvs, [{ name: 'token_embd.weight', dims: [64, 8], type: 0, data: new Uint8Array(64 * 8 * 4) }]));
  }
  const fails = (over: Record<string, WriterKv | null>, msg: RegExp) => {
    try {
      modelHparams(header(over));
    } catch (err) {
      expect(err).toBeInstanceOf(ModelError);
      expect((err as ModelError).message).toMatch(msg);
      return;
    }
    throw new Error('expected a ModelError');
  };

  it('reads the layer pattern from full_attention_interval (default 4) or attention.recurrent_layers', () => {
    expect(modelHparams(header()).deltaNet!.recurrent).toEqual([true, true, true, false]);
    expect(modelHparams(header({ interval: kv.u32('qwen35.full_attention_interval', 2) })).deltaNet!.recurrent).toEqual([true, false, true, false]);
    expect(modelHparams(header({ marked: kv.arr('qwen35.attention.recurrent_layers', GgufType.BOOL, [false, true, true, false]) })).deltaNet!.recurrent).toEqual([false, true, true, false]);
    // an MTP block at the end (nextn_predict_layers) is not run, and is not a linear-attention layer
    const mtp = modelHparams(header({ mtp: kv.u32('qwen35.nextn_predict_layers', 1), interval: kv.u32('qwen35.full_attention_interval', 2) }));
    expect(mtp.nLayer).toBe(3);
    expect(mtp.deltaNet!.recurrent).toEqual([true, false, true, false]);
  });

  it('refuses sizes that do not fit, with one line naming the key', () => {
    fails({ inner: kv.u32('qwen35.ssm.inner_size', 48) }, /ssm\.inner_size = 48 is not/);
    fails({ group: kv.u32('qwen35.ssm.group_count', 3) }, /4 value heads .* cannot share 3 key heads/);
    fails({ conv: null }, /"qwen35\.ssm\.conv_kernel" is missing/);
    fails({ marked: kv.arr('qwen35.attention.recurrent_layers', GgufType.BOOL, [true, false]) }, /2 values, expected one per layer \(4\)/);
    fails({ mtp: kv.u32('qwen35.nextn_predict_layers', 4) }, /nextn_predict_layers" = 4 leaves no layer of 4 to run/);
  });

  it('M-RoPE for text: only pairs on the fourth section turn by position 0', () => {
    expect(imropeTextPairs([11, 11, 10, 0], 64)).toEqual([]); // Qwen3.5's sections
    expect(imropeTextPairs([2, 1, 1, 0], 8)).toEqual([]);
    expect(imropeTextPairs([1, 1, 0, 1], 8)).toEqual([2]);
    expect(imropeTextPairs(null, 8)).toEqual([]);
  });
});
