// "Probabilities": a reply as its tokens, each shaded by how likely the model found it (the less
// likely, the stronger the shade). Hovering or focusing a token shows the 10 most likely tokens at
// that step, with the probability after the sampler (temperature, top-k, top-p, min-p) and the raw
// softmax; choosing one branches the reply there: cut before the token, the alternative put in
// its place, and the model goes on from it.

import { useState } from 'react';
import type { StoredMessage, StoredToken } from '../../shared/contract.js';
import { useChat } from '../store/chat.js';

const pct = (p: number): string => (p >= 0.995 ? '100%' : p < 0.001 ? '<0.1%' : `${(p * 100).toFixed(1)}%`);
const shown = (t: string): string => JSON.stringify(t).slice(1, -1);

function Alternatives({ tk, index, messageId, busy }: { tk: StoredToken; index: number; messageId: string; busy: boolean }) {
  const branch = useChat((s) => s.branch);
  return (
    <span className="tok-pop" role="tooltip">
      <span className="tok-pop-head">step {index + 1}: sampler · raw</span>
      {tk.alts.map((a) => (
        <button key={a.t + a.lp} type="button" className={`tok-alt${a.t === tk.t ? ' tok-alt-chosen' : ''}`} disabled={busy || a.t === tk.t}
          aria-label={`Branch with "${shown(a.t)}": ${pct(a.p)} after the sampler, ${pct(Math.exp(a.lp))} raw`}
          onClick={(e) => { e.stopPropagation(); void branch(messageId, index, a.t); }}>
          <span className="mono">{shown(a.t) || '∅'}</span>
          <span className="tok-p">{pct(a.p)}</span>
          <span className="tok-p muted">{pct(Math.exp(a.lp))}</span>
        </button>
      ))}
    </span>
  );
}

export function TokenProbabilities({ m, busy }: { m: StoredMessage; busy: boolean }) {
  const [open, setOpen] = useState<number | null>(null);
  const tokens = m.tokens ?? [];
  return (
    <div className="token-view" role="group" aria-label="Reply tokens by probability">
      {tokens.map((tk, i) => {
        const p = Math.exp(tk.lp);
        return (
          <span key={i} className={`tok${open === i ? ' tok-open' : ''}`} tabIndex={0} style={{ '--unlikely': String(Math.min(1, 1 - p)) } as React.CSSProperties}
            aria-label={`${shown(tk.t)}: ${pct(p)} raw, ${pct(tk.p)} after the sampler`}
            onMouseEnter={() => setOpen(i)} onMouseLeave={() => setOpen((o) => (o === i ? null : o))}
            onFocus={() => setOpen(i)} onBlur={(e) => { if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setOpen((o) => (o === i ? null : o)); }}
            onKeyDown={(e) => { if (e.key === 'Escape') setOpen(null); }}>
            {tk.t}
            {open === i && <Alternatives tk={tk} index={i} messageId={m.id} busy={busy} />}
          </span>
        );
      })}
    </div>
  );
}
