// The engine host's message protocol: what the supervisor (Electron main, or the dev harness under
// plain Node) says to the process that runs one loaded model, and what it hears back. Every message
// is a discriminated union on `kind`, so `switch (msg.kind)` narrows without casts (CONVENTIONS §2).
//
// Two kinds of channel carry these messages:
//   control  parent <-> host: process.parentPort (Electron utility process) or the child_process IPC
//            channel (Node). Load, unload, counting tokens, shutdown, and the host's state reports.
//   stream   page <-> host: a MessagePort brokered by Electron main (one per window load), so tokens
//            never pass through main. Under Node the control channel doubles as the stream channel.

import type { SerializedError } from '../../shared/errors.js';
import type { ComputeBackend, GenerateRequest, GpuLayersSetting, GpuOffload, GenerationEvent, RequestMessage, ServerLogEntry } from '../../shared/contract.js';
import type { RemoteTarget } from './remote-model.js';

// ---------------------------------------------------------------------------------------------
// Stream channel (generation): requests carry an id chosen by the client, replies echo it.

export type StreamRequest =
  | { kind: 'generate'; id: number; request: GenerateRequest }
  /** Stops generation `id` within one token; the stream then ends with a 'done' (reason 'cancelled'). */
  | { kind: 'cancel'; id: number };

export type StreamReply = { kind: 'event'; id: number; event: GenerationEvent };

// ---------------------------------------------------------------------------------------------
// Control channel: parent -> host

export interface LoadRequest {
  kind: 'load';
  path: string;
  contextSize: number;
  /** 0 = as many as the machine has cores. */
  threads: number;
  /** Where to compute (the app's Settings.computeBackend); default 'auto'. */
  backend?: ComputeBackend;
  /** With backend 'gpu': the blocks on the GPU (Settings.gpuLayers); default 'auto'. */
  gpuLayers?: GpuLayersSetting;
  /** A model on another server (OpenAI API) instead of the file at `path`. */
  remote?: RemoteTarget;
}

export type ToHost =
  | LoadRequest
  | { kind: 'cancelLoad' }
  /** Drop the loaded model and free its memory; the process stays up. */
  | { kind: 'unload' }
  | { kind: 'countTokens'; id: number; messages: RequestMessage[] }
  /** Electron only: the message's transferred port (ports[0]) is a new stream channel. */
  | { kind: 'attachPort' }
  /** Finish (cancel any generation, drop the model) and exit with code 0. */
  | { kind: 'shutdown' }
  /** Heartbeat: the host answers 'pong' with the same id (the supervisor's hang check). */
  | { kind: 'ping'; id: number }
  /** Serve the loaded model over the OpenAI API on 127.0.0.1:port (engine/server); 'serverState' answers. */
  | { kind: 'serverStart'; port: number; apiKey?: string }
  | { kind: 'serverStop' }
  /** Which WebGPU adapter a GPU load would take (a short-lived host answers it: EngineSupervisor.gpuAdapter). */
  | { kind: 'gpuAdapter'; id: number }
  | StreamRequest;

// ---------------------------------------------------------------------------------------------
// Control channel: host -> parent

export interface LoadedInfo {
  modelName: string;
  architecture: string;
  contextSize: number;
  threads: number;
  backend: string;
  /** Weights plus KV cache, bytes (the GPU's part included). */
  memoryBytes: number;
  loadMs: number;
  /** On the GPU: the adapter and the blocks there (the engine line: "GPU: 12 of 32 layers (llvmpipe)"). */
  gpu?: GpuOffload;
}

export type FromHost =
  /** The host is listening; the parent may send. First message of every host process. */
  | { kind: 'ready'; pid: number }
  | { kind: 'progress'; loadedBytes: number; totalBytes: number }
  | { kind: 'loaded'; info: LoadedInfo }
  /** Load failed or was cancelled (then error.name is 'CancelledError'). */
  | { kind: 'loadFailed'; error: SerializedError }
  | { kind: 'unloaded' }
  | { kind: 'tokenCount'; id: number; tokens: number; contextSize: number }
  | { kind: 'tokenCountFailed'; id: number; error: SerializedError }
  /** A generation started / ended (on any channel); the supervisor shows busy / ready from these. */
  | { kind: 'busy' }
  | { kind: 'idle'; contextUsed: number }
  | { kind: 'pong'; id: number }
  /** The server listens at url, or does not (url null; error: why it could not start). */
  | { kind: 'serverState'; url: string | null; error?: string }
  /** A request the server answered. */
  | { kind: 'serverRequest'; entry: ServerLogEntry }
  /** The adapter's short name (device.ts adapterName), or null: none here. */
  | { kind: 'gpuAdapter'; id: number; adapter: string | null }
  | StreamReply;

/** True for a value shaped like a message with a string `kind` (a first check on untrusted input). */
export function hasKind(msg: unknown): msg is { kind: string } {
  return typeof msg === 'object' && msg !== null && typeof (msg as { kind?: unknown }).kind === 'string';
}
