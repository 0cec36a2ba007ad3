// The message box: Enter sends, Shift+Enter starts a new line; Stop while a reply streams.

import { useRef, useState } from 'react';
import { useChat } from '../store/chat.js';
import { ContextGauge } from './ContextGauge.js';

export function Composer({ disabled }: { disabled: boolean }) {
  const [text, setText] = useState('');
  const send = useChat((s) => s.send);
  const stop = useChat((s) => s.stop);
  const regenerate = useChat((s) => s.regenerate);
  const streaming = useChat((s) => s.streaming);
  const canRegenerate = useChat((s) => !s.streaming && !!s.chat && s.chat.messages.some((m) => m.role === 'user'));
  const box = useRef<HTMLTextAreaElement>(null);

  const submit = (): void => {
    if (!text.trim() || streaming || disabled) return;
    const t = text;
    setText('');
    void send(t);
    box.current?.focus();
  };

  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <textarea
        ref={box}
        aria-label="Message"
        placeholder={disabled ? 'Open a model that Pantheon can run to chat with it' : 'Write a message — Enter sends, Shift+Enter for a new line'}
        rows={3}
        value={text}
        disabled={disabled}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            submit();
          }
        }}
      />
      <div className="composer-bar">
        <ContextGauge />
        <span className="spacer-flex" />
        <button type="button" onClick={() => void regenerate()} disabled={!canRegenerate || disabled}>
          Regenerate
        </button>
        {streaming ? (
          <button type="button" className="danger" onClick={stop} disabled={streaming.stopping} title="Esc">
            Stop
          </button>
        ) : (
          <button type="submit" className="primary" disabled={!text.trim() || disabled}>
            Send
          </button>
        )}
      </div>
    </form>
  );
}
