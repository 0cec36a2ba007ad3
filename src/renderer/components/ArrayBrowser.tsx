// A long metadata array (tokens, merges, scores) as a virtualised list with its indices. Items are
// fetched in pages with model:metaArray; a search looks an item up by index ("#42") or by text.

import { useEffect, useRef, useState } from 'react';
import type { MetaArrayInfo, MetaValue } from '../../shared/contract.js';
import { api } from '../api.js';
import { errorLine } from '../lib/format.js';
import { copyText, valueText } from '../lib/meta.js';
import { CopyButton } from './CopyButton.js';
import { useVirtual } from './useVirtual.js';

const ROW = 26;
const PAGE = 256;
const MAX_MATCHES = 1000;

type Item = { index: number; value: MetaValue };

export function ArrayBrowser({ keyName, info, onClose }: { keyName: string; info: MetaArrayInfo; onClose: () => void }) {
  const [query, setQuery] = useState('');
  const [pages, setPages] = useState<Record<number, Item[]>>({});
  const [matches, setMatches] = useState<{ items: Item[]; count: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const requested = useRef(new Set<number>());
  const scroller = useRef<HTMLDivElement>(null);

  // A new array: forget what was fetched for the previous one.
  useEffect(() => {
    requested.current = new Set();
    setPages({});
    setQuery('');
    setMatches(null);
    setError(null);
    scroller.current?.scrollTo({ top: 0 });
  }, [keyName]);

  // Search, a moment after typing stops.
  useEffect(() => {
    const q = query.trim();
    if (!q) {
      setMatches(null);
      return;
    }
    let live = true;
    const t = setTimeout(() => {
      api()
        .model.metaArray({ key: keyName, offset: 0, limit: MAX_MATCHES, query: q })
        .then((r) => live && (setMatches({ items: r.items, count: r.matches }), setError(null)))
        .catch((err) => live && setError(errorLine(err)));
    }, 200);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [query, keyName]);

  const count = matches ? matches.items.length : info.length;
  const v = useVirtual(scroller, count, ROW);

  // Fetch the pages the visible window needs.
  useEffect(() => {
    if (matches) return;
    for (let p = Math.floor(v.start / PAGE); p * PAGE < v.end; p++) {
      if (requested.current.has(p)) continue;
      requested.current.add(p);
      api()
        .model.metaArray({ key: keyName, offset: p * PAGE, limit: PAGE })
        .then((r) => setPages((old) => ({ ...old, [p]: r.items })))
        .catch((err) => {
          requested.current.delete(p);
          setError(errorLine(err));
        });
    }
  }, [v.start, v.end, matches, keyName]);

  const itemAt = (i: number): Item | undefined => (matches ? matches.items[i] : pages[Math.floor(i / PAGE)]?.[i % PAGE]);
  const rows = [];
  for (let i = v.start; i < v.end; i++) {
    const it = itemAt(i);
    rows.push(
      <li key={i} className="array-row" style={{ height: ROW }}>
        <span className="array-index">{it ? it.index : matches ? '' : i}</span>
        <span className="array-value">{it ? valueText(it.value, 200) : '…'}</span>
        {it && <CopyButton label={`Copy item ${it.index}`} getText={() => copyText(it.value)} />}
      </li>,
    );
  }

  return (
    <section className="array-browser" aria-label={`Items of ${keyName}`}>
      <header className="array-head">
        <div>
          <h2 className="mono">{keyName}</h2>
          <p className="muted">
            {info.itemType}, {info.length.toLocaleString('en-US')} items
          </p>
        </div>
        <button type="button" className="icon-button" aria-label="Close array" onClick={onClose}>
          ×
        </button>
      </header>
      <input
        type="search"
        className="filter"
        aria-label={`Search ${keyName}`}
        placeholder="Look up by index (#42) or text"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      <p className="muted array-count" role="status">
        {matches ? `${matches.count.toLocaleString('en-US')} match${matches.count === 1 ? '' : 'es'}${matches.count > matches.items.length ? `, first ${matches.items.length} shown` : ''}` : '\u00a0'}
      </p>
      {error && <p className="line line-error">{error}</p>}
      <div className="array-scroll" ref={scroller} onScroll={v.onScroll}>
        <ul className="array-list" aria-label={`${keyName} items`} style={{ paddingTop: v.padTop, paddingBottom: v.padBottom }}>
          {rows}
        </ul>
      </div>
    </section>
  );
}
