// The remote servers list (src/main/services/remotes.ts) against a small server answering the
// OpenAI model list: where each key is kept, as the page sees it, follows the stored list and this
// session's keys, also after a restart; a key is never written in plain.
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemoteService, type SecretStore } from '../../src/main/services/remotes.js';

let server: Server;
let base = '';
const seen: (string | undefined)[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'tiny', object: 'model' }, { id: 'small', object: 'model' }] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** A reversible stand-in for safeStorage (the bytes must not contain the key in plain). */
const secrets: SecretStore = {
  encrypt: (t) => Buffer.from([...Buffer.from(t)].map((b) => b ^ 0x5a)),
  decrypt: (b) => Buffer.from([...b].map((x) => x ^ 0x5a)).toString(),
};

describe('remote servers', () => {
  it('keeps a key in the secret store, and says so after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pn-remotes-'));
    const r = new RemoteService(dir, secrets, () => {});
    await r.load();
    const [s] = await r.add(`${base}/`, ' sk-secret ');
    expect(s).toEqual({ id: s.id, baseUrl: `${base}/v1`, hasKey: true, keyStorage: 'secure', models: ['tiny', 'small'], error: null });
    expect(seen.at(-1)).toBe('Bearer sk-secret');
    expect(readFileSync(join(dir, 'remotes.json'), 'utf8')).not.toContain('sk-secret');
    const again = new RemoteService(dir, secrets, () => {});
    await again.load();
    expect(again.list()).toEqual([{ ...s, models: [] }]); // not asked yet
    expect((await again.refresh(s.id))[0]).toEqual(s);
    expect(seen.at(-1)).toBe('Bearer sk-secret');
    // the same server added without a key: no key any more
    expect((await again.add(base, undefined))[0]).toMatchObject({ hasKey: false, keyStorage: 'none' });
    expect(seen.at(-1)).toBeUndefined();
  });

  it('without a secret store a key lives for the session only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pn-remotes-'));
    const r = new RemoteService(dir, null, () => {});
    await r.load();
    const [s] = await r.add(base, 'sk-session');
    expect(s).toMatchObject({ hasKey: true, keyStorage: 'session', models: ['tiny', 'small'] });
    expect(readFileSync(join(dir, 'remotes.json'), 'utf8')).not.toContain('sk-session');
    const restarted = new RemoteService(dir, null, () => {});
    await restarted.load();
    expect(restarted.list()).toEqual([{ ...s, hasKey: false, keyStorage: 'none', models: [] }]);
    expect(await r.remove(s.id)).toEqual([]);
  });

  it('a server that stops answering keeps its entry with the one-line error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pn-remotes-'));
    const down = createServer((_q, res) => res.end('{"data":[{"id":"m"}]}'));
    await new Promise<void>((r) => down.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(down.address() as AddressInfo).port}`;
    const r = new RemoteService(dir, null, () => {});
    await r.load();
    const [s] = await r.add(url, undefined);
    expect(s.models).toEqual(['m']);
    await new Promise<void>((res) => down.close(() => res()));
    const [after] = await r.refresh(s.id);
    expect(after.models).toEqual([]);
    expect(after.error).toMatch(/\S/);
    expect(after.error).not.toContain('\n');
  });
});
