// Tab "Tensors": every tensor in a real, virtualised <table>, sortable on each column, filtered by
// name / type / layer, grouped by layer with totals; charts; details of the selected tensor.

import { useMemo, useRef, useState } from 'react';
import type { OpenedModel, TensorRow } from '../../shared/contract.js';
import { formatBytes, formatInt } from '../lib/format.js';
import { filterTensors, groupByLayer, shapeText, sortTensors, type TensorColumn, type TensorFilter, type TensorSort } from '../lib/tensors.js';
import { ModelCompare } from './ModelCompare.js';
import { BytesByTypeChart, BytesPerLayerChart } from './TensorCharts.js';
import { TensorDetails } from './TensorDetails.js';
import { useVirtual } from './useVirtual.js';

const ROW = 30;

const COLUMNS: { id: TensorColumn; label: string; numeric: boolean }[] = [
  { id: 'name', label: 'Name', numeric: false },
  { id: 'type', label: 'Type', numeric: false },
  { id: 'shape', label: 'Shape', numeric: true },
  { id: 'elements', label: 'Elements', numeric: true },
  { id: 'bytes', label: 'Bytes', numeric: true },
  { id: 'offset', label: 'Offset', numeric: true },
];

type Line = { kind: 'group'; key: string; label: string; count: number; elements: number; bytes: number; collapsed: boolean } | { kind: 'tensor'; row: TensorRow };

export function TensorBrowser({ model }: { model: OpenedModel }) {
  const [filter, setFilter] = useState<TensorFilter>({ name: '', type: '', layer: 'all' });
  const [sort, setSort] = useState<TensorSort>({ column: 'offset', dir: 'ascending' });
  const [grouped, setGrouped] = useState(true);
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set());
  const [selected, setSelected] = useState<string | null>(null);
  const [comparing, setComparing] = useState(false);
  const scroller = useRef<HTMLDivElement>(null);

  const types = useMemo(() => [...new Set(model.tensors.map((t) => t.type))].sort(), [model.tensors]);
  const layers = useMemo(() => [...new Set(model.tensors.map((t) => t.layer).filter((l): l is number => l !== null))].sort((a, b) => a - b), [model.tensors]);
  const shown = useMemo(() => sortTensors(filterTensors(model.tensors, filter), sort), [model.tensors, filter, sort]);
  const totals = useMemo(() => shown.reduce((a, t) => ({ bytes: a.bytes + t.bytes, elements: a.elements + t.elements }), { bytes: 0, elements: 0 }), [shown]);

  const lines = useMemo<Line[]>(() => {
    if (!grouped) return shown.map((row) => ({ kind: 'tensor', row }));
    const out: Line[] = [];
    for (const g of groupByLayer(shown)) {
      const isCollapsed = collapsed.has(g.label);
      out.push({ kind: 'group', key: g.label, label: g.layer === null ? 'Not in a layer' : g.label, count: g.tensors.length, elements: g.elements, bytes: g.bytes, collapsed: isCollapsed });
      if (!isCollapsed) for (const row of g.tensors) out.push({ kind: 'tensor', row });
    }
    return out;
  }, [shown, grouped, collapsed]);

  const v = useVirtual(scroller, lines.length, ROW);
  const selectedRow = model.tensors.find((t) => t.name === selected) ?? null;

  const sortBy = (column: TensorColumn): void =>
    setSort((s) => (s.column === column ? { column, dir: s.dir === 'ascending' ? 'descending' : 'ascending' } : { column, dir: COLUMNS.find((c) => c.id === column)!.numeric ? 'descending' : 'ascending' }));
  const toggleGroup = (key: string): void =>
    setCollapsed((old) => {
      const next = new Set(old);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });

  const body = [];
  for (let i = v.start; i < v.end; i++) {
    const line = lines[i];
    if (line.kind === 'group') {
      body.push(
        <tr key={`g:${line.key}`} className="group-row" style={{ height: ROW }}>
          <th scope="rowgroup" colSpan={3}>
            <button type="button" className="link-button" aria-expanded={!line.collapsed} onClick={() => toggleGroup(line.key)}>
              <span className="chevron" aria-hidden="true">
                {line.collapsed ? '▸' : '▾'}
              </span>
              {line.label}
              <span className="muted"> · {line.count} tensors</span>
            </button>
          </th>
          <td className="num">{formatInt(line.elements)}</td>
          <td className="num">{formatBytes(line.bytes)}</td>
          <td />
        </tr>,
      );
    } else {
      const t = line.row;
      body.push(
        <tr key={t.name} className={t.name === selected ? 'selected' : undefined} aria-selected={t.name === selected} style={{ height: ROW }}>
          <td className="mono tensor-name">
            <button type="button" className="link-button" onClick={() => setSelected(t.name)} title={t.name}>
              {t.name}
            </button>
          </td>
          <td className="mono">{t.type}</td>
          <td className="mono num">{shapeText(t.dims)}</td>
          <td className="num">{formatInt(t.elements)}</td>
          <td className="num" title={`${formatInt(t.bytes)} bytes`}>
            {formatBytes(t.bytes)}
          </td>
          <td className="num mono">{formatInt(t.offset)}</td>
        </tr>,
      );
    }
  }

  return (
    <div className="tensors">
      <div className="toolbar">
        <input type="search" className="filter" aria-label="Filter tensors by name" placeholder="Filter by name: blk.0, attn_q" value={filter.name} onChange={(e) => setFilter({ ...filter, name: e.target.value })} />
        <label>
          Type{' '}
          <select value={filter.type} onChange={(e) => setFilter({ ...filter, type: e.target.value })}>
            <option value="">all</option>
            {types.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Layer{' '}
          <select value={filter.layer} onChange={(e) => setFilter({ ...filter, layer: e.target.value })}>
            <option value="all">all</option>
            <option value="none">not in a layer</option>
            {layers.map((l) => (
              <option key={l} value={String(l)}>
                blk.{l}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input type="checkbox" checked={grouped} onChange={(e) => setGrouped(e.target.checked)} /> Group by layer
        </label>
        <button type="button" aria-pressed={comparing} onClick={() => setComparing((c) => !c)}>
          Compare with…
        </button>
        <span className="muted" role="status">
          {shown.length} of {model.tensors.length} tensors · {formatInt(totals.elements)} elements · {formatBytes(totals.bytes)}
        </span>
      </div>
      {comparing && <ModelCompare model={model} onClose={() => setComparing(false)} />}
      <div className={`tensors-body${model.tensors.length === 0 ? ' no-side' : ''}`}>
        <div className="table-scroll tensor-scroll" ref={scroller} onScroll={v.onScroll}>
          <table className="tensor-table" aria-label="Tensors" aria-rowcount={shown.length + 1}>
            <thead>
              <tr>
                {COLUMNS.map((c) => (
                  <th key={c.id} scope="col" className={c.numeric ? 'num' : undefined} aria-sort={sort.column === c.id ? sort.dir : 'none'}>
                    <button type="button" className="sort-button" onClick={() => sortBy(c.id)}>
                      {c.label}
                      <span className="sort-mark" aria-hidden="true">
                        {sort.column === c.id ? (sort.dir === 'ascending' ? '▲' : '▼') : ''}
                      </span>
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {v.padTop > 0 && (
                <tr aria-hidden="true" className="spacer" style={{ height: v.padTop }}>
                  <td colSpan={6} />
                </tr>
              )}
              {body}
              {v.padBottom > 0 && (
                <tr aria-hidden="true" className="spacer" style={{ height: v.padBottom }}>
                  <td colSpan={6} />
                </tr>
              )}
            </tbody>
          </table>
          {shown.length === 0 && <p className="muted empty">{model.tensors.length === 0 ? 'This file holds no tensors.' : 'No tensor matches the filter.'}</p>}
        </div>
        {model.tensors.length > 0 && (
          <aside className="tensors-side">
            {selectedRow && <TensorDetails tensor={selectedRow} model={model} onClose={() => setSelected(null)} />}
            <BytesByTypeChart tensors={shown} />
            <BytesPerLayerChart tensors={shown} />
          </aside>
        )}
      </div>
    </div>
  );
}
