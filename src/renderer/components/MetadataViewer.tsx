// Tab "Metadata": every key with its type and value, a filter, copy buttons, and long arrays opened
// in the array browser beside the table.

import { useMemo, useState } from 'react';
import type { MetaEntry, OpenedModel } from '../../shared/contract.js';
import { api } from '../api.js';
import { formatBytes } from '../lib/format.js';
import { copyText, filterMeta, isArrayInfo, typeText, valueText } from '../lib/meta.js';
import { ArrayBrowser } from './ArrayBrowser.js';
import { CopyButton } from './CopyButton.js';

/** The full value for the clipboard; long arrays are fetched whole. */
async function fullValue(e: MetaEntry): Promise<string> {
  if (!isArrayInfo(e.value)) return copyText(e.value);
  const r = await api().model.metaArray({ key: e.key, offset: 0, limit: e.value.length });
  return JSON.stringify(r.items.map((i) => i.value));
}

export function MetadataViewer({ model }: { model: OpenedModel }) {
  const [filter, setFilter] = useState('');
  const [openKey, setOpenKey] = useState<string | null>(null);
  const rows = useMemo(() => filterMeta(model.metadata, filter), [model.metadata, filter]);
  const open = model.metadata.find((e) => e.key === openKey);

  return (
    <div className={`metadata${open ? ' with-side' : ''}`}>
      <section className="meta-main" aria-label="Metadata">
        <div className="toolbar">
          <input type="search" className="filter" aria-label="Filter metadata" placeholder="Filter keys and values" value={filter} onChange={(e) => setFilter(e.target.value)} />
          <span className="muted">
            {rows.length} of {model.metadata.length} keys · GGUF v{model.version} · {model.tensorCount} tensors · data at byte {model.dataOffset.toLocaleString('en-US')} · alignment {model.alignment} ·{' '}
            {formatBytes(model.entry.fileSize)}
          </span>
        </div>
        {model.warnings.map((w) => (
          <p key={w} className="line line-notice">
            {w}
          </p>
        ))}
        <div className="table-scroll">
          <table className="meta-table">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Type</th>
                <th scope="col">Value</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.key} className={e.key === openKey ? 'selected' : undefined}>
                  <th scope="row" className="mono meta-key">
                    {e.key}
                  </th>
                  <td className="mono meta-type">{typeText(e)}</td>
                  <td className="mono meta-value">
                    {isArrayInfo(e.value) ? (
                      <button type="button" className="link-button" aria-label={`Browse ${e.key}`} onClick={() => setOpenKey(e.key)}>
                        {valueText(e.value, 120)} <span className="browse">browse {e.value.length.toLocaleString('en-US')} items</span>
                      </button>
                    ) : (
                      <span className="value-text">{valueText(e.value)}</span>
                    )}
                  </td>
                  <td className="meta-actions">
                    <CopyButton label={`Copy value of ${e.key}`} getText={() => fullValue(e)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {rows.length === 0 && <p className="muted empty">No key matches “{filter}”.</p>}
        </div>
      </section>
      {open && isArrayInfo(open.value) && <ArrayBrowser keyName={open.key} info={open.value} onClose={() => setOpenKey(null)} />}
    </div>
  );
}
