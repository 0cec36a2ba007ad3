// GPU offload on a real adapter (Mesa's llvmpipe in CI): blocks [0, N) on the WebGPU backend, the
// rest on the CPU pool (src/engine/backend/offload.ts). Greedy tokens with 0, 1, half and all
// blocks on the GPU equal the CPU pool's (whose tokens tests/model checks against llama.cpp) on
// stories260K and tiny-llama-s5, and the pool plans only the CPU's part; auto takes as many blocks as a GPU of a given size holds
// (WebGpuBackend.probe with its memoryBytes hook: allocations inside pushErrorScope, the reserve
// first); the app's host adapter and the supervisor report the split and the adapter (before a
// load too); `pantheon run --json` names it.
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { GPU_RESERVE, layerBytes } from '../../src/engine/backend/offload-plan.js';
import { WebGpuBackend } from '../../src/engine/backend/webgpu/backend.js';
import { readGgufHeader } from '../../src/engine/gguf/file.js';
import { loadSessionModel } from '../../src/engine/host/engine.js';
import { EngineSupervisor } from '../../src/main/services/engine-supervisor.js';
import { nodeEngineTransport } from '../../src/main/services/node-engine-transport.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { readGolden } from '../model/golden.js';
import { greedyTokens } from '../model/greedy.js';

const probe = HAVE_SHARED ? WebGpuBackend.create({ fallback: 'allow' }) : null;
const adapter = probe?.adapter ?? 'no adapter';
const chunkBytes = probe?.chunkBytes ?? 0;
probe?.dispose();
if (HAVE_SHARED && !probe) console.warn('tests/webgpu/offload: SKIPPED, no WebGPU adapter here (Mesa llvmpipe through OpenGL ES needs libegl-mesa0 libgles2 libgl1-mesa-dri, see .ci/run)');

const PROMPT = [1, 403, 407, 261, 378];
const N = 12;
const report: string[] = [];
afterAll(() => {
  if (report.length) console.log(`GPU offload on ${adapter}:\n${report.join('\n')}`);
});

describe.skipIf(!probe)(`GPU offload (${adapter})`, () => {
  for (const file of ['stories260K.gguf', 'tiny-random/tiny-llama-s5.gguf']) {
    it(`${file}: greedy tokens with 0, 1, half and all blocks on the GPU equal the CPU pool's`, async () => {
      const path = sharedModel(file);
      const cpu = await LoadedModel.load(path, { contextSize: 64, backend: 'pool', threads: 1 });
      const want = await greedyTokens(new Session(cpu), PROMPT, N);
      const nLayer = cpu.hparams.nLayer;
      const pool = cpu.backendName;
      const cpuNeed = cpu.plan.need;
      cpu.dispose();
      for (const n of [...new Set([0, 1, nLayer >> 1, nLayer])]) {
        const lm = await LoadedModel.load(path, { contextSize: 64, backend: 'webgpu', gpuLayers: n });
        try {
          const got = await greedyTokens(new Session(lm), PROMPT, N);
          report.push(`  ${file.padEnd(32)} ${n}/${nLayer} blocks: ${got.filter((t, i) => t === want[i]).length}/${N} tokens as ${pool} (${lm.backendName})`);
          expect(got, `${file} with ${n} blocks on the GPU`).toEqual(want);
          // every block there: the whole token runs on the GPU (model/gpu-step.ts), token_embd's rows from the CPU
          expect(lm.backendName).toBe(`webgpu (${adapter}) ${n}/${nLayer} layers${n === nLayer ? ', whole token on GPU' : ` + ${pool}`}`);
          expect(lm.gpu).toMatchObject({ adapter, layers: n, of: nLayer });
          expect(lm.gpu!.bytes > 0).toBe(n > 0);
          // the pool planned only what stayed on the CPU: its plan and the GPU's bytes make the whole
          expect(Math.abs(lm.plan.need + lm.gpu!.bytes - cpuNeed)).toBeLessThanOrEqual(64);
        } finally {
          lm.dispose();
        }
      }
    }, 120_000);
  }

  it('auto: as many blocks as a GPU of a given size holds, with the reserve and the KV cache to spare', async () => {
    const path = sharedModel('stories260K.gguf');
    const h = await readGgufHeader(path);
    const lb = layerBytes(h, 5, false, chunkBytes);
    const sum = (a: number[]) => a.reduce((s, v) => s + v, 0);
    const kv = LoadedModel.estimate(h, 64).kvCache;
    // room for blocks 0 and 1 and half of block 2 after the reserve: 2 blocks
    const memoryBytes = GPU_RESERVE + kv + sum(lb.buffers[0]) + sum(lb.buffers[1]) + sum(lb.buffers[2]) / 2;
    const lm = await LoadedModel.load(path, { contextSize: 64, backend: 'webgpu', gpuLayers: 'auto', gpuOptions: { memoryBytes } });
    try {
      expect(lm.gpu?.layers).toBe(2);
    } finally {
      lm.dispose();
    }
    // a GPU too small for the reserve takes none; a large one all (the output with the last block)
    for (const [bytes, n] of [[GPU_RESERVE / 2, 0], [GPU_RESERVE + kv + sum(lb.buffers.flat()) + sum(lb.output), 5], [GPU_RESERVE + kv + sum(lb.buffers.flat()), 4]] as [number, number][]) {
      const m = await LoadedModel.load(path, { contextSize: 64, backend: 'webgpu', gpuOptions: { memoryBytes: bytes } });
      try {
        expect(m.gpu?.layers, `a GPU of ${bytes} bytes`).toBe(n);
      } finally {
        m.dispose();
      }
    }
  }, 60_000);

  it('the probe allocates on the adapter: buffers within the limit fit, the rest do not', () => {
    const gpu = WebGpuBackend.create({ fallback: 'allow', memoryBytes: 3 << 20 })!;
    try {
      // a 1 MiB reserve, then groups of 1 MiB: two fit in 3 MiB
      expect(gpu.probe([[1 << 20], [1 << 19, 1 << 19], [1 << 20], [1]], 1 << 20)).toBe(2);
      expect(gpu.probe([[1]], 4 << 20)).toBe(0);
    } finally {
      gpu.dispose();
    }
    const open = WebGpuBackend.create({ fallback: 'allow' })!;
    try {
      // no limit: what the adapter allocates (llvmpipe: host memory, these all fit)
      expect(open.probe([[1 << 20], [1 << 20]], 1 << 20)).toBe(2);
    } finally {
      open.dispose();
    }
  });

  it('the host adapter (the app\'s GPU setting) reports the adapter and the blocks on the GPU', async () => {
    const m = await loadSessionModel({ path: sharedModel('stories260K.gguf'), contextSize: 64, threads: 1, backend: 'gpu', gpuLayers: 2, signal: new AbortController().signal, onProgress: () => {} });
    try {
      expect(m.info.gpu).toEqual({ adapter, layers: 2, of: 5 });
      expect(m.info.backend).toMatch(new RegExp(`^webgpu \\(${adapter}\\) 2/5 layers \\+ wasm-\\S+-pool$`));
    } finally {
      m.dispose();
    }
  });

  it('the supervisor names the adapter before any load (a short-lived host of its own), then from the GPU load', async () => {
    const logs: string[] = [];
    const sup = new EngineSupervisor(nodeEngineTransport({ log: (l) => logs.push(l) }), (l) => logs.push(l));
    try {
      expect(await sup.gpuAdapter()).toBe(adapter);
      expect(sup.current).toEqual({ status: 'idle' }); // the engine's own process untouched
      const state = await sup.load({ modelId: 'demo', modelName: 'stories260K', path: sharedModel('stories260K.gguf'), contextSize: 64, threads: 1, backend: 'gpu', gpuLayers: 3 });
      expect(state).toMatchObject({ status: 'ready', gpu: { adapter, layers: 3, of: 5 } });
      expect(await sup.gpuAdapter()).toBe(adapter);
    } finally {
      await sup.unload();
    }
  }, 60_000);

  const story = readGolden('stories260K');
  it.skipIf(!story)('`pantheon run --gpu-layers 2 --json` names the split and prints llama.cpp\'s tokens; above the count means all', async () => {
    for (const [arg, n] of [['2', 2], ['99', 5], ['all', 5]] as [string, number][]) {
      const out: string[] = [];
      const code = await main(['run', sharedModel('stories260K.gguf'), '-p', 'Once upon a time', '-n', '16', '--temp', '0', '--json', '--ctx', '64', '--gpu-layers', arg], { out: (t) => out.push(t), err: () => {}, isTty: false });
      expect(code).toBe(0);
      const r = JSON.parse(out.join('')) as { backend: string; gpu_layers: number; tokens: number[] };
      expect(r.backend).toMatch(new RegExp(`^webgpu \\(${adapter}\\) ${n}/5 layers ${n === 5 ? ', whole token on GPU' : '\\+ wasm-\\S+-pool'}$`.replace(' ,', ',')));
      expect(r.gpu_layers).toBe(n);
      expect(r.tokens).toEqual(story!.cases[0].tokens.slice(0, 16));
    }
  });
});
