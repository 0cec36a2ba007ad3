// The local OpenAI-compatible server as the page sees it: its state ('server:state' events, with
// the live request log), start and stop.

import { create } from 'zustand';
import type { ServerState } from '../../shared/contract.js';
import { api } from '../api.js';
import { errorLine } from '../lib/format.js';

export interface ServerStore {
  state: ServerState;
  busy: boolean;
  error: string | null;
  setState(state: ServerState): void;
  refresh(): Promise<void>;
  start(port: number, apiKey: string): Promise<void>;
  stop(): Promise<void>;
}

export const useServer = create<ServerStore>()((set, get) => ({
  state: { running: false, url: null, port: 8080, apiKey: false, modelName: null, error: null, log: [] },
  busy: false,
  error: null,
  setState: (state) => set({ state }),
  async refresh() {
    try {
      get().setState(await api().server.state());
    } catch (err) {
      set({ error: errorLine(err) });
    }
  },
  async start(port, apiKey) {
    set({ busy: true, error: null });
    try {
      get().setState(await api().server.start({ port, ...(apiKey ? { apiKey } : {}) }));
    } catch (err) {
      set({ error: errorLine(err) });
    } finally {
      set({ busy: false });
    }
  },
  async stop() {
    set({ busy: true, error: null });
    try {
      get().setState(await api().server.stop());
    } catch (err) {
      set({ error: errorLine(err) });
    } finally {
      set({ busy: false });
    }
  },
}));
