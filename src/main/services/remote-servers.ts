// The remote servers the user added ("Add remote server"): base URL, the models it listed, and its
// API key, kept with the OS's secret store (Electron safeStorage: Keychain, DPAPI, libsecret) and
// never in plain text on disk. Where no secret store is available (the dev harness, Linux without a
// keyring) a key is kept in memory for this run only, and `keyNote` says so in one line.

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { UsageError } from '../../shared/errors.js';
import { writeFileAtomic } from './atomic-file.js';
import { listRemoteModels, type RemoteServer } from './remote.js';

/** Electron's safeStorage, or a stand-in with the same three functions. */
export interface SecretBox {
  isEncryptionAvailable(): boolean;
  encryptString(text: string): Buffer;
  decryptString(data: Buffer): string;
}

/** What the page sees of a remote server (never its key). */
export interface RemoteEntry {
  id: string;
  baseUrl: string;
  models: string[];
  hasKey: boolean;
}

interface Stored {
  id: string;
  baseUrl: string;
  models: string[];
  /** The key encrypted by the secret store, base64; absent without a key (or when kept in memory). */
  key?: string;
}

export class RemoteServers {
  private entries: Stored[] = [];
  /** Keys kept for this run only (no secret store). */
  private readonly memoryKeys = new Map<string, string>();

  constructor(
    private readonly file: string,
    private readonly secrets: SecretBox | null,
  ) {}

  /** Read the stored list (a missing or unreadable file is an empty list). */
  async load(): Promise<void> {
    try {
      const v = JSON.parse(await readFile(this.file, 'utf8')) as { servers?: Stored[] };
      this.entries = Array.isArray(v.servers) ? v.servers.filter((s) => typeof s.id === 'string' && typeof s.baseUrl === 'string') : [];
    } catch {
      this.entries = [];
    }
  }

  /** One line when keys cannot be kept across runs; null when they can. */
  get keyNote(): string | null {
    return this.secrets?.isEncryptionAvailable() ? null : 'No secret store is available here: API keys are kept until Pantheon quits, never written to disk.';
  }

  list(): RemoteEntry[] {
    return this.entries.map((s) => ({ id: s.id, baseUrl: s.baseUrl, models: [...s.models], hasKey: s.key !== undefined || this.memoryKeys.has(s.id) }));
  }

  /** Check the server answers (its /models), then keep it; throws the remote's one-sentence error. */
  async add(baseUrl: string, apiKey?: string): Promise<RemoteEntry> {
    const url = baseUrl.trim().replace(/\/+$/, '');
    if (!/^https?:\/\//i.test(url)) throw new UsageError(`"${baseUrl}" is not an http(s) URL; give one like http://localhost:8080/v1.`);
    const key = apiKey?.trim() || undefined;
    const models = await listRemoteModels({ baseUrl: url, ...(key ? { apiKey: key } : {}) });
    const id = randomBytes(8).toString('hex');
    const entry: Stored = { id, baseUrl: url, models };
    if (key) {
      if (this.secrets?.isEncryptionAvailable()) entry.key = this.secrets.encryptString(key).toString('base64');
      else this.memoryKeys.set(id, key);
    }
    this.entries.push(entry);
    await this.save();
    return this.list().find((e) => e.id === id)!;
  }

  async remove(id: string): Promise<void> {
    this.entries = this.entries.filter((s) => s.id !== id);
    this.memoryKeys.delete(id);
    await this.save();
  }

  /** The server with its key, for a request (the key is decrypted here, in main, only). */
  server(id: string): RemoteServer {
    const s = this.entries.find((e) => e.id === id);
    if (!s) throw new UsageError('That remote server is no longer in the list; add it again.');
    const key = s.key !== undefined && this.secrets ? this.secrets.decryptString(Buffer.from(s.key, 'base64')) : this.memoryKeys.get(id);
    return { baseUrl: s.baseUrl, ...(key ? { apiKey: key } : {}) };
  }

  private async save(): Promise<void> {
    await writeFileAtomic(this.file, `${JSON.stringify({ servers: this.entries }, null, 1)}\n`);
  }
}
