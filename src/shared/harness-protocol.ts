// The dev harness's wire format: `window.pantheon` over one WebSocket (src/harness/server.ts on the
// server, src/renderer/api/harness-client.ts in the page). Requests carry an id chosen by the page;
// each gets exactly one reply. Generation streams carry their own ids; cancel is its own message.

import type { EventChannel, Events, GenerateRequest, GenerationEvent, RequestChannel } from './contract.js';
import type { SerializedError } from './errors.js';

/** Path of the WebSocket endpoint, and of the endpoint a dropped file's bytes are POSTed to. */
export const HARNESS_WS_PATH = '/api';
export const HARNESS_UPLOAD_PATH = '/upload';
/** Header the upload must carry: a custom header makes a cross-site form post impossible. */
export const HARNESS_UPLOAD_HEADER = 'x-pantheon-upload';
/** The largest file the harness accepts by upload (a browser has no paths, so bytes are copied). */
export const HARNESS_UPLOAD_MAX_BYTES = 4 * 1024 ** 3;
/**
 * Query parameter with the harness's random token: in the page URL the harness prints, and on
 * every WebSocket and upload URL the page makes from it. Without it a request is refused, so another
 * user or program on this machine cannot drive the harness.
 */
export const HARNESS_TOKEN_PARAM = 'token';

export type HarnessClientMessage =
  | { t: 'req'; id: number; channel: RequestChannel; payload: unknown }
  | { t: 'gen'; id: number; request: GenerateRequest }
  | { t: 'cancel'; id: number };

export type HarnessServerMessage =
  | { t: 'res'; id: number; ok: true; value: unknown }
  | { t: 'res'; id: number; ok: false; error: SerializedError }
  | { t: 'evt'; event: EventChannel; payload: Events[EventChannel] }
  | { t: 'gen'; id: number; event: GenerationEvent };
