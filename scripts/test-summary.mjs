// Print the closing lines of a test run (unit + end-to-end), from vitest's JSON reports. The first
// line counts the independent checks:
//   tests: N passed, N failed, N skipped
// Below it, apart, the consistency checks, which test no engine code against anything outside the
// repository: the golden files' self-consistency (tests/golden/goldens.test.ts: each recorded file
// agrees with itself and its model's header) and the pre-tokenizer splits that lose no text (one per
// pre-tokenizer). With --node24, also the engine tests CI runs under Node 24 (.ci/run: the relaxed
// build, the V8 Electron ships). Exit code 1 when anything failed.
import { existsSync, readFileSync } from 'node:fs';

const REPORTS = ['out/test-results/unit.json', 'out/test-results/e2e.json'];
const NODE24 = 'out/test-results/node24.json';

/** The category of one test: null for an independent check. */
function consistency(file, t) {
  if (file.endsWith('tests/golden/goldens.test.ts')) return 'golden';
  if (file.endsWith('tests/tokenizer/pretokenize.test.ts') && / splits without losing or adding text$/.test(t.title)) return 'split';
  return null;
}

const zero = () => ({ passed: 0, failed: 0, skipped: 0 });

/** Counts per category over the reports that exist. */
function count(files) {
  const c = { tests: zero(), golden: zero(), split: zero() };
  for (const f of files) {
    if (!existsSync(f)) continue;
    const r = JSON.parse(readFileSync(f, 'utf8'));
    for (const file of r.testResults ?? []) {
      for (const t of file.assertionResults ?? []) {
        const k = c[consistency(file.name, t) ?? 'tests'];
        if (t.status === 'passed') k.passed++;
        else if (t.status === 'failed') k.failed++;
        else k.skipped++; // pending, skipped, todo
      }
      // a file that failed to load has no results to count: count it as one failure
      if (file.status === 'failed' && (file.assertionResults ?? []).length === 0) c.tests.failed++;
    }
  }
  return c;
}

const line = (k) => `${k.passed} passed, ${k.failed} failed, ${k.skipped} skipped`;
const main = count(REPORTS);
const out = [
  `tests: ${line(main.tests)}`,
  'consistency checks, not counted above:',
  `  golden files self-consistent: ${line(main.golden)}`,
  `  pre-tokenizer splits lossless: ${line(main.split)}`,
];
let failed = main.tests.failed + main.golden.failed + main.split.failed;
if (process.argv.includes('--node24')) {
  if (!existsSync(NODE24)) {
    out.push(`node 24, relaxed build: no report (${NODE24})`);
    failed++;
  } else {
    const n = count([NODE24]);
    out.push(`node 24, relaxed build, engine model and kernel tests: ${line(n.tests)}`);
    failed += n.tests.failed;
  }
}
console.log(out.join('\n'));
process.exitCode = failed > 0 ? 1 : 0;
