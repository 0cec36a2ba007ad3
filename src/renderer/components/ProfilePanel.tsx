// "Profile" beside the chat: where the last reply's time went, per op kind (each matrix product by
// type, attention, norms, rope, sampling) and per layer, prompt and generation apart: the counters
// of `pantheon run --profile`, for the reply the engine just gave.

import type { ProfileView } from '../../shared/contract.js';
import { useChat } from '../store/chat.js';

const W = 220;
const ms = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

function OpsChart({ p }: { p: ProfileView }) {
  const ops = p.ops.slice(0, 12);
  const max = Math.max(1e-9, ...ops.map((o) => Math.max(o.promptMs, o.genMs)));
  const row = 26;
  return (
    <figure className="chart">
      <figcaption>Time per op (ms): prompt · generation</figcaption>
      <svg viewBox={`0 0 ${W} ${ops.length * row}`} width="100%" role="img" aria-label={`Time per op of the last reply: ${ops.map((o) => `${o.op} ${ms(o.promptMs)} ms prompt, ${ms(o.genMs)} ms generation`).join('; ')}`}>
        {ops.map((o, i) => (
          <g key={o.op}>
            <title>{`${o.op}: ${ms(o.promptMs)} ms prompt, ${ms(o.genMs)} ms generation (${o.genCalls} calls)`}</title>
            <text x={0} y={i * row + 9} className="chart-label">{o.op}</text>
            <rect x={0} y={i * row + 12} width={Math.max(0.5, (W * 0.8 * o.promptMs) / max)} height={5} className="chart-bar chart-bar-prompt" />
            <rect x={0} y={i * row + 18} width={Math.max(0.5, (W * 0.8 * o.genMs) / max)} height={5} className="chart-bar" />
            <text x={W} y={i * row + 22} textAnchor="end" className="chart-value">{`${ms(o.promptMs)} · ${ms(o.genMs)}`}</text>
          </g>
        ))}
      </svg>
    </figure>
  );
}

function LayersChart({ p }: { p: ProfileView }) {
  if (!p.layers.length) return null;
  const perToken = p.layers.map((l) => (p.tokens.gen ? l.genMs / p.tokens.gen : 0));
  const max = Math.max(1e-9, ...perToken);
  const h = 80;
  const base = h - 14;
  const step = W / p.layers.length;
  return (
    <figure className="chart">
      <figcaption>Generation time per layer (ms a token)</figcaption>
      <svg viewBox={`0 0 ${W} ${h}`} width="100%" role="img" aria-label={`Time per layer of the last reply: ${p.layers.length} layers, the slowest ${ms(max)} ms a token`}>
        <line x1={0} x2={W} y1={base} y2={base} className="chart-axis" />
        {p.layers.map((l, i) => {
          const bh = Math.max(1, ((base - 2) * perToken[i]) / max);
          return (
            <rect key={l.layer} x={i * step + step * 0.15} y={base - bh} width={Math.max(1, step * 0.7)} height={bh} className="chart-bar">
              <title>{`blk.${l.layer}: ${ms(perToken[i])} ms a token (prompt ${ms(l.promptMs)} ms)`}</title>
            </rect>
          );
        })}
        <text x={0} y={h - 2} className="chart-label">blk.0</text>
        <text x={W} y={h - 2} textAnchor="end" className="chart-label">blk.{p.layers[p.layers.length - 1].layer}</text>
      </svg>
    </figure>
  );
}

export function ProfilePanel() {
  const p = useChat((s) => s.profile);
  return (
    <section className="profile-panel" aria-label="Profile of the last reply">
      <h2>Profile</h2>
      {!p ? (
        <p className="muted hint">The next reply is profiled: time per op and per layer.</p>
      ) : (
        <>
          <p className="muted hint">{p.tokens.prompt} prompt tokens, {p.tokens.gen} generated.</p>
          <OpsChart p={p} />
          <LayersChart p={p} />
        </>
      )}
    </section>
  );
}
