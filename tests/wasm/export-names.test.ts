// The kernel export names of wasm/layout.ts (KernelType.fns, actFns) against what each build of the
// module really exports, so a misspelt or missing kernel fails here rather than at its first call.
import { beforeAll, describe, expect, it } from 'vitest';
import { exportedFunctions } from '../../src/engine/wasm/instance.js';
import { KERNEL_TYPES, actFns, rowLayout, type ActKind } from '../../src/engine/wasm/layout.js';
import { loadKernelModule } from '../../src/engine/wasm/loader.js';
import { BUILDS, skipBuild } from './builds.js';

describe.each(BUILDS)('export names (%s build)', (simd) => {
  const names = new Set<string>();
  beforeAll(() => {
    if (!skipBuild(simd)) for (const n of exportedFunctions(loadKernelModule({ simd }).module)) names.add(n);
  });
  it.skipIf(skipBuild(simd))('every weight type has its matvec, matmul, dequant and, where it says so, gemm and dequant_row', () => {
    expect(KERNEL_TYPES.size).toBeGreaterThan(20);
    for (const kt of KERNEL_TYPES.values()) {
      const want = [kt.fns.matvec, kt.fns.matmul, kt.fns.dequant, ...(kt.gemm ? [kt.fns.gemm] : [])];
      expect(want.filter((n) => !names.has(n)), kt.suffix).toEqual([]);
      if (rowLayout(kt.type, 256)) expect(names.has(kt.fns.dequantRow), kt.fns.dequantRow).toBe(true);
    }
    // and the other way round: a type the table gives no gemm has none in the module
    for (const kt of KERNEL_TYPES.values()) if (!kt.gemm) expect(names.has(kt.fns.gemm), kt.fns.gemm).toBe(false);
  });
  it.skipIf(skipBuild(simd))('every activation format the types use has its quantisers, and widen where gemm reads it', () => {
    const acts = new Set<ActKind>([...KERNEL_TYPES.values()].map((k) => k.act));
    for (const a of acts) {
      expect(names.has(actFns(a).quantize), actFns(a).quantize).toBe(true);
      expect(names.has(actFns(a).quantizeRows), actFns(a).quantizeRows).toBe(true);
    }
    for (const kt of KERNEL_TYPES.values()) if (kt.gemm) expect(names.has(actFns(kt.act).widen), actFns(kt.act).widen).toBe(true);
  });
});
