// "Compare with…" in the tensor browser: the opened model against another file of the library or
// one chosen in the open dialog ('model:compare', computed off the main thread). Shows what
// metadata and which tensors differ, the relative RMS difference of each differing tensor as a
// sorted table, and the largest difference per layer as a bar chart.

import { useEffect, useMemo, useState } from 'react';
import type { ModelCompareView, ModelEntry, OpenedModel } from '../../shared/contract.js';
import { api } from '../api.js';
import { errorLine } from '../lib/format.js';
import { useApp } from '../store/app.js';

const W = 320;
const ROWS = 200;

type State = { kind: 'idle' } | { kind: 'running'; done: number; total: number } | { kind: 'done'; diff: ModelCompareView } | { kind: 'error'; message: string };

const rel = (x: number | null): string => (x === null ? '—' : x === 0 ? '0' : x.toExponential(2));

function layerOf(name: string): number | null {
  const m = /^blk\.(\d+)\./.exec(name);
  return m ? Number(m[1]) : null;
}

function ByLayerChart({ diff }: { diff: ModelCompareView }) {
  const layers = new Map<number, number>();
  for (const c of diff.tensors.changed) {
    const l = layerOf(c.name);
    if (l !== null && c.relRms !== null && Number.isFinite(c.relRms)) layers.set(l, Math.max(layers.get(l) ?? 0, c.relRms));
  }
  const keys = [...layers.keys()].sort((a, b) => a - b);
  if (!keys.length) return null;
  const max = Math.max(...layers.values()) || 1;
  const h = 90;
  const base = h - 16;
  const step = W / keys.length;
  const bw = Math.max(1, Math.min(40, step * 0.7));
  return (
    <figure className="chart">
      <figcaption>Largest relative RMS difference per layer</figcaption>
      <svg viewBox={`0 0 ${W} ${h}`} width="100%" role="img" aria-label={`Difference by layer: ${keys.length} layers, largest ${rel(max)}`}>
        <line x1={0} x2={W} y1={base} y2={base} className="chart-axis" />
        {keys.map((l, i) => {
          const bh = Math.max(1, ((base - 4) * (layers.get(l) as number)) / max);
          return (
            <rect key={l} x={i * step + (step - bw) / 2} y={base - bh} width={bw} height={bh} rx={2} className="chart-bar">
              <title>{`blk.${l}: ${rel(layers.get(l) as number)}`}</title>
            </rect>
          );
        })}
        <text x={0} y={h - 2} className="chart-label">blk.{keys[0]}</text>
        {keys.length > 1 && <text x={W} y={h - 2} textAnchor="end" className="chart-label">blk.{keys[keys.length - 1]}</text>}
      </svg>
    </figure>
  );
}

function List({ label, items }: { label: string; items: string[] }) {
  if (!items.length) return null;
  return (
    <p>
      <strong>{label} ({items.length}):</strong> <span className="mono">{items.slice(0, 40).join(', ')}{items.length > 40 ? ', …' : ''}</span>
    </p>
  );
}

export function ModelCompare({ model, onClose }: { model: OpenedModel; onClose: () => void }) {
  const library = useApp((s) => s.library);
  const others = useMemo<ModelEntry[]>(() => {
    const all = [...(library?.demo ? [library.demo] : []), ...(library?.recent ?? []), ...(library?.folderModels ?? [])];
    const seen = new Set<string>();
    return all.filter((e) => e.id !== model.entry.id && !e.error && !seen.has(e.id) && (seen.add(e.id), true));
  }, [library, model.entry.id]);
  const [choice, setChoice] = useState<string>('');
  const [state, setState] = useState<State>({ kind: 'idle' });

  useEffect(() => api().on('model:inspectProgress', (p) => {
    if (p.job === 'compare') setState((s) => (s.kind === 'running' ? { kind: 'running', done: p.done, total: p.total } : s));
  }), []);
  useEffect(() => () => { void api().model.cancelInspect(); }, []);

  const run = (id: string | undefined): void => {
    setState({ kind: 'running', done: 0, total: model.tensorCount });
    api().model.compare(id === undefined ? {} : { id }).then(
      (diff) => setState(diff ? { kind: 'done', diff } : { kind: 'idle' }),
      (err: unknown) => {
        const message = errorLine(err);
        setState(message === 'Cancelled.' ? { kind: 'idle' } : { kind: 'error', message });
      },
    );
  };

  const sorted = state.kind === 'done' ? [...state.diff.tensors.changed].sort((a, b) => (b.relRms ?? Infinity) - (a.relRms ?? Infinity)) : [];
  return (
    <section className="compare" aria-label="Compare with another file">
      <header className="array-head">
        <h2>Compare {model.entry.fileName} with…</h2>
        <button type="button" className="icon-button" aria-label="Close the comparison" onClick={onClose}>×</button>
      </header>
      <div className="toolbar">
        <label>
          Library file{' '}
          <select value={choice} onChange={(e) => setChoice(e.target.value)} aria-label="File to compare with">
            <option value="">choose…</option>
            {others.map((e) => <option key={e.id} value={e.id}>{e.fileName}</option>)}
          </select>
        </label>
        <button type="button" disabled={!choice || state.kind === 'running'} onClick={() => run(choice)}>Compare</button>
        <button type="button" disabled={state.kind === 'running'} onClick={() => run(undefined)}>Choose a file…</button>
        {state.kind === 'running' && (
          <>
            <progress max={state.total || 1} value={state.done} aria-label="Comparing tensors" />
            <button type="button" onClick={() => void api().model.cancelInspect()}>Cancel</button>
          </>
        )}
      </div>
      {state.kind === 'error' && <p className="line line-error" role="alert">{state.message}</p>}
      {state.kind === 'done' && (
        <div className="compare-body">
          <p role="status">
            Against <span className="mono">{state.diff.other.fileName}</span>: {state.diff.tensors.changed.length} tensors differ, {state.diff.tensors.unchanged} identical;
            {' '}{state.diff.metadata.added.length + state.diff.metadata.removed.length + state.diff.metadata.changed.length} metadata keys differ.
          </p>
          <List label="Metadata changed" items={state.diff.metadata.changed} />
          <List label="Metadata only here" items={state.diff.metadata.removed} />
          <List label="Metadata only there" items={state.diff.metadata.added} />
          <List label="Tensors only here" items={state.diff.tensors.removed} />
          <List label="Tensors only there" items={state.diff.tensors.added} />
          <div className="compare-grid">
          <ByLayerChart diff={state.diff} />
          {sorted.length > 0 && (
            <div className="table-scroll compare-scroll">
              <table className="tensor-table" aria-label="Tensors that differ">
                <thead>
                  <tr><th scope="col">Tensor</th><th scope="col">Type</th><th scope="col">Shape</th><th scope="col" className="num">Rel. RMS</th><th scope="col" className="num">Max |Δ|</th></tr>
                </thead>
                <tbody>
                  {sorted.slice(0, ROWS).map((c) => (
                    <tr key={c.name}>
                      <td className="mono">{c.name}</td>
                      <td className="mono">{c.a.type === c.b.type ? c.a.type : `${c.a.type} → ${c.b.type}`}</td>
                      <td className="mono">{c.a.dims.join('×') === c.b.dims.join('×') ? c.a.dims.join('×') : `${c.a.dims.join('×')} → ${c.b.dims.join('×')}`}</td>
                      <td className="num mono">{rel(c.relRms)}</td>
                      <td className="num mono">{rel(c.maxAbs)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {sorted.length > ROWS && <p className="muted">The {ROWS} largest of {sorted.length} are shown.</p>}
            </div>
          )}
          </div>
        </div>
      )}
    </section>
  );
}
