// Tab "Server": serve the loaded model over the OpenAI API on 127.0.0.1 (start / stop, port, an
// optional API key) with a live log of the requests it answers.

import { useEffect, useState } from 'react';
import type { OpenedModel } from '../../shared/contract.js';
import { useEngine, engineHas } from '../store/engine.js';
import { useServer } from '../store/server.js';

export function ServerPanel({ model }: { model: OpenedModel }) {
  const engine = useEngine((s) => s.state);
  const loadEngine = useEngine((s) => s.load);
  const state = useServer((s) => s.state);
  const busy = useServer((s) => s.busy);
  const error = useServer((s) => s.error);
  const start = useServer((s) => s.start);
  const stop = useServer((s) => s.stop);
  const refresh = useServer((s) => s.refresh);
  const [port, setPort] = useState(String(state.port));
  const [apiKey, setApiKey] = useState('');
  useEffect(() => void refresh(), [refresh]);
  const loaded = engineHas(engine, model.entry.id);
  const portNumber = Number(port);
  const portOk = Number.isInteger(portNumber) && portNumber >= 0 && portNumber <= 65535 && port.trim() !== '';
  const problem = error ?? state.error;

  return (
    <section className="server-panel" aria-label="Local server">
      <h2>Local server</h2>
      <p className="muted">An OpenAI-compatible API (/v1/models, /v1/chat/completions, /v1/completions, /v1/embeddings) over the loaded model, on this computer only (127.0.0.1).</p>
      {!loaded && (
        <p className="line line-notice" role="status">
          Load {model.entry.name ?? model.entry.fileName} for chat first; the server answers with the loaded model.{' '}
          {model.runnable && (
            <button type="button" onClick={() => void loadEngine(model.entry.id)} disabled={engine.status === 'loading'}>
              Load model
            </button>
          )}
        </p>
      )}
      <div className="server-form">
        <div className="field">
          <label htmlFor="server-port">Port</label>
          <input id="server-port" type="number" min={0} max={65535} value={port} disabled={state.running} onChange={(e) => setPort(e.target.value)} title="0 picks a free port" />
        </div>
        <div className="field">
          <label htmlFor="server-key">API key (optional)</label>
          <input id="server-key" type="password" autoComplete="off" value={apiKey} disabled={state.running} placeholder="none" onChange={(e) => setApiKey(e.target.value)} />
        </div>
        {state.running ? (
          <button type="button" onClick={() => void stop()} disabled={busy}>
            Stop server
          </button>
        ) : (
          <button type="button" className="primary" onClick={() => void start(portNumber, apiKey)} disabled={busy || !loaded || !portOk}>
            Start server
          </button>
        )}
      </div>
      {state.running && state.url && (
        <p className="line" role="status" aria-label="Server status">
          Serving <strong>{state.modelName}</strong> at <code data-testid="server-url">{state.url}</code>
          {state.apiKey ? ' (API key required)' : ''}
        </p>
      )}
      {problem && (
        <p className="line line-error" role="alert">
          {problem}
        </p>
      )}
      <h3>Requests</h3>
      {state.log.length === 0 ? (
        <p className="muted">No requests yet.</p>
      ) : (
        <table className="server-log" aria-label="Request log">
          <thead>
            <tr>
              <th>Time</th>
              <th>Method</th>
              <th>Path</th>
              <th>Status</th>
              <th>Tokens</th>
              <th>tok/s</th>
            </tr>
          </thead>
          <tbody>
            {[...state.log].reverse().map((e, i) => (
              <tr key={`${e.time}-${i}`}>
                <td>{new Date(e.time).toLocaleTimeString()}</td>
                <td>{e.method}</td>
                <td>{e.path}</td>
                <td>{e.status}</td>
                <td>{e.promptTokens + e.completionTokens > 0 ? `${e.promptTokens} + ${e.completionTokens}` : ''}</td>
                <td>{e.tokensPerS > 0 ? e.tokensPerS.toFixed(1) : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
