// The forward pass's small per-token ops in WebAssembly: RMSNorm, the RoPE rotation and the
// residual add, so a generated token does not pay for them in TypeScript on the calling thread
// while the pool's workers wait. The arithmetic is model/ops.ts's (the reference; the parity test
// is tests/model/ops-wasm-norm.test.ts), step for step: an f32 operation here gives the bits of the
// TypeScript double operation rounded by Math.fround (a double result of one +, −, ·, / or sqrt on
// floats, rounded to float, is the correctly rounded float result).

/**
 * out[n] = x / sqrt(mean(x²) + eps) · w (w = 0: no weight), ops.ts rmsnorm: the squares in f32
 * summed in f64 in order (ggml's rms_norm), mean and scale rounded to f32. out may alias x.
 */
export function rms_norm(out: usize, x: usize, w: usize, eps: f64, n: i32): void {
  let ss: f64 = 0;
  for (let i = 0; i < n; i++) {
    const v = load<f32>(x + (<usize>i << 2));
    ss += <f64>(v * v);
  }
  const mean = <f32>(ss / <f64>n);
  const scale = <f32>(1.0 / <f64><f32>Math.sqrt(<f64><f32>(<f64>mean + eps)));
  const s4 = f32x4.splat(scale);
  let i = 0;
  if (w) {
    for (; i + 4 <= n; i += 4) {
      const o = <usize>i << 2;
      v128.store(out + o, f32x4.mul(f32x4.mul(v128.load(x + o), s4), v128.load(w + o)));
    }
    for (; i < n; i++) {
      const o = <usize>i << 2;
      store<f32>(out + o, load<f32>(x + o) * scale * load<f32>(w + o));
    }
  } else {
    for (; i + 4 <= n; i += 4) {
      const o = <usize>i << 2;
      v128.store(out + o, f32x4.mul(v128.load(x + o), s4));
    }
    for (; i < n; i++) {
      const o = <usize>i << 2;
      store<f32>(out + o, load<f32>(x + o) * scale);
    }
  }
}

/**
 * Rotate nHeads heads of hd floats at x (one after the other) in place by a cos/sin cache of
 * ops.ts ropeCache ([nRot/2] pairs cos, sin): neox 0 rotates neighbouring pairs (x[2i], x[2i+1]),
 * neox 1 the pairs (x[i], x[i + nRot/2]); values past nRot are left alone. ops.ts rope.
 */
export function rope_heads(x: usize, nHeads: i32, hd: i32, cache: usize, nRot: i32, neox: i32): void {
  const half = nRot >> 1;
  for (let h = 0; h < nHeads; h++) {
    const base = x + (<usize>(h * hd) << 2);
    for (let i0 = 0; i0 < nRot; i0 += 2) {
      const c = load<f32>(cache + (<usize>i0 << 2));
      const s = load<f32>(cache + (<usize>(i0 + 1) << 2));
      const ia = neox ? i0 >> 1 : i0;
      const a = base + (<usize>ia << 2);
      const b = base + (<usize>(neox ? ia + half : ia + 1) << 2);
      const x0 = load<f32>(a);
      const x1 = load<f32>(b);
      store<f32>(a, x0 * c - x1 * s);
      store<f32>(b, x0 * s + x1 * c);
    }
  }
}

/** out[i] += v[i] for i < n (the residual add, ops.ts addInto). */
export function add_f32(out: usize, v: usize, n: i32): void {
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const o = <usize>i << 2;
    v128.store(out + o, f32x4.add(v128.load(out + o), v128.load(v + o)));
  }
  for (; i < n; i++) {
    const o = <usize>i << 2;
    store<f32>(out + o, load<f32>(out + o) + load<f32>(v + o));
  }
}
