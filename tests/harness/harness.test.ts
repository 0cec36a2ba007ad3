// The dev harness end to end without a browser: start it on a free port, speak its WebSocket
// protocol with the `ws` package as the page's harness client does, and check the answers against
// the model file read independently (the project's GGUF reader in this process).

import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chat, EngineState, GenerationEvent, Library, MetaArraySlice, OpenedModel, RequestChannel } from '../../src/shared/contract.js';
import type { SerializedError } from '../../src/shared/errors.js';
import { HARNESS_UPLOAD_HEADER, type HarnessServerMessage } from '../../src/shared/harness-protocol.js';
import { readGgufHeaderSync, getArray } from '../../src/engine/gguf/index.js';
import { defaultHarnessUserData, privateFolder, startHarness, type Harness } from '../../src/harness/server.js';
import { HAVE_SHARED, ROOT, sharedModel } from '../helpers.js';
import { SUPPORTED_ARCHITECTURES } from '../../src/engine/model/arch.js';

const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');

class Client {
  private nextId = 1;
  private readonly pending = new Map<number, (m: HarnessServerMessage) => void>();
  readonly events: { event: string; payload: unknown }[] = [];
  private readonly streams = new Map<number, (e: GenerationEvent) => void>();

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as HarnessServerMessage;
      if (m.t === 'res') this.pending.get(m.id)?.(m);
      else if (m.t === 'evt') this.events.push({ event: m.event, payload: m.payload });
      else if (m.t === 'gen') this.streams.get(m.id)?.(m.event);
    });
  }

  static open(url: string, origin: string): Promise<Client> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { origin });
      ws.once('open', () => resolve(new Client(ws)));
      ws.once('error', reject);
    });
  }

  /** One request; resolves with the value or rejects with the serialised error. */
  call<T>(channel: RequestChannel | string, payload?: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (m) => {
        this.pending.delete(id);
        if (m.t === 'res' && m.ok) resolve(m.value as T);
        else if (m.t === 'res') reject(m.error);
      });
      this.ws.send(JSON.stringify({ t: 'req', id, channel, payload }));
    });
  }

  generate(request: unknown, onToken?: (n: number, cancel: () => void) => void): Promise<GenerationEvent[]> {
    const id = this.nextId++;
    const events: GenerationEvent[] = [];
    let n = 0;
    return new Promise((resolve) => {
      this.streams.set(id, (e) => {
        events.push(e);
        if (e.kind === 'token') onToken?.(++n, () => this.ws.send(JSON.stringify({ t: 'cancel', id })));
        if (e.kind === 'done' || e.kind === 'error') resolve(events);
      });
      this.ws.send(JSON.stringify({ t: 'gen', id, request }));
    });
  }
}

/** A GET with the path sent exactly as given. */
function rawGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: '127.0.0.1', port, path, headers: { host: `127.0.0.1:${port}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

const SAMPLING = {
  temperature: 0, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1, presencePenalty: 0, frequencyPenalty: 0,
  penaltyLastN: 64, seed: 1, maxTokens: 6, stop: [],
};

describe('dev harness over WebSocket', () => {
  let harness: Harness;
  let client: Client;
  let tmp: string;
  let wsUrl: string;
  let origin: string;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'pantheon-harness-'));
    const renderer = join(tmp, 'renderer');
    mkdirSync(join(renderer, 'assets'), { recursive: true });
    writeFileSync(join(renderer, 'index.html'), '<!doctype html><title>Pantheon</title>');
    writeFileSync(join(renderer, 'assets', 'app.js'), 'console.log(1)');
    writeFileSync(join(tmp, 'secret.txt'), 'not for the page');
    harness = await startHarness({
      port: 0,
      userData: join(tmp, 'user'),
      rendererDir: renderer,
      demoPath: DEMO,
      modelsDir: HAVE_SHARED ? sharedModel('tiny-random') : null,
      log: () => {},
    });
    origin = `http://127.0.0.1:${harness.port}`;
    wsUrl = `ws://127.0.0.1:${harness.port}/api?token=${harness.token}`;
    client = await Client.open(wsUrl, origin);
  });

  afterAll(async () => {
    client?.ws.close();
    await harness?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('serves the renderer with the CSP header, and nothing outside its folder', async () => {
    const page = await fetch(harness.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'");
    expect(await page.text()).toContain('<title>Pantheon</title>');
    expect((await fetch(`${origin}/assets/app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    // Raw request paths (fetch would normalise "/../"): each tries to climb out of the renderer folder.
    for (const escape of ['/../secret.txt', '/..%2fsecret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/assets/%2e%2e/%2e%2e/secret.txt']) {
      const r = await rawGet(harness.port, escape);
      expect([403, 404], escape).toContain(r.status);
      expect(r.body).not.toContain('not for the page');
    }
  });

  it('refuses a WebSocket from another origin', async () => {
    await expect(Client.open(wsUrl, 'http://evil.example')).rejects.toThrow(/403/);
  });

  it('refuses a WebSocket or an upload without the page URL\'s token', async () => {
    expect(harness.url).toBe(`${origin}/?token=${harness.token}`);
    expect(harness.token).toMatch(/^[0-9a-f]{32}$/);
    await expect(Client.open(`ws://127.0.0.1:${harness.port}/api`, origin)).rejects.toThrow(/403/);
    await expect(Client.open(`ws://127.0.0.1:${harness.port}/api?token=${'0'.repeat(32)}`, origin)).rejects.toThrow(/403/);
    const up = await fetch(`${origin}/upload?name=x.gguf`, { method: 'POST', body: new Blob([new Uint8Array(8)]), headers: { [HARNESS_UPLOAD_HEADER]: '1' } });
    expect(up.status).toBe(403);
  });

  it('library:get lists the demo model with its header summary', async () => {
    const lib = await client.call<Library>('library:get');
    expect(lib.demo).toMatchObject({ fileName: 'stories260K.gguf', architecture: 'llama', source: 'demo', error: null });
    expect(lib.demo!.id).toMatch(/^[0-9a-f]{16}$/);
  });

  it('answers a bad channel and a bad payload with one-line errors', async () => {
    await expect(client.call('library:nope')).rejects.toMatchObject({ name: 'UsageError', message: '"library:nope" is not a request channel.' });
    await expect(client.call('model:open', { id: '../../etc/passwd' })).rejects.toMatchObject({ name: 'UsageError', message: 'id is not a model id from the library.' });
    // The page cannot name a path to open.
    await expect(client.call('model:openDropped', { path: DEMO })).rejects.toMatchObject({ name: 'UsageError', message: 'Pages cannot open paths; drop the file on the window instead.' });
  });

  it('model:open opens the demo; metadata and tensors match the file', async () => {
    const lib = await client.call<Library>('library:get');
    const m = await client.call<OpenedModel>('model:open', { id: lib.demo!.id });
    const h = readGgufHeaderSync(DEMO);
    expect(m.tensorCount).toBe(h.tensors.length);
    expect(m.metadata.map((e) => e.key)).toEqual([...h.metadata.keys()]);
    expect(m.tensors.find((t) => t.name === 'blk.0.attn_q.weight')).toMatchObject({ layer: 0, dims: [...h.tensors.find((t) => t.name === 'blk.0.attn_q.weight')!.dims] });
    expect(m.runnable).toBe(true);
    const tokens = m.metadata.find((e) => e.key === 'tokenizer.ggml.tokens')!;
    expect(tokens.type).toBe('ARRAY');
    expect(tokens.value).toMatchObject({ array: true, itemType: 'STRING', length: getArray(h, 'tokenizer.ggml.tokens')!.length });
  });

  it('model:metaArray finds tokens by index and by text', async () => {
    const vocab = getArray(readGgufHeaderSync(DEMO), 'tokenizer.ggml.tokens') as string[];
    const byIndex = await client.call<MetaArraySlice>('model:metaArray', { key: 'tokenizer.ggml.tokens', offset: 0, limit: 10, query: '#300' });
    expect(byIndex.items).toEqual([{ index: 300, value: vocab[300] }]);
    const word = vocab[378]; // a token of "Once upon a time" (llama.cpp's tokenization, tests/golden)
    const byText = await client.call<MetaArraySlice>('model:metaArray', { key: 'tokenizer.ggml.tokens', offset: 0, limit: 1000, query: word });
    const expected = vocab.map((t, i) => [t, i] as const).filter(([t]) => t.toLowerCase().includes(word.toLowerCase())).map(([, i]) => i);
    expect(byText.items.map((x) => x.index)).toEqual(expected);
    expect(byText.matches).toBe(expected.length);
    const page = await client.call<MetaArraySlice>('model:metaArray', { key: 'tokenizer.ggml.tokens', offset: 100, limit: 5 });
    expect(page.items).toEqual([100, 101, 102, 103, 104].map((i) => ({ index: i, value: vocab[i] })));
  });

  it('chats: create, save, list, get, rename, delete', async () => {
    const chat = await client.call<Chat>('chats:create', { title: 'First' });
    const saved: Chat = { ...chat, messages: [{ id: 'm1', role: 'user', content: 'Hello', createdAt: Date.now() }] };
    await client.call('chats:save', { chat: saved });
    const list = await client.call<{ id: string; title: string; messageCount: number }[]>('chats:list');
    expect(list).toEqual([expect.objectContaining({ id: chat.id, title: 'First', messageCount: 1 })]);
    expect((await client.call<Chat>('chats:get', { id: chat.id })).messages[0].content).toBe('Hello');
    await client.call('chats:rename', { id: chat.id, title: 'Renamed' });
    expect((await client.call<Chat>('chats:get', { id: chat.id })).title).toBe('Renamed');
    // On disk, as JSON, under the user-data folder.
    expect(JSON.parse(readFileSync(join(tmp, 'user', 'chats', `${chat.id}.json`), 'utf8')).title).toBe('Renamed');
    await client.call('chats:delete', { id: chat.id });
    expect(await client.call('chats:list')).toEqual([]);
  });

  it('engine:load streams state events, then a generation streams tokens and stops on cancel', async () => {
    const lib = await client.call<Library>('library:get');
    client.events.length = 0;
    const ready = await client.call<EngineState>('engine:load', { id: lib.demo!.id, contextSize: 256, threads: 1 });
    expect(ready).toMatchObject({ status: 'ready', contextSize: 256 });
    const states = client.events.filter((e) => e.event === 'engine:state').map((e) => (e.payload as EngineState).status);
    expect(states[0]).toBe('loading');
    expect(states.at(-1)).toBe('ready');

    const messages = [{ role: 'user', content: 'Once upon a time' }];
    const count = await client.call<{ tokens: number; contextSize: number }>('engine:countTokens', { messages });
    const events = await client.generate({ messages, sampling: SAMPLING });
    expect(events[0]).toMatchObject({ kind: 'prompt', templateName: expect.any(String) });
    if (events[0].kind === 'prompt') expect(events[0].tokens).toHaveLength(count.tokens);
    expect(events.filter((e) => e.kind === 'token')).toHaveLength(6);
    expect(events.at(-1)).toMatchObject({ kind: 'done', stats: { stopReason: 'length', generatedTokens: 6 }, contextSize: 256 });

    const stopped = await client.generate({ messages, sampling: { ...SAMPLING, maxTokens: -1 } }, (n, cancel) => {
      if (n === 1) cancel();
    });
    expect(stopped.at(-1)).toMatchObject({ kind: 'done', stats: { stopReason: 'cancelled' } });
  });

  it('serves no test hooks unless started with them', async () => {
    expect((await fetch(`${origin}/__test/kill-engine`, { method: 'POST' })).status).toBe(405);
    expect(await client.call<EngineState>('engine:state')).toMatchObject({ status: 'ready' });
  });

  it('uploads a dropped .gguf and opens it; refuses other files with a clear message', async () => {
    const upload = (name: string, body: Uint8Array, headers: Record<string, string> = { [HARNESS_UPLOAD_HEADER]: '1' }) =>
      fetch(`${origin}/upload?token=${harness.token}&name=${encodeURIComponent(name)}`, { method: 'POST', body: new Blob([new Uint8Array(body)]), headers });
    const bytes = readFileSync(DEMO);
    const ok = (await (await upload('dropped.gguf', bytes)).json()) as { ok: boolean; value: OpenedModel };
    expect(ok.ok).toBe(true);
    expect(ok.value.entry.fileName).toBe('dropped.gguf');
    expect(ok.value.tensorCount).toBe(readGgufHeaderSync(DEMO).tensors.length);
    const txt = (await (await upload('notes.txt', new Uint8Array([1, 2, 3]))).json()) as { ok: boolean; error: SerializedError };
    expect(txt).toEqual({ ok: false, error: { name: 'UsageError', code: 'USAGE', message: 'notes.txt is not a .gguf model file.' } });
    const corrupt = (await (await upload('broken.gguf', new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]))).json()) as { ok: boolean; error: SerializedError };
    expect(corrupt.ok).toBe(false);
    expect(corrupt.error.name).toBe('GgufError');
    // Without the harness's header (a form post from another site): refused.
    expect((await upload('x.gguf', bytes, {})).status).toBe(403);
  });

  it.skipIf(!HAVE_SHARED)('library:chooseFolder answers with PANTHEON_MODELS_DIR and scans it recursively', async () => {
    const lib = await client.call<Library>('library:chooseFolder');
    expect(lib.folder).toBe(sharedModel('tiny-random'));
    expect(lib.folderModels.map((m) => m.fileName).sort()).toEqual([
      'tiny-gemma-s5.gguf', 'tiny-gemma2-s1.gguf', 'tiny-gemma3-s1.gguf', 'tiny-gpt-oss-mxfp4-s1.gguf', 'tiny-gpt-oss-s1.gguf',
      'tiny-granite-s1.gguf', 'tiny-llama-s5.gguf', 'tiny-llama4-s1.gguf', 'tiny-mistral3-s1.gguf', 'tiny-olmo2-s1.gguf',
      'tiny-phi2-s5.gguf', 'tiny-phi3-s5.gguf', 'tiny-qwen2-s5.gguf', 'tiny-qwen3-s5.gguf', 'tiny-qwen35-s1.gguf',
      'tiny-qwen35moe-s1.gguf', 'tiny-qwen3moe-s1.gguf', 'tiny-smollm3-s1.gguf',
    ]);
    expect(lib.folderModels.find((m) => m.fileName === 'tiny-qwen2-s5.gguf')).toMatchObject({ architecture: 'qwen2', error: null });
    // every architecture of the folder (one file each) is one Pantheon runs, listed without an error
    for (const m of lib.folderModels) expect(SUPPORTED_ARCHITECTURES, m.fileName).toContain(m.architecture);
    for (const m of lib.folderModels) expect(m, m.fileName).toMatchObject({ error: null });
    expect(lib.folderModels.find((m) => m.fileName === 'tiny-gemma3-s1.gguf')).toMatchObject({ architecture: 'gemma3', error: null });
    // the picker's memory line: 6 layers × (64 + 64) KV widths × 2 bytes a position, nothing fixed
    expect(lib.folderModels.find((m) => m.fileName === 'tiny-gemma3-s1.gguf')?.memory).toMatchObject({ fixed: 0, perPosition: 6 * 128 * 2 });
  });

  it('model:openDialog without PANTHEON_MODEL_FILE says it is not available in the browser', async () => {
    await expect(client.call('model:openDialog')).rejects.toMatchObject({ message: expect.stringMatching(/not available in the browser harness/) });
  });
});

describe('dev harness test hooks (PANTHEON_TEST_HOOKS=1)', () => {
  let harness: Harness;
  let client: Client;
  let tmp: string;
  let origin: string;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'pantheon-harness-hooks-'));
    harness = await startHarness({ port: 0, userData: join(tmp, 'user'), rendererDir: null, demoPath: DEMO, log: () => {}, testHooks: true });
    origin = `http://127.0.0.1:${harness.port}`;
    client = await Client.open(`ws://127.0.0.1:${harness.port}/api?token=${harness.token}`, origin);
  });

  afterAll(async () => {
    client?.ws.close();
    await harness?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('kill-engine SIGKILLs the engine mid-reply: the reply ends with an error, the state says so, a load brings it back', async () => {
    const kill = (headers: Record<string, string> = {}) => fetch(`${origin}/__test/kill-engine`, { method: 'POST', headers });
    expect((await kill()).status).toBe(409);
    const lib = await client.call<Library>('library:get');
    await client.call<EngineState>('engine:load', { id: lib.demo!.id, contextSize: 256, threads: 1 });
    const pid = harness.backend.engine.pid;
    // Another site's page may not use it.
    expect((await kill({ origin: 'http://evil.example' })).status).toBe(403);

    const messages = [{ role: 'user', content: 'Once upon a time' }];
    let answer: Promise<Response> | null = null;
    const events = await client.generate({ messages, sampling: { ...SAMPLING, maxTokens: -1 } }, (n) => {
      if (n === 1) answer = kill();
    });
    expect(await (await answer!)?.json()).toEqual({ killed: pid });
    const last = events.at(-1)!;
    expect(last.kind).toBe('error');
    if (last.kind === 'error') expect(last.error).toMatchObject({ name: 'EngineError', code: 'ENGINE_CRASHED' });
    const crashed = await client.call<EngineState>('engine:state');
    expect(crashed).toMatchObject({ status: 'crashed', reason: 'killed' });
    // The model is named by its general.name ("llama" in stories260K).
    const name = String(readGgufHeaderSync(DEMO).metadata.get('general.name')?.value);
    if (crashed.status === 'crashed') expect(crashed.message).toBe(`The engine process was killed while running ${name} (signal SIGKILL); press Reload to start it again.`);

    expect(await client.call<EngineState>('engine:load', { id: lib.demo!.id, contextSize: 256, threads: 1 })).toMatchObject({ status: 'ready' });
    expect(harness.backend.engine.pid).not.toBe(pid);
    const again = await client.generate({ messages, sampling: SAMPLING });
    expect(again.at(-1)).toMatchObject({ kind: 'done', stats: { generatedTokens: 6 } });
  });
});

describe('dev harness uploads', () => {
  it('keeps a dropped model in the user data: the same bytes open the same file, a broken one leaves nothing, Recent still opens it after a restart', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'pantheon-uploads-'));
    const userData = join(tmp, 'user');
    const start = () => startHarness({ port: 0, userData, rendererDir: null, demoPath: DEMO, modelsDir: null, log: () => {} });
    const upload = (h: Harness, name: string, body: Uint8Array) =>
      fetch(`http://127.0.0.1:${h.port}/upload?token=${h.token}&name=${encodeURIComponent(name)}`, { method: 'POST', body: new Blob([new Uint8Array(body)]), headers: { [HARNESS_UPLOAD_HEADER]: '1' } })
        .then((r) => r.json() as Promise<{ ok: boolean; value: OpenedModel }>, (e: Error) => { throw new Error(`upload ${name}: ${String((e as { cause?: unknown }).cause)}`); });
    try {
      let h = await start();
      const first = await upload(h, 'dropped.gguf', readFileSync(DEMO));
      const again = await upload(h, 'dropped.gguf', readFileSync(DEMO));
      expect(first.ok && again.ok).toBe(true);
      expect(again.value.entry.path).toBe(first.value.entry.path);
      expect(first.value.entry.path.startsWith(join(userData, 'uploads'))).toBe(true);
      // Buffer.equals: a deep toEqual over 1 MB takes seconds on a busy machine, past the server's keep-alive
      expect(readFileSync(first.value.entry.path).equals(readFileSync(DEMO))).toBe(true);
      expect((await upload(h, 'broken.gguf', new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]))).ok).toBe(false);
      // one folder (the model's), no part files, nothing of the broken upload
      const left = readdirSync(join(userData, 'uploads'));
      expect(left).toHaveLength(1);
      expect(readdirSync(join(userData, 'uploads', left[0]))).toEqual(['dropped.gguf']);
      await h.close();

      h = await start();
      const ws = await Client.open(`ws://127.0.0.1:${h.port}/api?token=${h.token}`, `http://127.0.0.1:${h.port}`);
      try {
        const lib = await ws.call<Library>('library:get');
        const entry = lib.recent.find((e) => e.path === first.value.entry.path);
        expect(entry).toMatchObject({ fileName: 'dropped.gguf', error: null });
        const m = await ws.call<OpenedModel>('model:open', { id: entry!.id });
        expect(m.tensorCount).toBe(readGgufHeaderSync(DEMO).tensors.length);
      } finally {
        ws.ws.close();
        await h.close();
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('damaged files at startup', () => {
  it('the harness starts; the damaged settings and chat files are moved aside and told once', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'pantheon-damaged-'));
    const userData = join(tmp, 'user');
    mkdirSync(join(userData, 'chats'), { recursive: true });
    writeFileSync(join(userData, 'settings.json'), '{"theme": ');
    writeFileSync(join(userData, 'chats', '0123456789abcdef.json'), 'not json');
    const h = await startHarness({ port: 0, userData, rendererDir: null, demoPath: DEMO, modelsDir: null, log: () => {} });
    try {
      const notices = await h.backend.takeNotices();
      expect(notices).toHaveLength(2);
      expect(notices[0]).toMatch(/^Your settings file was damaged; it was moved to .*settings\.json\.corrupt-\d{8}T\d{6}Z and the default settings are used\.$/);
      expect(notices[1]).toMatch(/^A chat file was damaged and could not be read; it was moved to .*0123456789abcdef\.json\.corrupt-/);
      expect(await h.backend.takeNotices()).toEqual([]);
      expect(readdirSync(userData).some((f) => f.startsWith('settings.json.corrupt-'))).toBe(true);
    } finally {
      await h.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('harness data folder', () => {
  it('defaults to the user\'s own data folder, not /tmp, and is made private (0700)', () => {
    expect(defaultHarnessUserData({}, 'linux', '/home/ann')).toBe('/home/ann/.local/share/pantheon-harness');
    expect(defaultHarnessUserData({ XDG_DATA_HOME: '/data/ann' }, 'linux', '/home/ann')).toBe('/data/ann/pantheon-harness');
    expect(defaultHarnessUserData({}, 'darwin', '/Users/ann')).toBe('/Users/ann/Library/Application Support/pantheon-harness');
    const tmp = mkdtempSync(join(tmpdir(), 'pantheon-private-'));
    try {
      const dir = privateFolder(join(tmp, 'a', 'harness'));
      if (process.platform !== 'win32') expect(statSync(dir).mode & 0o777).toBe(0o700);
      chmodSync(dir, 0o755);
      privateFolder(dir);
      if (process.platform !== 'win32') expect(statSync(dir).mode & 0o777).toBe(0o700);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
