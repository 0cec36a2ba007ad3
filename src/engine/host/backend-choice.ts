// Which compute backend a model loads on, from the app's setting (Settings.computeBackend), the
// environment (PANTHEON_BACKEND) and whether this host process has already lost its GPU.

import type { ComputeBackend } from '../../shared/contract.js';
import type { BackendKind } from '../session.js';

/** What the host asks the engine for; undefined = the engine's CPU default (pool, else wasm). */
export interface BackendPick {
  kind: BackendKind | undefined;
  /** Said after the backend's name when the pick differs from what was asked (the engine line). */
  note?: string;
}

/**
 * - 'gpu': WebGPU (a GPU, else Mesa's llvmpipe), unless the GPU was lost in this process: then
 *   the CPU, said in the engine line.
 * - 'cpu': the CPU, honouring PANTHEON_BACKEND=scalar|wasm|pool.
 * - 'auto': PANTHEON_BACKEND (webgpu is opt-in only), else the CPU; never llvmpipe on its own.
 */
export function pickBackend(setting: ComputeBackend | undefined, env: string | undefined, gpuLost: boolean): BackendPick {
  const fromEnv: BackendKind | undefined = env === 'scalar' || env === 'wasm' || env === 'pool' || env === 'webgpu' ? env : undefined;
  const cpu = fromEnv === 'webgpu' ? undefined : fromEnv;
  const lost = { kind: cpu, note: 'on the CPU: the GPU was lost; restart Pantheon to try it again' };
  if (setting === 'gpu') return gpuLost ? lost : { kind: 'webgpu' };
  if (setting === 'cpu') return { kind: cpu };
  return fromEnv === 'webgpu' && gpuLost ? lost : { kind: fromEnv };
}
