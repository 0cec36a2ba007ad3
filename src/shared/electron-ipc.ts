// The few Electron IPC details shared by main (src/main/ipc.ts) and the preload (src/preload):
// how a request's result travels, and the channels that broker the engine's MessagePort. The
// request and event channels themselves are the contract's (contract.ts).

import type { SerializedError } from './errors.js';

/**
 * A handler's answer. Errors are returned, not thrown: ipcMain.handle would turn a thrown error
 * into "Error invoking remote method …" and lose its class; this way the preload rebuilds it.
 */
export type IpcResult<T> = { ok: true; value: T } | { ok: false; error: SerializedError };

/** Preload → main (invoke): post me a stream port to the engine. Answers true when one is on its way. */
export const ENGINE_PORT_REQUEST = 'pantheon:engine-port-request';
/** Main → preload (webContents.postMessage): ports[0] is a MessagePort to the engine host. */
export const ENGINE_PORT = 'pantheon:engine-port';
