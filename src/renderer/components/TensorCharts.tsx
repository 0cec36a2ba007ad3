// Two plain-SVG charts for the tensor browser: bytes by quantisation type and bytes per layer.

import type { TensorRow } from '../../shared/contract.js';
import { formatBytes } from '../lib/format.js';
import { bytesByType, groupByLayer } from '../lib/tensors.js';

const W = 320;

export function BytesByTypeChart({ tensors }: { tensors: readonly TensorRow[] }) {
  const data = bytesByType(tensors);
  if (!data.length) return null;
  const total = data.reduce((a, d) => a + d.bytes, 0) || 1;
  const max = Math.max(1, ...data.map((d) => d.bytes));
  const bar = 18;
  const gap = 6;
  const label = 64;
  const h = data.length * (bar + gap);
  return (
    <figure className="chart">
      <figcaption>Bytes by type</figcaption>
      <svg viewBox={`0 0 ${W} ${Math.max(h, 1)}`} width="100%" role="img" aria-label={`Bytes by type: ${data.map((d) => `${d.type} ${formatBytes(d.bytes)}`).join(', ')}`}>
        {data.map((d, i) => {
          const y = i * (bar + gap);
          const w = Math.max(1, ((W - label - 96) * d.bytes) / max);
          return (
            <g key={d.type} className={`chart-type type-${d.type.toLowerCase()}`}>
              <title>{`${d.type}: ${d.tensors} tensors, ${formatBytes(d.bytes)} (${((100 * d.bytes) / total).toFixed(1)}%)`}</title>
              <text x={0} y={y + bar - 5} className="chart-label">
                {d.type}
              </text>
              <rect x={label} y={y} width={w} height={bar} rx={3} className="chart-bar" />
              <text x={label + w + 6} y={y + bar - 5} className="chart-value">
                {formatBytes(d.bytes)}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

export function BytesPerLayerChart({ tensors }: { tensors: readonly TensorRow[] }) {
  const groups = groupByLayer(tensors).filter((g) => g.layer !== null);
  if (!groups.length) return null;
  const max = Math.max(1, ...groups.map((g) => g.bytes));
  const h = 120;
  const base = h - 16;
  const step = W / groups.length;
  // Bars no wider than 48 units: one or two layers should not fill the chart with a slab.
  const bw = Math.max(1, Math.min(48, step * 0.7));
  return (
    <figure className="chart">
      <figcaption>Bytes per layer</figcaption>
      <svg viewBox={`0 0 ${W} ${h}`} width="100%" role="img" aria-label={`Bytes per layer for ${groups.length} layers, largest ${formatBytes(max)}`}>
        <line x1={0} x2={W} y1={base} y2={base} className="chart-axis" />
        {groups.map((g, i) => {
          const bh = Math.max(1, ((base - 4) * g.bytes) / max);
          return (
            <g key={g.label}>
              <title>{`${g.label}: ${g.tensors.length} tensors, ${formatBytes(g.bytes)}`}</title>
              <rect x={i * step + (step - bw) / 2} y={base - bh} width={bw} height={bh} rx={2} className="chart-bar" />
            </g>
          );
        })}
        <text x={groups.length > 1 ? 0 : W / 2} y={h - 2} textAnchor={groups.length > 1 ? 'start' : 'middle'} className="chart-label">
          {groups[0].label}
        </text>
        {groups.length > 1 && (
          <text x={W} y={h - 2} textAnchor="end" className="chart-label">
            {groups[groups.length - 1].label}
          </text>
        )}
      </svg>
    </figure>
  );
}
