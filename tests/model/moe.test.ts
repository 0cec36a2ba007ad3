// Mixture-of-experts (src/engine/model/moe.ts): the routing arithmetic, that a decode step reads only
// the chosen experts, and the generated MoE models (bench/make-moe-models.ts) against llama.cpp's
// greedy runs. The models are rebuilt into a temp dir (same bytes as the files llama.cpp ran: the
// sha256 is checked), so this runs wherever ../shared has the vocabularies and the goldens exist.

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MOE_MODELS, writeMoeModel } from '../../bench/make-moe-models.js';
import { ModelError } from '../../src/shared/errors.js';
import { ScalarBackend } from '../../src/engine/backend/scalar.js';
import { SerialBackend } from '../../src/engine/backend/serial.js';
import type { FillFn, WeightHandle, WeightSpec } from '../../src/engine/backend/types.js';
import { readGgufHeader } from '../../src/engine/gguf/file.js';
import { activeParameterCount, parameterCount } from '../../src/engine/gguf/keys.js';
import { createRunState, forward } from '../../src/engine/model/forward.js';
import { route, type MoeHparams, type MoeLayer } from '../../src/engine/model/moe.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { compareTokens, logSoftmax, maxAbsDiff, readGolden, readLogprobs, type GoldenCase } from './golden.js';
import { greedyTokens } from './greedy.js';
import { ReferenceCpuBackend } from './reference-backend.js';

const dir = mkdtempSync(join(tmpdir(), 'pantheon-moe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// ----------------------------------------------------------------------------------------------
// Routing

const HP: MoeHparams = { nExpert: 4, nUsed: [2], nFfExp: [8], nFfShexp: 0, isMoe: [true], gating: 'softmax', normW: false, wScale: 0, weightBeforeFfn: false, selectLogits: false, act: null };
const LAYER = { nExpert: 4, nUsed: 2 } as MoeLayer;

function routeOne(hp: Partial<MoeHparams>, logits: number[]): { ids: number[]; wts: number[] } {
  const ids = new Int32Array(2);
  const wts = new Float32Array(2);
  route({ ...HP, ...hp }, LAYER, Float32Array.from(logits), new Float32Array(4), 0, ids, wts);
  return { ids: [...ids], wts: [...wts] };
}

describe('MoE routing (build_moe_ffn)', () => {
  const logits = [0.5, 2, -1, 1];
  const e = logits.map(Math.exp);
  const z = e.reduce((a, b) => a + b, 0);

  it('softmax over all experts, the top k largest first, their probabilities as weights', () => {
    const r = routeOne({}, logits);
    expect(r.ids).toEqual([1, 3]);
    expect(r.wts[0]).toBeCloseTo(e[1] / z, 6);
    expect(r.wts[1]).toBeCloseTo(e[3] / z, 6);
  });

  it('normalised weights sum to 1 (qwen3moe); softmax over the chosen k (gpt-oss) gives the same', () => {
    const a = routeOne({ normW: true }, logits);
    const b = routeOne({ gating: 'softmaxTopK' }, logits);
    expect(a.wts[0]).toBeCloseTo(e[1] / (e[1] + e[3]), 6);
    expect(b.wts[0]).toBeCloseTo(a.wts[0], 6);
    expect(a.wts[0] + a.wts[1]).toBeCloseTo(1, 6);
  });

  it('sigmoid gating (llama4) and a weight scale', () => {
    const r = routeOne({ gating: 'sigmoid', selectLogits: true, wScale: 2.5 }, logits);
    expect(r.ids).toEqual([1, 3]);
    expect(r.wts[0]).toBeCloseTo(2.5 / (1 + Math.exp(-2)), 6);
  });

  it('ties go to the lower expert index', () => {
    expect(routeOne({}, [1, 3, 3, 1]).ids).toEqual([1, 2]);
  });
});

// ----------------------------------------------------------------------------------------------
// Only the chosen experts are read

/** A backend that counts products per weight, around the scalar one. */
class CountingBackend extends SerialBackend {
  readonly name = 'counting';
  readonly inner = new ScalarBackend();
  readonly specs = new Map<number, WeightSpec>();
  readonly calls = new Map<number, number>();
  supports(type: number): boolean {
    return this.inner.supports(type);
  }
  addWeight(spec: WeightSpec, fill: FillFn): WeightHandle {
    const h = this.inner.addWeight(spec, fill);
    this.specs.set(h.id, spec);
    return h;
  }
  private count(w: WeightHandle): void {
    this.calls.set(w.id, (this.calls.get(w.id) ?? 0) + 1);
  }
  matvec(out: Float32Array, w: WeightHandle, x: Float32Array): void {
    this.count(w);
    this.inner.matvec(out, w, x);
  }
  matmul(out: Float32Array, w: WeightHandle, x: Float32Array, n: number): void {
    this.count(w);
    this.inner.matmul(out, w, x, n);
  }
  getRow(out: Float32Array, w: WeightHandle, row: number): void {
    this.inner.getRow(out, w, row);
  }
  weightBytes(): number {
    return this.inner.weightBytes();
  }
  dispose(): void {
    this.inner.dispose();
  }
}

const goldenModels = Object.keys(MOE_MODELS).filter((n) => HAVE_SHARED && readGolden(n) !== null);

describe.skipIf(!goldenModels.includes('moe-qwen3moe'))('a decode step reads only the chosen experts', () => {
  it('moe-qwen3moe: per layer, nUsed experts × (gate, up, down), each once', async () => {
    const path = join(dir, 'count-moe-qwen3moe.gguf');
    writeMoeModel('moe-qwen3moe', path);
    const be = new CountingBackend();
    const lm = await LoadedModel.load(path, { contextSize: 64, backend: be });
    try {
      const m = lm.model;
      const s = createRunState(m, 64);
      forward(m, s, [1, 2, 3, 4, 5], 0);
      be.calls.clear();
      forward(m, s, [6], 5);
      const nUsed = m.hp.moe!.nUsed[0];
      for (let l = 0; l < m.hp.nLayer; l++) {
        const L = m.w.layers[l].moe!;
        const read = (hs: WeightHandle[]) => hs.filter((h) => be.calls.has(h.id));
        const gate = read(L.gate);
        expect(gate.length).toBe(nUsed);
        // the same experts' up and down, each product once
        expect(read(L.up).map((h) => L.up.indexOf(h))).toEqual(gate.map((h) => L.gate.indexOf(h)));
        expect(read(L.down).map((h) => L.down.indexOf(h))).toEqual(gate.map((h) => L.gate.indexOf(h)));
        for (const h of [...gate, ...read(L.up), ...read(L.down)]) expect(be.calls.get(h.id)).toBe(1);
        expect(be.calls.get(L.router.id)).toBe(1);
      }
      // bytes of expert weights read: nUsed / nExpert of them
      const expertBytes = [...be.calls.keys()].map((id) => be.specs.get(id)!).filter((sp) => sp.name.includes('_exps'));
      expect(expertBytes.length).toBe(m.hp.nLayer * nUsed * 3);
    } finally {
      lm.dispose();
    }
  });
});

// ----------------------------------------------------------------------------------------------
// The generated models against llama.cpp

/** llama.cpp's own spread between its attention paths at a case's first step (fidelity.test.ts noAmx). */
const spread = (c: GoldenCase) => c.flashAttentionOff?.firstStepMaxAbsDiff ?? 0;
const NEAR_TIE = 2e-3;
const report: string[] = [];
afterAll(() => {
  if (report.length) console.log(['MoE models: max |logprob - llama.cpp| at the first step, greedy tokens equal to llama.cpp\'s', ...report].join('\n'));
});

type Kind = 'reference' | 'wasm' | 'pool';

describe.skipIf(goldenModels.length === 0)('generated MoE models against llama.cpp', () => {
  it.each(goldenModels.flatMap((n) => (['reference', 'wasm', 'pool'] as Kind[]).map((k): [string, Kind] => [n, k])))('%s on %s', async (name, kind) => {
    const g = readGolden(name)!;
    const path = join(dir, `${name}.${kind}.gguf`);
    writeMoeModel(name, path);
    expect(createHash('sha256').update(readFileSync(path)).digest('hex')).toBe(g.sha256);
    const amx = g.recordedOn?.amx !== false;
    const backend = kind === 'reference' ? new ReferenceCpuBackend({ amx }) : kind;
    const lm = await LoadedModel.load(path, { contextSize: 512, backend, threads: kind === 'pool' ? 2 : 1 });
    try {
      const session = new Session(lm);
      const parts: string[] = [];
      for (const c of g.cases) {
        expect(lm.tokenizer.encode(c.prompt, { addSpecial: true, parseSpecial: true })).toEqual(c.promptTokens);
        const d = maxAbsDiff(logSoftmax(forward(lm.model, createRunState(lm.model, 512), c.promptTokens, 0)), readLogprobs(c.firstLogprobs));
        const out = await greedyTokens(session, c.promptTokens, c.n);
        const agree = compareTokens(out, c);
        parts.push(`${d.toExponential(1)} ${agree.same}/${c.n}${agree.same < c.n ? ` (behind ${agree.behind.toExponential(1)})` : ''}`);
        // the tolerances of fidelity.test.ts, with llama.cpp's own spread where it ran without AMX
        const base = kind === 'reference' ? 1e-3 : 2e-2;
        expect(d).toBeLessThan(amx ? base : Math.max(base, (kind === 'reference' ? 1.5 : 2) * spread(c)));
        if (kind === 'reference' && amx) expect(out).toEqual(c.tokens);
        else expect(agree.behind, `${name} "${c.prompt}": step ${agree.same} differs from llama.cpp`).toBeLessThan(amx ? NEAR_TIE : Math.max(NEAR_TIE, spread(c)));
      }
      report.push(`  ${name.padEnd(16)} ${kind.padEnd(9)} ${parts.join(' | ')}`);
    } finally {
      lm.dispose();
    }
  });
});

// ----------------------------------------------------------------------------------------------
// Active parameters (inspect, the library)

describe.skipIf(!HAVE_SHARED)('active parameters of a MoE file', () => {
  it('tiny-qwen3moe-s1: everything but the experts, plus 2/8 of the experts', async () => {
    const h = await readGgufHeader(sharedModel('tiny-random/tiny-qwen3moe-s1.gguf'));
    const experts = h.tensors.filter((t) => t.name.includes('_exps.')).reduce((a, t) => a + t.elements, 0);
    expect(experts).toBe(3 * 3 * 64 * 32 * 8);
    expect(activeParameterCount(h)).toBe(parameterCount(h) - experts + experts / 4);
    expect(activeParameterCount(await readGgufHeader(sharedModel('tiny-random/tiny-qwen3-s5.gguf')))).toBeNull();
  });
});

// ----------------------------------------------------------------------------------------------
// Bad files

describe.skipIf(!HAVE_SHARED)('bad MoE files get a ModelError naming the problem', () => {
  const base = MOE_MODELS['moe-qwen3moe'];
  it.each([
    ['more experts used than there are', { ...base, nUsed: 9, usedArray: false }, 'BAD_KEY', /expert_used_count = 9/],
    ['experts narrower than the key says', { ...base, keys: (a: string) => [{ key: `${a}.expert_feed_forward_length`, type: 4, value: 40 }] }, 'BAD_TENSOR_SHAPE', /ffn_gate_exps/],
  ])('%s', async (_what, m, code, msg) => {
    const path = join(dir, `bad-${code}.gguf`);
    writeMoeModel('moe-qwen3moe', path, { ...m, nFfExp: m.keys ? 0 : m.nFfExp });
    const err = await LoadedModel.load(path, { contextSize: 64, backend: 'scalar' }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).code).toBe(code);
    expect((err as ModelError).message).toMatch(msg);
  });
});
