// The engine line above the chat: load with progress and Cancel, what is loaded, and the crash
// sentence with Reload.

import type { OpenedModel } from '../../shared/contract.js';
import { formatBytes, formatMs } from '../lib/format.js';
import { engineHas, useEngine } from '../store/engine.js';
import { useSettings } from '../store/settings.js';

export function EngineBar({ model }: { model: OpenedModel }) {
  const state = useEngine((s) => s.state);
  const error = useEngine((s) => s.error);
  const load = useEngine((s) => s.load);
  const cancelLoad = useEngine((s) => s.cancelLoad);
  const contextSize = useSettings((s) => s.settings?.contextSize);
  const threads = useSettings((s) => s.settings?.threads);
  const computeBackend = useSettings((s) => s.settings?.computeBackend);
  const gpuLayers = useSettings((s) => s.settings?.gpuLayers);
  const gpuLost = useEngine((s) => s.gpuLost);
  const id = model.entry.id;

  if (!model.runnable) {
    // The reason is one sentence written for this place (main/services/opened-model.ts runnability).
    return (
      <div className="engine-bar not-runnable" role="status">
        <span>{model.notRunnableReason ?? 'Pantheon cannot chat with this model.'}</span>
      </div>
    );
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
    // A context size or thread count changed in Settings applies at the next load: offer that load
    // here (threads 0, automatic, offers nothing: what it picks shows after a load).
    const wanted = contextSize !== undefined && contextSize !== state.contextSize ? contextSize : null;
    const wantedThreads = state.status === 'ready' && threads !== undefined && threads > 0 && threads !== state.threads ? threads : null;
    // the compute backend likewise (not after a lost GPU: that reload runs on the CPU on purpose)
    const local = state.status === 'ready' && !state.backend.startsWith('remote');
    const onGpu = local && state.backend.startsWith('webgpu');
    const wantedDevice = local && computeBackend === 'gpu' && !onGpu && !state.backend.includes('the GPU was lost') ? 'the GPU' : (computeBackend === 'cpu' || gpuLost) && onGpu ? 'the CPU' : '';
    // a number of GPU layers other than what is loaded (auto offers nothing, as threads 0)
    const gpu = state.status === 'ready' ? state.gpu : undefined;
    const wantedLayers = gpu && !wantedDevice && computeBackend === 'gpu' && typeof gpuLayers === 'number' && Math.min(gpuLayers, gpu.of) !== gpu.layers ? Math.min(gpuLayers, gpu.of) : null;
    const offer = [wanted !== null ? `context ${wanted}` : '', wantedThreads !== null ? `${wantedThreads} ${wantedThreads === 1 ? 'thread' : 'threads'}` : '', wantedDevice, wantedLayers !== null ? `${wantedLayers} GPU ${wantedLayers === 1 ? 'layer' : 'layers'}` : ''].filter(Boolean).join(', ');
    // on the GPU the line says where the blocks run; the backend's full name is the tooltip
    const device = gpu ? `GPU: ${gpu.layers} of ${gpu.of} layers (${gpu.adapter})` : state.status === 'ready' ? state.backend : '';
    return (
      <div className="engine-bar ready">
        <span className="dot" aria-hidden="true" />
        <span className="engine-text" title={state.status === 'ready' ? state.backend : undefined}>
          {state.modelName} loaded · context {state.contextSize}
          {state.status === 'ready' && (state.backend.startsWith('remote')
            ? ` · ${state.backend} · connected in ${formatMs(state.loadMs)}`
            : ` · ${state.threads} ${state.threads === 1 ? 'thread' : 'threads'} · ${device} · ${formatBytes(state.memoryBytes)} · loaded in ${formatMs(state.loadMs)}`)}
        </span>
        {offer !== '' && (
          <button type="button" className="small-button" disabled={state.status === 'busy'} onClick={() => void load(id)}>
            Reload with {offer}
          </button>
        )}
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
