// The stored list of remote servers (src/main/services/remote-servers.ts), added against
// `pantheon serve` with an API key: the key goes through the secret store and never reaches the
// file in plain text; without a secret store it is kept in memory only.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoadedModel } from '../../src/engine/session.js';
import { OpenAiServer } from '../../src/engine/server/server.js';
import { RemoteServers, type SecretBox } from '../../src/main/services/remote-servers.js';
import { listRemoteModels } from '../../src/main/services/remote.js';
import { ROOT } from '../helpers.js';

const KEY = 'sk-remote-secret-123';
let model: LoadedModel;
let server: OpenAiServer;
let dir: string;

beforeAll(async () => {
  model = await LoadedModel.load(join(ROOT, 'resources/models/stories260K.gguf'), { contextSize: 64 });
  server = await OpenAiServer.start(model, { port: 0, apiKey: KEY });
  dir = mkdtempSync(join(tmpdir(), 'pantheon-remotes-'));
});
afterAll(async () => {
  await server?.close();
  model?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** A stand-in for safeStorage: a byte-reversing "cipher", with a count of its calls. */
function box(available: boolean): SecretBox & { calls: number } {
  const b = {
    calls: 0,
    isEncryptionAvailable: () => available,
    encryptString: (t: string) => {
      b.calls++;
      return Buffer.from(Buffer.from(t, 'utf8').reverse());
    },
    decryptString: (d: Buffer) => {
      b.calls++;
      return Buffer.from(d).reverse().toString('utf8');
    },
  };
  return b;
}

describe('remote servers', () => {
  it('adds a server after listing its models; its key is kept encrypted and used for requests', async () => {
    const file = join(dir, 'remotes.json');
    const secrets = box(true);
    const r = new RemoteServers(file, secrets);
    await r.load();
    expect(r.keyNote).toBeNull();
    const e = await r.add(`${server.url}/`, KEY);
    expect(e).toMatchObject({ baseUrl: server.url, models: ['stories260K'], hasKey: true });
    const onDisk = readFileSync(file, 'utf8');
    expect(onDisk).not.toContain(KEY);
    expect(onDisk).toContain(server.url);
    // a new run reads it back, and the key decrypts to one the server accepts
    const again = new RemoteServers(file, secrets);
    await again.load();
    expect(again.list()).toEqual([e]);
    expect(await listRemoteModels(again.server(e.id))).toEqual(['stories260K']);
    expect(secrets.calls).toBe(2);
    await again.remove(e.id);
    expect(again.list()).toEqual([]);
    expect(() => again.server(e.id)).toThrow(/no longer in the list/);
  });

  it('refuses a server that does not answer, with its one sentence; without a secret store keeps the key in memory', async () => {
    const file = join(dir, 'plain.json');
    const r = new RemoteServers(file, null);
    await expect(r.add(server.url, 'wrong')).rejects.toThrow(/refused the API key \(401/);
    await expect(r.add('ftp://x')).rejects.toThrow(/not an http\(s\) URL/);
    expect(r.keyNote).toMatch(/never written to disk/);
    const e = await r.add(server.url, KEY);
    expect(readFileSync(file, 'utf8')).not.toContain(KEY);
    expect(await listRemoteModels(r.server(e.id))).toEqual(['stories260K']);
    const next = new RemoteServers(file, null);
    await next.load();
    expect(next.list()[0].hasKey).toBe(false); // (gone with the run)
  });
});
