// The engine process as the page sees it: its state (from 'engine:state' events), load with progress,
// cancel, and reload after a crash.

import { create } from 'zustand';
import type { EngineState } from '../../shared/contract.js';
import { api } from '../api.js';
import { errorLine } from '../lib/format.js';
import { useSettings } from './settings.js';

export interface EngineStore {
  state: EngineState;
  error: string | null;
  /** A reply ended because the GPU was lost (GPU_LOST): the engine line offers the reload on the CPU. */
  gpuLost: boolean;
  /**
   * The WebGPU adapter (Settings → Engine names it): from the last load on the GPU, or asked for
   * (findAdapter); undefined before either, null when there is none.
   */
  adapter: string | null | undefined;
  /** Ask the engine which adapter a GPU load would take (once; a load on the GPU also sets it). */
  findAdapter(): Promise<void>;
  setState(state: EngineState): void;
  refresh(): Promise<void>;
  /** Load a model for chat; resolves once it is ready (or failed / was cancelled). */
  load(modelId: string): Promise<boolean>;
  cancelLoad(): Promise<void>;
  unload(): Promise<void>;
}

/** Whether the engine holds this model and can generate (ready or busy). */
export function engineHas(state: EngineState, modelId: string | undefined): boolean {
  return (state.status === 'ready' || state.status === 'busy') && state.modelId === modelId;
}

/** A findAdapter call is under way (one at a time). */
let finding = false;

export const useEngine = create<EngineStore>()((set, get) => ({
  state: { status: 'idle' },
  error: null,
  gpuLost: false,
  adapter: undefined,
  setState: (state) => set({ state, error: state.status === 'error' ? state.error.message : null, ...(state.status === 'ready' && state.gpu ? { adapter: state.gpu.adapter } : {}) }),
  async findAdapter() {
    if (get().adapter !== undefined || finding) return;
    finding = true;
    try {
      const { adapter } = await api().engine.gpuAdapter();
      if (get().adapter === undefined) set({ adapter });
    } catch {
      // said where it matters: a GPU load that fails says why
    } finally {
      finding = false;
    }
  },
  async refresh() {
    try {
      get().setState(await api().engine.state());
    } catch (err) {
      set({ error: errorLine(err) });
    }
  },
  async load(modelId) {
    const s = useSettings.getState().settings;
    set({ error: null, gpuLost: false, state: { status: 'loading', modelId, loadedBytes: 0, totalBytes: 0 } });
    try {
      const state = await api().engine.load({ id: modelId, contextSize: s?.contextSize, threads: s?.threads });
      get().setState(state);
      return engineHas(state, modelId);
    } catch (err) {
      const line = errorLine(err);
      // A cancelled load is not an error to show.
      const cancelled = err instanceof Error && (err.name === 'CancelledError' || /cancel/i.test(line));
      set({ error: cancelled ? null : line });
      await get().refresh();
      return false;
    }
  },
  async cancelLoad() {
    try {
      get().setState(await api().engine.cancelLoad());
    } catch (err) {
      set({ error: errorLine(err) });
    }
  },
  async unload() {
    try {
      get().setState(await api().engine.unload());
    } catch (err) {
      set({ error: errorLine(err) });
    }
  },
}));
