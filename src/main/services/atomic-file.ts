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
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await fsp.rename(tmp, path);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  await syncFolder(dirname(path));
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

  constructor(readonly path: string) {}

  write(value: unknown): Promise<void> {
    const snapshot = JSON.stringify(value, null, 2) + '\n';
    const next = this.last.catch(() => {}).then(() => writeFileAtomic(this.path, snapshot));
    this.last = next;
    return next;
  }
}
