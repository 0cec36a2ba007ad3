// Which compute backend a model loads on, from the app's setting (Settings.computeBackend), the
// environment (PANTHEON_BACKEND) and whether this host process has already lost its GPU.

import type { ComputeBackend } from '../../shared/contract.js';
import { ModelError } from '../../shared/errors.js';
import { adapterName, GpuDevice } from '../backend/webgpu/device.js';
import { NO_GPU, type BackendKind } from '../session.js';

/** What the host asks the engine for; undefined = the engine's CPU default (pool, else wasm). */
export interface BackendPick {
  kind: BackendKind | undefined;
  /** Said after the backend's name when the pick differs from what was asked (the engine line). */
  note?: string;
}

/** Set once a GPU is lost in this process (EngineError GPU_LOST): later GPU loads run on the CPU. */
let gpuLost = false;

function noteGpuLost(err: unknown): never {
  if ((err as { code?: unknown }).code === 'GPU_LOST') gpuLost = true;
  throw err;
}

/** The reply's events, noting a lost GPU on the way through. */
export async function* watchGpu<T>(events: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* events;
  } catch (err) {
    noteGpuLost(err);
  }
}

/** A failed load: a lost GPU noted; NO_GPU worded for the app (the engine's names the CLI's flag). */
export function loadFailed(err: unknown, setting: ComputeBackend | undefined): never {
  if (setting === 'gpu' && (err as { code?: unknown }).code === 'NO_GPU') {
    throw new ModelError('NO_GPU', `${NO_GPU}; choose Automatic or CPU under Settings → Engine and load the model again`);
  }
  return noteGpuLost(err);
}

/**
 * - 'gpu': WebGPU (a GPU, else Mesa's llvmpipe), unless the GPU was lost in this process: then
 *   the CPU, said in the engine line.
 * - 'cpu': the CPU, honouring PANTHEON_BACKEND=scalar|wasm|pool.
 * - 'auto': PANTHEON_BACKEND (webgpu is opt-in only), else the CPU; never llvmpipe on its own.
 */
export function pickBackend(setting: ComputeBackend | undefined, env: string | undefined, lostHere = gpuLost): BackendPick {
  const fromEnv: BackendKind | undefined = env === 'scalar' || env === 'wasm' || env === 'pool' || env === 'webgpu' ? env : undefined;
  const cpu = fromEnv === 'webgpu' ? undefined : fromEnv;
  const lost = { kind: cpu, note: 'on the CPU: the GPU was lost; restart Pantheon to try it again' };
  if (setting === 'gpu') return lostHere ? lost : { kind: 'webgpu' };
  if (setting === 'cpu') return { kind: cpu };
  return fromEnv === 'webgpu' && lostHere ? lost : { kind: fromEnv };
}

/**
 * The adapter a GPU load would take (a GPU, else llvmpipe, as session.ts opens it), by its short
 * name, or null: none here. Opens and closes a device (Settings → Engine names it before a load).
 */
export function gpuAdapterName(): string | null {
  const d = GpuDevice.open('allow');
  if (!d) return null;
  try {
    return adapterName(d.info);
  } finally {
    d.dispose();
  }
}
