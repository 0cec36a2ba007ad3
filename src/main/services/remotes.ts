// Remote servers the user added ("Add remote server"): an OpenAI-compatible base URL and an
// optional API key. The list is `<userData>/remotes.json`; a key is kept only encrypted by the
// OS's secret store (Electron safeStorage: Keychain, DPAPI, libsecret), never in plain settings.
// Where no secret store exists (the dev harness), a key lives in memory for the session only.

import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { OpenedModel, RemoteServer } from '../../shared/contract.js';
import { UsageError } from '../../shared/errors.js';
import { listRemoteModels, type RemoteTarget } from '../../engine/host/remote-model.js';
import { readJson, writeJsonAtomic } from './atomic-file.js';
import type { Logger } from './log.js';

/** The OS's secret store, as Electron's safeStorage offers it. */
export interface SecretStore {
  encrypt(text: string): Buffer;
  decrypt(data: Buffer): string;
}

interface StoredRemote {
  id: string;
  baseUrl: string;
  /** The key encrypted by the secret store, base64. */
  key?: string;
}

const MAX_REMOTES = 32;

/** A 16-hex id from text: remote server ids and remote model entry ids (the library's id shape). */
function hexId(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** The base URL as clients take it: http(s), no query, no trailing slash; '/v1' added when absent. */
export function normaliseBaseUrl(input: string): string {
  let u: URL;
  try {
    u = new URL(input.trim());
  } catch {
    throw new UsageError(`"${input}" is not a URL; give the server's address, e.g. http://192.168.1.20:8080/v1.`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`"${input}" is not an http or https URL.`);
  if (u.username || u.password) throw new UsageError('Put the API key in its own field, not in the URL.');
  let path = u.pathname.replace(/\/+$/, '');
  if (!/\/v\d+$/.test(path)) path += '/v1';
  return `${u.protocol}//${u.host}${path}`;
}

export class RemoteService {
  private servers: StoredRemote[] = [];
  /** Keys of this session (no secret store, or not yet stored). */
  private readonly sessionKeys = new Map<string, string>();
  /** The last model list asked of each server, or why it could not be had. */
  private readonly listed = new Map<string, { models: string[]; error: string | null }>();
  /** Remote model entry id → what to load. */
  private readonly models = new Map<string, { server: string; model: string }>();
  private readonly file: string;

  constructor(userData: string, private readonly secrets: SecretStore | null, private readonly log: Logger) {
    this.file = join(userData, 'remotes.json');
  }

  async load(): Promise<void> {
    try {
      const v = await readJson(this.file);
      if (Array.isArray(v)) this.servers = v.filter((s): s is StoredRemote => typeof s?.id === 'string' && typeof s?.baseUrl === 'string').slice(0, MAX_REMOTES);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log(`remotes: ${(err as Error).message}; starting with none`);
    }
  }

  /** Each server as the page sees it: where its key is follows from the stored list and this session's keys. */
  list(): RemoteServer[] {
    return this.servers.map((s) => {
      const keyStorage = s.key ? 'secure' : this.sessionKeys.has(s.id) ? 'session' : 'none';
      const { models, error } = this.listed.get(s.id) ?? { models: [], error: null };
      return { id: s.id, baseUrl: s.baseUrl, hasKey: keyStorage !== 'none', keyStorage, models: [...models], error };
    });
  }

  private key(id: string): string | null {
    const s = this.servers.find((x) => x.id === id);
    if (s?.key && this.secrets) {
      try {
        return this.secrets.decrypt(Buffer.from(s.key, 'base64'));
      } catch {
        return null;
      }
    }
    return this.sessionKeys.get(id) ?? null;
  }

  /** Ask the server for its models; the view keeps them, or the one-line error. */
  async refresh(id: string): Promise<RemoteServer[]> {
    const s = this.servers.find((x) => x.id === id);
    if (!s) throw new UsageError('No such remote server; add it again.');
    try {
      const models = await listRemoteModels({ baseUrl: s.baseUrl, apiKey: this.key(id) });
      this.listed.set(id, { models, error: null });
      for (const m of models) this.models.set(hexId(`${id}\n${m}`), { server: id, model: m });
    } catch (err) {
      this.listed.set(id, { models: [], error: (err as Error).message.split('\n')[0] });
    }
    return this.list();
  }

  async refreshAll(): Promise<RemoteServer[]> {
    await Promise.all(this.servers.map((s) => this.refresh(s.id)));
    return this.list();
  }

  /** Add (or update the key of) a server; it must answer a model list first. */
  async add(baseUrl: string, apiKey: string | undefined): Promise<RemoteServer[]> {
    const url = normaliseBaseUrl(baseUrl);
    const key = apiKey?.trim() || null;
    // A server that does not answer is not added: its error is the request's.
    await listRemoteModels({ baseUrl: url, apiKey: key });
    const id = hexId(url);
    let s = this.servers.find((x) => x.id === id);
    if (!s) {
      if (this.servers.length >= MAX_REMOTES) throw new UsageError(`At most ${MAX_REMOTES} remote servers; remove one first.`);
      s = { id, baseUrl: url };
      this.servers.push(s);
    }
    delete s.key;
    this.sessionKeys.delete(id);
    if (key && this.secrets) s.key = this.secrets.encrypt(key).toString('base64');
    else if (key) this.sessionKeys.set(id, key);
    this.listed.delete(id);
    await this.save();
    return this.refresh(id);
  }

  async remove(id: string): Promise<RemoteServer[]> {
    this.servers = this.servers.filter((s) => s.id !== id);
    this.listed.delete(id);
    this.sessionKeys.delete(id);
    for (const [k, v] of this.models) if (v.server === id) this.models.delete(k);
    await this.save();
    return this.list();
  }

  /** The entry id the app opens and loads a remote model by. */
  modelEntryId(serverId: string, model: string): string {
    const id = hexId(`${serverId}\n${model}`);
    if (!this.models.has(id)) throw new UsageError(`The server does not list "${model}" (any more); refresh its list.`);
    return id;
  }

  /** What the engine loads for a remote model entry id, or null when `id` is not one. */
  target(entryId: string): (RemoteTarget & { serverId: string }) | null {
    const m = this.models.get(entryId);
    const s = m && this.servers.find((x) => x.id === m.server);
    if (!m || !s) return null;
    return { serverId: s.id, baseUrl: s.baseUrl, apiKey: this.key(s.id), model: m.model };
  }

  /** The model view of a remote model: no header to show, so no metadata and no tensors. */
  openedModel(entryId: string): OpenedModel {
    const t = this.target(entryId);
    if (!t) throw new UsageError('No such remote model; refresh the server\'s list.');
    return {
      entry: {
        id: entryId, path: `${t.baseUrl} · ${t.model}`, fileName: t.model, architecture: 'remote', name: t.model, parameters: null,
        quantization: null, fileSize: 0, error: null, source: 'remote',
      },
      version: 0, alignment: 0, dataOffset: 0, tensorCount: 0, parameters: 0, quantization: 'remote', contextLength: null,
      warnings: [], metadata: [], tensors: [], runnable: true, notRunnableReason: null,
      remote: { baseUrl: t.baseUrl, model: t.model },
    };
  }

  private save(): Promise<void> {
    return writeJsonAtomic(this.file, this.servers);
  }
}
