// The gated delta rule kernel (assembly/deltanet.ts delta_rule_head) against its TypeScript reference
// (model/deltanet.ts deltaRuleHead), bit for bit: head sizes 4 to 128, several steps in a row (the
// state carries over), decays near 0 and 1, betas 0 to 1, large and tiny values.
import { describe, expect, it } from 'vitest';
import { deltaRuleHead } from '../../src/engine/model/deltanet.js';
import { KernelInstance } from '../../src/engine/wasm/instance.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { randomFloats, rng } from './gen.js';

describe('delta_rule_head', () => {
  const K = new KernelInstance(loadKernelModule({ simd: 'simd' }));
  it.each([4, 8, 16, 32, 128])('S = %i: the reference\'s bits over 6 steps', (S) => {
    const r = rng(S);
    const ref = randomFloats(S * S, S + 1, 0.3);
    const mp = K.arena.alloc(S * S * 4);
    const xp = K.arena.alloc(3 * S * 4);
    const op = K.arena.alloc(S * 4);
    K.arena.f32(mp, S * S).set(ref);
    const outRef = new Float32Array(S);
    for (let step = 0; step < 6; step++) {
      const x = randomFloats(3 * S, 100 * S + step, step === 3 ? 40 : 0.5); // [k; q; v]
      const decay = Math.fround(step === 1 ? 1e-6 : 1 - r() * 0.5);
      const beta = Math.fround(r());
      const scale = Math.fround(1 / Math.sqrt(S));
      K.arena.f32(xp, 3 * S).set(x);
      deltaRuleHead(ref, 0, x, 0, S, 2 * S, outRef, 0, S, decay, beta, scale);
      K.deltaRuleHead(mp, xp, xp + S * 4, xp + 2 * S * 4, op, S, decay, beta, scale);
      expect(Array.from(K.arena.f32(op, S)), `step ${step} out`).toEqual(Array.from(outRef));
      expect(Array.from(K.arena.f32(mp, S * S)), `step ${step} state`).toEqual(Array.from(ref));
    }
    K.arena.free(op, S * 4);
    K.arena.free(xp, 3 * S * 4);
    K.arena.free(mp, S * S * 4);
  });
});
