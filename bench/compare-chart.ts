// Chart and table from saved `npm run bench -- … --json` reports (bench/compare.ts).
//
//   node bin/run-ts.mjs bench/compare-chart.ts bench/results/*.json [--svg docs/performance.svg] [--markdown]
//
// A later file replaces an earlier one's rows for the same shape, type, threads and engine.
//
// The SVG has one panel per model shape and metric (generated tokens/s, prompt tokens/s): a group of
// bars per type, one bar per engine and thread count, on a log scale (the engines can be 100× apart),
// with the memory-bandwidth ceiling of generation drawn as a tick per group and thread count.
// --markdown prints the results table for docs/performance.md.

import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { BenchReport, EngineName } from './compare.js';

const TYPE_ORDER = ['F32', 'F16', 'BF16', 'Q8_0', 'Q6_K', 'Q5_K_M', 'Q5_0', 'Q4_K_M', 'Q4_0'];

interface Row {
  shape: string;
  type: string;
  threads: number;
  load1: number;
  engine: EngineName;
  gen: number | null;
  prompt: number | null;
  ttft: number | null;
  loadMs: number | null;
  rssMiB: number | null;
  ceiling: number | null;
  bandwidthGBs: number | null;
  runs: number;
}

/** bench/models/<shape>-<type>.gguf → shape; other files → their name without the type part. */
function shapeOf(r: BenchReport): string {
  const name = basename(r.model.file, '.gguf');
  const dash = name.lastIndexOf('-');
  return dash > 0 && name.slice(dash + 1).toUpperCase() === r.model.type.toUpperCase() ? name.slice(0, dash) : name;
}

function rowsOf(r: BenchReport): Row[] {
  const out: Row[] = [];
  const load1 = (r.machine.loadBefore[0] + r.machine.loadAfter[0]) / 2;
  for (const engine of ['pantheon', 'llama.cpp'] as const) {
    const s = r.engines[engine];
    if (!s || s.runs === 0) continue;
    out.push({
      shape: shapeOf(r), type: r.model.type, threads: r.options.threads, load1, engine,
      gen: s.median.genTokensPerS ?? null,
      prompt: s.median.promptTokensPerS ?? null,
      ttft: s.median.ttftMs ?? null,
      loadMs: s.median.loadMs ?? null,
      rssMiB: s.median.peakRssBytes != null ? s.median.peakRssBytes / 2 ** 20 : null,
      ceiling: r.ceiling?.tokensPerS ?? null,
      bandwidthGBs: r.ceiling ? r.ceiling.bandwidthBytesPerS / 1e9 : null,
      runs: s.runs,
    });
  }
  return out;
}

const typeRank = (t: string) => (TYPE_ORDER.includes(t) ? TYPE_ORDER.indexOf(t) : TYPE_ORDER.length);
const byTypeThenThreads = (a: Row, b: Row) => typeRank(a.type) - typeRank(b.type) || a.threads - b.threads;

// ---------------------------------------------------------------------------------------------
// Markdown

const f = (v: number | null, d = 1) => (v === null ? '—' : v.toFixed(d));
const ratio = (p: number | null, l: number | null) => (p !== null && l !== null && l > 0 ? `${(p / l).toFixed(2)}×` : '—');

function markdown(rows: Row[]): string {
  const lines: string[] = [];
  const shapes = [...new Set(rows.map((r) => r.shape))];
  for (const shape of shapes) {
    lines.push(`#### ${shape}`, '');
    lines.push('| type | threads | gen tok/s P / L (ratio) | prompt tok/s P / L (ratio) | TTFT ms P / L | load ms P / L | peak RSS MiB P / L | ceiling tok/s | load avg |');
    lines.push('|---|---|---|---|---|---|---|---|---|');
    const keys = [...new Set(rows.filter((r) => r.shape === shape).sort(byTypeThenThreads).map((r) => `${r.type}|${r.threads}`))];
    for (const k of keys) {
      const [type, t] = k.split('|');
      const pick = (e: EngineName) => rows.find((r) => r.shape === shape && r.type === type && r.threads === Number(t) && r.engine === e) ?? null;
      const P = pick('pantheon');
      const L = pick('llama.cpp');
      const any = (P ?? L)!;
      lines.push(`| ${type} | ${t} | ${f(P?.gen ?? null)} / ${f(L?.gen ?? null)} (${ratio(P?.gen ?? null, L?.gen ?? null)}) | ${f(P?.prompt ?? null)} / ${f(L?.prompt ?? null)} (${ratio(P?.prompt ?? null, L?.prompt ?? null)})`
        + ` | ${f(P?.ttft ?? null, 0)} / ${f(L?.ttft ?? null, 0)} | ${f(P?.loadMs ?? null, 0)} / ${f(L?.loadMs ?? null, 0)} | ${f(P?.rssMiB ?? null, 0)} / ${f(L?.rssMiB ?? null, 0)}`
        + ` | ${f(any.ceiling)} | ${any.load1.toFixed(1)} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// SVG

const COLORS: Record<string, string> = {
  'pantheon 1': '#9ecae1', 'pantheon 2': '#3182bd', 'llama.cpp 1': '#fdae6b', 'llama.cpp 2': '#e6550d',
};
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function panel(rows: Row[], metric: 'gen' | 'prompt', title: string, x0: number, y0: number, w: number, h: number): string[] {
  const out: string[] = [];
  const types = [...new Set(rows.slice().sort(byTypeThenThreads).map((r) => r.type))];
  const series = [...new Set(rows.map((r) => `${r.engine} ${r.threads}`))].sort((a, b) => Object.keys(COLORS).indexOf(a) - Object.keys(COLORS).indexOf(b));
  const values = rows.map((r) => r[metric]).concat(metric === 'gen' ? rows.map((r) => r.ceiling) : []).filter((v): v is number => v !== null && v > 0);
  if (!values.length) return out;
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...values))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...values))));
  const left = x0 + 48;
  const top = y0 + 24;
  const plotW = w - 56;
  const plotH = h - 60;
  const y = (v: number) => top + plotH - (Math.log10(v / lo) / Math.log10(hi / lo)) * plotH;
  out.push(`<text x="${x0 + w / 2}" y="${y0 + 14}" text-anchor="middle" font-weight="bold">${esc(title)}</text>`);
  for (let v = lo; v <= hi * 1.0001; v *= 10) {
    out.push(`<line x1="${left}" x2="${left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#ddd"/>`);
    out.push(`<text x="${left - 4}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" font-size="10">${v >= 1 ? v.toFixed(0) : v}</text>`);
  }
  const groupW = plotW / types.length;
  const barW = Math.min(22, (groupW - 12) / Math.max(series.length, 1));
  types.forEach((type, gi) => {
    const gx = left + gi * groupW + (groupW - barW * series.length) / 2;
    out.push(`<text x="${(left + gi * groupW + groupW / 2).toFixed(1)}" y="${top + plotH + 14}" text-anchor="middle" font-size="11">${esc(type)}</text>`);
    series.forEach((s, si) => {
      const [engine, t] = s.split(' ');
      const r = rows.find((q) => q.type === type && q.engine === engine && q.threads === Number(t));
      const v = r?.[metric];
      const bx = gx + si * barW;
      if (v && v > 0) {
        const by = y(Math.max(v, lo));
        out.push(`<rect x="${bx.toFixed(1)}" y="${by.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(top + plotH - by).toFixed(1)}" fill="${COLORS[s] ?? '#999'}"><title>${esc(`${engine}, ${t} thread(s), ${type}: ${v.toFixed(1)} tok/s`)}</title></rect>`);
        out.push(`<text x="${(bx + barW / 2 - 1).toFixed(1)}" y="${(by - 3).toFixed(1)}" text-anchor="middle" font-size="8">${v >= 10 ? v.toFixed(0) : v.toFixed(1)}</text>`);
      }
    });
    if (metric === 'gen') {
      // ceiling per thread count: one dashed tick across the group
      for (const t of [...new Set(rows.filter((q) => q.type === type).map((q) => q.threads))]) {
        const c = rows.find((q) => q.type === type && q.threads === t && q.ceiling)?.ceiling;
        if (!c) continue;
        const cy = y(c).toFixed(1);
        out.push(`<line x1="${(left + gi * groupW + 4).toFixed(1)}" x2="${(left + (gi + 1) * groupW - 4).toFixed(1)}" y1="${cy}" y2="${cy}" stroke="#555" stroke-dasharray="${t === 1 ? '2,2' : '6,3'}"><title>${esc(`ceiling at ${t} thread(s): ${c.toFixed(1)} tok/s`)}</title></line>`);
      }
    }
  });
  out.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#333"/>`);
  out.push(`<line x1="${left}" x2="${left + plotW}" y1="${top + plotH}" y2="${top + plotH}" stroke="#333"/>`);
  return out;
}

function svg(rows: Row[]): string {
  const shapes = [...new Set(rows.map((r) => r.shape))];
  const W = 980;
  const PH = 250;
  const H = 40 + shapes.length * PH + 30;
  const body: string[] = [];
  shapes.forEach((shape, i) => {
    const rs = rows.filter((r) => r.shape === shape);
    body.push(...panel(rs, 'gen', `${shape}: generated tokens/s`, 0, 30 + i * PH, W / 2, PH));
    body.push(...panel(rs, 'prompt', `${shape}: prompt tokens/s`, W / 2, 30 + i * PH, W / 2, PH));
  });
  const legend = Object.entries(COLORS).map(([s, c], i) => {
    const [engine, t] = s.split(' ');
    const x = 20 + i * 148;
    return `<rect x="${x}" y="8" width="12" height="12" fill="${c}"/><text x="${x + 16}" y="18" font-size="11">${esc(`${engine === 'pantheon' ? 'Pantheon' : 'llama.cpp'}, ${t} thread${t === '1' ? '' : 's'}`)}</text>`;
  });
  legend.push('<line x1="620" x2="650" y1="14" y2="14" stroke="#555" stroke-dasharray="2,2"/><line x1="655" x2="685" y1="14" y2="14" stroke="#555" stroke-dasharray="6,3"/>'
    + '<text x="690" y="18" font-size="11">bandwidth ceiling, 1 / 2 threads</text>');
  const loads = rows.map((r) => r.load1);
  const note = `log scales; medians of the runs; load average during the runs: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on 2 vCPUs (shared machine)`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    ...legend,
    ...body,
    `<text x="10" y="${H - 10}" font-size="10" fill="#555">${esc(note)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------

const argv = process.argv.slice(2);
let svgOut: string | undefined;
let md = false;
const files: string[] = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--svg') svgOut = argv[++i];
  else if (argv[i] === '--markdown') md = true;
  else files.push(argv[i]);
}
if (!files.length) {
  console.error('usage: node bin/run-ts.mjs bench/compare-chart.ts REPORT.json… [--svg OUT.svg] [--markdown]');
  process.exit(2);
}
// A later report replaces an earlier one for the same shape, type, threads and engine.
const all = files.flatMap((file) => {
  try {
    return rowsOf(JSON.parse(readFileSync(file, 'utf8')) as BenchReport);
  } catch (err) {
    console.error(`skipping ${file}: ${(err as Error).message}`);
    return [];
  }
});
const keyOf = (r: Row) => `${r.shape}|${r.type}|${r.threads}|${r.engine}`;
const rows = [...new Map(all.map((r) => [keyOf(r), r])).values()];
if (svgOut) writeFileSync(svgOut, svg(rows));
if (md || !svgOut) console.log(markdown(rows));
