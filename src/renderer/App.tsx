// The window: header (model, Open model, theme), tabs, the one-line error, and the views.

import { useEffect } from 'react';
import type { Settings } from '../shared/contract.js';
import { ChatView } from './components/ChatView.js';
import { DropZone } from './components/DropZone.js';
import { ErrorLine } from './components/ErrorLine.js';
import { MetadataViewer } from './components/MetadataViewer.js';
import { ModelPicker } from './components/ModelPicker.js';
import { Tabs, type TabSpec } from './components/Tabs.js';
import { TensorBrowser } from './components/TensorBrowser.js';
import { ServerPanel } from './components/ServerPanel.js';
import { formatBytes, formatCount } from './lib/format.js';
import { useApp } from './store/app.js';
import { useChat } from './store/chat.js';
import { useSettings } from './store/settings.js';

function useTheme(theme: Settings['theme'] | undefined): void {
  useEffect(() => {
    document.documentElement.dataset.theme = theme ?? 'system';
  }, [theme]);
}

/** Ctrl/Cmd+O opens a model; Esc stops a streaming reply. */
function useKeyboard(): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key.toLowerCase() === 'o') {
        e.preventDefault();
        void useApp.getState().openDialog();
      } else if (e.key === 'Escape' && useChat.getState().streaming) {
        e.preventDefault();
        useChat.getState().stop();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

export function App() {
  const model = useApp((s) => s.model);
  const tab = useApp((s) => s.tab);
  const setTab = useApp((s) => s.setTab);
  const error = useApp((s) => s.error);
  const setError = useApp((s) => s.setError);
  const opening = useApp((s) => s.opening);
  const openDialog = useApp((s) => s.openDialog);
  const closeModel = useApp((s) => s.closeModel);
  const theme = useSettings((s) => s.settings?.theme);
  const updateSettings = useSettings((s) => s.update);
  useTheme(theme);
  useKeyboard();

  const tabs: TabSpec[] = [
    { id: 'models', label: 'Models' },
    { id: 'chat', label: 'Chat', disabled: !model },
    // A remote model has no file here: its metadata and tensors stay on the server.
    { id: 'metadata', label: 'Metadata', disabled: !model || !!model.remote },
    { id: 'tensors', label: 'Tensors', disabled: !model || !!model.remote },
    { id: 'server', label: 'Server', disabled: !model || !!model.remote },
  ];
  const shownTab = model ? (model.remote && (tab === 'metadata' || tab === 'tensors' || tab === 'server') ? 'chat' : tab) : 'models';

  return (
    <div className="app">
      <header className="app-header">
        <span className="brand">Pantheon</span>
        <Tabs tabs={tabs} current={shownTab} onSelect={setTab} />
        <span className="spacer-flex" />
        {model && (
          <span className="current-model" title={model.entry.path}>
            <strong>{model.entry.name ?? model.entry.fileName}</strong>
            <span className="muted">
              {' '}
              {model.remote ? `remote · ${model.remote.baseUrl} · metadata and tensors stay on the server` : [model.entry.name && model.entry.name !== model.entry.fileName ? model.entry.fileName : null, model.entry.architecture !== model.entry.name ? model.entry.architecture : null, model.parameters > 0 ? `${formatCount(model.parameters)} params` : null, model.tensorCount > 0 ? model.quantization : null, formatBytes(model.entry.fileSize)]
                .filter(Boolean)
                .join(' · ')}
            </span>
          </span>
        )}
        <button type="button" className="primary" onClick={() => void openDialog()} disabled={!!opening} title="Ctrl+O">
          Open model
        </button>
        {model && (
          <button type="button" onClick={() => void closeModel()}>
            Close model
          </button>
        )}
        <label className="theme-select">
          <span className="sr-only">Theme</span>
          <select aria-label="Theme" value={theme ?? 'system'} onChange={(e) => void updateSettings({ theme: e.target.value as Settings['theme'] })}>
            <option value="system">System theme</option>
            <option value="light">Light</option>
            <option value="dark">Dark</option>
          </select>
        </label>
      </header>
      <ErrorLine message={error} onDismiss={() => setError(null)} />
      {opening && shownTab !== 'models' && (
        <p className="line line-notice" role="status">
          Opening {opening}…
        </p>
      )}
      <main className="app-main" id={`panel-${shownTab}`} role="tabpanel" aria-labelledby={`tab-${shownTab}`}>
        {shownTab === 'models' && <ModelPicker />}
        {model && shownTab === 'chat' && <ChatView model={model} />}
        {model && shownTab === 'metadata' && <MetadataViewer model={model} />}
        {model && shownTab === 'tensors' && <TensorBrowser model={model} />}
        {model && shownTab === 'server' && <ServerPanel model={model} />}
      </main>
      <DropZone />
    </div>
  );
}
