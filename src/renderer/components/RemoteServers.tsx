// "Remote servers" in the model picker: add an OpenAI-compatible server (vLLM, llama.cpp's server,
// Ollama, LM Studio, `pantheon serve`) by its base URL and an optional API key, see the models it
// lists, and open one to chat with it through the same chat view.

import { useEffect, useState } from 'react';
import type { RemoteServer } from '../../shared/contract.js';
import { api } from '../api.js';
import { errorLine } from '../lib/format.js';
import { useApp } from '../store/app.js';

const KEY_NOTE: Record<RemoteServer['keyStorage'], string> = {
  secure: 'key kept in the system keychain',
  session: 'key kept for this session only (no system keychain here)',
  none: 'no key',
};

export function RemoteServers() {
  const [servers, setServers] = useState<RemoteServer[]>([]);
  const [url, setUrl] = useState('');
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const modelOpened = useApp((s) => s.modelOpened);

  useEffect(() => {
    void api().remote.list().then(setServers, (e: unknown) => setError(errorLine(e)));
  }, []);

  const run = async (what: () => Promise<RemoteServer[]>): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      setServers(await what());
    } catch (e) {
      setError(errorLine(e));
    } finally {
      setBusy(false);
    }
  };

  const open = async (id: string, model: string): Promise<void> => {
    setError(null);
    try {
      modelOpened(await api().remote.open({ id, model }));
    } catch (e) {
      setError(errorLine(e));
    }
  };

  return (
    <div className="picker-group">
      <h2>Remote servers</h2>
      <p className="muted">A model too big for this machine can run on a server (vLLM, llama.cpp&apos;s server, Ollama, LM Studio, <code>pantheon serve</code>) and be used here through its OpenAI API.</p>
      <form
        className="remote-add"
        aria-label="Add remote server"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            const list = await api().remote.add({ baseUrl: url, ...(key ? { apiKey: key } : {}) });
            setUrl('');
            setKey('');
            return list;
          });
        }}
      >
        <input type="url" required aria-label="Server base URL" placeholder="http://192.168.1.20:8080/v1" value={url} onChange={(e) => setUrl(e.target.value)} />
        <input type="password" aria-label="API key (optional)" placeholder="API key (optional)" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} />
        <button type="submit" disabled={busy || !url}>{busy ? 'Connecting…' : 'Add remote server'}</button>
      </form>
      {error && <p className="line line-error" role="alert">{error}</p>}
      {servers.map((s) => (
        <section key={s.id} className="remote-server" aria-label={`Remote server ${s.baseUrl}`}>
          <header className="remote-head">
            <span className="mono">{s.baseUrl}</span>
            <span className="muted">{KEY_NOTE[s.keyStorage]}</span>
            <button type="button" className="small-button" disabled={busy} onClick={() => void run(() => api().remote.refresh({ id: s.id }))}>Refresh</button>
            <button type="button" className="small-button danger" disabled={busy} aria-label={`Remove ${s.baseUrl}`} onClick={() => void run(() => api().remote.remove({ id: s.id }))}>Remove</button>
          </header>
          {s.error ? (
            <p className="model-error">{s.error}</p>
          ) : s.models.length === 0 ? (
            <p className="muted">No models listed.</p>
          ) : (
            <ul className="model-list" aria-label={`Models on ${s.baseUrl}`}>
              {s.models.map((m) => (
                <li key={m} className="model-card">
                  <button type="button" className="model-open" aria-label={`Open ${m} on ${s.baseUrl}`} onClick={() => void open(s.id, m)}>
                    <span className="model-name">{m}</span>
                    <span className="model-facts"><span>remote</span><span>{new URL(s.baseUrl).host}</span></span>
                  </button>
                </li>
              ))}
            </ul>
          )}
        </section>
      ))}
    </div>
  );
}
