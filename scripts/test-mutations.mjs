// npm run test:mutations: plant small numeric bugs in production code, one at a time, and show
// that the tests fail for each. Each mutation edits one source line, runs the tests that should
// catch it (the production backends' checks against llama.cpp: a wasm kernel's mutation cannot
// touch the reference double), and restores the file, text and modification time, also on Ctrl-C
// or an error. A mutated kernel is built into out/mutations/wasm (PANTHEON_WASM_DIR), never into
// build/wasm. Exit code 1 when a mutation survives (every test it ran passed). Not part of `npm
// test`: ~2 min per mutation on two cores.
//   npm run test:mutations [-- --only=NAME]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The production backends' tests against llama.cpp (fidelity: not the reference double). */
const PRODUCTION = ['tests/model/fidelity.test.ts', 'tests/model/quantized.test.ts', '-t', "Pantheon's backends|Pantheon-quantised|tiny256"];

const MUTATIONS = [
  {
    name: 'rms-eps',
    what: 'RMSNorm epsilon ×4 in the wasm kernel (assembly/norm.ts rms_norm)',
    file: 'src/engine/wasm/assembly/norm.ts',
    from: '<f64>mean + eps)',
    to: '<f64>mean + eps * 4.0)',
    wasm: true,
    tests: PRODUCTION,
  },
  {
    name: 'attn-scale',
    what: 'attention scale × (1 + 2^-10) in the wasm f16 attention (assembly/attention.ts f16Head: single tokens, short prompts)',
    file: 'src/engine/wasm/assembly/attention.ts',
    from: ': dotF16<T>(q16, kt, hdK, kRaw)) * scale);',
    to: ': dotF16<T>(q16, kt, hdK, kRaw)) * (scale * <f32>1.0009765625));',
    wasm: true,
    tests: PRODUCTION,
  },
  {
    name: 'rope-base',
    what: 'RoPE base × 1.001 (model/hparams.ts rope.freq_base)',
    file: 'src/engine/model/hparams.ts',
    from: "freqBase: getNumber(h, k('rope.freq_base')) ?? 10000,",
    to: "freqBase: (getNumber(h, k('rope.freq_base')) ?? 10000) * 1.001,",
    wasm: false,
    tests: PRODUCTION,
  },
  {
    name: 'q8_0-scale',
    what: 'Q8_0 block scale d_w × (1 + 2^-10) in the wasm dot (assembly/legacy.ts dot4q8)',
    file: 'src/engine/wasm/assembly/legacy.ts',
    from: 'const dd = f32x4.mul(f16At(a0, a1, a2, a3), v128.load32_splat(dp + (<usize>b << 2)));\n    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(s), dd));',
    to: 'const dd = f32x4.mul(f32x4.mul(f16At(a0, a1, a2, a3), f32x4.splat(1.0009765625)), v128.load32_splat(dp + (<usize>b << 2)));\n    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(s), dd));',
    wasm: true,
    tests: ['tests/model/quantized.test.ts', '-t', 'Q8_0|Q6_K'],
  },
  {
    name: 'iq3-d2-order',
    what: 'IQ3 neighbour distance summed as (t0 + t1) + (t2 + t3), not in order (assembly/quantize-iq3.ts bestNeighbour)',
    file: 'src/engine/wasm/assembly/quantize-iq3.ts',
    from: 'const d2 = ((f32x4.extract_lane(t, 0) + f32x4.extract_lane(t, 1)) + f32x4.extract_lane(t, 2)) + f32x4.extract_lane(t, 3);',
    to: 'const d2 = (f32x4.extract_lane(t, 0) + f32x4.extract_lane(t, 1)) + (f32x4.extract_lane(t, 2) + f32x4.extract_lane(t, 3));',
    wasm: true,
    tests: ['tests/quant/iq-quant-kernel.test.ts', 'tests/quant/imatrix-quant.test.ts'],
  },
  {
    name: 'iq2-ties',
    what: 'IQ2 neighbour search keeps the last of equal distances, not the first (assembly/quantize-iq2.ts bestNeighbour)',
    file: 'src/engine/wasm/assembly/quantize-iq2.ts',
    from: '    if (d2 < best) {',
    to: '    if (d2 <= best) {',
    wasm: true,
    tests: ['tests/quant/iq-quant-kernel.test.ts', 'tests/quant/imatrix-quant.test.ts'],
  },
  {
    name: 'iq2-max-nan',
    what: 'IQ2_XS/IQ2_S group max as `v > max ? v : max` (a NaN last in a group no longer kept, assembly/quantize-iq2.ts)',
    file: 'src/engine/wasm/assembly/quantize-iq2.ts',
    from: 'xmax = xmax > v ? xmax : v;\n      }\n      memory.fill(aux + LBEST, 0, 64);',
    to: 'xmax = v > xmax ? v : xmax;\n      }\n      memory.fill(aux + LBEST, 0, 64);',
    wasm: true,
    tests: ['tests/quant/iq2-kernel.test.ts', 'tests/quant/iq-quant-kernel.test.ts'],
  },
  {
    name: 'iq2-xs-clear',
    what: 'IQ2_XS no longer clears its qs when the block scale is 0 or NaN (assembly/quantize-iq2.ts)',
    file: 'src/engine/wasm/assembly/quantize-iq2.ts',
    from: 'if (!s) memory.fill(dst + 2, 0, 64);',
    to: '',
    wasm: true,
    tests: ['tests/quant/iq2-kernel.test.ts', 'tests/quant/iq-quant-kernel.test.ts'],
  },
];

const OUT = resolve('out/mutations');
const WASM_OUT = resolve(OUT, 'wasm');

/** The file being mutated, to put back: path, text, times. */
let saved = null;
function restore() {
  if (!saved) return;
  writeFileSync(saved.file, saved.text);
  utimesSync(saved.file, saved.atime, saved.mtime);
  saved = null;
}
/** The build or test run in progress (a process group of its own), stopped with this script. */
let child = null;
process.on('exit', restore);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (child) process.kill(-child.pid, sig); // its process group: vitest and its workers
    restore();
    process.exit(130);
  });
}

function run(args, env = {}) {
  return new Promise((done) => {
    child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...env }, detached: true });
    child.on('exit', (code, signal) => {
      child = null;
      done(signal ? 1 : code ?? 1);
    });
  });
}

/** Names of the failed tests in a vitest JSON report, and the count of those that ran. */
function results(path) {
  if (!existsSync(path)) return { ran: 0, failed: ['(no report: the run did not finish)'] };
  const r = JSON.parse(readFileSync(path, 'utf8'));
  const failed = [];
  let ran = 0;
  for (const f of r.testResults ?? []) {
    if (f.status === 'failed' && (f.assertionResults ?? []).length === 0) failed.push(`${f.name}: ${f.message ?? 'failed to load'}`);
    for (const t of f.assertionResults ?? []) {
      if (t.status === 'passed' || t.status === 'failed') ran++;
      if (t.status === 'failed') failed.push(t.fullName);
    }
  }
  return { ran, failed };
}

const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
const chosen = MUTATIONS.filter((m) => !only || m.name === only);
if (chosen.length === 0) {
  console.error(`test:mutations: no mutation named ${only} (${MUTATIONS.map((m) => m.name).join(', ')})`);
  process.exit(2);
}
mkdirSync(OUT, { recursive: true });
const summary = [];
for (const m of chosen) {
  const text = readFileSync(m.file, 'utf8');
  if (text.split(m.from).length !== 2) throw new Error(`${m.name}: "${m.from}" is not in ${m.file} exactly once; update the mutation`);
  const st = statSync(m.file);
  saved = { file: m.file, text, atime: st.atime, mtime: st.mtime };
  writeFileSync(m.file, text.replace(m.from, m.to));
  console.log(`\n== ${m.name}: ${m.what}`);
  const report = resolve(OUT, `${m.name}.json`);
  rmSync(report, { force: true });
  const env = { PANTHEON_TEST_REPORT: report };
  if (m.wasm) {
    // a kernel: build the mutated modules, put the source back, run the tests on those modules
    const built = await run(['scripts/build-wasm.mjs', `--out=${WASM_OUT}`]);
    restore();
    if (built !== 0) throw new Error(`${m.name}: the mutated kernels did not build`);
    env.PANTHEON_WASM_DIR = WASM_OUT;
  }
  await run(['node_modules/vitest/vitest.mjs', 'run', ...m.tests, '--reporter=dot', '--reporter=json'], env);
  restore();
  const r = results(report);
  summary.push({ m, ...r });
  console.log(`${m.name}: ${r.failed.length} of ${r.ran} failed${r.failed.length ? `:\n  ${r.failed.join('\n  ')}` : ' — the mutation SURVIVED'}`);
}
rmSync(WASM_OUT, { recursive: true, force: true });
console.log('\ntest:mutations');
for (const { m, ran, failed } of summary) console.log(`  ${failed.length ? 'caught  ' : 'SURVIVED'} ${m.name.padEnd(11)} ${String(failed.length).padStart(3)}/${ran} failed  ${m.what}`);
process.exitCode = summary.some((s) => s.failed.length === 0) ? 1 : 0;
