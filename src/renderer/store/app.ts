// App state: the model library, the opened model, the visible tab, and the one-line error or notice.

import { create } from 'zustand';
import type { Library, OpenedModel } from '../../shared/contract.js';
import { api } from '../api.js';
import { errorLine } from '../lib/format.js';

export type Tab = 'models' | 'chat' | 'metadata' | 'tensors' | 'server';

// Where the user was, so a page reload comes back to the same model and tab.
const LAST_MODEL_KEY = 'pantheon.lastModel';
const LAST_TAB_KEY = 'pantheon.lastTab';

function remember(key: string, value: string | null): void {
  try {
    if (value) localStorage.setItem(key, value);
    else localStorage.removeItem(key);
  } catch {
    // Storage may be unavailable; nothing is restored then.
  }
}

function recall(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

export interface AppState {
  library: Library | null;
  model: OpenedModel | null;
  tab: Tab;
  /** What is being opened right now (a file name), for the busy line. */
  opening: string | null;
  /** One line, never a stack trace. */
  error: string | null;
  setTab(tab: Tab): void;
  setError(error: string | null): void;
  refreshLibrary(): Promise<void>;
  setLibrary(library: Library): void;
  openById(id: string, label: string): Promise<void>;
  openDialog(): Promise<void>;
  openDropped(file: File): Promise<void>;
  chooseFolder(): Promise<void>;
  forgetRecent(id: string): Promise<void>;
  closeModel(): Promise<void>;
  /** A model opened from outside the page (menu, command line) or here. */
  modelOpened(model: OpenedModel): void;
  /** Reopen the model that was open before the page reloaded, if the library still has it. */
  restore(): Promise<void>;
}

/** Run an opening action with the busy line, and show its error as one line. */
async function opening(set: (p: Partial<AppState>) => void, label: string, run: () => Promise<OpenedModel | null>, done: (m: OpenedModel) => void): Promise<void> {
  set({ opening: label, error: null });
  try {
    const m = await run();
    if (m) done(m);
  } catch (err) {
    set({ error: errorLine(err) });
  } finally {
    set({ opening: null });
  }
}

export const useApp = create<AppState>()((set, get) => ({
  library: null,
  model: null,
  tab: 'models',
  opening: null,
  error: null,
  setTab: (tab) => {
    remember(LAST_TAB_KEY, tab);
    set({ tab });
  },
  setError: (error) => set({ error }),
  async refreshLibrary() {
    try {
      set({ library: await api().library.get() });
    } catch (err) {
      set({ error: errorLine(err) });
    }
  },
  setLibrary: (library) => set({ library }),
  openById: (id, label) => opening(set, label, () => api().model.open({ id }), get().modelOpened),
  openDialog: () => opening(set, 'a model', () => api().model.openDialog(), get().modelOpened),
  async openDropped(file) {
    if (!/\.gguf$/i.test(file.name)) {
      set({ error: `${file.name} is not a .gguf model file. Drop a GGUF model to open it.` });
      return;
    }
    await opening(
      set,
      file.name,
      () =>
        api()
          .openDroppedFile(file)
          .catch((err: unknown) => {
            // Name the file, so the line says which drop failed.
            const line = errorLine(err);
            throw new Error(line.includes(file.name) ? line : `${file.name}: ${line}`);
          }),
      get().modelOpened,
    );
  },
  async chooseFolder() {
    set({ error: null });
    try {
      set({ library: await api().library.chooseFolder() });
    } catch (err) {
      set({ error: errorLine(err) });
    }
  },
  async forgetRecent(id) {
    try {
      set({ library: await api().library.forgetRecent({ id }) });
    } catch (err) {
      set({ error: errorLine(err) });
    }
  },
  async closeModel() {
    try {
      await api().model.close();
    } catch (err) {
      set({ error: errorLine(err) });
    }
    remember(LAST_MODEL_KEY, null);
    set({ model: null, tab: 'models' });
  },
  modelOpened(model) {
    const tab = get().tab;
    remember(LAST_MODEL_KEY, model.entry.id);
    get().setTab(tab === 'models' ? (model.runnable ? 'chat' : 'metadata') : tab);
    set({ model, error: null });
    void get().refreshLibrary();
  },
  async restore() {
    const id = recall(LAST_MODEL_KEY);
    const lib = get().library;
    if (!id || !lib || get().model) return;
    const entry = [lib.demo, ...lib.recent, ...lib.folderModels].find((m) => m?.id === id && !m.error);
    if (!entry) return;
    const tab = recall(LAST_TAB_KEY);
    if (tab === 'chat' || tab === 'metadata' || tab === 'tensors' || tab === 'server') set({ tab });
    await get().openById(entry.id, entry.fileName);
  },
}));
