// Settings (sampling, system prompt, context size, theme), persisted by the rest of Pantheon.

import { create } from 'zustand';
import type { Settings } from '../../shared/contract.js';
import { api } from '../api.js';
import { errorLine } from '../lib/format.js';

export interface SettingsState {
  settings: Settings | null;
  error: string | null;
  load(): Promise<void>;
  update(patch: Partial<Settings>): Promise<void>;
}

export const useSettings = create<SettingsState>()((set, get) => ({
  settings: null,
  error: null,
  async load() {
    try {
      set({ settings: await api().settings.get(), error: null });
    } catch (err) {
      set({ error: errorLine(err) });
    }
  },
  async update(patch) {
    const before = get().settings;
    // Show the change at once; the answer is the validated, persisted value.
    if (before) set({ settings: { ...before, ...patch, sampling: { ...before.sampling, ...patch.sampling } } });
    try {
      set({ settings: await api().settings.set({ settings: patch }), error: null });
    } catch (err) {
      set({ settings: before, error: errorLine(err) });
    }
  },
}));
