// The dev harness: the app's back half under plain Node, for a real browser. It serves the built
// renderer on 127.0.0.1 and implements `window.pantheon` over a WebSocket against the same services
// Electron main uses (Backend: library, chat store, settings, engine supervisor), with the engine
// host as a Node child process. The page side is src/renderer/api/harness-client.ts.
//
// Only this machine may talk to it: it listens on 127.0.0.1, and every WebSocket and upload must
// come from its own origin with a matching Host header (no other web page, no DNS rebinding) and
// carry the random token of the page URL it prints (no other user or program on this machine).
// A development tool: the app itself is the Electron build.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, createReadStream, createWriteStream, mkdirSync, promises as fsp } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { GenerationHandle, RequestChannel } from '../shared/contract.js';
import { UsageError, serializeError } from '../shared/errors.js';
import {
  HARNESS_TOKEN_PARAM, HARNESS_UPLOAD_HEADER, HARNESS_UPLOAD_MAX_BYTES, HARNESS_UPLOAD_PATH, HARNESS_WS_PATH,
  type HarnessClientMessage, type HarnessServerMessage,
} from '../shared/harness-protocol.js';
import { Backend, type Platform } from '../main/services/backend.js';
import type { EngineTransport } from '../main/services/engine-supervisor.js';
import type { Logger } from '../main/services/log.js';
import { nodeEngineTransport } from '../main/services/node-engine-transport.js';
import { isRequestChannel } from '../shared/requests.js';
import { CSP, contentType, fileInside, realFileInside } from '../main/services/web-content.js';

export interface HarnessOptions {
  /** 0 picks a free port. */
  port: number;
  userData: string;
  /** The built renderer (index.html and assets), or null to serve the API only. */
  rendererDir: string | null;
  demoPath: string | null;
  /** What the harness's "native dialogs" answer (no dialogs in a browser): a folder, a file. */
  modelsDir?: string | null;
  modelFile?: string | null;
  log: Logger;
  version?: string;
  /** Default: the Node child-process transport over the source host entry. */
  transport?: EngineTransport;
  /**
   * Serve the end-to-end tests' hooks (`POST /__test/kill-engine`). Off unless the harness is
   * started with PANTHEON_TEST_HOOKS=1; the Electron app has no such route at all.
   */
  testHooks?: boolean;
  /** The token WebSockets and uploads must present (default: 32 random hex digits). */
  token?: string;
}

/**
 * The harness's data folder for this user when PANTHEON_USER_DATA is not set: the platform's
 * per-user data folder, never a shared path in /tmp.
 */
export function defaultHarnessUserData(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, home: string): string {
  const base = platform === 'win32' ? env.LOCALAPPDATA ?? join(home, 'AppData', 'Local')
    : platform === 'darwin' ? join(home, 'Library', 'Application Support')
      : env.XDG_DATA_HOME || join(home, '.local', 'share');
  return join(base, 'pantheon-harness');
}

/** Create `dir` readable by its owner only (mode 0700; an older folder is tightened too). */
export function privateFolder(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform !== 'win32') chmodSync(dir, 0o700);
  return dir;
}

/** SIGKILLs the engine host process, as a crash or the OS's out-of-memory killer would. */
export const TEST_KILL_ENGINE_PATH = '/__test/kill-engine';

export interface Harness {
  /** The page URL, token included. */
  url: string;
  token: string;
  port: number;
  backend: Backend;
  close(): Promise<void>;
}

function harnessPlatform(opts: HarnessOptions): Platform {
  const unavailable = (what: string, env: string) =>
    new UsageError(`${what} is not available in the browser harness; set ${env} before \`npm run dev:web\`, or drop a file on the window.`);
  return {
    harness: true,
    version: opts.version ?? '0.0.0-harness',
    chooseFolder: async () => {
      if (!opts.modelsDir) throw unavailable('Choosing a folder', 'PANTHEON_MODELS_DIR');
      return opts.modelsDir;
    },
    chooseModelFile: async () => {
      if (!opts.modelFile) throw unavailable('The open dialog', 'PANTHEON_MODEL_FILE');
      return opts.modelFile;
    },
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(JSON.stringify(body));
}

async function exists(path: string): Promise<boolean> {
  return fsp.stat(path).then(() => true, () => false);
}

export async function startHarness(opts: HarnessOptions): Promise<Harness> {
  const backend = new Backend({
    userData: opts.userData,
    demoPath: opts.demoPath,
    transport: opts.transport ?? nodeEngineTransport({ log: opts.log }),
    platform: harnessPlatform(opts),
    log: opts.log,
  });
  await backend.init();
  // Dropped files are kept beside the library (user data), named by content, so a model opened by
  // upload stays in Recent and its chats keep working after the harness restarts.
  const uploads = join(resolve(opts.userData), 'uploads');
  await fsp.mkdir(uploads, { recursive: true });
  for (const f of await fsp.readdir(uploads)) if (f.startsWith('.incoming-')) await fsp.rm(join(uploads, f), { force: true }); // left by a crash
  const root = opts.rendererDir ? resolve(opts.rendererDir) : null;
  let port = 0;

  const token = opts.token ?? randomBytes(16).toString('hex');
  /** The request's URL carries our token. */
  const hasToken = (req: IncomingMessage): boolean => {
    const given = Buffer.from(new URL(req.url ?? '/', 'http://x').searchParams.get(HARNESS_TOKEN_PARAM) ?? '');
    const want = Buffer.from(token);
    return given.length === want.length && timingSafeEqual(given, want);
  };
  const allowedHosts = () => [`127.0.0.1:${port}`, `localhost:${port}`];
  /** Same-origin check: the Host header names us, and an Origin, when sent, is ours. */
  const fromUs = (req: IncomingMessage, originRequired: boolean): boolean => {
    if (!allowedHosts().includes(req.headers.host ?? '')) return false;
    const origin = req.headers.origin;
    if (origin === undefined) return !originRequired;
    return allowedHosts().some((h) => origin === `http://${h}`);
  };

  async function serveStatic(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'method not allowed' });
    if (!root) return sendJson(res, 404, { error: 'this harness serves the API only' });
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    if (!fileInside(root, pathname)) return sendJson(res, 403, { error: 'outside the renderer folder' });
    let size: number;
    let file: string;
    try {
      // symlinks resolved: a link inside the folder may not lead out of it (then: not found)
      const real = await realFileInside(root, pathname);
      if (!real) throw new Error('not inside the renderer folder');
      file = real;
      const st = await fsp.stat(file);
      if (!st.isFile()) throw new Error('not a file');
      size = st.size;
    } catch {
      if (pathname === '/' || pathname === '/index.html') {
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('The renderer is not built. Run `npm run dev:web` (it builds it first) or `npx vite build -c vite.renderer.config.ts`.\n');
        return;
      }
      return sendJson(res, 404, { error: 'not found' });
    }
    res.writeHead(200, {
      'content-type': contentType(file),
      'content-length': size,
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
    if (req.method === 'HEAD') return void res.end();
    createReadStream(file).pipe(res);
  }

  /** POST /upload?name=model.gguf with the file's bytes: kept in the user data's uploads folder, then opened. */
  async function upload(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.headers[HARNESS_UPLOAD_HEADER] !== '1' || !fromUs(req, false) || !hasToken(req)) {
      return sendJson(res, 403, { ok: false, error: serializeError(new UsageError('Uploads are accepted only from the harness page.')) });
    }
    try {
      const raw = new URL(req.url ?? '/', 'http://x').searchParams.get('name') ?? '';
      const name = basename(raw.replaceAll('\\', '/')).slice(0, 255);
      if (!/\.gguf$/i.test(name)) throw new UsageError(`${name || 'That file'} is not a .gguf model file.`);
      const declared = Number(req.headers['content-length'] ?? NaN);
      const tooBig = () => new UsageError(`${name} is larger than the browser harness accepts by upload (4 GiB); open it from the models folder instead.`);
      if (declared > HARNESS_UPLOAD_MAX_BYTES) throw tooBig();
      // into a part file while hashing, then under uploads/<first 16 hex of sha256>/<name>: the same
      // bytes dropped again open the same file (one Recent entry, no second copy)
      const part = join(uploads, `.incoming-${randomBytes(6).toString('hex')}`);
      const hash = createHash('sha256');
      let seen = 0;
      const cap = new Transform({
        transform(chunk: Buffer, _enc, done) {
          seen += chunk.length;
          hash.update(chunk);
          done(seen > HARNESS_UPLOAD_MAX_BYTES ? tooBig() : null, chunk);
        },
      });
      let path: string;
      let created = false;
      try {
        await pipeline(req, cap, createWriteStream(part));
        const dir = join(uploads, hash.digest('hex').slice(0, 16));
        await fsp.mkdir(dir, { recursive: true });
        path = join(dir, name);
        if (await exists(path)) await fsp.rm(part, { force: true });
        else {
          await fsp.rename(part, path);
          created = true;
        }
      } catch (err) {
        await fsp.rm(part, { force: true });
        throw err;
      }
      try {
        sendJson(res, 200, { ok: true, value: await backend.openPath(path) });
      } catch (err) {
        // not a model we can open: keep nothing of it
        if (created) {
          await fsp.rm(path, { force: true });
          await fsp.rmdir(dirname(path)).catch(() => {}); // only when nothing else is in it
        }
        throw err;
      }
    } catch (err) {
      req.resume();
      sendJson(res, 200, { ok: false, error: serializeError(err) });
    }
  }

  /** POST /__test/kill-engine (test hooks only): end the engine host with SIGKILL, mid-reply or not. */
  async function killEngine(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || !fromUs(req, false)) return sendJson(res, 403, { error: 'test hooks take a POST from the harness page or this machine' });
    const pid = backend.engine.pid;
    if (pid === undefined) return sendJson(res, 409, { error: 'no engine process is running' });
    opts.log(`harness: test hook: killing engine process ${pid}`);
    process.kill(pid, 'SIGKILL');
    sendJson(res, 200, { killed: pid });
  }

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (!allowedHosts().includes(req.headers.host ?? '')) return sendJson(res, 421, { error: 'wrong host' });
    const p = path === HARNESS_UPLOAD_PATH ? upload(req, res)
      : opts.testHooks && path === TEST_KILL_ENGINE_PATH ? killEngine(req, res)
        : serveStatic(req, res);
    p.catch((err: unknown) => {
      opts.log(`harness: ${req.method} ${path}: ${(err as Error).message}`);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });

  // ---- the API over WebSocket ----------------------------------------------------------------
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  const sockets = new Set<WebSocket>();

  const unsubscribe = backend.onEvent((event, payload) => {
    const text = JSON.stringify({ t: 'evt', event, payload } satisfies HarnessServerMessage);
    for (const ws of sockets) if (ws.readyState === ws.OPEN) ws.send(text);
  });

  server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== HARNESS_WS_PATH || !fromUs(req, true) || !hasToken(req)) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws));
  });

  function serveSocket(ws: WebSocket): void {
    sockets.add(ws);
    const generations = new Map<number, GenerationHandle>();
    const send = (msg: HarnessServerMessage) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
    };
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let msg: HarnessClientMessage;
      try {
        msg = JSON.parse(String(data)) as HarnessClientMessage;
      } catch {
        return;
      }
      if (typeof msg !== 'object' || msg === null || typeof msg.id !== 'number') return;
      const id = msg.id;
      switch (msg.t) {
        case 'req': {
          const channel: unknown = msg.channel;
          if (!isRequestChannel(channel)) {
            send({ t: 'res', id, ok: false, error: serializeError(new UsageError(`"${String(channel)}" is not a request channel.`)) });
            return;
          }
          if (channel === 'model:openDropped') {
            // A page never names paths; in a browser a dropped file arrives as bytes (POST /upload).
            send({ t: 'res', id, ok: false, error: serializeError(new UsageError('Pages cannot open paths; drop the file on the window instead.')) });
            return;
          }
          backend.handle(channel as RequestChannel, msg.payload).then(
            (value) => send({ t: 'res', id, ok: true, value: value ?? null }),
            (err: unknown) => send({ t: 'res', id, ok: false, error: serializeError(err) }),
          );
          return;
        }
        case 'gen': {
          const handle = backend.generate(msg.request, (event) => {
            if (event.kind === 'done' || event.kind === 'error') generations.delete(id);
            send({ t: 'gen', id, event });
          });
          generations.set(id, handle);
          return;
        }
        case 'cancel':
          generations.get(id)?.cancel();
          return;
      }
    });
    ws.on('close', () => {
      sockets.delete(ws);
      // The page went away (reload, closed tab): stop what it was generating.
      for (const g of generations.values()) g.cancel();
      generations.clear();
    });
  }

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(opts.port, '127.0.0.1', () => resolveListen());
  });
  port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/?${HARNESS_TOKEN_PARAM}=${token}`;

  return {
    url,
    token,
    port,
    backend,
    async close() {
      unsubscribe();
      for (const ws of sockets) ws.terminate();
      wss.close();
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
      await backend.dispose();
    },
  };
}
