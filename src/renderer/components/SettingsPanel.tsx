// System prompt and sampling settings beside the chat.

import { useEffect, useState } from 'react';
import { MAX_GPU_LAYERS, type ComputeBackend, type ContextPolicy, type GpuLayersSetting, type SamplingSettings } from '../../shared/contract.js';
import { POLICY_LABEL, useChat } from '../store/chat.js';
import { useEngine } from '../store/engine.js';
import { ProfilePanel } from './ProfilePanel.js';
import { useSettings } from '../store/settings.js';
import { StructuredOutputField } from './StructuredOutput.js';

interface FieldSpec {
  key: string;
  label: string;
  min: number;
  max: number;
  step: number;
  hint: string;
}

const FIELDS: (FieldSpec & { key: keyof SamplingSettings })[] = [
  { key: 'temperature', label: 'Temperature', min: 0, max: 5, step: 0.05, hint: '0 always picks the most likely token' },
  { key: 'topK', label: 'Top-k', min: 0, max: 1000, step: 1, hint: '0 = off' },
  { key: 'topP', label: 'Top-p', min: 0, max: 1, step: 0.01, hint: '1 = off' },
  { key: 'minP', label: 'Min-p', min: 0, max: 1, step: 0.01, hint: '0 = off' },
  { key: 'repeatPenalty', label: 'Repeat penalty', min: 0, max: 3, step: 0.01, hint: '1 = off' },
  { key: 'seed', label: 'Seed', min: -1, max: 4294967295, step: 1, hint: '-1 = random each reply' },
  { key: 'maxTokens', label: 'Max tokens', min: -1, max: 1_000_000, step: 1, hint: 'per reply; -1 = until the context is full' },
];

/** A number box that commits a valid value on blur or Enter, and goes back otherwise. */
function NumberField({ spec, value, onCommit }: { spec: FieldSpec; value: number; onCommit: (n: number) => void }) {
  const [text, setText] = useState(String(value));
  useEffect(() => setText(String(value)), [value]);
  const commit = (): void => {
    const n = Number(text);
    if (text.trim() !== '' && Number.isFinite(n) && n >= spec.min && n <= spec.max) {
      if (n !== value) onCommit(spec.step === 1 ? Math.round(n) : n);
    } else setText(String(value));
  };
  const id = `field-${spec.label.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <div className="field">
      <label htmlFor={id}>{spec.label}</label>
      <input id={id} type="number" inputMode="decimal" min={spec.min} max={spec.max} step={spec.step} value={text} title={spec.hint} onChange={(e) => setText(e.target.value)} onBlur={commit} onKeyDown={(e) => e.key === 'Enter' && commit()} />
    </div>
  );
}

/**
 * Compute on GPU: the adapter (named once a model has loaded on it) and the GPU layers: Auto (as
 * many blocks as the GPU's memory holds), or a number up to the model's blocks (the rest run on the
 * CPU). Applies at the next load, like the other engine settings.
 */
function GpuLayersField({ value, layers, onCommit }: { value: GpuLayersSetting; layers: number | null; onCommit: (v: GpuLayersSetting) => void }) {
  const adapter = useEngine((s) => s.adapter);
  const findAdapter = useEngine((s) => s.findAdapter);
  useEffect(() => void findAdapter(), [findAdapter]);
  const loaded = useEngine((s) => (s.state.status === 'ready' ? s.state.gpu : undefined));
  const max = layers ?? MAX_GPU_LAYERS;
  const auto = value === 'auto';
  // unticking Auto starts from what is loaded, else every block
  const start = Math.min(loaded?.layers ?? max, max);
  return (
    <div className="gpu-layers" role="group" aria-label="GPU offload">
      <p className="hint">Adapter: {adapter === undefined ? 'looking…' : adapter ?? 'none found here (a GPU load will say why)'}</p>
      <label className="check">
        <input type="checkbox" checked={auto} onChange={(e) => onCommit(e.target.checked ? 'auto' : start)} /> Auto GPU layers
        <span className="hint muted"> as many as the GPU's memory holds</span>
      </label>
      {!auto && (
        <NumberField
          spec={{ key: 'gpuLayers', label: 'GPU layers', min: 0, max, step: 1, hint: `blocks on the GPU${layers ? ` of the model's ${layers}` : ''}; the rest run on the CPU` }}
          value={Math.min(value, max)}
          onCommit={onCommit}
        />
      )}
      {!auto && layers !== null && <p className="hint muted">of {layers} layers; the rest run on the CPU</p>}
    </div>
  );
}

export function SettingsPanel({ layers = null }: { layers?: number | null }) {
  const settings = useSettings((s) => s.settings);
  const update = useSettings((s) => s.update);
  const error = useSettings((s) => s.error);
  const chat = useChat((s) => s.chat);
  const setSystemPrompt = useChat((s) => s.setSystemPrompt);
  const current = chat ? chat.systemPrompt : (settings?.systemPrompt ?? '');
  const [system, setSystem] = useState(current);
  useEffect(() => setSystem(current), [current]);
  if (!settings) return null;

  const commitSystem = (): void => {
    if (system === current) return;
    if (chat) void setSystemPrompt(system);
    // New chats start with the last system prompt used.
    void update({ systemPrompt: system });
  };

  return (
    <aside className="settings-panel" aria-label="Chat settings">
      {/* First in the column when on, so the last reply's profile shows without scrolling. */}
      {settings.showProfile && <ProfilePanel />}
      <div className="field">
        <label htmlFor="system-prompt">System prompt</label>
        <textarea id="system-prompt" rows={4} value={system} placeholder="Optional instructions for the model" onChange={(e) => setSystem(e.target.value)} onBlur={commitSystem} />
      </div>
      <h2>Sampling</h2>
      {FIELDS.map((f) => (
        <NumberField key={f.key} spec={f} value={settings.sampling[f.key] as number} onCommit={(n) => void update({ sampling: { ...settings.sampling, [f.key]: n } })} />
      ))}
      <StructuredOutputField />
      <h2>Engine</h2>
      <NumberField
        spec={{ key: 'maxTokens', label: 'Context size', min: 16, max: 1_048_576, step: 1, hint: 'tokens; applies the next time the model loads' }}
        value={settings.contextSize}
        onCommit={(n) => void update({ contextSize: n })}
      />
      <NumberField
        spec={{ key: 'threads', label: 'Threads', min: 0, max: 256, step: 1, hint: '0 = automatic: every core (one for a model under 16 MiB); applies the next time the model loads' }}
        value={settings.threads}
        onCommit={(n) => void update({ threads: n })}
      />
      <div className="field">
        <label htmlFor="compute-backend">Compute on</label>
        <select id="compute-backend" value={settings.computeBackend ?? 'auto'} onChange={(e) => void update({ computeBackend: e.target.value as ComputeBackend })}>
          <option value="auto">Automatic (CPU)</option>
          <option value="cpu">CPU</option>
          <option value="gpu">GPU (WebGPU)</option>
        </select>
        <span className="hint muted">applies the next time the model loads; the engine line names the GPU in use</span>
      </div>
      {settings.computeBackend === 'gpu' && <GpuLayersField value={settings.gpuLayers ?? 'auto'} layers={layers} onCommit={(v) => void update({ gpuLayers: v })} />}
      <label className="check">
        <input type="checkbox" checked={settings.showProbabilities ?? false} onChange={(e) => void update({ showProbabilities: e.target.checked })} /> Probabilities
        <span className="hint muted"> shade each token by its probability; hover or focus one for the alternatives, choose one to branch there</span>
      </label>
      <label className="check">
        <input type="checkbox" checked={settings.showProfile ?? false} onChange={(e) => void update({ showProfile: e.target.checked })} /> Profile
        <span className="hint muted"> time each reply per op and per layer</span>
      </label>
      <div className="field">
        <label htmlFor="context-policy">When the context is full</label>
        <select id="context-policy" value={settings.contextPolicy ?? 'stop'} onChange={(e) => void update({ contextPolicy: e.target.value as ContextPolicy })}>
          {(Object.keys(POLICY_LABEL) as ContextPolicy[]).map((p) => (
            <option key={p} value={p}>{POLICY_LABEL[p]}</option>
          ))}
        </select>
        <p className="hint muted">Truncate the middle keeps the system prompt and the first exchange; a rolling window keeps the newest turns.</p>
      </div>
      {error && <p className="line line-error">{error}</p>}
    </aside>
  );
}
