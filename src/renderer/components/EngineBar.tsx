// The engine line above the chat: load with progress and Cancel, what is loaded, and the crash
// sentence with Reload.

import type { OpenedModel } from '../../shared/contract.js';
import { formatBytes, formatMs } from '../lib/format.js';
import { engineHas, useEngine } from '../store/engine.js';
import { ErrorLine } from './ErrorLine.js';

export function EngineBar({ model }: { model: OpenedModel }) {
  const state = useEngine((s) => s.state);
  const error = useEngine((s) => s.error);
  const load = useEngine((s) => s.load);
  const cancelLoad = useEngine((s) => s.cancelLoad);
  const id = model.entry.id;

  if (!model.runnable) {
    return <ErrorLine kind="notice" message={`Chat is not available for this model: ${model.notRunnableReason ?? 'the engine cannot run it.'}`} />;
  }
  if (state.status === 'crashed') {
    return (
      <div className="engine-bar crashed" role="alert">
        <span>{state.message}</span>
        <button type="button" className="primary" onClick={() => void load(id)}>
          Reload
        </button>
      </div>
    );
  }
  if (state.status === 'loading') {
    const pct = state.totalBytes ? (100 * state.loadedBytes) / state.totalBytes : 0;
    return (
      <div className="engine-bar loading" role="status">
        <span>Loading {model.entry.name ?? model.entry.fileName}…</span>
        <progress aria-label="Loading model" max={state.totalBytes || 1} value={state.loadedBytes} />
        {state.totalBytes > 0 && (
          <span className="muted">
            {formatBytes(state.loadedBytes)} of {formatBytes(state.totalBytes)} ({pct.toFixed(0)}%)
          </span>
        )}
        <button type="button" onClick={() => void cancelLoad()}>
          Cancel
        </button>
      </div>
    );
  }
  if (engineHas(state, id) && (state.status === 'ready' || state.status === 'busy')) {
    return (
      <div className="engine-bar ready">
        <span className="dot" aria-hidden="true" />
        <span>
          {state.modelName} loaded · context {state.contextSize}
          {state.status === 'ready' && ` · ${state.threads} threads · ${state.backend} · ${formatBytes(state.memoryBytes)} · loaded in ${formatMs(state.loadMs)}`}
        </span>
      </div>
    );
  }
  return (
    <div className="engine-bar idle">
      <span>{error ?? 'The model is not loaded yet; it loads when you send a message.'}</span>
      <button type="button" onClick={() => void load(id)}>
        Load model
      </button>
    </div>
  );
}
