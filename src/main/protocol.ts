// The renderer is served from app://pantheon/ rather than file:// (Electron security checklist:
// "avoid the file protocol, prefer custom protocols"): a standard, secure scheme, a path-escape
// check (on the real path, symlinks resolved), and the CSP header on every response.

import { net, protocol } from 'electron';
import { pathToFileURL } from 'node:url';
import { CSP, contentType, realFileInside } from './services/web-content.js';

export const APP_SCHEME = 'app';
export const APP_HOST = 'pantheon';
export const APP_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/** Must run before app 'ready'. */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
  ]);
}

/** True for a URL of our page (app://pantheon/...), or of the dev server when one is used. */
export function isAppUrl(url: string, devUrl: string | null): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  // A non-special scheme has origin "null" in WHATWG URL, so compare scheme and host.
  if (u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST) return true;
  if (devUrl) {
    const d = new URL(devUrl);
    return u.protocol === d.protocol && u.host === d.host;
  }
  return false;
}

function notFound(status: number): Response {
  return new Response(null, { status, headers: { 'content-security-policy': CSP } });
}

export function serveRenderer(root: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host !== APP_HOST || request.method !== 'GET') return notFound(404);
    // Symlinks resolved before the check: a link inside the folder may not lead out of it.
    const file = await realFileInside(root, url.pathname);
    if (!file) return notFound(404);
    let res: Response;
    try {
      res = await net.fetch(pathToFileURL(file).href);
    } catch {
      return notFound(404);
    }
    if (!res.ok) return notFound(404);
    return new Response(res.body, {
      status: 200,
      headers: { 'content-type': contentType(file), 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' },
    });
  });
}
