// Entry: connect to Pantheon (preload or harness), subscribe to its events, load the first state, render.

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { connectApi } from './api.js';
import { App } from './App.js';
import { errorLine } from './lib/format.js';
import { useApp } from './store/app.js';
import { useChat } from './store/chat.js';
import { useEngine } from './store/engine.js';
import { useSettings } from './store/settings.js';
import { useServer } from './store/server.js';
import './styles/app.css';
import './styles/hljs.css';

async function start(): Promise<void> {
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
  try {
    const api = await connectApi();
    api.on('server:state', (s) => useServer.getState().setState(s));
    api.on('engine:state', (s) => {
      useEngine.getState().setState(s);
      // The crash banner says what happened; a reload starts clean.
      if (s.status === 'loading') useChat.setState({ error: null });
    });
    api.on('library:changed', (l) => useApp.getState().setLibrary(l));
    api.on('model:opened', (m) => useApp.getState().modelOpened(m));
    api.on('menu:command', ({ command }) => {
      const app = useApp.getState();
      switch (command) {
        case 'open-model':
          void app.openDialog();
          break;
        case 'close-model':
          void app.closeModel();
          break;
        case 'new-chat':
          app.setTab('chat');
          void useChat.getState().newChat();
          break;
        case 'show-chat':
          app.setTab('chat');
          break;
        case 'show-metadata':
          app.setTab('metadata');
          break;
        case 'show-tensors':
          app.setTab('tensors');
          break;
      }
    });
    await Promise.all([useSettings.getState().load(), useApp.getState().refreshLibrary(), useEngine.getState().refresh(), useChat.getState().init()]);
    await useApp.getState().restore();
  } catch (err) {
    useApp.getState().setError(errorLine(err));
  }
}

void start();
