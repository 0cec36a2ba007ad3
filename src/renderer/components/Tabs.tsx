// The tab strip (role=tablist); arrow keys move between tabs.

import type { KeyboardEvent } from 'react';
import type { Tab } from '../store/app.js';

export interface TabSpec {
  id: Tab;
  label: string;
  disabled?: boolean;
}

export function Tabs({ tabs, current, onSelect }: { tabs: TabSpec[]; current: Tab; onSelect: (t: Tab) => void }) {
  const enabled = tabs.filter((t) => !t.disabled);
  const onKey = (e: KeyboardEvent): void => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    const i = enabled.findIndex((t) => t.id === current);
    const next = enabled[(i + (e.key === 'ArrowRight' ? 1 : enabled.length - 1)) % enabled.length];
    onSelect(next.id);
    document.getElementById(`tab-${next.id}`)?.focus();
  };
  return (
    <div className="tabs" role="tablist" aria-label="Views" onKeyDown={onKey}>
      {tabs.map((t) => (
        <button
          key={t.id}
          id={`tab-${t.id}`}
          type="button"
          role="tab"
          aria-selected={t.id === current}
          aria-controls={`panel-${t.id}`}
          tabIndex={t.id === current ? 0 : -1}
          disabled={t.disabled}
          onClick={() => onSelect(t.id)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}
