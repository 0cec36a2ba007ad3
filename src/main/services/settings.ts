// The user's settings, persisted as `<userData>/settings.json`, with defaults for every field
// (sampling defaults are llama.cpp's: DEFAULT_SAMPLING in the contract).

import { join } from 'node:path';
import { UsageError } from '../../shared/errors.js';
import { DEFAULT_SAMPLING, type SamplingSettings, type Settings } from '../../shared/contract.js';
import { CONTEXT_POLICIES } from '../../engine/chat/context-policy.js';
import { integer, oneOf, record, samplingSettings, string } from '../../engine/host/validate.js';
import { JsonFile, moveAside, readJson } from './atomic-file.js';
import type { Logger } from './log.js';

export const DEFAULT_SAMPLING_SETTINGS: SamplingSettings = { ...DEFAULT_SAMPLING, stop: [] };

export const DEFAULT_SETTINGS: Settings = {
  sampling: DEFAULT_SAMPLING_SETTINGS,
  systemPrompt: '',
  contextSize: 2048,
  threads: 0,
  theme: 'system',
  modelsFolder: null,
  contextPolicy: 'stop',
};

export const MIN_CONTEXT = 16;
export const MAX_CONTEXT = 1 << 20;
export const MAX_THREADS = 256;
const MAX_SYSTEM_PROMPT = 100_000;

/**
 * Check a partial settings object from the page. `modelsFolder` is not settable this way: the page
 * never chooses paths (library.chooseFolder() sets it through a native dialog).
 */
export function validateSettingsPatch(v: unknown): Partial<Settings> {
  const p = record(v, 'settings');
  const out: Partial<Settings> = {};
  for (const key of Object.keys(p)) {
    switch (key) {
      case 'sampling': out.sampling = samplingSettings({ ...DEFAULT_SAMPLING_SETTINGS, ...record(p.sampling, 'settings.sampling') }, 'settings.sampling'); break;
      case 'systemPrompt': out.systemPrompt = string(p.systemPrompt, 'settings.systemPrompt', MAX_SYSTEM_PROMPT); break;
      case 'contextSize': out.contextSize = integer(p.contextSize, 'settings.contextSize', MIN_CONTEXT, MAX_CONTEXT); break;
      case 'threads': out.threads = integer(p.threads, 'settings.threads', 0, MAX_THREADS); break;
      case 'theme': out.theme = oneOf(p.theme, 'settings.theme', ['system', 'light', 'dark'] as const); break;
      case 'contextPolicy': out.contextPolicy = oneOf(p.contextPolicy, 'settings.contextPolicy', CONTEXT_POLICIES); break;
      case 'modelsFolder': throw new UsageError('settings.modelsFolder is chosen with library.chooseFolder(), not set directly.');
      default: throw new UsageError(`settings.${key} is not a setting.`);
    }
  }
  return out;
}

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
