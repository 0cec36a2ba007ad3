// Finding, compiling and choosing the kernel module. Two builds exist (scripts/build-wasm.mjs):
// kernels.wasm (SIMD128) and kernels-relaxed.wasm (SIMD128 + relaxed SIMD i8 dot products). The
// relaxed one is used when this engine runs a tiny relaxed-SIMD module and gets the right answer
// (current V8, so Electron, does; Node 20 has no relaxed SIMD unless flagged, and then a wrong one),
// else the plain one.
//
// Where the .wasm files are looked for, in order:
//   1. options.dir                    (a caller that knows, e.g. a packaged app's resources)
//   2. $PANTHEON_WASM_DIR             (override for bundles and odd layouts)
//   3. <repo>/build/wasm relative to this source file (tests, CLI through tsx)
//   4. <cwd>/build/wasm, then <process.resourcesPath>/wasm (an Electron utility process in a packaged app)
// Modules are compiled once per process and cached; a WebAssembly.Module can be handed to worker
// threads, so workers never compile.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EngineError } from '../../shared/errors.js';

export type SimdLevel = 'simd' | 'relaxed';

export interface LoadOptions {
  /** Directory holding kernels.wasm / kernels-relaxed.wasm. */
  dir?: string;
  /** 'auto' (default): relaxed when the engine supports it. */
  simd?: SimdLevel | 'auto';
}

export interface KernelModule {
  readonly module: WebAssembly.Module;
  readonly simd: SimdLevel;
  readonly path: string;
}

/** The probe module (exported for tests that run it in other engines). */
// (module (func (export "f") (result i32)
//   (i32x4.extract_lane 0 (i32x4.relaxed_dot_i8x16_i7x16_add_s
//     (v128.const i8x16 -3 5 -7 9 0…) (v128.const i8x16 1 2 3 4 0…) (v128.const i32x4 0 0 0 0)))))
// Lane 0 must be −3·1 + 5·2 − 7·3 + 9·4 = 22. Validating is not enough: Node 20's V8 11.3 accepts
// relaxed SIMD behind --experimental-wasm-relaxed-simd but returns twice the dot product (44).
const PROBE_EXPECTED = 22;

export function relaxedProbe(): Uint8Array<ArrayBuffer> {
  return relaxedDotModule([-3, 5, -7, 9], [1, 2, 3, 4], 0);
}

/**
 * A module of one function "f" returning lane `lane` of i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, 0),
 * a and b 16 bytes each (shorter arrays padded with zeros; values taken as bytes, −1 = 0xff).
 */
export function relaxedDotModule(a: number[], b: number[], lane: number): Uint8Array<ArrayBuffer> {
  const bytes16 = (v: number[]) => [...v, ...new Array<number>(16 - v.length).fill(0)].map((x) => x & 0xff);
  const body = [0x00, 0xfd, 0x0c, ...bytes16(a), 0xfd, 0x0c, ...bytes16(b), 0xfd, 0x0c, ...bytes16([]), 0xfd, 0x93, 0x02, 0xfd, 0x1b, lane, 0x0b];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
    0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type section: () -> i32
    0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
    0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // export section: "f" = function 0
    0x0a, body.length + 2, 0x01, body.length, ...body, // code section
  ]);
}

let relaxedSupport: boolean | undefined;

/** True when this engine runs relaxed-SIMD i8 dot products, and runs them correctly. */
export function hasRelaxedSimd(): boolean {
  if (relaxedSupport === undefined) {
    const bytes = relaxedProbe();
    relaxedSupport = false;
    if (WebAssembly.validate(bytes)) {
      const f = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.f as () => number;
      relaxedSupport = f() === PROBE_EXPECTED;
    }
  }
  return relaxedSupport;
}

function candidateDirs(dir?: string): string[] {
  const out: string[] = [];
  if (dir) out.push(dir);
  if (process.env.PANTHEON_WASM_DIR) out.push(process.env.PANTHEON_WASM_DIR);
  if (import.meta.url.startsWith('file:')) out.push(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'build', 'wasm'));
  out.push(resolve(process.cwd(), 'build', 'wasm'));
  const resources = (process as { resourcesPath?: string }).resourcesPath;
  if (resources) out.push(join(resources, 'wasm'));
  return out;
}

const cache = new Map<string, KernelModule>();

/** The compiled kernel module for this engine (cached per path). */
export function loadKernelModule(opts: LoadOptions = {}): KernelModule {
  const want = opts.simd ?? 'auto';
  const simd: SimdLevel = want === 'auto' ? (hasRelaxedSimd() ? 'relaxed' : 'simd') : want;
  if (simd === 'relaxed' && !hasRelaxedSimd()) {
    throw new EngineError('WASM_UNSUPPORTED', 'this JavaScript engine has no relaxed SIMD; use simd: "simd" or "auto"');
  }
  const file = simd === 'relaxed' ? 'kernels-relaxed.wasm' : 'kernels.wasm';
  const dirs = candidateDirs(opts.dir);
  const path = dirs.map((d) => join(d, file)).find((p) => existsSync(p));
  if (!path) {
    throw new EngineError('WASM_MISSING', `${file} was not found (looked in ${dirs.join(', ')}); run "npm run build:wasm" or set PANTHEON_WASM_DIR`);
  }
  let km = cache.get(path);
  if (!km) {
    try {
      km = { module: new WebAssembly.Module(readFileSync(path)), simd, path };
    } catch (err) {
      throw new EngineError('WASM_COMPILE', `${path} could not be compiled (${(err as Error).message}); rebuild it with "npm run build:wasm"`);
    }
    cache.set(path, km);
  }
  return km;
}
