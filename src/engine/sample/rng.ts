// Deterministic PRNG: the 32-bit Mersenne Twister (Matsumoto & Nishimura 1998; C++ std::mt19937),
// the generator llama.cpp's dist sampler uses, drawn as libstdc++'s
// std::uniform_real_distribution<double>(0, 1) does (generate_canonical<double, 53>: two 32-bit
// outputs, (lo + hi·2^32) / 2^64, clamped below 1). No global state: each generator is a closure.

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER = 0x80000000;
const LOWER = 0x7fffffff;

/** A Mersenne Twister; `next()` returns the next 32-bit output as an unsigned number. */
export class Mt19937 {
  private readonly mt = new Uint32Array(N);
  private index = N;

  constructor(seed: number) {
    const mt = this.mt;
    mt[0] = seed >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
  }

  private twist(): void {
    const mt = this.mt;
    for (let i = 0; i < N; i++) {
      const y = (mt[i] & UPPER) | (mt[(i + 1) % N] & LOWER);
      mt[i] = mt[(i + M) % N] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    this.index = 0;
  }

  next(): number {
    if (this.index >= N) this.twist();
    let y = this.mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }
}

const TWO_32 = 4294967296;
const TWO_64 = TWO_32 * TWO_32;
const BELOW_ONE = 1 - 2 ** -53;

/** A uniform double in [0, 1) from a seed (taken as uint32), reproducible across runs and platforms. */
export function createRng(seed: number): () => number {
  const mt = new Mt19937(seed);
  return () => {
    const lo = mt.next();
    const hi = mt.next();
    const r = (lo + hi * TWO_32) / TWO_64;
    return r >= 1 ? BELOW_ONE : r;
  };
}

/** A random uint32 seed (for seed -1). */
export function randomSeed(): number {
  const c = globalThis.crypto;
  if (c?.getRandomValues) return c.getRandomValues(new Uint32Array(1))[0];
  return Math.floor(Math.random() * TWO_32) >>> 0;
}
