// Sampling's passes over the whole vocabulary (src/engine/sample/wasm.ts calls them). The scalar
// references are the TypeScript functions in src/engine/sample (scrubMax, expSumAndTop,
// selectTopK, nucleusMass); tests/sample/wasm.test.ts compares each with its reference.
//
// The normaliser Σ exp(l − max) is computed in f64, two lanes at a time, without a table:
//   exp(l − max) = 2^−x,  x = (max − l)·log2(e) ≥ 0, clamped to 1000 (2^−1000 ≈ 1e-301: nothing next
//   to the max's term of 1);  k = round(x) (x + 2^52 rounds it into the low mantissa bits),
//   f = k − x ∈ [−1/2, 1/2];  2^−x = 2^−k · 2^f,  2^−k from its exponent bits (1023 − k) << 52,
//   2^f ≈ a degree-7 polynomial, minimax for relative error on [−1/2, 1/2] (Remez): at most
//   4.2e-11 relative, so the sum is within ~1e-10 relative (tests/sample/wasm.test.ts checks each
//   term against Math.exp).

const LOG2E: f64 = 1.4426950408889634;
const DEEPEST: f64 = 1000;
const MAGIC: f64 = 4503599627370496.0; // 2^52
const ONE_BITS: i64 = 1023 << 52;
const P0: f64 = 0.99999999996072331;
const P1: f64 = 0.69314718072779169;
const P2: f64 = 0.24022651205124532;
const P3: f64 = 0.055504103581673375;
const P4: f64 = 0.0096180265071237232;
const P5: f64 = 0.0013333917523737392;
const P6: f64 = 0.00015469490765717271;
const P7: f64 = 0.000015203266638118391;

// The same constants in pairs, loaded from memory where used: V8 rebuilds a v128.const at every use
// inside a loop (3 instructions each), while a load is one (as in attention.ts).
const K: usize = memory.data<f64>([
  -LOG2E, -LOG2E, DEEPEST, DEEPEST, MAGIC, MAGIC, // 0 16 32
  P0, P0, P1, P1, P2, P2, P3, P3, P4, P4, P5, P5, P6, P6, P7, P7, // 48 … 160
], 16);
// @ts-ignore: decorator
@inline function kv(off: usize): v128 {
  return v128.load(K + off);
}

/** a·b + c in both f64 lanes; fused in the relaxed build (within the sum's error bound either way). */
// @ts-ignore: decorator
@inline function madd(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f64x2.relaxed_madd(a, b, c);
  return f64x2.add(f64x2.mul(a, b), c);
}

/** acc + 2^−x for 0 ≤ x ≤ DEEPEST, both lanes. */
// @ts-ignore: decorator
@inline function addExp2Neg2(acc: v128, x: v128): v128 {
  const m = f64x2.add(x, kv(32));
  const f = f64x2.sub(f64x2.sub(m, kv(32)), x);
  let p = madd(kv(160), f, kv(144));
  p = madd(p, f, kv(128));
  p = madd(p, f, kv(112));
  p = madd(p, f, kv(96));
  p = madd(p, f, kv(80));
  p = madd(p, f, kv(64));
  p = madd(p, f, kv(48));
  return madd(p, i64x2.sub(i64x2.splat(ONE_BITS), i64x2.shl(m, 52)), acc);
}

/** 2^−x for one value (the tails), as addExp2Neg2. */
// @ts-ignore: decorator
@inline function exp2Neg(x: f64): f64 {
  const m = x + MAGIC;
  const f = (m - MAGIC) - x;
  const p = (((((((P7 * f + P6) * f + P5) * f + P4) * f + P3) * f + P2) * f + P1) * f + P0);
  return p * reinterpret<f64>(ONE_BITS - (reinterpret<i64>(m) << 52));
}

/** acc + exp(l − max) for four f32 lanes, in two f64 lanes; maxLog2e = max·log2(e) in both. */
// @ts-ignore: decorator
@inline function addExp4(acc: v128, v: v128, maxLog2e: v128): v128 {
  const lo = f64x2.promote_low_f32x4(v);
  const hi = f64x2.promote_low_f32x4(i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  // x = max·log2e − l·log2e: within 2e-16·x of (max − l)·log2e (3e-13 relative at x = 1000)
  acc = addExp2Neg2(acc, f64x2.pmin(madd(lo, kv(0), maxLog2e), kv(16)));
  return addExp2Neg2(acc, f64x2.pmin(madd(hi, kv(0), maxLog2e), kv(16)));
}

/**
 * x[n] f32 in place: NaN → −inf; returns the largest value (−inf when all are −inf or NaN). Scalar
 * reference: scrubMax (sample/passes.ts).
 */
export function sample_scrub_max(x: usize, n: i32): f32 {
  const ninf = f32x4.splat(-Infinity);
  let m0 = ninf, m1 = ninf;
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const p = x + (<usize>i << 2);
    let a = v128.load(p), b = v128.load(p, 16);
    const na = f32x4.ne(a, a), nb = f32x4.ne(b, b);
    if (v128.any_true(v128.or(na, nb))) {
      a = v128.bitselect(ninf, a, na);
      b = v128.bitselect(ninf, b, nb);
      v128.store(p, a);
      v128.store(p, b, 16);
    }
    m0 = f32x4.pmax(m0, a); // no NaN left: pmax (m < v ? v : m) is one instruction
    m1 = f32x4.pmax(m1, b);
  }
  const m = f32x4.pmax(m0, m1);
  let top = max<f32>(max<f32>(f32x4.extract_lane(m, 0), f32x4.extract_lane(m, 1)), max<f32>(f32x4.extract_lane(m, 2), f32x4.extract_lane(m, 3)));
  for (; i < n; i++) {
    const p = x + (<usize>i << 2);
    const v = load<f32>(p);
    if (v > top) top = v;
    else if (v != v) store<f32>(p, -Infinity);
  }
  return top;
}

/**
 * Σ exp(x[i] − top) over i < n (top: the largest value, finite; no NaN), within 1e-9 relative of
 * the exact sum, and the k largest values' indices in out[0..k) (i32), largest first, lower index
 * first on ties, by insertion into a sorted list: four values are compared with the list's last
 * one at a time, and a value is inserted only when one of them beats it. k is clamped to [0, n].
 * Scalar reference: expSumAndTop (sample/expsum.ts), where k ≤ FUSED_TOP_MAX.
 */
export function sample_expsum_top(out: usize, x: usize, n: i32, top: f32, k: i32): f64 {
  k = min(max(k, 0), n);
  const mx = f64x2.splat(<f64>top * LOG2E);
  let acc = f64x2.splat(0);
  let size = 0;
  let worst: f32 = k > 0 ? -Infinity : Infinity; // what a newcomer must beat once the list is full
  let beat = f32x4.splat(worst);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const p = x + (<usize>i << 2);
    const v = v128.load(p);
    acc = addExp4(acc, v, mx);
    if (size < k || v128.any_true(f32x4.gt(v, beat))) {
      for (let j = i; j < i + 4; j++) {
        const vj = load<f32>(x + (<usize>j << 2));
        if (vj > worst || size < k) {
          size = insert(out, x, vj, j, size, k);
          if (size == k) worst = load<f32>(x + (<usize>load<i32>(out + (<usize>(k - 1) << 2)) << 2));
        }
      }
      beat = f32x4.splat(worst);
    }
  }
  let sum = f64x2.extract_lane(acc, 0) + f64x2.extract_lane(acc, 1);
  for (; i < n; i++) {
    const v = load<f32>(x + (<usize>i << 2));
    sum += exp2Neg(min<f64>(<f64>top * LOG2E - <f64>v * LOG2E, DEEPEST));
    if (v > worst || size < k) {
      size = insert(out, x, v, i, size, k);
      if (size == k) worst = load<f32>(x + (<usize>load<i32>(out + (<usize>(k - 1) << 2)) << 2));
    }
  }
  return sum;
}

/**
 * Insert index i (value v) into the sorted list out[0..size) of at most k entries (equal values stay
 * ahead of it; a full list drops its last entry); returns the new size.
 */
// @ts-ignore: decorator
@inline function insert(out: usize, x: usize, v: f32, i: i32, size: i32, k: i32): i32 {
  let s = size;
  if (size < k) size++;
  else s = k - 1;
  while (s > 0) {
    const prev = load<i32>(out + (<usize>(s - 1) << 2));
    if (!(v > load<f32>(x + (<usize>prev << 2)))) break;
    store<i32>(out + (<usize>s << 2), prev);
    s--;
  }
  store<i32>(out + (<usize>s << 2), i);
  return size;
}

// ---- top-k for larger k: a size-k min-heap (sample/select.ts selectTopK, the scalar reference) ---

// @ts-ignore: decorator
@inline function at(x: usize, i: i32): f32 {
  return load<f32>(x + (<usize>i << 2));
}

// @ts-ignore: decorator
@inline function idx(heap: usize, i: i32): i32 {
  return load<i32>(heap + (<usize>i << 2));
}

// @ts-ignore: decorator
@inline function put(heap: usize, i: i32, v: i32): void {
  store<i32>(heap + (<usize>i << 2), v);
}

/** Is entry a worse than entry b (smaller value, or equal value and larger index)? */
// @ts-ignore: decorator
@inline function worse(x: usize, a: i32, b: i32): bool {
  const va = at(x, a), vb = at(x, b);
  return va < vb || (va == vb && a > b);
}

function siftDown(x: usize, heap: usize, size: i32, i: i32): void {
  const e = idx(heap, i);
  while (true) {
    const l = 2 * i + 1;
    if (l >= size) break;
    const r = l + 1;
    const c = r < size && worse(x, idx(heap, r), idx(heap, l)) ? r : l;
    if (!worse(x, idx(heap, c), e)) break;
    put(heap, i, idx(heap, c));
    i = c;
  }
  put(heap, i, e);
}

function siftUp(x: usize, heap: usize, i: i32): void {
  const e = idx(heap, i);
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!worse(x, e, idx(heap, p))) break;
    put(heap, i, idx(heap, p));
    i = p;
  }
  put(heap, i, e);
}

/**
 * The indices of the k largest of x[0..n) (f32, no NaN) into out[0..k) (i32), largest first, lower
 * index first on ties; returns k clamped to [0, n]. Past the first k, four values at a time are
 * compared with the heap's worst and only one that beats it goes into the heap.
 */
export function sample_select_top(out: usize, x: usize, n: i32, k: i32): i32 {
  k = min(max(k, 0), n);
  if (k == 0) return 0;
  let size = 0;
  let i = 0;
  for (; i < n && size < k; i++) {
    put(out, size, i);
    siftUp(x, out, size++);
  }
  let worstKept = at(x, idx(out, 0));
  let beat = f32x4.splat(worstKept);
  for (; i + 4 <= n; i += 4) {
    if (!v128.any_true(f32x4.gt(v128.load(x + (<usize>i << 2)), beat))) continue;
    for (let j = i; j < i + 4; j++) {
      // Equal values never replace: the kept entry has the lower index.
      if (at(x, j) > worstKept) {
        put(out, 0, j);
        siftDown(x, out, size, 0);
        worstKept = at(x, idx(out, 0));
      }
    }
    beat = f32x4.splat(worstKept);
  }
  for (; i < n; i++) {
    if (at(x, i) > worstKept) {
      put(out, 0, i);
      siftDown(x, out, size, 0);
      worstKept = at(x, idx(out, 0));
    }
  }
  // Heap sort in place: repeatedly move the worst entry to the end.
  for (let end = size - 1; end > 0; end--) {
    const w = idx(out, 0);
    put(out, 0, idx(out, end));
    put(out, end, w);
    siftDown(x, out, end, 0);
  }
  return k;
}
