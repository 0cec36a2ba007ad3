// Llama 4's chunked attention (layer-attention.ts): a query sees only the keys of its own chunk.
// llama.cpp's chunks are 8192 positions, beyond the tiny model's goldens, so the test shrinks them
// to 4 on every layer: then nothing flows between chunks, and the logits at positions 4…7 cannot
// depend on the tokens at 0…3, on any backend and any batching.

import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRunState, forward, type Model } from '../../src/engine/model/forward.js';
import { GgufType, type GgufHeader, type GgufKv } from '../../src/engine/gguf/types.js';
import { chunkWindow, llama4Attention } from '../../src/engine/model/layer-attention.js';
import { LoadedModel } from '../../src/engine/session.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';

const FILE = sharedModel('tiny-random/tiny-llama4-s1.gguf');

function run(m: Model, tokens: number[], oneByOne: boolean): Float32Array {
  const s = createRunState(m, 64);
  if (!oneByOne) return forward(m, s, tokens, 0).slice();
  let out = new Float32Array(0);
  tokens.forEach((t, i) => (out = forward(m, s, [t], i).slice()));
  return out;
}

it('chunkWindow: from the chunk start to the position', () => {
  expect([0, 3, 4, 5, 8191, 8192, 8193].map((p) => chunkWindow(8192, p))).toEqual([1, 4, 5, 6, 8192, 1, 2]);
  expect(chunkWindow(4, 5)).toBe(2);
});

/** A header holding only these llama4.* keys (u32). */
function header(keys: Record<string, number>): GgufHeader {
  const metadata = new Map<string, GgufKv>(Object.entries(keys).map(([k, v]) => [`llama4.${k}`, { key: `llama4.${k}`, type: GgufType.UINT32, value: v }]));
  return { metadata, tensors: [] } as unknown as GgufHeader;
}

it('llama4Attention: llama.cpp\'s defaults, the unchunked layout, the window pattern, 128 experts', () => {
  const d = llama4Attention(header({}), 'llama4', 8, 16, 5e5);
  expect(d).toMatchObject({ chunk: 8192, kqNorm: true, temp: { floorScale: 8192, scale: 0.1, offset: 1 } });
  expect(d.rope).toEqual([true, true, true, false, true, true, true, false]);
  expect(d.chunked).toEqual([true, true, true, false, true, true, true, false]);
  // sliding_window 0: no chunks, RoPE on every layer but the last (n_no_rope_layer_step = n_layer)
  const n = llama4Attention(header({ 'attention.sliding_window': 0 }), 'llama4', 4, 16, 5e5);
  expect(n).toMatchObject({ chunk: 0, temp: null, rope: [true, true, true, false] });
  // a pattern of 2: every other layer chunked; the chunk stays 8192 whatever sliding_window says
  const p = llama4Attention(header({ 'attention.sliding_window': 100, 'attention.sliding_window_pattern': 2 }), 'llama4', 4, 128, 5e5);
  expect(p).toMatchObject({ chunk: 8192, chunked: [true, false, true, false], kqNorm: false });
});

describe.skipIf(!HAVE_SHARED || !existsSync(FILE))('llama4 chunked attention', () => {
  it.each(['scalar', 'wasm', 'pool'] as const)('on %s: positions 4-7 ignore the chunk before them', async (backend) => {
    const lm = await LoadedModel.load(FILE, { contextSize: 64, backend, threads: backend === 'pool' ? 2 : 1 });
    try {
      const m = lm.model;
      const A = m.hp.layerAttn!;
      expect(A.chunk).toBe(8192);
      expect(A.rope).toEqual([true, true, true, false]);
      expect(A.chunked).toEqual([true, true, true, false]);
      const a = [10, 20, 30, 40, 50, 60, 70, 80];
      const b = [11, 21, 31, 41, 50, 60, 70, 80];
      const full = run(m, a, false);
      A.chunk = 4;
      A.chunked = A.chunked.map(() => true);
      const ca = run(m, a, false);
      expect(run(m, b, false)).toEqual(ca);
      expect(run(m, b, true)).toEqual(run(m, a, true));
      expect(ca).not.toEqual(full);
    } finally {
      lm.dispose();
    }
  });
});
