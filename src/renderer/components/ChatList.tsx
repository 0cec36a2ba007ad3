// The conversation list: new, open, rename, delete; export the open chat, import one.

import { useRef, useState } from 'react';
import type { ChatSummary } from '../../shared/contract.js';
import { chatToJson, chatToMarkdown, download, exportFileName } from '../lib/chat-export.js';
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

function ExportImport() {
  const chat = useChat((s) => s.chat);
  const streaming = useChat((s) => !!s.streaming);
  const importChat = useChat((s) => s.importChat);
  const picker = useRef<HTMLInputElement>(null);
  const none = !chat || chat.messages.length === 0 || streaming;
  return (
    <div className="chat-files" role="group" aria-label="Export or import a chat">
      <button type="button" className="small-button" disabled={none} title="The open chat as Markdown, thinking and stats included"
        onClick={() => chat && download(exportFileName(chat, 'md'), chatToMarkdown(chat), 'text/markdown')}>
        Export .md
      </button>
      <button type="button" className="small-button" disabled={none} title="The open chat as JSON, to import again"
        onClick={() => chat && download(exportFileName(chat, 'json'), chatToJson(chat), 'application/json')}>
        Export .json
      </button>
      <button type="button" className="small-button" onClick={() => picker.current?.click()}>
        Import…
      </button>
      <input ref={picker} type="file" accept=".json,application/json" hidden aria-label="Chat file to import"
        onChange={(e) => {
          const f = e.target.files?.[0];
          e.target.value = '';
          if (f) void f.text().then(importChat);
        }} />
    </div>
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
      <ExportImport />
      <ul>
        {chats.map((c) => (
          <ChatItem key={c.id} c={c} current={c.id === current} />
        ))}
      </ul>
      {chats.length === 0 && <p className="muted">No conversations yet.</p>}
    </nav>
  );
}
