// A GPU lost mid-reply, and no GPU at all, through the engine host's adapter (host/engine.ts) with the app's setting
// 'gpu': the loss is injected at the backend (WebGpuBackend.simulateLoss: the worker's next run
// takes the same path as Dawn's device.lost). The reply's tokens so far are the CPU's greedy ones,
// then one GPU_LOST line that says to reload; the reload runs on the CPU, says so in the engine
// line, and its greedy reply equals the CPU's. Truth: the CPU backend's greedy reply (which
// tests/model checks against llama.cpp) on stories260K.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { WebGpuBackend } from '../../src/engine/backend/webgpu/backend.js';
import { loadSessionModel, type EngineModel } from '../../src/engine/host/engine.js';
import { DEFAULT_SAMPLING, type ComputeBackend } from '../../src/shared/contract.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';

const probe = HAVE_SHARED ? WebGpuBackend.create({ fallback: 'allow' }) : null;
probe?.dispose();
if (HAVE_SHARED && !probe) console.warn('tests/webgpu: SKIPPED, no WebGPU adapter here (Mesa llvmpipe through OpenGL ES needs libegl-mesa0 libgles2 libgl1-mesa-dri, see .ci/run)');

const messages = [{ role: 'user' as const, content: 'Once upon a time' }];
const sampling = { ...DEFAULT_SAMPLING, stop: [], temperature: 0, maxTokens: 12 };
const open: EngineModel[] = [];
afterAll(() => open.forEach((m) => m.dispose()));

function load(backend: ComputeBackend): Promise<EngineModel> {
  return loadSessionModel({ path: sharedModel('stories260K.gguf'), contextSize: 256, threads: 1, backend, signal: new AbortController().signal, onProgress: () => {} }).then((m) => {
    open.push(m);
    return m;
  });
}

/** The reply's token ids and the error that ended it, if one did; `onToken(k)` after the k-th token. */
async function reply(m: EngineModel, onToken: (k: number) => void = () => {}): Promise<{ ids: number[]; error?: { code?: string; message: string } }> {
  const ids: number[] = [];
  try {
    for await (const e of m.chat(messages, sampling, new AbortController().signal)) {
      if (e.kind === 'token') {
        ids.push(e.id);
        onToken(ids.length);
      }
    }
    return { ids };
  } catch (err) {
    return { ids, error: err as { code?: string; message: string } };
  }
}

describe.skipIf(!HAVE_SHARED)('the GPU setting where no adapter exists', () => {
  it('fails the load with one line that says to switch back', async () => {
    const create = vi.spyOn(WebGpuBackend, 'create').mockReturnValue(null);
    try {
      await expect(load('gpu')).rejects.toMatchObject({
        code: 'NO_GPU',
        message: 'no WebGPU adapter was found here (no GPU through Vulkan, Metal or Direct3D 12, and no Mesa llvmpipe through OpenGL ES); choose Automatic or CPU under Settings → Engine and load the model again',
      });
    } finally {
      create.mockRestore();
    }
  });
});

// (after the test above: a lost GPU is remembered by the host process, so a later GPU load runs on the CPU)
describe.skipIf(!probe)('a GPU lost mid-reply (the app\'s GPU setting)', () => {
  it('ends the reply with GPU_LOST after the tokens so far; the reload runs on the CPU', async () => {
    // Automatic never takes llvmpipe (nor a GPU, yet): the CPU
    const cpu = await load('auto');
    expect(cpu.info.backend).toMatch(/^(pool|wasm-simd|wasm)/);
    const want = await reply(cpu);
    expect(want.error).toBeUndefined();
    expect(want.ids.length).toBe(12);

    const create = vi.spyOn(WebGpuBackend, 'create');
    const gpu = await load('gpu');
    const backend = create.mock.results[0].value as WebGpuBackend;
    create.mockRestore();
    expect(gpu.info.backend).toMatch(/^webgpu \(.+\)/);
    const lost = await reply(gpu, (k) => k === 4 && backend.simulateLoss());
    expect(lost.ids).toEqual(want.ids.slice(0, 4));
    expect(lost.error?.code).toBe('GPU_LOST');
    expect(lost.error?.message).toBe('the GPU device was lost: simulated by a test; reload the model to continue on the CPU');
    gpu.dispose();

    // the setting still says GPU: the reload runs on the CPU and the engine line says why
    const again = await load('gpu');
    expect(again.info.backend).toMatch(/^(pool|wasm-simd|wasm).* \(on the CPU: the GPU was lost; restart Pantheon to try it again\)$/);
    expect(await reply(again)).toEqual(want);
  });
});
