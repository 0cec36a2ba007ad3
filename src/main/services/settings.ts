// The user's settings, persisted as `<userData>/settings.json`, with defaults for every field
// (sampling defaults are llama.cpp's: DEFAULT_SAMPLING in the contract).

import { join } from 'node:path';
import { DEFAULT_SAMPLING, type SamplingSettings, type Settings } from '../../shared/contract.js';
import { validateSettingsPatch } from '../../shared/requests.js';
import { string } from '../../shared/validate.js';
import { JsonFile, moveAside, readJson } from './atomic-file.js';
import type { Logger } from './log.js';

export const DEFAULT_SAMPLING_SETTINGS: SamplingSettings = { ...DEFAULT_SAMPLING, stop: [] };

export const DEFAULT_SETTINGS: Settings = {
  sampling: DEFAULT_SAMPLING_SETTINGS,
  systemPrompt: '',
  contextSize: 2048,
  threads: 0,
  computeBackend: 'auto',
  gpuLayers: 'auto',
  theme: 'system',
  modelsFolder: null,
  contextPolicy: 'stop',
  showProbabilities: false,
  showProfile: false,
};

export class SettingsStore {
  private settings: Settings = structuredClone(DEFAULT_SETTINGS);
  private readonly file: string;
  private readonly out: JsonFile;
  /** One line for the user when the file was damaged and moved aside (see Backend.takeNotices). */
  notice: string | null = null;

  constructor(userData: string, private readonly log: Logger) {
    this.file = join(userData, 'settings.json');
    // The previous settings survive one bad write as settings.json.bak.
    this.out = new JsonFile(this.file, { backup: true });
  }

  /**
   * Read the file; a field that is missing or invalid keeps its default (with a log line). A file
   * that is not JSON is moved aside (settings.json.corrupt-<time>) and the defaults are used.
   */
  async load(): Promise<Settings> {
    let raw: unknown;
    try {
      raw = await readJson(this.file);
    } catch (err) {
      this.log(`settings: ${this.file} is not valid JSON (${(err as Error).message}); using defaults`);
      try {
        const to = await moveAside(this.file);
        this.notice = `Your settings file was damaged; it was moved to ${to} and the default settings are used.`;
      } catch (e) {
        this.log(`settings: cannot move ${this.file} aside: ${(e as Error).message}`);
      }
      return this.get();
    }
    if (raw === undefined) return this.get();
    const fields = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
    const next = structuredClone(DEFAULT_SETTINGS);
    for (const [key, value] of Object.entries(fields)) {
      try {
        if (key === 'modelsFolder') {
          next.modelsFolder = value === null ? null : string(value, 'modelsFolder', 4096);
        } else {
          Object.assign(next, validateSettingsPatch({ [key]: value }));
        }
      } catch (err) {
        this.log(`settings: ignoring ${key} in ${this.file}: ${(err as Error).message}`);
      }
    }
    this.settings = next;
    return this.get();
  }

  get(): Settings {
    return structuredClone(this.settings);
  }

  /** Apply a validated patch and persist. */
  async set(patch: Partial<Settings>): Promise<Settings> {
    this.settings = { ...this.settings, ...structuredClone(patch) };
    await this.out.write(this.settings);
    return this.get();
  }
}
