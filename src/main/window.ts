// The one window, with Electron's secure defaults written out (CONVENTIONS §6): context isolation,
// sandbox, no Node in the page; navigation away from our page and new windows blocked; only
// allow-listed https links open, in the user's browser.

import { BrowserWindow, nativeTheme, shell, type Session, type WebContents } from 'electron';
import { APP_URL, isAppUrl } from './protocol.js';

/** Links the page may open in the user's browser. */
const EXTERNAL_HOSTS = new Set(['huggingface.co', 'github.com']);

export function isAllowedExternal(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' && EXTERNAL_HOSTS.has(u.hostname);
  } catch {
    return false;
  }
}

/** Deny every permission (camera, notifications, …) and every device request. */
export function denyPermissions(session: Session): void {
  session.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
  session.setDevicePermissionHandler(() => false);
}

/** Navigation, redirects, webviews and new windows: none, except our own page. */
export function lockDown(contents: WebContents, devUrl: string | null): void {
  contents.on('will-navigate', (e, url) => {
    if (!isAppUrl(url, devUrl)) e.preventDefault();
  });
  contents.on('will-redirect', (e, url) => {
    if (!isAppUrl(url, devUrl)) e.preventDefault();
  });
  contents.on('will-attach-webview', (e) => e.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    if (isAllowedExternal(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
}

export function createMainWindow(preload: string, devUrl: string | null): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 800,
    minWidth: 800,
    minHeight: 560,
    show: false,
    title: 'Pantheon',
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#16181d' : '#ffffff',
    webPreferences: {
      preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      // A file dropped on the window is handled by the page, never navigated to.
      navigateOnDragDrop: false,
      spellcheck: false,
    },
  });
  lockDown(win.webContents, devUrl);
  win.once('ready-to-show', () => win.show());
  void win.loadURL(devUrl ?? APP_URL);
  return win;
}
