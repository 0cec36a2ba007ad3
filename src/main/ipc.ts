// IPC between the window and main: one ipcMain.handle per request channel of the contract, each
// checking that the message comes from our page's main frame (event.senderFrame) and validating its
// payload (Backend.handle → shared/requests.ts) before any service runs; events forwarded to the window;
// and the MessagePort broker for token streams: main creates a MessageChannelMain, posts one port
// to the engine's utility process and the other to the window, then steps aside (CONVENTIONS §3).

import { ipcMain, MessageChannelMain, type BrowserWindow, type IpcMainEvent, type IpcMainInvokeEvent } from 'electron';
import { REQUEST_CHANNELS, type RequestChannel } from '../shared/contract.js';
import { ENGINE_PORT, ENGINE_PORT_REQUEST, type IpcResult } from '../shared/electron-ipc.js';
import { UsageError, serializeError } from '../shared/errors.js';
import type { Backend } from './services/backend.js';
import type { Logger } from './services/log.js';
import { isAppUrl } from './protocol.js';

export interface IpcContext {
  backend: Backend;
  window(): BrowserWindow | null;
  devUrl: string | null;
  log: Logger;
}

/** The message comes from our window's top frame, showing our page. */
function fromOurPage(ctx: IpcContext, event: IpcMainEvent | IpcMainInvokeEvent): boolean {
  const win = ctx.window();
  const frame = event.senderFrame;
  if (!win || !frame || event.sender !== win.webContents) return false;
  return frame === win.webContents.mainFrame && isAppUrl(frame.url, ctx.devUrl);
}

/** Post a fresh stream port to the window; false when no model is running. */
export function brokerEnginePort(ctx: IpcContext): boolean {
  const win = ctx.window();
  if (!win) return false;
  const { port1, port2 } = new MessageChannelMain();
  if (!ctx.backend.engine.attachPort(port1)) {
    port1.close();
    port2.close();
    return false;
  }
  win.webContents.postMessage(ENGINE_PORT, null, [port2]);
  return true;
}

export function registerIpc(ctx: IpcContext): () => void {
  const refuse = (channel: string, event: IpcMainEvent | IpcMainInvokeEvent) => {
    ctx.log(`ipc: refused ${channel} from ${event.senderFrame?.url ?? 'a destroyed frame'}`);
  };
  for (const channel of REQUEST_CHANNELS) {
    ipcMain.handle(channel, async (event, payload: unknown): Promise<IpcResult<unknown>> => {
      if (!fromOurPage(ctx, event)) {
        refuse(channel, event);
        return { ok: false, error: serializeError(new UsageError('This request is accepted only from Pantheon\'s own page.')) };
      }
      try {
        return { ok: true, value: await ctx.backend.handle(channel as RequestChannel, payload) };
      } catch (err) {
        return { ok: false, error: serializeError(err) };
      }
    });
  }
  ipcMain.handle(ENGINE_PORT_REQUEST, (event) => {
    if (!fromOurPage(ctx, event)) {
      refuse(ENGINE_PORT_REQUEST, event);
      return false;
    }
    return brokerEnginePort(ctx);
  });
  const unsubscribe = ctx.backend.onEvent((event, payload) => {
    const win = ctx.window();
    if (win && !win.webContents.isDestroyed()) win.webContents.send(event, payload);
  });
  return () => {
    unsubscribe();
    for (const channel of REQUEST_CHANNELS) ipcMain.removeHandler(channel);
    ipcMain.removeHandler(ENGINE_PORT_REQUEST);
  };
}
