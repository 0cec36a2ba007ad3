// Tokens used by the conversation out of the context size.

import { POLICY_LABEL, useChat } from '../store/chat.js';
import { useSettings } from '../store/settings.js';

export function ContextGauge() {
  const context = useChat((s) => s.context);
  const dropped = useChat((s) => s.dropped);
  const policy = useSettings((s) => s.settings?.contextPolicy ?? 'stop');
  const note = (
    <span className="muted gauge-policy" title="What happens when the conversation outgrows the context (Chat settings)">
      when full: {POLICY_LABEL[policy]}{dropped > 0 ? ` · ${dropped} earlier message${dropped === 1 ? '' : 's'} left out` : ''}
    </span>
  );
  if (!context) return <><span className="gauge muted">context: —</span>{note}</>;
  const frac = context.size ? context.used / context.size : 0;
  return (
    <>
    <span className={`gauge${frac >= 0.9 ? ' gauge-full' : ''}`}>
      <meter aria-label="Context used" min={0} max={context.size} value={context.used} high={context.size * 0.9} />
      <span>
        {context.used > context.size
          ? `${context.used.toLocaleString('en-US')} tokens: more than the ${context.size.toLocaleString('en-US')}-token context`
          : `${context.used.toLocaleString('en-US')} / ${context.size.toLocaleString('en-US')} tokens`}
      </span>
    </span>
    {note}
    </>
  );
}
