// The app's compute setting against PANTHEON_BACKEND and a GPU lost earlier in the process (issue
// 21 §2: Automatic never takes the GPU by itself; the environment's webgpu is opt-in; a lost GPU
// sends later GPU loads to the CPU, said in the engine line).
import { describe, expect, it } from 'vitest';
import { pickBackend } from '../../src/engine/host/backend-choice.js';

const LOST = 'on the CPU: the GPU was lost; restart Pantheon to try it again';

describe('pickBackend', () => {
  it('Automatic: the engine default, or what PANTHEON_BACKEND names', () => {
    expect(pickBackend('auto', undefined, false)).toEqual({ kind: undefined });
    expect(pickBackend(undefined, 'pool', false)).toEqual({ kind: 'pool' });
    expect(pickBackend('auto', 'webgpu', false)).toEqual({ kind: 'webgpu' });
    expect(pickBackend('auto', 'cuda', false)).toEqual({ kind: undefined });
  });
  it('CPU: never WebGPU, even when the environment asks for it', () => {
    expect(pickBackend('cpu', 'webgpu', false)).toEqual({ kind: undefined });
    expect(pickBackend('cpu', 'scalar', false)).toEqual({ kind: 'scalar' });
  });
  it('GPU: WebGPU until the GPU is lost, then the CPU with a note', () => {
    expect(pickBackend('gpu', undefined, false)).toEqual({ kind: 'webgpu' });
    expect(pickBackend('gpu', 'wasm', true)).toEqual({ kind: 'wasm', note: LOST });
    expect(pickBackend('gpu', 'webgpu', true)).toEqual({ kind: undefined, note: LOST });
    expect(pickBackend('auto', 'webgpu', true)).toEqual({ kind: undefined, note: LOST });
  });
});
