// The conversation list: new, open, rename, delete.

import { useState } from 'react';
import type { ChatSummary } from '../../shared/contract.js';
import { useChat } from '../store/chat.js';

function ChatItem({ c, current }: { c: ChatSummary; current: boolean }) {
  const select = useChat((s) => s.select);
  const rename = useChat((s) => s.rename);
  const remove = useChat((s) => s.remove);
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(c.title);
  const [confirm, setConfirm] = useState(false);

  if (editing) {
    const commit = (): void => {
      setEditing(false);
      if (title.trim() && title !== c.title) void rename(c.id, title);
    };
    return (
      <li className="chat-item editing">
        <input
          aria-label="Chat title"
          value={title}
          autoFocus
          onChange={(e) => setTitle(e.target.value)}
          onBlur={commit}
          onKeyDown={(e) => {
            if (e.key === 'Enter') commit();
            if (e.key === 'Escape') {
              setTitle(c.title);
              setEditing(false);
            }
          }}
        />
      </li>
    );
  }
  return (
    <li className={`chat-item${current ? ' current' : ''}`}>
      <button type="button" className="chat-open" aria-current={current ? 'true' : undefined} onClick={() => void select(c.id)}>
        <span className="chat-title">{c.title}</span>
        <span className="muted chat-meta">
          {c.messageCount} message{c.messageCount === 1 ? '' : 's'} · {new Date(c.updatedAt).toLocaleDateString(undefined, { month: 'short', day: 'numeric' })}
        </span>
      </button>
      {confirm ? (
        <span className="chat-confirm">
          <button type="button" className="small-button danger" aria-label={`Confirm delete ${c.title}`} onClick={() => void remove(c.id)}>
            Delete
          </button>
          <button type="button" className="small-button" aria-label="Keep chat" onClick={() => setConfirm(false)}>
            Keep
          </button>
        </span>
      ) : (
        <span className="chat-actions">
          <button
            type="button"
            className="icon-button"
            aria-label={`Rename ${c.title}`}
            title="Rename"
            onClick={() => {
              setTitle(c.title);
              setEditing(true);
            }}
          >
            ✎
          </button>
          <button type="button" className="icon-button" aria-label={`Delete ${c.title}`} title="Delete" onClick={() => setConfirm(true)}>
            ✕
          </button>
        </span>
      )}
    </li>
  );
}

export function ChatList() {
  const chats = useChat((s) => s.chats);
  const current = useChat((s) => s.chat?.id);
  const newChat = useChat((s) => s.newChat);
  return (
    <nav className="chat-list" aria-label="Conversations">
      <button type="button" className="primary wide" onClick={() => void newChat()}>
        New chat
      </button>
      <ul>
        {chats.map((c) => (
          <ChatItem key={c.id} c={c} current={c.id === current} />
        ))}
      </ul>
      {chats.length === 0 && <p className="muted">No conversations yet.</p>}
    </nav>
  );
}
