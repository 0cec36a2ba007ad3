// Tab "Chat": the conversation list, the engine line, the messages, the composer and the settings.

import { useEffect, useRef } from 'react';
import type { OpenedModel } from '../../shared/contract.js';
import { useApp } from '../store/app.js';
import { useChat } from '../store/chat.js';
import { useEngine } from '../store/engine.js';
import { ChatList } from './ChatList.js';
import { Composer } from './Composer.js';
import { EngineBar } from './EngineBar.js';
import { ErrorLine } from './ErrorLine.js';
import { MessageItem } from './MessageItem.js';
import { SettingsPanel } from './SettingsPanel.js';
import { modelLayers } from '../lib/meta.js';

export function ChatView({ model }: { model: OpenedModel }) {
  const chat = useChat((s) => s.chat);
  const streaming = useChat((s) => s.streaming);
  const notice = useChat((s) => s.notice);
  const error = useChat((s) => s.error);
  const countContext = useChat((s) => s.countContext);
  const engineStatus = useEngine((s) => s.state.status);
  const setTab = useApp((s) => s.setTab);
  const list = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  // Keep the newest text in view while it streams, unless the reader scrolled up.
  const lastLen = chat?.messages.at(-1)?.content.length ?? 0;
  useEffect(() => {
    const el = list.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [lastLen, chat?.messages.length, chat?.id]);

  // When the engine becomes ready after a load (or another chat opens), fill the context gauge. Not
  // after a reply (busy → ready): its 'done' event already gave the engine's own count, which a
  // recount of the text would contradict (a cut reply re-encodes to fewer tokens).
  const lastStatus = useRef(engineStatus);
  useEffect(() => {
    const was = lastStatus.current;
    lastStatus.current = engineStatus;
    if (engineStatus === 'ready' && was !== 'busy') void countContext();
  }, [engineStatus, countContext]);
  useEffect(() => {
    if (useEngine.getState().state.status === 'ready') void countContext();
  }, [chat?.id, countContext]);

  return (
    <div className={`chat${model.runnable ? '' : ' no-settings'}`}>
      <ChatList />
      <section className="chat-main" aria-label={chat ? `Chat: ${chat.title}` : 'Chat'}>
        <EngineBar model={model} />
        <div
          className="messages"
          ref={list}
          aria-live="polite"
          onScroll={(e) => {
            const el = e.currentTarget;
            stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
          }}
        >
          {!chat || chat.messages.length === 0 ? (
            model.runnable ? (
              <div className="empty-chat">
                <h2>{chat ? chat.title : 'Start a conversation'}</h2>
                <p className="muted">
                  Write a message below. Every reply shows its token count and speed, and “Show prompt” reveals the exact text the model saw.
                </p>
              </div>
            ) : (
              <div className="empty-chat">
                <h2>No chat with this file</h2>
                <p className="muted">Its header is all here to read; to chat, open a model Pantheon can run.</p>
                <div className="empty-actions">
                  <button type="button" onClick={() => setTab('metadata')}>
                    Show metadata
                  </button>
                  {model.tensorCount > 0 && (
                    <button type="button" onClick={() => setTab('tensors')}>
                      Show tensors
                    </button>
                  )}
                </div>
              </div>
            )
          ) : (
            chat.messages.map((m) => <MessageItem key={m.id} m={m} streaming={streaming?.messageId === m.id} busy={!!streaming} />)
          )}
        </div>
        <ErrorLine kind="notice" message={notice} onDismiss={() => useChat.setState({ notice: null })} />
        <ErrorLine message={engineStatus === 'crashed' ? null : error} onDismiss={() => useChat.setState({ error: null })} />
        <Composer disabled={!model.runnable} />
      </section>
      {/* Sampling settings mean nothing for a file that cannot chat. */}
      {model.runnable && <SettingsPanel layers={modelLayers(model)} />}
    </div>
  );
}
