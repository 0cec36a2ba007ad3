// One message: the user's as plain text (editable and resendable), a reply as Markdown with its
// speed underneath and the exact prompt it came from. A reasoning model's thinking sits above its
// reply in a collapsed section that says how long it took, and streams there while the model thinks.

import { memo, useMemo, useState } from 'react';
import type { ReplyReasoning, StoredMessage } from '../../shared/contract.js';
import { formatMs } from '../lib/format.js';
import { renderMarkdown } from '../lib/markdown.js';
import { useChat } from '../store/chat.js';
import { useSettings } from '../store/settings.js';
import { CopyButton } from './CopyButton.js';
import { TokenProbabilities } from './TokenProbabilities.js';

const STOP_TEXT: Record<string, string> = {
  eos: 'end of text',
  length: 'max tokens reached',
  stop: 'stop sequence',
  cancelled: 'stopped',
  context: 'context full',
  error: 'error',
};

const Markdown = memo(function Markdown({ text }: { text: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div className="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
});

function UserMessage({ m, busy }: { m: StoredMessage; busy: boolean }) {
  const editAndResend = useChat((s) => s.editAndResend);
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(m.content);
  if (editing) {
    const submit = (): void => {
      setEditing(false);
      void editAndResend(m.id, text);
    };
    return (
      <article className="message user editing" aria-label="Your message, editing">
        <textarea
          aria-label="Edit message"
          value={text}
          autoFocus
          rows={Math.min(10, text.split('\n').length + 1)}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              submit();
            }
            if (e.key === 'Escape') setEditing(false);
          }}
        />
        <div className="message-actions">
          <button type="button" className="primary" onClick={submit} disabled={!text.trim()}>
            Save and resend
          </button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </div>
      </article>
    );
  }
  return (
    <article className="message user" aria-label="Your message">
      <div className="user-text">{m.content}</div>
      <div className="message-actions">
        <button
          type="button"
          className="small-button"
          aria-label="Edit message and resend"
          disabled={busy}
          onClick={() => {
            setText(m.content);
            setEditing(true);
          }}
        >
          Edit
        </button>
      </div>
    </article>
  );
}

/** "Thought for 3.2 s · 148 tokens"; "Thinking… 1.4 s · 52 tokens" while it goes on. */
function thinkingLine(r: ReplyReasoning, live: boolean): string {
  const time = r.ms < 1000 ? `${Math.round(r.ms)} ms` : `${(r.ms / 1000).toFixed(1)} s`;
  const tokens = `${r.tokens} token${r.tokens === 1 ? '' : 's'}`;
  return live ? `Thinking… ${time} · ${tokens}` : `Thought for ${time} · ${tokens}`;
}

function Reasoning({ r, live }: { r: ReplyReasoning; live: boolean }) {
  return (
    <details className={`reasoning${live ? ' live' : ''}`}>
      <summary>{thinkingLine(r, live)}</summary>
      <div className="reasoning-text">{r.text}</div>
    </details>
  );
}

function ReplyMessage({ m, streaming, busy }: { m: StoredMessage; streaming: boolean; busy: boolean }) {
  const s = m.stats;
  const probabilities = useSettings((x) => x.settings?.showProbabilities ?? false) && !!m.tokens?.length;
  const prompt = m.prompt;
  const thinking = streaming && !m.content;
  return (
    <article className={`message assistant${streaming ? ' streaming' : ''}`} aria-label="Reply" aria-busy={streaming}>
      {m.reasoning && <Reasoning r={m.reasoning} live={thinking} />}
      {probabilities ? <TokenProbabilities m={m} busy={busy} /> : m.content ? <Markdown text={m.content} /> : m.reasoning && streaming ? null : <p className="muted">{streaming ? 'Thinking…' : '(no text)'}</p>}
      <footer className="reply-foot">
        {s ? (
          <span className="stats">
            {s.generatedTokens} tokens · first token {formatMs(s.ttftMs)} · {s.tokensPerS.toFixed(1)} tokens/s · {STOP_TEXT[s.stopReason] ?? s.stopReason}
          </span>
        ) : (
          <span className="stats">{streaming ? 'generating…' : 'interrupted'}</span>
        )}
        {m.modelName && <span className="muted">{m.modelName}</span>}
        {!streaming && m.content && <CopyButton label="Copy reply" getText={() => m.content} />}
      </footer>
      {m.versions && m.versions.length > 0 && (
        <details className="versions">
          <summary>{m.versions.length} earlier version{m.versions.length === 1 ? '' : 's'}</summary>
          <ol>
            {m.versions.map((v, i) => (
              <li key={i} aria-label={`Version ${i + 1}`}>
                <Markdown text={v.content} />
                {v.stats && <span className="stats muted">{v.stats.generatedTokens} tokens · {STOP_TEXT[v.stats.stopReason] ?? v.stats.stopReason}</span>}
              </li>
            ))}
          </ol>
        </details>
      )}
      {prompt && (
        <details className="prompt">
          <summary>Show prompt</summary>
          <p className="muted">
            {prompt.tokens} tokens, template {prompt.templateName}
          </p>
          <pre className="prompt-text">{prompt.text}</pre>
        </details>
      )}
    </article>
  );
}

export function MessageItem({ m, streaming, busy }: { m: StoredMessage; streaming: boolean; busy: boolean }) {
  if (m.role === 'user') return <UserMessage m={m} busy={busy} />;
  if (m.role === 'assistant') return <ReplyMessage m={m} streaming={streaming} busy={busy} />;
  return null;
}
