// Writing a file so that a crash or power cut leaves either the old content or the new, never a
// mix: write a temporary file beside it, fsync it, rename it over the target (rename is atomic
// within one folder on POSIX and NTFS), then fsync the folder so the rename itself is durable.

import { promises as fsp } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const fh = await fsp.open(tmp, 'w', 0o600);
  try {
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, path);
  } catch (err) {
    // A failed write, fsync or rename (disk full, I/O error) leaves no temp file behind.
    await fsp.rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
  await syncFolder(dirname(path));
}

/**
 * Move a damaged file aside as `<path>.corrupt-<time>` (time as 20261201T230501Z), so the app can
 * start without it and the user can still recover it. Returns the new path.
 */
export async function moveAside(path: string, now = new Date()): Promise<string> {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const to = `${path}.corrupt-${stamp}`;
  await fsp.rename(path, to);
  return to;
}

/** fsync a folder so a rename in it survives a power cut. Windows cannot open folders: skip there. */
async function syncFolder(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(dir, 'r');
    await fh.sync();
  } catch {
    // Some file systems refuse fsync on a folder; the rename is still atomic.
  } finally {
    await fh?.close();
  }
}

/** Write JSON atomically, pretty-printed so a person can read the file. */
export function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  return writeFileAtomic(path, JSON.stringify(value, null, 2) + '\n');
}

/** Read and parse a JSON file; undefined when it does not exist. Throws on bad JSON. */
export async function readJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await fsp.readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return JSON.parse(text) as unknown;
}

/**
 * One JSON file written atomically, one write at a time in the order asked: two quick changes can
 * never land on disk out of order.
 */
export class JsonFile {
  private last: Promise<unknown> = Promise.resolve();

  /** `backup`: copy the file on disk to `<path>.bak` before each overwrite. */
  constructor(readonly path: string, private readonly opts: { backup?: boolean } = {}) {}

  write(value: unknown): Promise<void> {
    const snapshot = JSON.stringify(value, null, 2) + '\n';
    const next = this.last.catch(() => {}).then(async () => {
      if (this.opts.backup) await copyIfExists(this.path, `${this.path}.bak`);
      await writeFileAtomic(this.path, snapshot);
    });
    this.last = next;
    return next;
  }
}

/** Copy `from` to `to` atomically; nothing when `from` does not exist. */
async function copyIfExists(from: string, to: string): Promise<void> {
  let data: Uint8Array;
  try {
    data = await fsp.readFile(from);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  await writeFileAtomic(to, data);
}
