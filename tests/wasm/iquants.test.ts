// The WebAssembly kernels on ggml's own blocks (quant-reference-iq.gguf, all 24 CPU types): every
// type with a kernel dequantises each row to ggml's deq.* bit for bit, in both builds; and for the
// i-quants (assembly/iquants.ts) matvec agrees with the scalar reference (quant/iq*.ts, ggml's
// generic dots) within float rounding, and a batch equals its matvecs bit for bit.
import { beforeAll, describe, expect, it } from 'vitest';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { ggmlTypeName } from '../../src/engine/gguf/ggml-types.js';
import { quantizeActivation, vecDot } from '../../src/engine/quant/index.js';
import { kernelType } from '../../src/engine/wasm/layout.js';
import { COLS, fixtureBytes, fixtureF32, fixtureTypes, QUANT_REFERENCE_IQ, ROWS } from '../quant/fixture.js';
import { BUILDS, skipBuild } from './builds.js';
import { absDot, fillFrom, randomFloats } from './gen.js';

const F = QUANT_REFERENCE_IQ;
const IQ = new Set(['iq1_s', 'iq1_m', 'iq2_xxs', 'iq2_xs', 'iq2_s', 'iq3_xxs', 'iq3_s']);

for (const simd of BUILDS) {
  describe.skipIf(skipBuild(simd))(`${simd} build on quant-reference-iq.gguf`, () => {
    let be: WasmBackend;
    beforeAll(() => {
      be = new WasmBackend({ simd });
    });
    const types = fixtureTypes(F).filter(([, t]) => kernelType(t));

    it('has a kernel for every type of the fixture, the seven i-quants among them', () => {
      expect(types.length).toBe(24);
    });

    for (const [name, type] of types) {
      it(`${name}: getRow of ggml's blocks equals ggml's deq.${name} bit for bit`, () => {
        const h = be.addWeight({ name: `q.${name}`, type, rows: ROWS, cols: COLS }, fillFrom(fixtureBytes(`q.${name}`, F)));
        const deq = fixtureF32(`deq.${name}`, F);
        const row = new Float32Array(COLS);
        for (let r = 0; r < ROWS; r++) {
          be.getRow(row, h, r);
          const want = deq.subarray(r * COLS, (r + 1) * COLS);
          expect(new Uint32Array(row.buffer)).toEqual(new Uint32Array(want.slice().buffer));
        }
      });
    }

    for (const [name, type] of types.filter(([n]) => IQ.has(n))) {
      it(`${name}: matvec within 2e-6·Σ|w·x| of ggml's generic dot; matmul of 5 = 5 matvecs`, () => {
        const w = fixtureBytes(`q.${name}`, F);
        const rb = w.length / ROWS;
        const h = be.addWeight({ name: `mv.${name}`, type, rows: ROWS, cols: COLS }, fillFrom(w));
        const n = 5;
        const xs = randomFloats(n * COLS, 7, 2);
        const outs = new Float32Array(n * ROWS);
        be.matmul(outs, h, xs, n);
        const out = new Float32Array(ROWS);
        for (let t = 0; t < n; t++) {
          const x = xs.subarray(t * COLS, (t + 1) * COLS);
          be.matvec(out, h, x);
          expect([...outs.subarray(t * ROWS, (t + 1) * ROWS)]).toEqual([...out]);
          const act = quantizeActivation(type, x).data;
          for (let r = 0; r < ROWS; r++) {
            const ref = vecDot(type, w, r * rb, act, 0, COLS);
            expect(Math.abs(out[r] - ref), `${ggmlTypeName(type)} token ${t} row ${r}`).toBeLessThanOrEqual(2e-6 * absDot(type, w, r * rb, x, COLS));
          }
        }
      });
    }
  });
}
