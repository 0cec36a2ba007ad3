// Statistics of the selected tensor, computed off the main thread from the file ('model:tensorStats'):
// the numbers, a histogram of the dequantised values, a heatmap of mean |value| over the matrix,
// and for block formats the spread of the blocks' scales. Small tensors are computed on selection,
// big ones on request, with progress and Cancel.

import { useEffect, useRef, useState } from 'react';
import type { HistogramView, TensorRow, TensorStatsView } from '../../shared/contract.js';
import { api } from '../api.js';
import { errorLine, formatInt } from '../lib/format.js';

/** Tensors up to this many elements are computed as soon as they are selected. */
const AUTO_ELEMENTS = 1 << 22;
const W = 320;

type State =
  | { kind: 'idle' }
  | { kind: 'running'; done: number; total: number }
  | { kind: 'done'; stats: TensorStatsView }
  | { kind: 'error'; message: string };

const num = (x: number | null): string => (x === null ? '—' : Math.abs(x) >= 1e4 || (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(4) : x.toPrecision(5));

export function HistogramChart({ hist, label, caption }: { hist: HistogramView; label: string; caption: string }) {
  const h = 90;
  const base = h - 16;
  const max = Math.max(1, ...hist.counts);
  const step = W / hist.counts.length;
  return (
    <figure className="chart">
      <figcaption>{caption}</figcaption>
      <svg viewBox={`0 0 ${W} ${h}`} width="100%" role="img" aria-label={label}>
        <line x1={0} x2={W} y1={base} y2={base} className="chart-axis" />
        {hist.counts.map((c, i) => {
          const bh = c === 0 ? 0 : Math.max(1, ((base - 2) * c) / max);
          return (
            <rect key={i} x={i * step} y={base - bh} width={Math.max(0.5, step - 0.5)} height={bh} className="chart-bar">
              <title>{`[${num(hist.edges[i])}, ${num(hist.edges[i + 1])}${i === hist.counts.length - 1 ? ']' : ')'}: ${formatInt(c)}`}</title>
            </rect>
          );
        })}
        <text x={0} y={h - 2} className="chart-label">{num(hist.edges[0])}</text>
        <text x={W} y={h - 2} textAnchor="end" className="chart-label">{num(hist.edges[hist.edges.length - 1])}</text>
      </svg>
    </figure>
  );
}

function Heatmap({ stats }: { stats: TensorStatsView }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const map = stats.heatmap;
  useEffect(() => {
    const c = canvas.current;
    const ctx = c?.getContext('2d');
    if (!c || !ctx || !map) return;
    const max = Math.max(...map.values) || 1;
    const accent = getComputedStyle(c).getPropertyValue('color') || 'rgb(53, 88, 200)';
    ctx.clearRect(0, 0, c.width, c.height);
    ctx.fillStyle = accent;
    for (let r = 0; r < map.rows; r++) {
      for (let k = 0; k < map.cols; k++) {
        // Square root: the small magnitudes most cells hold stay visible beside a few large ones.
        ctx.globalAlpha = Math.sqrt(map.values[r * map.cols + k] / max);
        ctx.fillRect(k, r, 1, 1);
      }
    }
    ctx.globalAlpha = 1;
  }, [map]);
  if (!map) return null;
  return (
    <figure className="chart">
      <figcaption>Mean |value|, {map.matrixRows} rows × {map.matrixCols} columns</figcaption>
      <canvas ref={canvas} className="heatmap" width={map.cols} height={map.rows} role="img"
        aria-label={`Heatmap of ${stats.name}: ${map.rows} × ${map.cols} cells, each the mean |value| of ${Math.ceil(map.matrixRows / map.rows)} × ${Math.ceil(map.matrixCols / map.cols)} elements`} />
      <div className="heatmap-axes muted"><span>rows ↓ 0 … {map.matrixRows - 1}</span><span>columns → 0 … {map.matrixCols - 1}</span></div>
    </figure>
  );
}

export function TensorStatsPanel({ tensor }: { tensor: TensorRow }) {
  const [state, setState] = useState<State>({ kind: 'idle' });
  const running = useRef(false);

  const compute = (): void => {
    running.current = true;
    setState({ kind: 'running', done: 0, total: 2 * tensor.elements });
    api().model.tensorStats({ name: tensor.name }).then(
      (stats) => { running.current = false; setState({ kind: 'done', stats }); },
      (err: unknown) => {
        running.current = false;
        const message = errorLine(err);
        setState(message === 'Cancelled.' ? { kind: 'idle' } : { kind: 'error', message });
      },
    );
  };

  useEffect(() => {
    const off = api().on('model:inspectProgress', (p) => {
      if (p.job === 'stats' && running.current) setState((s) => (s.kind === 'running' ? { kind: 'running', done: p.done, total: p.total } : s));
    });
    setState({ kind: 'idle' });
    if (tensor.elements <= AUTO_ELEMENTS) compute();
    return () => {
      off();
      if (running.current) void api().model.cancelInspect();
      running.current = false;
    };
    // A new tensor starts afresh.
  }, [tensor.name]);

  return (
    <section className="tensor-stats" aria-label={`Statistics of ${tensor.name}`}>
      <h3>Statistics</h3>
      {state.kind === 'idle' && (
        <button type="button" onClick={compute}>Compute statistics ({formatInt(tensor.elements)} elements)</button>
      )}
      {state.kind === 'running' && (
        <div className="stats-progress">
          <progress max={state.total} value={state.done} aria-label={`Reading ${tensor.name}`} />
          <button type="button" onClick={() => void api().model.cancelInspect()}>Cancel</button>
        </div>
      )}
      {state.kind === 'error' && <p className="line line-error" role="alert">{state.message}</p>}
      {state.kind === 'done' && (
        <>
          <dl className="facts">
            {([
              ['Min', num(state.stats.min)], ['Max', num(state.stats.max)], ['Mean', num(state.stats.mean)], ['Std', num(state.stats.std)],
              ['Zeros', formatInt(state.stats.zeros)], ['Non-finite', formatInt(state.stats.nonfinite)],
              ...(state.stats.scales ? [['Block scales', `${formatInt(state.stats.scales.count)} in ${num(state.stats.scales.min)} … ${num(state.stats.scales.max)}`]] : []),
            ] as [string, string][]).map(([k, v]) => (
              <div key={k}><dt>{k}</dt><dd className="mono">{v}</dd></div>
            ))}
          </dl>
          <HistogramChart hist={state.stats.histogram} caption="Values" label={`Histogram of ${tensor.name}: ${state.stats.histogram.counts.length} bins from ${num(state.stats.min)} to ${num(state.stats.max)}`} />
          <Heatmap stats={state.stats} />
          {state.stats.scales && (
            <HistogramChart hist={state.stats.scales.histogram} caption="Block scales" label={`Histogram of the block scales of ${tensor.name}`} />
          )}
        </>
      )}
    </section>
  );
}
