// The gated delta rule of one value head (Qwen3.5's linear attention) in WebAssembly SIMD. The
// reference is model/deltanet.ts deltaRuleHead, step for step (its parity test:
// tests/wasm/deltanet.test.ts): the same f32 operations on the state, and each dot product in f64
// (the products of two f32 are exact there) over four lanes (i mod 4), reduced as (l0 + l1) + (l2 + l3)
// and rounded to f32 once: within an ulp of ggml's f32 sums, with far fewer rounding flips than
// f32 lanes would add on these chaotic random models.

/** The f64 products of x and y's four f32 lanes, added into acc (lanes 0, 1) and acc2 (lanes 2, 3). */
// @ts-ignore: decorator
@inline function dotLo(x: v128, y: v128): v128 {
  return f64x2.mul(f64x2.promote_low_f32x4(x), f64x2.promote_low_f32x4(y));
}
// @ts-ignore: decorator
@inline function dotHi(x: v128, y: v128): v128 {
  const xh = i8x16.shuffle(x, x, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  const yh = i8x16.shuffle(y, y, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  return f64x2.mul(f64x2.promote_low_f32x4(xh), f64x2.promote_low_f32x4(yh));
}

/** (l0 + l1) + (l2 + l3) of lanes i mod 4 = 0, 1 (lo) and 2, 3 (hi), rounded to f32. */
// @ts-ignore: decorator
@inline function hsum(lo: v128, hi: v128): f32 {
  return <f32>((f64x2.extract_lane(lo, 0) + f64x2.extract_lane(lo, 1)) + (f64x2.extract_lane(hi, 0) + f64x2.extract_lane(hi, 1)));
}

/**
 * One head, S a multiple of 4 (f32 arrays at byte addresses): m [S, S] with row j = S_h[:, j], in
 * place; for each row j: m[j] ·= decay, d = (v[j] − m[j]·k) · beta, m[j] += k · d,
 * out[j] = (m[j]·q) · scale.
 */
export function delta_rule_head(m: usize, k: usize, q: usize, v: usize, out: usize, S: i32, decay: f32, beta: f32, scale: f32): void {
  const dec = f32x4.splat(decay);
  const rowBytes = <usize>S << 2;
  for (let j = 0; j < S; j++) {
    const row = m + <usize>j * rowBytes;
    let lo = f64x2.splat(0);
    let hi = f64x2.splat(0);
    for (let i = 0; i < S; i += 4) {
      const o = <usize>i << 2;
      const x = f32x4.mul(v128.load(row + o), dec);
      v128.store(row + o, x);
      const kv = v128.load(k + o);
      lo = f64x2.add(lo, dotLo(x, kv));
      hi = f64x2.add(hi, dotHi(x, kv));
    }
    const d = (load<f32>(v + (<usize>j << 2)) - hsum(lo, hi)) * beta;
    const d4 = f32x4.splat(d);
    lo = f64x2.splat(0);
    hi = f64x2.splat(0);
    for (let i = 0; i < S; i += 4) {
      const o = <usize>i << 2;
      const x = f32x4.add(v128.load(row + o), f32x4.mul(v128.load(k + o), d4));
      v128.store(row + o, x);
      const qv = v128.load(q + o);
      lo = f64x2.add(lo, dotLo(x, qv));
      hi = f64x2.add(hi, dotHi(x, qv));
    }
    store<f32>(out + (<usize>j << 2), hsum(lo, hi) * scale);
  }
}
