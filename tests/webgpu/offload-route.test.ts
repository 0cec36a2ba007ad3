// GPU offload's router (src/engine/backend/offload.ts) without a GPU: its "GPU" is a second
// WebAssembly backend that records every product, so each weight's products can be counted per
// side and the greedy tokens compared with one plain WebAssembly backend's, bit for bit (the same
// kernels on both sides). The expected side of each tensor is written out here from the rule in
// docs/webgpu.md (blocks [0, N) on the GPU, the output with the last block, token_embd's rows on
// the CPU), not taken from the router's own placeOf. Also the offload plan's bytes and the
// --gpu-layers / settings parsing.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { OffloadBackend, type GpuSide } from '../../src/engine/backend/offload.js';
import { layerBytes, parseGpuLayers, planOffload } from '../../src/engine/backend/offload-plan.js';
import { ObservingBackend } from '../../src/engine/backend/observing.js';
import { ScalarBackend } from '../../src/engine/backend/scalar.js';
import type { MatBackend, WeightHandle, WeightSpec } from '../../src/engine/backend/types.js';
import { WasmBackend } from '../../src/engine/backend/wasm.js';
import { readGgufHeader } from '../../src/engine/gguf/file.js';
import { GgmlType } from '../../src/engine/gguf/ggml-types.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';
import { greedyTokens } from '../model/greedy.js';

type Side = 'gpu' | 'cpu';

/** A recording backend posing as the GPU side: products and embedding rows counted per tensor. */
class FakeGpu extends ObservingBackend implements GpuSide {
  readonly adapter = 'fake';
  constructor(inner: MatBackend, private readonly log: Map<string, number>, private readonly types: ((t: number) => boolean) | null = null) {
    super(inner, (spec) => log.set(spec.name, (log.get(spec.name) ?? 0) + 1));
  }
  onGpu(type: number): boolean {
    return this.types ? this.types(type) : true;
  }
}

class Recording extends ObservingBackend {
  readonly rows = new Map<string, number>();
  constructor(inner: MatBackend, log: Map<string, number>) {
    super(inner, (spec) => log.set(spec.name, (log.get(spec.name) ?? 0) + 1));
  }
  override getRow(out: Float32Array, w: WeightHandle, row: number): void {
    this.rows.set(w.spec.name, (this.rows.get(w.spec.name) ?? 0) + 1);
    super.getRow(out, w, row);
  }
}

function wasmOrScalar(): MatBackend {
  try {
    return new WasmBackend();
  } catch {
    return new ScalarBackend();
  }
}

/** Where the rule puts a tensor's products (the output with the last block; a tied output is token_embd). */
function expectedSide(name: string, n: number, nLayer: number, tied: boolean): Side {
  const m = /^blk\.(\d+)\./.exec(name);
  if (m) return Number(m[1]) < n ? 'gpu' : 'cpu';
  if (name === 'output.weight' || (tied && name === 'token_embd.weight')) return n >= nLayer ? 'gpu' : 'cpu';
  return 'cpu';
}

const PROMPT = [1, 403, 407, 261, 378];
const MODELS: [string, boolean][] = [
  ['stories260K.gguf', false],
  ['tiny-random/tiny-llama-s5.gguf', false],
  ['tiny-random/tiny-gemma-s5.gguf', true], // gemma always ties: token_embd is the output too
];

describe.skipIf(!HAVE_SHARED)('the offload router sends each weight where the plan says', () => {
  for (const [file, tied] of MODELS) {
    it.skipIf(!existsSync(sharedModel(file)))(`${file}: 0, 1, half and all blocks; greedy tokens bit-equal to one backend's`, async () => {
      const path = sharedModel(file);
      const plain = await LoadedModel.load(path, { contextSize: 64, backend: wasmOrScalar() });
      const nLayer = plain.hparams.nLayer;
      const want = await greedyTokens(new Session(plain), PROMPT, 8);
      plain.dispose();
      for (const n of [...new Set([0, 1, nLayer >> 1, nLayer])]) {
        const gpuLog = new Map<string, number>(), cpuLog = new Map<string, number>();
        const cpu = new Recording(wasmOrScalar(), cpuLog);
        const router = new OffloadBackend(new FakeGpu(wasmOrScalar(), gpuLog), cpu, { nLayer, gpuLayers: n, tied });
        const lm = await LoadedModel.load(path, { contextSize: 64, backend: router });
        try {
          expect(await greedyTokens(new Session(lm), PROMPT, 8), `${file} with ${n} blocks on the "GPU"`).toEqual(want);
          expect(router.name).toBe(`webgpu (fake) ${n}/${nLayer} layers + ${cpu.name}`);
          for (const name of gpuLog.keys()) expect(expectedSide(name, n, nLayer, tied), `${name} ran on the GPU side`).toBe('gpu');
          for (const name of cpuLog.keys()) expect(expectedSide(name, n, nLayer, tied), `${name} ran on the CPU side`).toBe('cpu');
          // every block's products, on one side or the other: the same count per block on both
          const per = (log: Map<string, number>, l: number) => [...log].filter(([k]) => k.startsWith(`blk.${l}.`)).reduce((a, [, c]) => a + c, 0);
          const counts = Array.from({ length: nLayer }, (_, l) => per(gpuLog, l) + per(cpuLog, l));
          expect(new Set(counts).size, `products per block ${counts.join(', ')}`).toBe(1);
          expect(Array.from({ length: nLayer }, (_, l) => per(gpuLog, l) > 0)).toEqual(Array.from({ length: nLayer }, (_, l) => l < n));
          const logits = tied ? 'token_embd.weight' : 'output.weight';
          expect((n >= nLayer ? gpuLog : cpuLog).get(logits), 'the logits').toBeGreaterThan(0);
          // the embedding rows from the CPU, whatever N (a tied one has a copy there)
          expect(cpu.rows.get('token_embd.weight')).toBe(PROMPT.length + 7);
          expect(router.allOnGpu).toBe(n >= nLayer);
          // the GPU side's own handles, for code that drives it directly
          const l0 = lm.model.w.layers[0].wo;
          expect(router.gpuHandle(l0) !== null).toBe(n > 0);
          if (n > 0) expect(router.gpuHandle(l0)!.spec).toBe(l0.spec);
          expect(router.gpuHandle(lm.model.w.output) !== null).toBe(n >= nLayer);
        } finally {
          lm.dispose();
        }
      }
    }, 60_000);
  }

  it('a block type without a GPU kernel stays on the CPU and the name says so', async () => {
    const gpuLog = new Map<string, number>(), cpuLog = new Map<string, number>();
    const path = sharedModel('stories260K.gguf');
    // the "GPU" takes no F32 matrices: every one of stories260K's stays on the CPU
    const router = new OffloadBackend(new FakeGpu(wasmOrScalar(), gpuLog, (t) => t !== GgmlType.F32), new Recording(wasmOrScalar(), cpuLog), { nLayer: 5, gpuLayers: 5, tied: false });
    const lm = await LoadedModel.load(path, { contextSize: 64, backend: router });
    try {
      await greedyTokens(new Session(lm), PROMPT, 2);
      expect(gpuLog.size).toBe(0);
      expect(router.name).toMatch(/^webgpu \(fake\) 5\/5 layers \+ \S+ \(also for F32\)$/);
      expect(router.allOnGpu).toBe(false);
    } finally {
      lm.dispose();
    }
  });
});

describe('q/k/v and gate/up split across the two sides', () => {
  const rand = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 7919 + i * 104729) * 0.5);
  const bytes = (a: Float32Array) => new Uint8Array(a.buffer);
  const cols = 32;
  const specs: WeightSpec[] = [
    { name: 'blk.0.attn_q.weight', type: GgmlType.F32, rows: 24, cols },
    { name: 'blk.1.attn_k.weight', type: GgmlType.F32, rows: 8, cols },
    { name: 'blk.0.attn_v.weight', type: GgmlType.F32, rows: 8, cols },
  ];
  const data = specs.map((s, i) => rand(s.rows * s.cols, i + 1));
  const add = (be: MatBackend) => specs.map((s, i) => be.addWeight(s, (dst, from) => dst.set(bytes(data[i]).subarray(from, from + dst.length))));

  it('matmulShared with biases and matmulGated give the one-backend results, bit for bit', () => {
    const one = new ScalarBackend();
    const hs = add(one);
    const gpuLog = new Map<string, number>();
    // blk.0 on the "GPU", blk.1 on the CPU: q and v there, k here
    const router = new OffloadBackend(new FakeGpu(new ScalarBackend(), gpuLog), new ScalarBackend(), { nLayer: 2, gpuLayers: 1, tied: false });
    const rs = add(router);
    for (const n of [1, 3]) {
      const x = rand(n * cols, 9 + n);
      const biases = [rand(24, 5), null, rand(8, 6)];
      const outs = (k: number) => specs.map((s) => new Float32Array(k * s.rows));
      const a = outs(n), b = outs(n);
      one.matmulShared(a, hs, x, n, biases);
      router.matmulShared(b, rs, x, n, biases);
      expect(b).toEqual(a);
      // gate (blk.1.attn_k, CPU) and up (blk.0.attn_v, GPU): rows 8 each
      const g1 = new Float32Array(n * 8), g2 = new Float32Array(n * 8);
      one.matmulGated(g1, hs[1], hs[2], x, n);
      router.matmulGated(g2, rs[1], rs[2], x, n);
      expect(g2).toEqual(g1);
    }
    expect([...gpuLog.keys()].sort()).toEqual(['blk.0.attn_q.weight', 'blk.0.attn_v.weight']);
  });
});

describe.skipIf(!HAVE_SHARED)('the offload plan', () => {
  it('counts each block\'s matrices once: GPU bytes + the CPU\'s weights = the model', async () => {
    const h = await readGgufHeader(sharedModel('stories260K.gguf'));
    const total = h.tensors.filter((t) => t.name.endsWith('.weight') || t.name.endsWith('.bias')).reduce((a, t) => a + t.bytes, 0);
    const lb = layerBytes(h, 5, false, 1 << 20);
    // the file's matrices of each block (F32, 4-byte rows: no padding), by the tensor table
    for (let l = 0; l < 5; l++) {
      const want = h.tensors.filter((t) => t.name.startsWith(`blk.${l}.`) && t.dims.length === 2).reduce((a, t) => a + t.bytes, 0);
      expect(lb.buffers[l].reduce((a, b) => a + b, 0)).toBe(want);
    }
    const probeNever = () => { throw new Error('a number of layers must not probe'); };
    for (const n of [0, 2, 5]) {
      const p = planOffload(h, 5, false, n, { chunkBytes: 1 << 20, software: false, probe: probeNever }, total, 0);
      expect(p.split.gpuLayers).toBe(n);
      const out = n === 5 ? h.tensors.find((t) => t.name === 'output.weight')!.bytes : 0;
      expect(p.gpuBytes).toBe(lb.buffers.slice(0, n).flat().reduce((a, b) => a + b, 0) + out);
      expect(p.cpuWeights + p.gpuBytes).toBe(total);
    }
    expect(planOffload(h, 5, false, 99, { chunkBytes: 1 << 20, software: false, probe: probeNever }, total, 0).split.gpuLayers).toBe(5);
    expect(planOffload(h, 5, false, 'all', { chunkBytes: 1 << 20, software: false, probe: probeNever }, total, 0).split.gpuLayers).toBe(5);
    // auto: what the probe says fits, the reserve and KV cache asked for; the software adapter takes all
    let asked: [number[][], number] | null = null;
    const p = planOffload(h, 5, false, 'auto', { chunkBytes: 1 << 20, software: false, probe: (g, r) => { asked = [g, r]; return 3; } }, total, 1000);
    expect(p.split.gpuLayers).toBe(3);
    expect(asked![0]).toHaveLength(5);
    expect(asked![0][4]).toEqual([...lb.buffers[4], ...lb.output]); // the last block carries the output
    expect(asked![1]).toBe(512 * 2 ** 20 + 1000);
    expect(planOffload(h, 5, false, 'auto', { chunkBytes: 1 << 20, software: true, probe: probeNever }, total, 0).split.gpuLayers).toBe(5);
  });
});

describe('--gpu-layers', () => {
  it('parses N, all and auto; anything else is one line', () => {
    expect(parseGpuLayers('12')).toBe(12);
    expect(parseGpuLayers('0')).toBe(0);
    expect(parseGpuLayers('ALL')).toBe('all');
    expect(parseGpuLayers('auto')).toBe('auto');
    for (const bad of ['-1', '1.5', 'x', '', 'half']) expect(() => parseGpuLayers(bad)).toThrow(`--gpu-layers needs a whole number of layers (0 or more), "all" or "auto", not "${bad}"`);
  });

  const run = async (argv: string[]) => {
    const err: string[] = [];
    const code = await main(argv, { out: () => {}, err: (t) => err.push(t), isTty: false });
    return { code, err: err.join('\n') };
  };
  it.skipIf(!HAVE_SHARED)('a bad value, or another backend, exits 2 with one error line', async () => {
    const path = sharedModel('stories260K.gguf');
    for (const [args, line] of [
      [['--gpu-layers', '-3'], 'error: --gpu-layers needs a whole number of layers (0 or more), "all" or "auto", not "-3"'],
      [['--gpu-layers', 'many'], 'error: --gpu-layers needs a whole number of layers (0 or more), "all" or "auto", not "many"'],
      [['--backend', 'pool', '--gpu-layers', '2'], 'error: --gpu-layers is for --backend webgpu, not pool'],
    ] as [string[], string][]) {
      const r = await run(['run', path, '-p', 'Hi', '-n', '1', ...args]);
      expect(r.code).toBe(2);
      // one error line (then the command's usage, as every usage error)
      expect(r.err.split('\n').filter((l) => l.startsWith('error:'))).toEqual([line]);
    }
  });
});
