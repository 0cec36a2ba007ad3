// What the renderer's files are served with, in Electron (app:// protocol) and in the dev harness
// (HTTP) alike: the Content-Security-Policy, content types, and the path-escape check.

import { realpath } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';

/**
 * CONVENTIONS §6 (Electron security checklist): nothing inline, nothing from elsewhere; no <base>
 * to redirect relative URLs and no form to post anywhere.
 */
export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'";

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
};

export function contentType(file: string): string {
  return CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The file a URL path names inside `root`, or null when the path escapes it ("/../x", an encoded
 * "%2e%2e", a NUL) or cannot be decoded. "/" and "/dir/" name index.html.
 */
export function fileInside(root: string, urlPath: string): string | null {
  let path: string;
  try {
    path = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (path.includes('\0')) return null;
  if (path === '' || path.endsWith('/')) path += 'index.html';
  const base = resolve(root);
  const file = resolve(base, '.' + (path.startsWith('/') ? path : '/' + path));
  return file.startsWith(base + sep) ? file : null;
}

/**
 * fileInside, then with symlinks resolved: the real file must lie inside the real root (a link in
 * the renderer folder to /etc/passwd is refused). Null also when the file does not exist.
 */
export async function realFileInside(root: string, urlPath: string): Promise<string | null> {
  const file = fileInside(root, urlPath);
  if (!file) return null;
  let realRoot: string;
  let real: string;
  try {
    [realRoot, real] = await Promise.all([realpath(resolve(root)), realpath(file)]);
  } catch {
    return null;
  }
  return real.startsWith(realRoot + sep) ? real : null;
}
