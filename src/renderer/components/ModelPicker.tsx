// The model picker: the bundled demo model, recent models, the models folder, and the open buttons.

import type { ModelEntry } from '../../shared/contract.js';
import { formatBytes, formatCount } from '../lib/format.js';
import { useApp } from '../store/app.js';
import { useSettings } from '../store/settings.js';
import { RemoteServers } from './RemoteServers.js';

function ModelCard({ entry, onForget }: { entry: ModelEntry; onForget?: () => void }) {
  const openById = useApp((s) => s.openById);
  const opening = useApp((s) => s.opening);
  const current = useApp((s) => s.model?.entry.id);
  const title = entry.name ?? entry.fileName;
  const context = useSettings((s) => s.settings?.contextSize ?? 0);
  const m = entry.memory;
  const need = m && context > 0 ? m.weights + m.fixed + m.perPosition * context : null;
  return (
    <li className={`model-card${entry.error ? ' model-card-bad' : ''}${current === entry.id ? ' model-card-current' : ''}`}>
      <button type="button" className="model-open" disabled={!!entry.error || !!opening} aria-label={`Open ${title}`} onClick={() => void openById(entry.id, entry.fileName)}>
        <span className="model-name">{title}</span>
        <span className="model-file" title={entry.path}>
          {entry.fileName}
        </span>
        {entry.error ? (
          <span className="model-error">{entry.error}</span>
        ) : (
          <span className="model-facts">
            <span>{entry.architecture ?? 'unknown architecture'}</span>
            {entry.parameters === 0 ? (
              <span>no weights</span>
            ) : (
              <>
                <span>{entry.parameters !== null ? `${formatCount(entry.parameters)} params${entry.activeParameters ? ` (${formatCount(entry.activeParameters)} active)` : ''}` : '—'}</span>
                <span>{entry.quantization ?? '—'}</span>
              </>
            )}
            <span>{formatBytes(entry.fileSize)}</span>
            {need !== null && <span title="weights + KV cache (and recurrent state) at the context size in Settings">needs ~{formatBytes(need)} at {context} ctx</span>}
          </span>
        )}
      </button>
      {onForget && (
        <button type="button" className="icon-button" aria-label={`Forget ${entry.fileName}`} title="Remove from recent" onClick={onForget}>
          ×
        </button>
      )}
    </li>
  );
}

export function ModelPicker() {
  const library = useApp((s) => s.library);
  const chooseFolder = useApp((s) => s.chooseFolder);
  const forgetRecent = useApp((s) => s.forgetRecent);
  const opening = useApp((s) => s.opening);

  return (
    <section className="picker" aria-labelledby="picker-title">
      <div className="picker-head">
        <div>
          <h1 id="picker-title">Models</h1>
          <p className="muted">Open a GGUF model to read its metadata and tensors and to chat with it. You can also drop a .gguf file anywhere on this window.</p>
        </div>
        <div className="picker-actions">
          <button type="button" onClick={() => void chooseFolder()}>
            Choose folder
          </button>
        </div>
      </div>
      {opening && (
        <p className="busy" role="status">
          Opening {opening}…
        </p>
      )}
      {!library ? (
        <p className="muted">Reading the model library…</p>
      ) : (
        <>
          {library.demo && (
            <div className="picker-group">
              <h2>Demo model</h2>
              <ul className="model-list" aria-label="Demo model">
                <ModelCard entry={library.demo} />
              </ul>
            </div>
          )}
          <div className="picker-group">
            <h2>Recent</h2>
            {library.recent.length ? (
              <ul className="model-list" aria-label="Recent models">
                {library.recent.map((m) => (
                  <ModelCard key={m.id} entry={m} onForget={() => void forgetRecent(m.id)} />
                ))}
              </ul>
            ) : (
              <p className="muted">No recent models yet.</p>
            )}
          </div>
          <div className="picker-group">
            <h2>
              Models folder{library.folder ? <span className="folder-path"> {library.folder}</span> : null}
            </h2>
            {library.scanning && (
              <p className="busy" role="status">
                Scanning the folder…
              </p>
            )}
            {!library.folder ? (
              <p className="muted">No folder chosen. “Choose folder” lists every .gguf inside it, at any depth.</p>
            ) : library.folderModels.length ? (
              <ul className="model-list" aria-label="Models in folder">
                {library.folderModels.map((m) => (
                  <ModelCard key={m.id} entry={m} />
                ))}
              </ul>
            ) : (
              !library.scanning && <p className="muted">No .gguf files in this folder.</p>
            )}
          </div>
          <RemoteServers />
        </>
      )}
    </section>
  );
}
