// Electron main: one window showing the renderer from app://pantheon, the services behind
// `window.pantheon` (Backend, shared with the dev harness), the engine in a utility process, the
// menu, and models opened from outside (command line, second launch, macOS open-file).

import { Menu, app, dialog, safeStorage, session, type BrowserWindow } from 'electron';
import { Backend, type Platform } from './services/backend.js';
import { consoleLogger } from './services/log.js';
import { isGgufName } from './services/library.js';
import { electronEngineTransport } from './engine-transport.js';
import { registerIpc, type IpcContext } from './ipc.js';
import { buildMenu } from './menu.js';
import { ENGINE_HOST, PRELOAD, RENDERER_DIR, demoModelPath, devRendererUrl } from './paths.js';
import { registerAppScheme, serveRenderer } from './protocol.js';
import { createMainWindow, denyPermissions, lockDown } from './window.js';

const log = consoleLogger('main');

/** .gguf paths among command-line arguments (flags and the app path are skipped). */
function ggufArgs(argv: string[]): string[] {
  return argv.slice(1).filter((a) => !a.startsWith('-') && isGgufName(a));
}

registerAppScheme();

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  let win: BrowserWindow | null = null;
  let backend: Backend | null = null;
  let pageReady = false;
  const pending: string[] = ggufArgs(process.argv);
  const devUrl = devRendererUrl();

  /** Open a file from outside the page and tell the page; errors become one line in a dialog. */
  const openFromOutside = (path: string) => {
    if (!backend || !pageReady) {
      pending.push(path);
      return;
    }
    backend.openPath(path, true).catch((err: unknown) => {
      if (win) void dialog.showMessageBox(win, { type: 'error', message: 'Cannot open the model', detail: (err as Error).message });
    });
  };

  app.on('open-file', (e, path) => {
    e.preventDefault();
    openFromOutside(path);
  });

  app.on('second-instance', (_e, argv) => {
    if (win) {
      if (win.isMinimized()) win.restore();
      win.focus();
    }
    for (const p of ggufArgs(argv)) openFromOutside(p);
  });

  // Whatever web contents appear (including ones we did not create), the same rules hold.
  app.on('web-contents-created', (_e, contents) => lockDown(contents, devUrl));

  const platform: Platform = {
    harness: false,
    // API keys of remote servers: encrypted by the OS (Keychain, DPAPI, libsecret) when it can.
    secrets: safeStorage.isEncryptionAvailable()
      ? { encrypt: (t) => safeStorage.encryptString(t), decrypt: (b) => safeStorage.decryptString(b) }
      : null,
    version: app.getVersion(),
    chooseFolder: async () => {
      const r = await dialog.showOpenDialog(win!, { title: 'Choose your models folder', properties: ['openDirectory'] });
      return r.canceled || r.filePaths.length === 0 ? null : r.filePaths[0];
    },
    chooseModelFile: async () => {
      const r = await dialog.showOpenDialog(win!, {
        title: 'Open a GGUF model',
        properties: ['openFile'],
        filters: [{ name: 'GGUF models', extensions: ['gguf'] }],
      });
      return r.canceled || r.filePaths.length === 0 ? null : r.filePaths[0];
    },
  };

  const refreshMenu = async () => {
    if (!backend) return;
    const lib = await backend.library.get();
    Menu.setApplicationMenu(buildMenu(lib.recent, {
      isDev: !app.isPackaged,
      command: (command) => win?.webContents.send('menu:command', { command }),
      openRecent: (entry) => openFromOutside(entry.path),
    }));
  };

  const createWindow = () => {
    pageReady = false;
    win = createMainWindow(PRELOAD, devUrl);
    win.webContents.on('did-finish-load', () => {
      pageReady = true;
      for (const p of pending.splice(0)) openFromOutside(p);
      // Damaged settings or chat files were moved aside at startup: say so once.
      void backend?.takeNotices().then((notices) => {
        if (notices.length > 0 && win) void dialog.showMessageBox(win, { type: 'warning', message: 'Some files could not be read', detail: notices.join('\n') });
      });
    });
    win.on('closed', () => {
      win = null;
      // The engine's lifetime is bound to its window.
      void backend?.engine.unload();
    });
  };

  void app.whenReady().then(async () => {
    denyPermissions(session.defaultSession);
    serveRenderer(RENDERER_DIR);
    backend = new Backend({
      userData: app.getPath('userData'),
      demoPath: demoModelPath(),
      transport: electronEngineTransport(ENGINE_HOST, consoleLogger('engine')),
      platform,
      log,
    });
    await backend.init();
    const ctx: IpcContext = { backend, window: () => win, devUrl, log };
    registerIpc(ctx);
    backend.library.onChange(() => void refreshMenu());
    await refreshMenu();
    createWindow();
    app.on('activate', () => {
      if (!win) createWindow();
    });
  });

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  let disposed = false;
  app.on('before-quit', (e) => {
    if (disposed || !backend) return;
    e.preventDefault();
    disposed = true;
    void backend.dispose().finally(() => app.quit());
  });
}
