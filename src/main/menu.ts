// The application menu: File → Open Model… (Ctrl/Cmd+O), Open Recent, Close Model, Quit; Edit (so
// copy and paste work on macOS); View → the three tabs. Commands the page carries out are sent to
// it as 'menu:command' events; Open Recent opens the file here and announces it ('model:opened').

import { Menu, type MenuItemConstructorOptions } from 'electron';
import type { MenuCommand, ModelEntry } from '../shared/contract.js';

export interface MenuActions {
  command(c: MenuCommand): void;
  openRecent(entry: ModelEntry): void;
  isDev: boolean;
}

export function buildMenu(recent: ModelEntry[], actions: MenuActions): Menu {
  const isMac = process.platform === 'darwin';
  const recentItems: MenuItemConstructorOptions[] = recent.length
    ? recent.map((e) => ({ label: e.fileName, sublabel: e.path, click: () => actions.openRecent(e) }))
    : [{ label: 'No recent models', enabled: false }];
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        { label: 'Open Model…', accelerator: 'CmdOrCtrl+O', click: () => actions.command('open-model') },
        { label: 'Open Recent', submenu: recentItems },
        { label: 'New Chat', accelerator: 'CmdOrCtrl+N', click: () => actions.command('new-chat') },
        { type: 'separator' },
        { label: 'Close Model', accelerator: 'CmdOrCtrl+W', click: () => actions.command('close-model') },
        ...(isMac ? [] : [{ type: 'separator' as const }, { role: 'quit' as const, label: 'Quit' }]),
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { label: 'Chat', accelerator: 'CmdOrCtrl+1', click: () => actions.command('show-chat') },
        { label: 'Metadata', accelerator: 'CmdOrCtrl+2', click: () => actions.command('show-metadata') },
        { label: 'Tensors', accelerator: 'CmdOrCtrl+3', click: () => actions.command('show-tensors') },
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { role: 'togglefullscreen' },
        ...(actions.isDev ? [{ type: 'separator' as const }, { role: 'reload' as const }, { role: 'toggleDevTools' as const }] : []),
      ],
    },
    { role: 'windowMenu' },
  ];
  return Menu.buildFromTemplate(template);
}
