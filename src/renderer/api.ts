// The page's one door to the rest of Pantheon: `window.pantheon` (PantheonApi, src/shared/contract.ts).
// In Electron the preload provides it; in a plain browser the dev harness client installs it.

import type { PantheonApi } from '../shared/contract.js';
import { installHarnessApi } from './api/harness-client.js';

type WithApi = { pantheon?: PantheonApi };

let cached: PantheonApi | null = null;

/** Resolve the API once: the preload's, or the harness client's when the preload is absent. */
export async function connectApi(): Promise<PantheonApi> {
  const w = window as unknown as WithApi;
  if (!w.pantheon) await installHarnessApi();
  if (!w.pantheon) throw new Error('Pantheon could not connect to its engine: window.pantheon is missing. Start the app with `npm start` or `npm run dev:web`.');
  cached = w.pantheon;
  return cached;
}

/** The API after connectApi() resolved. */
export function api(): PantheonApi {
  if (!cached) throw new Error('Pantheon is not connected yet.');
  return cached;
}
