// The --profile table (model/profile.ts): time charged by marks, per phase, and the pool's wait
// inside the products (MatBackend.waitMeter), against a fake clock and hand-worked numbers.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PoolBackend } from '../../src/engine/backend/pool.js';
import { GgmlType, rowBytes } from '../../src/engine/gguf/ggml-types.js';
import { Profile } from '../../src/engine/model/profile.js';

describe('Profile', () => {
  afterEach(() => vi.restoreAllMocks());

  it('charges the time between marks to each op, per phase, with the pool wait under the table', () => {
    let now = 1000;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const p = new Profile();
    p.begin();
    now += 30;
    p.mark('matvec Q8_0');
    p.addWait(6);
    now += 10;
    p.mark('attention');
    p.phase = 'gen';
    p.tokens.prompt = 4;
    p.tokens.gen = 2;
    now += 8;
    p.mark('matvec Q8_0');
    p.addWait(1);
    now += 12;
    p.mark('matvec Q8_0');
    expect([p.ms('matvec Q8_0', 'prompt'), p.ms('attention', 'prompt'), p.ms('matvec Q8_0', 'gen'), p.total('gen')]).toEqual([30, 10, 20, 20]);
    expect([p.waited('prompt'), p.waited('gen')]).toEqual([6, 1]);
    const lines = p.table().split('\n');
    expect(lines[2].split(/\s+/)).toEqual(['matvec', 'Q8_0', '30.0', '75.0%', '20.0', '100.0%', '10.000', '1.0']);
    expect(lines.at(-2)).toBe('prompt: 4 tokens, 100.0 tok/s; generation: 2 tokens, 100.0 tok/s');
    expect(lines.at(-1)).toBe("of the products' time, the calling thread waited for its workers: 6.0 ms (prompt, 15.0%), 1.0 ms (generation, 5.0%, 0.500 ms/token)");
  });

  it('a pool reports one wait per round trip to its meter, none without one', () => {
    const pool = new PoolBackend({ threads: 2 });
    try {
      const rows = 64, cols = 256, type = GgmlType.Q8_0;
      const data = new Uint8Array(rows * rowBytes(type, cols)).map((_, i) => (i % 34 < 2 ? 0 : (i * 29) & 0x3f));
      const w = pool.addWeight({ name: 'w', type, rows, cols }, (d, off) => d.set(data.subarray(off, off + d.length)));
      const waits: number[] = [];
      const x = new Float32Array(cols).fill(0.5), out = new Float32Array(rows);
      pool.matvec(out, w, x);
      pool.waitMeter = { addWait: (ms) => waits.push(ms) };
      pool.matvec(out, w, x);
      pool.matmulGated(new Float32Array(2 * rows), w, w, new Float32Array(2 * cols), 2);
      pool.waitMeter = null;
      pool.matvec(out, w, x);
      expect(waits.length).toBe(2);
      expect(waits.every((ms) => ms >= 0 && ms < 10000)).toBe(true);
    } finally {
      pool.dispose();
    }
  });
});
