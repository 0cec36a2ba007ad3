// The model library: the bundled demo model, recently opened models (persisted in
// `<userData>/recent.json`, newest first, at most 20), and a models folder scanned recursively for
// `.gguf` files in any layout. Every entry's summary comes from its header only (readGgufHeader
// reads a few MiB at most), so listing a folder of 40 GB models is quick; headers are read by a
// worker thread with a per-file time limit (header-reader.ts), so a hostile one cannot block or
// crash main at startup. An unreadable file is listed with its one-line error instead of
// breaking the listing.
//
// Ids are a hash of the resolved path: the same file keeps its id across runs and lists, and the
// page refers to models by id only (it never chooses paths).

import { createHash } from 'node:crypto';
import { promises as fsp, type Dirent } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import type { Library, ModelEntry } from '../../shared/contract.js';
import { ModelError, UsageError } from '../../shared/errors.js';
import { HeaderReader } from './header-reader.js';
import { JsonFile, readJson } from './atomic-file.js';
import type { Logger } from './log.js';

export const MAX_RECENT = 20;
/** A scan stops after this many files or folder levels (a models folder, not a whole disk). */
const MAX_SCAN_FILES = 10_000;
const MAX_SCAN_DEPTH = 16;

export function modelId(path: string): string {
  return createHash('sha256').update(resolve(path)).digest('hex').slice(0, 16);
}

export function isGgufName(path: string): boolean {
  return extname(path).toLowerCase() === '.gguf';
}

interface RecentRecord {
  path: string;
  openedAt: number;
}

interface CachedSummary {
  size: number;
  mtimeMs: number;
  entry: Omit<ModelEntry, 'source' | 'openedAt'>;
}

export class LibraryService {
  private recent: RecentRecord[] = [];
  private folder: string | null = null;
  private folderModels: ModelEntry[] = [];
  private scanning = false;
  private scanGeneration = 0;
  private readonly cache = new Map<string, CachedSummary>();
  private readonly recentFile: string;
  private readonly recentOut: JsonFile;
  private readonly listeners = new Set<(lib: Library) => void>();

  /** Headers are read by a worker thread with a per-file time limit (header-reader.ts). */
  readonly headers: HeaderReader;

  constructor(
    userData: string,
    private readonly demoPath: string | null,
    private readonly log: Logger,
    headers?: HeaderReader,
  ) {
    this.headers = headers ?? new HeaderReader(log);
    this.recentFile = join(userData, 'recent.json');
    this.recentOut = new JsonFile(this.recentFile);
  }

  /** Read the recent list from disk (bad records are dropped with a log line). */
  async load(): Promise<void> {
    let raw: unknown;
    try {
      raw = await readJson(this.recentFile);
    } catch (err) {
      this.log(`library: ${this.recentFile} is not valid JSON (${(err as Error).message}); starting with no recent models`);
      return;
    }
    if (raw === undefined) return;
    const items = Array.isArray(raw) ? raw : [];
    this.recent = items
      .filter((r): r is RecentRecord => typeof r?.path === 'string' && typeof r?.openedAt === 'number')
      .slice(0, MAX_RECENT);
  }

  onChange(listener: (lib: Library) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async changed(): Promise<void> {
    if (this.listeners.size === 0) return;
    const lib = await this.get();
    for (const l of this.listeners) l(lib);
  }

  async get(): Promise<Library> {
    const demo = this.demoPath ? { ...(await this.summaryOf(this.demoPath)), source: 'demo' as const } : null;
    const recent: ModelEntry[] = [];
    for (const r of this.recent) recent.push({ ...(await this.summaryOf(r.path)), source: 'recent', openedAt: r.openedAt });
    return { demo, recent, folder: this.folder, folderModels: this.folderModels, scanning: this.scanning };
  }

  /** The entry with this id (demo, recent or folder), or a ModelError the page can show. */
  async find(id: string): Promise<ModelEntry> {
    const lib = await this.get();
    const all = [lib.demo, ...lib.recent, ...lib.folderModels];
    const e = all.find((x) => x?.id === id);
    if (!e) throw new ModelError('MODEL_UNKNOWN', 'That model is no longer in the library; open it again.');
    return e;
  }

  /** Put `path` at the top of the recent list and persist it. */
  async addRecent(path: string): Promise<ModelEntry> {
    const abs = resolve(path);
    const openedAt = Date.now();
    if (abs !== (this.demoPath && resolve(this.demoPath))) {
      this.recent = [{ path: abs, openedAt }, ...this.recent.filter((r) => r.path !== abs)].slice(0, MAX_RECENT);
      await this.recentOut.write(this.recent);
      void this.changed();
    }
    return { ...(await this.summaryOf(abs)), source: 'recent', openedAt };
  }

  async forgetRecent(id: string): Promise<Library> {
    this.recent = this.recent.filter((r) => modelId(r.path) !== id);
    await this.recentOut.write(this.recent);
    void this.changed();
    return this.get();
  }

  /**
   * Check a path given from outside the page's control (drop, command line, OS): it must be an
   * existing `.gguf` file. Throws a one-line error otherwise.
   */
  async checkModelPath(path: string): Promise<string> {
    const name = basename(path);
    if (!isGgufName(path)) throw new UsageError(`${name} is not a .gguf model file.`);
    let st;
    try {
      st = await fsp.stat(path);
    } catch {
      throw new ModelError('MODEL_NOT_FOUND', `${name} does not exist (it may have been moved or deleted).`);
    }
    if (!st.isFile()) throw new UsageError(`${name} is a folder, not a .gguf model file.`);
    return resolve(path);
  }

  /** Set the models folder (null to clear) and scan it; resolves when the scan is done. */
  async setFolder(folder: string | null): Promise<Library> {
    this.folder = folder === null ? null : resolve(folder);
    const generation = ++this.scanGeneration;
    this.folderModels = [];
    if (this.folder === null) {
      this.scanning = false;
      void this.changed();
      return this.get();
    }
    this.scanning = true;
    void this.changed();
    const paths = await this.scan(this.folder);
    const models: ModelEntry[] = [];
    for (const p of paths) models.push({ ...(await this.summaryOf(p)), source: 'folder' });
    if (generation !== this.scanGeneration) return this.get(); // a newer folder replaced this scan
    models.sort((a, b) => a.path.localeCompare(b.path));
    this.folderModels = models;
    this.scanning = false;
    void this.changed();
    return this.get();
  }

  /** Re-scan the current folder (e.g. on window focus). */
  rescan(): Promise<Library> {
    return this.setFolder(this.folder);
  }

  /** Every `.gguf` under `root`, depth-first; folders that cannot be read are logged and skipped. */
  private async scan(root: string): Promise<string[]> {
    const found: string[] = [];
    const seen = new Set<string>();
    const walk = async (dir: string, depth: number): Promise<void> => {
      if (depth > MAX_SCAN_DEPTH || found.length >= MAX_SCAN_FILES) return;
      let real: string;
      let entries: Dirent[];
      try {
        real = await fsp.realpath(dir);
        if (seen.has(real)) return; // a symlink loop
        seen.add(real);
        entries = await fsp.readdir(dir, { withFileTypes: true });
      } catch (err) {
        this.log(`library: cannot read folder ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        return;
      }
      entries.sort((a, b) => a.name.localeCompare(b.name));
      for (const e of entries) {
        if (found.length >= MAX_SCAN_FILES) return;
        if (e.name.startsWith('.')) continue;
        const p = join(dir, e.name);
        let isDir = e.isDirectory();
        let isFile = e.isFile();
        if (e.isSymbolicLink()) {
          try {
            const st = await fsp.stat(p);
            isDir = st.isDirectory();
            isFile = st.isFile();
          } catch {
            continue; // a dangling link
          }
        }
        if (isDir) await walk(p, depth + 1);
        else if (isFile && isGgufName(e.name)) found.push(p);
      }
    };
    await walk(root, 0);
    return found;
  }

  /** Summary of one file from its header, cached by size and modification time. */
  async summaryOf(path: string): Promise<Omit<ModelEntry, 'source' | 'openedAt'>> {
    const abs = resolve(path);
    const base = { id: modelId(abs), path: abs, fileName: basename(abs) };
    let size = 0;
    let mtimeMs = 0;
    try {
      const st = await fsp.stat(abs);
      size = st.size;
      mtimeMs = st.mtimeMs;
    } catch {
      return { ...base, architecture: null, name: null, parameters: null, quantization: null, fileSize: 0, error: 'The file no longer exists (moved or deleted).' };
    }
    const hit = this.cache.get(abs);
    if (hit && hit.size === size && hit.mtimeMs === mtimeMs) return hit.entry;
    let entry: Omit<ModelEntry, 'source' | 'openedAt'>;
    try {
      entry = { ...base, ...(await this.headers.summary(abs)), fileSize: size, error: null };
    } catch (err) {
      entry = { ...base, architecture: null, name: null, parameters: null, quantization: null, fileSize: size, error: (err as Error).message };
    }
    this.cache.set(abs, { size, mtimeMs, entry });
    return entry;
  }
}

