// Compile the AssemblyScript kernels (src/engine/wasm/assembly) to WebAssembly in build/wasm/:
//   kernels.wasm          SIMD128 (every engine with wasm SIMD: Node 20, Electron)
//   kernels-relaxed.wasm  SIMD128 + relaxed SIMD (i8 dot products); chosen at run time when the
//                         engine runs it correctly (Electron's V8 does; Node 20 does not)
// Both import a shared memory (env.memory) so a worker pool can hand the same memory objects to
// worker threads. A build output, never committed; `npm test` runs this first. The two variants
// compile in parallel child processes, and nothing is rebuilt when both outputs are newer than
// every source (pass --force to rebuild anyway). --out=DIR writes both into DIR instead, always
// (scripts/test-mutations.mjs builds mutated kernels there, leaving build/wasm alone).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SRC = 'src/engine/wasm/assembly';
const outArg = process.argv.find((a) => a.startsWith('--out='));
const OUT = outArg?.slice(6) ?? 'build/wasm';
const VARIANTS = {
  simd: { out: `${OUT}/kernels.wasm`, flags: [] },
  relaxed: { out: `${OUT}/kernels-relaxed.wasm`, flags: ['--enable', 'relaxed-simd'] },
};
const COMMON = [
  `${SRC}/index.ts`, '-O3', '--noAssert', '--runtime', 'stub',
  '--enable', 'simd', '--enable', 'threads',
  // initialMemory: the static data (tables, per-instance scratch) fits in 4 pages (arena.ts MIN_PAGES)
  '--importMemory', '--sharedMemory', '--initialMemory', '4', '--maximumMemory', '65536',
];

const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
if (only) {
  // Child: compile one variant.
  const v = VARIANTS[only];
  const asc = await import('assemblyscript/asc');
  const { error, stderr } = await asc.main([...COMMON, ...v.flags, '--outFile', v.out], {});
  if (error) {
    console.error(`build:wasm: ${v.out} failed\n${stderr.toString()}`);
    process.exit(1);
  }
  process.exit(0);
}

if (!existsSync(`${SRC}/index.ts`)) {
  console.log('build:wasm: no AssemblyScript kernels yet');
  process.exit(0);
}
const self = fileURLToPath(import.meta.url);
const newestSource = Math.max(statSync(self).mtimeMs, ...readdirSync(SRC).map((f) => statSync(`${SRC}/${f}`).mtimeMs));
const stale = Object.values(VARIANTS).some((v) => !existsSync(v.out) || statSync(v.out).mtimeMs < newestSource);
if (!stale && !process.argv.includes('--force') && !outArg) process.exit(0);

mkdirSync(OUT, { recursive: true });
const codes = await Promise.all(Object.keys(VARIANTS).map((name) => new Promise((done) => {
  spawn(process.execPath, [self, `--only=${name}`, ...(outArg ? [outArg] : [])], { stdio: 'inherit' }).on('exit', (code) => done(code ?? 1));
})));
process.exit(codes.some((c) => c !== 0) ? 1 : 0);
