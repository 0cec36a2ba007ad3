// The two kernel builds a test runs, and whether this engine can run the relaxed one. Every test
// lists both builds; where this Node has no relaxed SIMD (Node 20) the relaxed cases are skipped,
// so the run counts them as skipped rather than dropping them from its lists. With
// PANTHEON_EXPECT_RELAXED=1 (CI's Node 24 part, the V8 Electron ships) nothing is skipped: a
// relaxed case then fails if the engine cannot run the relaxed build, and relaxed.test.ts checks
// that the backends chose it.
import { hasRelaxedSimd, type SimdLevel } from '../../src/engine/wasm/loader.js';

export const BUILDS: readonly SimdLevel[] = ['simd', 'relaxed'];

/** Set by CI's Node 24 part: the relaxed build must be the one this engine runs. */
export const EXPECT_RELAXED = process.env.PANTHEON_EXPECT_RELAXED === '1';

/** True when the cases of this build are to be skipped here (relaxed, not runnable, not expected). */
export function skipBuild(simd: SimdLevel): boolean {
  return simd === 'relaxed' && !hasRelaxedSimd() && !EXPECT_RELAXED;
}
